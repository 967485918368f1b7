// Checks an LMDB data file before it is mapped into memory. A file cut short maps pages past its
// end (SIGBUS on first touch) and a garbage meta page sends LMDB down wild page numbers (SIGSEGV):
// both kill the process before any JavaScript can catch anything, so they are looked for here,
// from the file's bytes. What it reads (lmdb-js's LMDB, data format version 2, 64-bit): each of
// the first two pages is a meta page — a 24-byte page header, then magic 0xBEEFC0DE and version
// at 24, the page size in the free-page DB's pad at 0x30, the roots of the two internal DBs at
// 0x58 and 0x88, the last used page at 0x90 and the transaction id at 0x98. LMDB uses the valid
// meta page with the higher transaction id.
import { closeSync, existsSync, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';

const MAGIC = 0xbeefc0de;
const NO_PAGE = 0xffffffffffffffffn;

interface Meta {
  pageSize: number;
  lastPage: bigint;
  txnId: bigint;
  roots: bigint[];
}

function readMeta(page: Buffer): Meta | undefined {
  if (page.length < 0xa0 || page.readUInt32LE(24) !== MAGIC) return undefined;
  const version = page.readUInt32LE(28);
  if (version !== 1 && version !== 2) return undefined;
  const pageSize = page.readUInt32LE(0x30);
  if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0) return undefined;
  return { pageSize, lastPage: page.readBigUInt64LE(0x90), txnId: page.readBigUInt64LE(0x98), roots: [page.readBigUInt64LE(0x58), page.readBigUInt64LE(0x88)] };
}

/** Why the LMDB environment in `dir` cannot be opened safely, or undefined when it can (or is absent). */
export function lmdbFileProblem(dir: string): string | undefined {
  const file = join(dir, 'data.mdb');
  if (!existsSync(file)) return undefined;
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return 'data.mdb is empty';
    const head = Buffer.alloc(Math.min(size, 2 * 65536));
    readSync(fd, head, 0, head.length, 0);
    const first = readMeta(head);
    const pageSize = first?.pageSize ?? 4096;
    if (size < 2 * pageSize) return `data.mdb is ${size} bytes, shorter than its two meta pages`;
    const second = readMeta(head.subarray(pageSize, 2 * pageSize));
    const metas = [first, second].filter((m): m is Meta => m !== undefined);
    if (metas.length === 0) return 'data.mdb has no valid meta page (not an LMDB file, or overwritten)';
    const meta = metas.reduce((a, b) => (b.txnId > a.txnId ? b : a));
    const pages = BigInt(Math.floor(size / meta.pageSize));
    if (meta.lastPage + 1n > pages) return `data.mdb is cut short: its meta page names page ${meta.lastPage}, the file holds ${pages} pages`;
    for (const root of meta.roots) {
      if (root !== NO_PAGE && (root < 2n || root > meta.lastPage)) return `data.mdb's meta page points at page ${root}, outside the file's ${meta.lastPage + 1n} pages`;
    }
    return undefined;
  } finally {
    closeSync(fd);
  }
}
