// The edge's cache: a memory LRU bounded in bytes for ordinary objects, and files on disk for large
// ones (cachelargefiles), written to a temp file while the response streams to the client and
// renamed into place only when complete with the announced length. Variants by the response's
// Vary. One upstream fetch per key at a time: later misses wait for the first fill (a cache lock,
// like nginx's proxy_cache_lock) and are answered from it. A domain's entries are dropped when its
// settings change.
//
// Shared (the edge role's workers, `shared` set): every entry is also a file named by its key's
// hash, found by every worker of the node (the page cache keeps hot ones in memory for all); each
// worker keeps the small ones it served in its own memory LRU. The fill lock spans the workers
// (SharedCacheLinks.acquire, the primary's): one upstream fetch per key per node. A file carries
// its key and the domain's settings revision it was filled under (a file from before a change is
// never served) after the body, and its expiry as its mtime; the primary's janitor
// (cache-janitor.ts) deletes expired files and keeps the directory within its bound.
import { createReadStream, mkdirSync, rmSync, unlink } from 'node:fs';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { Readable, type Writable } from 'node:stream';
import { LRUCache } from 'lru-cache';
import { lruByCount } from '../lru-by-count.ts';
import { variantKey } from './cache-rules.ts';
import { fileHash, flatten, hashKey, readShared, sharedPath, trailer, writeShared, type Entry, type FileMeta } from './cache-entry.ts';
import { CacheFill } from './cache-fill.ts';

export { hashKey, LARGE_FILE_BYTES, MAX_FILE_BYTES, sharedPath } from './cache-entry.ts';
export { CacheFill } from './cache-fill.ts';

/** How long a miss waits for another request's fill of the same key. */
const LOCK_WAIT_MS = 5000;

export type CacheStatus = 'HIT' | 'MISS' | 'EXPIRED' | 'BYPASS';

export interface FillLock {
  release(): void;
}

export interface EdgeCacheOptions {
  memoryBytes: number;
  diskBytes: number;
  dir: string;
  /** The node's workers share the directory and the fill locks (see above). */
  shared?: SharedCacheLinks;
}

/** What a worker's cache needs of the others (through the primary). */
export interface SharedCacheLinks {
  /**
   * The node-wide fill lock of a key (by its hash): true when granted (this worker fetches and
   * stores; release() when done). `wait`: while another worker holds it, resolves false once that
   * one released it (or after `timeoutMs`); otherwise false at once.
   */
  acquire(hash: string, wait: boolean, timeoutMs: number): Promise<boolean>;
  release(hash: string): void;
  /** The domain's settings revision here now (undefined: not served here). */
  revisionOf(domain: string): number | undefined;
}

/** After a memory miss: what was found, and the fill lock when the caller is to fetch and store. */
export interface Settled {
  key: string;
  entry?: Entry;
  fresh: boolean;
  lock?: FillLock;
}

export class EdgeCache {
  private readonly memory: LRUCache<string, Entry>;
  private readonly disk: LRUCache<string, Entry>;
  /** domain + primary key → the request headers its responses vary by. */
  private readonly varyBy = lruByCount<string, string[]>(200_000);
  private readonly byDomain = new Map<string, Set<string>>();
  private readonly filling = new Map<string, Promise<void>>();
  private readonly shared: SharedCacheLinks | undefined;

  constructor(private readonly options: EdgeCacheOptions) {
    this.shared = options.shared;
    // Files left by an earlier run are not indexed anywhere: start the directory empty (shared:
    // the primary did, once for all workers).
    if (!this.shared) rmSync(options.dir, { recursive: true, force: true });
    mkdirSync(options.dir, { recursive: true });
    if (this.shared) for (let i = 0; i < 256; i++) mkdirSync(join(options.dir, i.toString(16).padStart(2, '0')), { recursive: true });
    const forget = (entry: Entry, key: string): void => {
      const keys = this.byDomain.get(entry.domain);
      keys?.delete(key);
      if (keys?.size === 0) this.byDomain.delete(entry.domain);
    };
    this.memory = new LRUCache<string, Entry>({ maxSize: options.memoryBytes, sizeCalculation: (e) => e.size + 256, dispose: forget });
    this.disk = new LRUCache<string, Entry>({
      maxSize: options.diskBytes,
      sizeCalculation: (e) => Math.max(1, e.size),
      dispose: (entry, key) => {
        forget(entry, key);
        if (entry.file) unlink(entry.file, () => undefined);
      },
    });
  }

