// A cache entry as kept in memory, and as a shared file on disk (the body, then its metadata and a
// mark): the sizes that decide where an entry lives, the file names by key hash, whole-file writes.
import { createHash, randomBytes } from 'node:crypto';
import { unlink } from 'node:fs';
import { open, rename as renameAsync, utimes as utimesAsync, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Responses up to this size are kept in memory; beyond it only on disk (cachelargefiles) or not at all. */
export const LARGE_FILE_BYTES = 8 * 1_048_576;
/** The largest file cached on disk (Cloudflare's cap). */
export const MAX_FILE_BYTES = 512 * 1_048_576;

/** An entry: its response, and its body in memory or the file that holds it. */
export interface Entry {
  domain: string;
  status: number;
  headers: Record<string, string | string[]>;
  /** The same headers without Content-Length, flattened [name, value, …] once, for fast hits. */
  flat: string[];
  body?: Buffer;
  file?: string;
  size: number;
  storedAt: number;
  expiresAt: number;
  /** The Age the origin gave, in seconds. */
  age: number;
}

/** The end of a shared cache file: meta length (uint32) and this mark. */
export const FILE_MARK = 0x504c5331; // "PLS1"
/** Metadata of a shared cache file (after the body). */
export interface FileMeta {
  key: string;
  domain: string;
  revision: number;
  status: number;
  headers: Record<string, string | string[]>;
  size: number;
  storedAt: number;
  expiresAt: number;
  age: number;
  /** A primary key's record of its variants' Vary (no body, no response). */
  vary?: string[];
}

export const hashKey = (key: string): string => createHash('sha256').update(key).digest('hex');

/** The file of a variant: the primary key's own when the response varies by nothing, else its key's. */
export const fileHash = (varyKey: string, key: string, vary: readonly string[]): string => hashKey(vary.length === 0 ? varyKey : key);

/** Where a shared entry lives: two levels by hash (the janitor walks these). */
export const sharedPath = (dir: string, hash: string): string => join(dir, hash.slice(0, 2), hash);

export function flatten(headers: Record<string, string | string[]>): string[] {
  const flat: string[] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (name === 'content-length') continue;
    for (const one of Array.isArray(value) ? value : [value]) flat.push(name, one);
  }
  return flat;
}

export function trailer(meta: FileMeta): Buffer {
  const json = Buffer.from(JSON.stringify(meta));
  const end = Buffer.alloc(8);
  end.writeUInt32BE(json.length, 0);
  end.writeUInt32BE(FILE_MARK, 4);
  return Buffer.concat([json, end]);
}

/** Writes a shared file whole: a temp file, its mtime the expiry, moved in place. */
export async function writeShared(dir: string, hash: string, data: Buffer, expiresAt: number): Promise<void> {
  const temp = join(dir, `tmp-${randomBytes(12).toString('hex')}`);
  try {
    await writeFile(temp, data);
    await utimesAsync(temp, new Date(), new Date(expiresAt));
    await renameAsync(temp, sharedPath(dir, hash));
  } catch (error) {
    unlink(temp, () => undefined);
    throw error;
  }
}

/** A shared file read: its meta (undefined when absent, damaged, or of another settings revision) and its body when small. */
export async function readShared(dir: string, hash: string, revision: number): Promise<{ meta: FileMeta; body?: Buffer; file: string } | undefined> {
  const file = sharedPath(dir, hash);
  let handle;
  try {
    handle = await open(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const { size } = await handle.stat();
    if (size < 8) return undefined;
    // Small entries are read whole at once; of a large one only the trailer.
    const whole = size <= LARGE_FILE_BYTES + 65_536;
    const tailLength = whole ? size : Math.min(size, 65_536 + 8);
    const tail = Buffer.allocUnsafe(tailLength);
    const { bytesRead } = await handle.read(tail, 0, tailLength, size - tailLength);
    if (bytesRead !== tailLength || tail.readUInt32BE(tailLength - 4) !== FILE_MARK) return undefined;
    const metaLength = tail.readUInt32BE(tailLength - 8);
    if (metaLength > tailLength - 8) return undefined;
    const meta = JSON.parse(tail.subarray(tailLength - 8 - metaLength, tailLength - 8).toString()) as FileMeta;
    if (meta.revision !== revision || meta.size !== size - 8 - metaLength) return undefined;
    return { meta, file, body: whole && !meta.vary ? tail.subarray(0, meta.size) : undefined };
  } catch {
    return undefined;
  } finally {
    await handle.close().catch(() => undefined);
  }
}
