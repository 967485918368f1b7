// A set of addresses and prefixes compiled for fast membership tests: per family, sorted ranges
// with overlaps merged, searched by bisection — O(log n) per lookup, swapped whole on change.
// (Node's net.BlockList scans its rules one by one: ~100 lookups/s at 100,000 entries.)
// IPv4 addresses are compared as numbers, IPv6 ones as 32-digit hex strings (whose string order
// is their numeric order). IPv4-mapped IPv6 (::ffff:0:0/96), as a client's address or as an entry
// of /96 or longer, is the IPv4 address it maps: a dual-stack socket reports IPv4 clients so, and
// lists stored before the API wrote such entries as IPv4 still hold them. Pure: no I/O.
import { isIPv6 } from 'node:net';

interface Ranges<K> {
  starts: K[];
  ends: K[];
}

/** A dotted quad as an unsigned 32-bit number; NaN for anything else. */
function v4Number(text: string): number {
  let value = 0;
  let part = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 46) {
      if (digits === 0 || part > 255) return NaN;
      value = value * 256 + part;
      part = 0;
      digits = 0;
      dots++;
    } else if (c >= 48 && c <= 57 && digits < 3) {
      part = part * 10 + (c - 48);
      digits++;
    } else return NaN;
  }
  if (dots !== 3 || digits === 0 || part > 255) return NaN;
  return value * 256 + part;
}

/** An IPv6 address (already checked by isIPv6) as 32 hex digits. */
function v6Hex(text: string): string {
  const gap = text.indexOf('::');
  const head = gap === -1 ? text : text.slice(0, gap);
  const tail = gap === -1 ? '' : text.slice(gap + 2);
  const headParts = head === '' ? [] : head.split(':');
  const tailParts = tail === '' ? [] : tail.split(':');
  // An embedded IPv4 tail (::ffff:192.0.2.1) is two groups.
  const withV4 = tailParts.length > 0 ? tailParts : headParts;
  const last = withV4[withV4.length - 1];
  if (last?.includes('.')) {
    const n = v4Number(last);
    withV4.splice(withV4.length - 1, 1, Math.floor(n / 65536).toString(16), (n % 65536).toString(16));
  }
  let out = '';
  for (const part of headParts) out += part.padStart(4, '0');
  out += '0000'.repeat(8 - headParts.length - tailParts.length);
  for (const part of tailParts) out += part.padStart(4, '0');
  return out.toLowerCase();
}

/** The first or last address (`fill` 0 or f) of the /length network of a 32-digit hex address. */
function v6Bound(address: string, length: number, last: boolean): string {
  const whole = length >> 2;
  if (whole >= 32) return address;
  const rest = length & 3;
  const nibble = parseInt(address[whole]!, 16);
  const keep = (0xf << (4 - rest)) & 0xf;
  const edge = last ? (nibble & keep) | (~keep & 0xf) : nibble & keep;
  return address.slice(0, whole) + edge.toString(16) + (last ? 'f' : '0').repeat(31 - whole);
}

/** The first 96 bits of an IPv4-mapped address, as hex digits. */
const MAPPED = '00000000000000000000ffff';

type Bounds = { family: 4; start: number; end: number } | { family: 6; start: string; end: string };

/** The first and last address of an address or prefix; undefined for what is neither. */
function bounds(entry: string): Bounds | undefined {
  const slash = entry.indexOf('/');
  const text = slash === -1 ? entry : entry.slice(0, slash);
  const lengthText = slash === -1 ? undefined : entry.slice(slash + 1);
  const v4 = v4Number(text);
  if (!Number.isNaN(v4)) {
    const length = lengthText === undefined ? 32 : Number(lengthText);
    if (!/^\d{0,2}$/.test(lengthText ?? '') || length > 32) return undefined;
    const size = 2 ** (32 - length);
    const start = v4 - (v4 % size);
    return { family: 4, start, end: start + size - 1 };
  }
  if (!isIPv6(text) || text.includes('%')) return undefined;
  const length = lengthText === undefined ? 128 : Number(lengthText);
  if (!/^\d{0,3}$/.test(lengthText ?? '') || length > 128) return undefined;
  const address = v6Hex(text);
  if (length >= 96 && address.startsWith(MAPPED)) {
    const size = 2 ** (128 - length);
    const start = parseInt(address.slice(24), 16);
    return { family: 4, start: start - (start % size), end: start - (start % size) + size - 1 };
  }
  return { family: 6, start: v6Bound(address, length, false), end: v6Bound(address, length, true) };
}

