// The catalog zone's serial: the change-feed revision at which the set of served zones last
// changed (read when first asked after a change), so it grows with every membership change and
// every process fed the same changes gives the same serial for the same list.
export class CatalogSerial {
  private serial = 0;
  private dirty = true;

  constructor(private readonly revision: () => number) {}

  /** The set of zones served changed. */
  changed(): void {
    this.dirty = true;
  }

  current(): number {
    if (this.dirty) {
      const now = this.revision() >>> 0;
      this.serial = now > this.serial ? now : (this.serial + 1) >>> 0;
      this.dirty = false;
    }
    return this.serial;
  }
}
