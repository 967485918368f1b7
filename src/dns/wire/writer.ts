// A small DNS message writer: one growing scratch buffer, names compressed against everything
// written before (RFC 1035 §4.1.4). The answer cache keeps the bytes, so this runs once per
// (question, variant), not once per query.

const POINTER_LIMIT = 0x3fff;

/**
 * Encoding is synchronous, so one scratch buffer serves every message; `finish()` copies the
 * result out. A fresh 4 KB buffer per answer showed up as allocation and GC time.
 */
let scratch = Buffer.allocUnsafe(16 * 1024);

export class WireWriter {
  private buf: Buffer;
  offset = 0;
  /** Lower-case name suffix → offset where it was written. */
  private readonly names = new Map<string, number>();

  /**
   * `compression` off: names written whole (the DNSSEC canonical form, RFC 4034 §6.2), into a
   * buffer of the writer's own, so a message being encoded keeps the shared scratch buffer.
   */
  constructor(private readonly compression = true) {
    this.buf = compression ? scratch : Buffer.allocUnsafe(512);
  }

  private ensure(n: number): void {
    if (this.offset + n <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.offset + n));
    this.buf.copy(bigger, 0, 0, this.offset);
    const shared = this.buf === scratch;
    this.buf = bigger;
    if (!shared) return;
    // Keep a grown scratch buffer only up to the largest message DNS can carry; a huge RRset
    // (a customer's 1,000 TXT records at one name) must not pin megabytes after its answer.
    if (bigger.length <= 128 * 1024) scratch = bigger;
  }

  u8(v: number): void {
    this.ensure(1);
    this.buf[this.offset++] = v;
  }

  u16(v: number): void {
    this.ensure(2);
    this.buf.writeUInt16BE(v, this.offset);
    this.offset += 2;
  }

  u32(v: number): void {
    this.ensure(4);
    this.buf.writeUInt32BE(v >>> 0, this.offset);
    this.offset += 4;
  }

  bytes(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.offset);
    this.offset += b.length;
  }

  /** Patches a 16-bit value written earlier (RDLENGTH, section counts). */
  setU16(at: number, v: number): void {
    this.buf.writeUInt16BE(v, at);
  }

  /**
   * Registers a name already present in the message (the question, copied from the query) so
   * later names compress against it and echo the query's letter case.
   */
  registerName(name: string, at: number, wire: Uint8Array): void {
    let offset = at;
    let rest = name;
    while (rest !== '' && offset <= POINTER_LIMIT) {
      if (!this.names.has(rest)) this.names.set(rest, offset);
      offset += wire[offset - at]! + 1;
      const dot = rest.indexOf('.');
      rest = dot === -1 ? '' : rest.slice(dot + 1);
    }
  }

  /** Writes a lower-case absolute name ("" = root), compressed unless `compress` is false. */
  name(name: string, compress = true): void {
    let rest = name;
    while (rest !== '') {
      if (compress && this.compression) {
        const at = this.names.get(rest);
        if (at !== undefined) {
          this.u16(0xc000 | at);
          return;
        }
        if (this.offset <= POINTER_LIMIT) this.names.set(rest, this.offset);
      }
      const dot = rest.indexOf('.');
      const label = dot === -1 ? rest : rest.slice(0, dot);
      const len = Buffer.byteLength(label, 'latin1');
      this.ensure(len + 1);
      this.buf[this.offset++] = len;
      this.offset += this.buf.write(label, this.offset, 'latin1');
      rest = dot === -1 ? '' : rest.slice(dot + 1);
    }
    this.u8(0);
  }

  /** A copy of what was written. */
  finish(): Buffer {
    return Buffer.from(this.buf.subarray(0, this.offset));
  }
}