  get entries(): number {
    return this.memory.size + this.disk.size;
  }

  get memoryBytes(): number {
    return this.memory.calculatedSize;
  }

  private keyFor(domain: string, primary: string, headers: IncomingHttpHeaders): string {
    const vary = this.varyBy.get(`${domain}\n${primary}`) ?? [];
    return `${domain}\n${primary}\n${variantKey(vary, headers)}`;
  }

  /** The stored response for the request, and whether it is fresh. */
  lookup(domain: string, primary: string, headers: IncomingHttpHeaders): { key: string; entry?: Entry; fresh: boolean } {
    const key = this.keyFor(domain, primary, headers);
    const entry = this.memory.get(key) ?? this.disk.get(key);
    return { key, entry, fresh: entry !== undefined && entry.expiresAt > Date.now() };
  }

  /** Waits (bounded) while another request fills `key`; true when there was such a fill. */
  async waitForFill(key: string): Promise<boolean> {
    const pending = this.filling.get(key);
    if (!pending) return false;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([pending, new Promise<void>((resolve) => (timer = setTimeout(resolve, LOCK_WAIT_MS)))]);
    clearTimeout(timer);
    return true;
  }

  /**
   * After a memory miss (`found`): waits (bounded) for a fill of the key in progress, looks at
   * what it stored, and — for a request that will store what it fetches (`lock`) — takes the fill
   * lock. Shared, the other workers' fills count too, and their files are looked at.
   */
  async settle(domain: string, primary: string, headers: IncomingHttpHeaders, found: { key: string; entry?: Entry; fresh: boolean }, lock: boolean): Promise<Settled> {
    if (this.shared) return this.settleShared(this.shared, domain, primary, headers, found, lock);
    if (await this.waitForFill(found.key)) found = this.lookup(domain, primary, headers);
    return { ...found, lock: !found.fresh && lock ? this.lock(found.key) : undefined };
  }

  private async settleShared(shared: SharedCacheLinks, domain: string, primary: string, headers: IncomingHttpHeaders, found: Settled, wantLock: boolean): Promise<Settled> {
    const deadline = Date.now() + LOCK_WAIT_MS;
    // A request of this worker is at it already: its outcome is in memory when it is done.
    for (let pending = this.filling.get(found.key); pending && Date.now() < deadline; pending = this.filling.get(found.key)) {
      await within(pending, deadline);
      found = this.lookup(domain, primary, headers);
      if (found.fresh) return found;
    }
    // This request speaks for the worker: later misses here wait for it.
    const local = this.lock(found.key);
    try {
      const disk = await this.fromDisk(shared, domain, primary, headers);
      if (disk?.fresh || !wantLock) {
        local.release();
        return disk ?? found;
      }
      if (disk) found = disk;
      const hash = hashKey(found.key);
      let granted = await shared.acquire(hash, true, Math.max(1, deadline - Date.now()));
      if (granted) {
        // Another worker may have stored it and let go between the look above and the lock.
        const stored = await this.fromDisk(shared, domain, primary, headers);
        if (stored?.fresh) {
          shared.release(hash);
          local.release();
          return stored;
        }
      } else {
        // Another worker's fill ended (or the wait did): its file if it stored one, else fetch
        // (with the lock if it is free now, as the first of several waiters would).
        const after = await this.fromDisk(shared, domain, primary, headers);
        if (after?.fresh) {
          local.release();
          return after;
        }
        granted = await shared.acquire(hash, false, LOCK_WAIT_MS);
      }
      let released = false;
      return {
        ...found,
        lock: {
          release: () => {
            if (released) return;
            released = true;
            if (granted) shared.release(hash);
            local.release();
          },
        },
      };
    } catch (error) {
      local.release();
      throw error;
    }
  }

