// Rendered JSON of read-heavy lists, keyed by the zone revision they were rendered at. A zone's
// revision changes with every write to it, so an entry can never be stale: old revisions simply
// stop being asked for and age out. Bounded by total size, least recently used first out.

export interface Rendered {
  body: string;
  link?: string;
}

export class RenderCache {
  private readonly entries = new Map<string, Rendered>();
  private bytes = 0;

  constructor(private readonly maxBytes = 32 * 1024 * 1024) {}

  get(key: string): Rendered | undefined {
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
    }
    return hit;
  }

  set(key: string, value: Rendered): void {
    if (value.body.length > this.maxBytes / 4) return;
    this.delete(key);
    this.entries.set(key, value);
    this.bytes += value.body.length;
    for (const [oldest, entry] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= entry.body.length;
    }
  }

  private delete(key: string): void {
    const old = this.entries.get(key);
    if (old) {
      this.entries.delete(key);
      this.bytes -= old.body.length;
    }
  }
}