function mergeSorted<K extends number | string>(sorted: Iterable<[K, K]>): Ranges<K> {
  const starts: K[] = [];
  const ends: K[] = [];
  for (const [start, end] of sorted) {
    const last = ends.length - 1;
    if (last >= 0 && start <= ends[last]!) {
      if (end > ends[last]!) ends[last] = end;
    } else {
      starts.push(start);
      ends.push(end);
    }
  }
  return { starts, ends };
}

/** IPv4 ranges sorted by start through a typed array (start × 2^17 + index: exact below 2^53). */
function mergedV4(pairs: Array<[number, number]>): Ranges<number> {
  const order = new Float64Array(pairs.length);
  for (let i = 0; i < pairs.length; i++) order[i] = pairs[i]![0] * 131_072 + i;
  order.sort();
  return mergeSorted((function* () {
    for (const packed of order) yield pairs[packed % 131_072]!;
  })());
}

/** IPv6 ranges sorted as "start end" strings by the engine's own string sort (fixed width: numeric order). */
function mergedV6(pairs: Array<[string, string]>): Ranges<string> {
  const joined = pairs.map(([start, end]) => start + end);
  joined.sort();
  return mergeSorted((function* () {
    for (const text of joined) yield [text.slice(0, 32), text.slice(32)] as [string, string];
  })());
}

function within<K extends number | string>(ranges: Ranges<K>, key: K): boolean {
  let lo = 0;
  let hi = ranges.starts.length - 1;
  // The last range starting at or before the key.
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (ranges.starts[mid]! <= key) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found !== -1 && key <= ranges.ends[found]!;
}

/** The key of a client address (IPv4-mapped IPv6, in any spelling, counts as IPv4); undefined for no address. */
export function addressKey(address: string): { family: 4; key: number } | { family: 6; key: string } | undefined {
  const plain = address.startsWith('::ffff:') ? address.slice(7) : address;
  const v4 = v4Number(plain);
  if (!Number.isNaN(v4)) return { family: 4, key: v4 };
  if (!isIPv6(address) || address.includes('%')) return undefined;
  const hex = v6Hex(address);
  // ::ffff:7f00:8, ::FFFF:127.0.0.8 (a proxy's X-Forwarded-For), 0:0:0:0:0:ffff:7f00:8: all 127.0.0.8.
  return hex.startsWith(MAPPED) ? { family: 4, key: parseInt(hex.slice(24), 16) } : { family: 6, key: hex };
}

export class IpRanges {
  private constructor(
    private readonly v4: Ranges<number>,
    private readonly v6: Ranges<string>,
    /** Entries that were neither an address nor a prefix (skipped). */
    readonly skipped: number,
  ) {}

  /** At most 131,072 entries per family (lists hold at most 100,000). */
  static compile(entries: Iterable<string>): IpRanges {
    const v4: Array<[number, number]> = [];
    const v6: Array<[string, string]> = [];
    let skipped = 0;
    for (const entry of entries) {
      const b = bounds(entry);
      if (!b) skipped++;
      else if (b.family === 4) v4.push([b.start, b.end]);
      else v6.push([b.start, b.end]);
    }
    if (v4.length > 131_072 || v6.length > 131_072) throw new Error('IpRanges: more than 131,072 entries of one family');
    return new IpRanges(mergedV4(v4), mergedV6(v6), skipped);
  }

  /**
   * The same, yielding to the event loop every few thousand entries: a 100,000-entry list costs
   * ~0.3 s to compile here, and requests must not wait for it (only the final sort is one step).
   */
  static async compileInSlices(entries: readonly string[], slice = 5000): Promise<IpRanges> {
    const v4: Array<[number, number]> = [];
    const v6: Array<[string, string]> = [];
    let skipped = 0;
    for (let at = 0; at < entries.length; at += slice) {
      for (const entry of entries.slice(at, at + slice)) {
        const b = bounds(entry);
        if (!b) skipped++;
        else if (b.family === 4) v4.push([b.start, b.end]);
        else v6.push([b.start, b.end]);
      }
      if (at + slice < entries.length) await new Promise<void>((resolve) => setImmediate(resolve));
    }
    if (v4.length > 131_072 || v6.length > 131_072) throw new Error('IpRanges: more than 131,072 entries of one family');
    return new IpRanges(mergedV4(v4), mergedV6(v6), skipped);
  }

  static readonly EMPTY = IpRanges.compile([]);

  get size(): number {
    return this.v4.starts.length + this.v6.starts.length;
  }

  has(address: string): boolean {
    const key = addressKey(address);
    if (!key) return false;
    return key.family === 4 ? within(this.v4, key.key) : within(this.v6, key.key);
  }
}
