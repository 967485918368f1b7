// A small MaxMind DB (MMDB 2.0) writer: networks → data, as a binary search tree over IPv6 with
// IPv4 under ::/96, a deduplicated data section, and the metadata map. It exists so tests and
// operators can build exact, reproducible GeoIP files (e.g. mapping documentation ranges).
// Format: https://maxmind.github.io/MaxMind-DB/
import { ipToBytes } from '../model/ip.ts';

export type MmdbValue = string | number | boolean | MmdbValue[] | { [key: string]: MmdbValue };

export interface MmdbNetwork {
  /** "192.0.2.0/24", "2001:db8::/32" */
  network: string;
  data: { [key: string]: MmdbValue };
}

export interface MmdbOptions {
  databaseType: string;
  description?: string;
  /** Seconds since the epoch; fixed by default so identical input gives identical bytes. */
  buildEpoch?: number;
  /** Bits per search-tree record; by default the smallest that holds the tree and data. */
  recordSize?: 24 | 28 | 32;
}

type Child = TreeNode | { data: number } | undefined;
interface TreeNode {
  children: [Child, Child];
}

const isNode = (c: Child): c is TreeNode => c !== undefined && 'children' in c;

// ---- data section encoding (MMDB §"Output Data Section")

function control(type: number, size: number): Buffer {
  const parts: number[] = [];
  let sizeBits: number;
  const extra: number[] = [];
  if (size < 29) sizeBits = size;
  else if (size < 29 + 256) {
    sizeBits = 29;
    extra.push(size - 29);
  } else if (size < 285 + 65536) {
    sizeBits = 30;
    const v = size - 285;
    extra.push(v >> 8, v & 0xff);
  } else {
    sizeBits = 31;
    const v = size - 65821;
    extra.push((v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff);
  }
  if (type <= 7) parts.push((type << 5) | sizeBits);
  else parts.push(sizeBits, type - 7);
  return Buffer.from([...parts, ...extra]);
}

function unsigned(type: number, value: number | bigint): Buffer {
  let v = BigInt(value);
  const bytes: number[] = [];
  while (v > 0n) {
    bytes.unshift(Number(v & 0xffn));
    v >>= 8n;
  }
  return Buffer.concat([control(type, bytes.length), Buffer.from(bytes)]);
}

function encodeValue(value: MmdbValue): Buffer {
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([control(2, bytes.length), bytes]);
  }
  if (typeof value === 'boolean') return control(14, value ? 1 : 0);
  if (typeof value === 'number') {
    if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) throw new RangeError(`mmdb: ${value} is not a uint32`);
    return unsigned(6, value);
  }
  if (Array.isArray(value)) return Buffer.concat([control(11, value.length), ...value.map(encodeValue)]);
  const entries = Object.entries(value);
  return Buffer.concat([control(7, entries.length), ...entries.flatMap(([k, v]) => [encodeValue(k), encodeValue(v)])]);
}

function parseNetwork(network: string): { bits: Uint8Array; length: number } {
  const [address, lengthText] = network.split('/');
  const bytes = ipToBytes(address!);
  const length = Number(lengthText ?? (bytes.length === 4 ? 32 : 128));
  if (bytes.length === 4) {
    // IPv4 lives at ::a.b.c.d/96+n in an IPv6 tree, where readers look for it.
    const v6 = new Uint8Array(16);
    v6.set(bytes, 12);
    return { bits: v6, length: 96 + length };
  }
  return { bits: bytes, length };
}

/** One search-tree node: two records of 24, 28 (middle byte shared, left's nibble high) or 32 bits. */
function writeNode(tree: Buffer, at: number, recordSize: number, left: number, right: number): void {
  if (recordSize === 24) {
    tree.writeUIntBE(left, at, 3);
    tree.writeUIntBE(right, at + 3, 3);
  } else if (recordSize === 28) {
    tree.writeUIntBE(left & 0xffffff, at, 3);
    tree[at + 3] = ((left >>> 24) << 4) | (right >>> 24);
    tree.writeUIntBE(right & 0xffffff, at + 4, 3);
  } else {
    tree.writeUInt32BE(left, at);
    tree.writeUInt32BE(right, at + 4);
  }
}

export function writeMmdb(networks: readonly MmdbNetwork[], options: MmdbOptions): Buffer {
  // The data section: each distinct value once.
  const dataOffsets = new Map<string, number>();
  const dataParts: Buffer[] = [];
  let dataSize = 0;
  const dataRef = (data: MmdbNetwork['data']): number => {
    const key = JSON.stringify(data);
    let offset = dataOffsets.get(key);
    if (offset === undefined) {
      offset = dataSize;
      const encoded = encodeValue(data);
      dataParts.push(encoded);
      dataSize += encoded.length;
      dataOffsets.set(key, offset);
    }
    return offset;
  };

  // The tree. Shorter prefixes first, so a longer one inserted later splits the leaf it lands in.
  const root: TreeNode = { children: [undefined, undefined] };
  const sorted = networks.map((n) => ({ ...parseNetwork(n.network), ref: dataRef(n.data) })).sort((a, b) => a.length - b.length);
  for (const { bits, length, ref } of sorted) {
    let node = root;
    for (let depth = 0; depth < length - 1; depth++) {
      const bit = (bits[depth >> 3]! >> (7 - (depth & 7))) & 1;
      const child = node.children[bit];
      if (!isNode(child)) {
        // Empty, or a wider network's data: push that data down to both halves.
        const next: TreeNode = { children: [child, child] };
        node.children[bit] = next;
        node = next;
      } else node = child;
    }
    const last = (bits[(length - 1) >> 3]! >> (7 - ((length - 1) & 7))) & 1;
    node.children[last] = { data: ref };
  }

  // Number the nodes breadth first, then write records of the smallest size that holds them.
  const order: TreeNode[] = [root];
  for (let i = 0; i < order.length; i++) for (const c of order[i]!.children) if (isNode(c)) order.push(c);
  const index = new Map(order.map((n, i) => [n, i]));
  const count = order.length;
  const largest = count + 16 + dataSize;
  const recordSize = options.recordSize ?? (largest < 2 ** 24 ? 24 : largest < 2 ** 28 ? 28 : 32);
  if (largest >= 2 ** recordSize) throw new RangeError(`mmdb: ${recordSize}-bit records cannot address ${largest}`);
  const nodeBytes = recordSize / 4;
  const tree = Buffer.alloc(count * nodeBytes);
  order.forEach((node, i) => {
    const [left, right] = node.children.map((c) => (c === undefined ? count : isNode(c) ? index.get(c)! : count + 16 + c.data));
    writeNode(tree, i * nodeBytes, recordSize, left!, right!);
  });

  const metadata = Buffer.concat([
    control(7, 9),
    encodeValue('node_count'),
    unsigned(6, count),
    encodeValue('record_size'),
    unsigned(5, recordSize),
    encodeValue('ip_version'),
    unsigned(5, 6),
    encodeValue('database_type'),
    encodeValue(options.databaseType),
    encodeValue('languages'),
    encodeValue(['en']),
    encodeValue('binary_format_major_version'),
    unsigned(5, 2),
    encodeValue('binary_format_minor_version'),
    unsigned(5, 0),
    encodeValue('build_epoch'),
    unsigned(9, options.buildEpoch ?? 1_700_000_000),
    encodeValue('description'),
    encodeValue({ en: options.description ?? options.databaseType }),
  ]);
  return Buffer.concat([tree, Buffer.alloc(16), ...dataParts, Buffer.from('abcdef4d61784d696e642e636f6d', 'hex'), metadata]);
}