  /** The shared file for the request (entry, or expired entry), put in this worker's memory when small. */
  private async fromDisk(shared: SharedCacheLinks, domain: string, primary: string, headers: IncomingHttpHeaders): Promise<Settled | undefined> {
    const revision = shared.revisionOf(domain);
    if (revision === undefined) return undefined;
    const varyKey = `${domain}\n${primary}`;
    let vary = this.varyBy.get(varyKey);
    let read: { meta: FileMeta; body?: Buffer; file: string } | undefined;
    if (vary === undefined || vary.length === 0) {
      // The primary key's file: the entry itself (no Vary), or the record of its variants' Vary.
      read = await readShared(this.options.dir, hashKey(varyKey), revision);
      if (read?.meta.vary) {
        vary = read.meta.vary;
        this.varyBy.set(varyKey, vary);
        read = undefined;
      } else vary = [];
    }
    const key = `${varyKey}\n${variantKey(vary, headers)}`;
    if (vary.length > 0) read = await readShared(this.options.dir, hashKey(key), revision);
    if (!read || read.meta.key !== key) return undefined;
    const { meta } = read;
    const entry: Entry = { domain, status: meta.status, headers: meta.headers, flat: flatten(meta.headers), size: meta.size, storedAt: meta.storedAt, expiresAt: meta.expiresAt, age: meta.age };
    if (read.body) entry.body = read.body;
    else entry.file = read.file;
    const fresh = entry.expiresAt > Date.now();
    if (fresh && entry.body) this.remember(key, entry);
    return { key, entry, fresh };
  }

  private remember(key: string, entry: Entry): void {
    (entry.file ? this.disk : this.memory).set(key, entry);
    let keys = this.byDomain.get(entry.domain);
    if (!keys) this.byDomain.set(entry.domain, (keys = new Set()));
    keys.add(key);
  }

  /** Writes a filled entry where the other workers find it; resolves when it is in place (or failed). */
  private async persist(key: string, varyKey: string, vary: string[], entry: Entry, revision: number): Promise<void> {
    const dir = this.options.dir;
    const meta: FileMeta = { key, domain: entry.domain, revision, status: entry.status, headers: entry.headers, size: entry.size, storedAt: entry.storedAt, expiresAt: entry.expiresAt, age: entry.age };
    try {
      if (vary.length > 0) await writeShared(dir, hashKey(varyKey), trailer({ ...meta, key: varyKey, vary, headers: {}, size: 0 }), entry.expiresAt);
      // A large body is in its file already (CacheFill wrote the trailer and moved it in place).
      if (entry.body) await writeShared(dir, fileHash(varyKey, key, vary), Buffer.concat([entry.body, trailer(meta)]), entry.expiresAt);
    } catch {
      // A full or broken disk: the other workers miss and fetch; this one has it in memory.
    }
  }

  /**
   * Takes the fill lock of `key` for a miss about to go upstream: later misses of the key wait
   * for it (waitForFill). Released when the fill ends, or by the caller when nothing is stored.
   */
  lock(key: string): FillLock {
    if (this.filling.has(key)) return { release: () => undefined };
    let resolve!: () => void;
    this.filling.set(key, new Promise<void>((r) => (resolve = r)));
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.filling.delete(key);
        resolve();
      },
    };
  }

  /**
   * Starts storing a response on its way to the client. Its key is made with the response's own
   * Vary (unknown before the first response), from the request's headers.
   */
  beginFill(domain: string, primary: string, request: IncomingHttpHeaders, lock: FillLock, response: { status: number; headers: Record<string, string | string[]>; ttlMs: number; vary: string[] }, largeFiles: boolean): CacheFill {
    const varyKey = `${domain}\n${primary}`;
    const key = `${varyKey}\n${variantKey(response.vary, request)}`;
    const shared = this.shared;
    // Shared: the settings revision the response is stored under, read now (a change meanwhile
    // makes the file one nobody serves).
    const revision = shared?.revisionOf(domain) ?? 0;
    const finish = (entry: Entry | undefined): void => {
      if (entry) {
        const before = this.varyBy.get(varyKey) ?? [];
        if (before.join(',') !== response.vary.join(',')) this.varyBy.set(varyKey, response.vary);
        // Shared, a large file is found on disk by every worker, not listed in one's memory.
        if (!shared || entry.body) this.remember(key, entry);
      }
      if (!entry || !shared) return lock.release();
      // The other workers are told (the lock released) once the file is in place.
      void this.persist(key, varyKey, response.vary, entry, revision).finally(() => lock.release());
    };
    const age = Number(response.headers.age ?? 0) || 0;
    const stored = { ...response.headers };
    delete stored.age;
    delete stored.date;
    delete stored['x-cache'];
    const place = shared && {
      path: sharedPath(this.options.dir, fileHash(varyKey, key, response.vary)),
      trailer: (entry: Omit<Entry, 'flat'>) => trailer({ key, domain, revision, status: entry.status, headers: entry.headers, size: entry.size, storedAt: entry.storedAt, expiresAt: entry.expiresAt, age: entry.age }),
    };
    return new CacheFill(this.options.dir, domain, response.status, stored, response.ttlMs, age, largeFiles, finish, place || undefined);
  }

  /** Drops everything stored for a domain (its settings changed, or it left this edge); shared files are left to the janitor (their revision is no longer served). */
  dropDomain(domain: string): void {
    const keys = this.byDomain.get(domain);
    if (!keys) return;
    for (const key of [...keys]) {
      this.memory.delete(key);
      this.disk.delete(key);
    }
    this.byDomain.delete(domain);
  }

  /** Answers from a stored entry: Age, X-Cache, conditional requests, single byte ranges, HEAD. */
  /** `sink`: where the body goes instead of straight into the response (the bandwidth limit). */
  serve(entry: Entry, status: CacheStatus, req: IncomingMessage, res: ServerResponse, sink?: (res: ServerResponse) => Writable): number {
    // Node adds Date itself (cached for the second); the rest was flattened when stored.
    const age = String(entry.age + Math.floor((Date.now() - entry.storedAt) / 1000));
    if (req.headers.range === undefined && req.headers['if-none-match'] === undefined) {
      res.writeHead(entry.status, entry.flat.concat('age', age, 'x-cache', status, 'content-length', String(entry.size)));
      if (req.method === 'HEAD') res.end();
      else if (sink) this.streamBody(entry, 0, entry.size - 1, res, sink);
      else if (entry.body) res.end(entry.body);
      else this.streamBody(entry, 0, entry.size - 1, res);
      return entry.status;
    }
    const headers: Record<string, string | string[] | number> = { ...entry.headers, age, 'x-cache': status };
    const etag = entry.headers.etag;
    if (etag !== undefined && req.headers['if-none-match'] !== undefined && String(req.headers['if-none-match']).split(/\s*,\s*/).includes(String(etag))) {
      delete headers['content-length'];
      res.writeHead(304, headers);
      res.end();
      return 304;
    }
    let start = 0;
    let end = entry.size - 1;
    let code = entry.status;
    const range = entry.status === 200 ? /^bytes=(\d*)-(\d*)$/.exec(String(req.headers.range ?? '')) : null;
    if (range && (range[1] !== '' || range[2] !== '')) {
      if (range[1] === '') start = Math.max(0, entry.size - Number(range[2]));
      else {
        start = Number(range[1]);
        if (range[2] !== '') end = Math.min(end, Number(range[2]));
      }
      if (start > end || start >= entry.size) {
        res.writeHead(416, { 'content-range': `bytes */${entry.size}`, 'x-cache': status, 'content-length': 0 });
        res.end();
        return 416;
      }
      code = 206;
      headers['content-range'] = `bytes ${start}-${end}/${entry.size}`;
    }
    headers['content-length'] = String(end - start + 1);
    res.writeHead(code, headers);
    if (req.method === 'HEAD' || end < start) res.end();
    else if (entry.body && !sink) res.end(entry.body.subarray(start, end + 1));
    else this.streamBody(entry, start, end, res, sink);
    return code;
  }

  private streamBody(entry: Entry, start: number, end: number, res: ServerResponse, sink?: (res: ServerResponse) => Writable): void {
    if (end < start) return void res.end();
    const stream = entry.body ? Readable.from([entry.body.subarray(start, end + 1)]) : createReadStream(entry.file!, { start, end });
    const target = sink ? sink(res) : res;
    // A client gone mid-body ends the read (and its file handle); nothing is left to throw.
    const stop = () => {
      stream.destroy();
      res.destroy();
    };
    stream.on('error', stop);
    target.on('error', stop);
    res.once('close', () => stream.destroy());
    stream.pipe(target);
  }
}

/** Resolves when `promise` does or at `deadline`, whichever is first. */
async function within(promise: Promise<void>, deadline: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, deadline - Date.now()))))]);
  clearTimeout(timer);
}
