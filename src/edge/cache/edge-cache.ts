// The edge's cache: a memory LRU bounded in bytes for ordinary objects, and files on disk for large
// ones (cachelargefiles), written to a temp file while the response streams to the client and
// renamed into place only when complete with the announced length. Variants by the response's
// Vary. One upstream fetch per key at a time: later misses wait for the first fill (a cache lock,
// like nginx's proxy_cache_lock) and are answered from it. A domain's entries are dropped when its
// settings change.
import { createReadStream, createWriteStream, mkdirSync, rename, rmSync, unlink, type WriteStream } from 'node:fs';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { Readable, type Writable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { variantKey } from './cache-rules.ts';

/** Responses up to this size are kept in memory; beyond it only on disk (cachelargefiles) or not at all. */
export const LARGE_FILE_BYTES = 8 * 1_048_576;
/** The largest file cached on disk (Cloudflare's cap). */
export const MAX_FILE_BYTES = 512 * 1_048_576;
/** How long a miss waits for another request's fill of the same key. */
const LOCK_WAIT_MS = 5000;

export type CacheStatus = 'HIT' | 'MISS' | 'EXPIRED' | 'BYPASS';

export interface FillLock {
  release(): void;
}

interface Entry {
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

export interface EdgeCacheOptions {
  memoryBytes: number;
  diskBytes: number;
  dir: string;
}

export class EdgeCache {
  private readonly memory: LRUCache<string, Entry>;
  private readonly disk: LRUCache<string, Entry>;
  /** domain + primary key → the request headers its responses vary by. */
  private readonly varyBy = new LRUCache<string, string[]>({ max: 200_000 });
  private readonly byDomain = new Map<string, Set<string>>();
  private readonly filling = new Map<string, Promise<void>>();

  constructor(private readonly options: EdgeCacheOptions) {
    // Files left by an earlier run are not indexed anywhere: start the directory empty.
    rmSync(options.dir, { recursive: true, force: true });
    mkdirSync(options.dir, { recursive: true });
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
    const finish = (entry: Entry | undefined): void => {
      if (entry) {
        const before = this.varyBy.get(varyKey) ?? [];
        if (before.join(',') !== response.vary.join(',')) this.varyBy.set(varyKey, response.vary);
        (entry.file ? this.disk : this.memory).set(key, entry);
        let keys = this.byDomain.get(domain);
        if (!keys) this.byDomain.set(domain, (keys = new Set()));
        keys.add(key);
      }
      lock.release();
    };
    const age = Number(response.headers.age ?? 0) || 0;
    const stored = { ...response.headers };
    delete stored.age;
    delete stored.date;
    delete stored['x-cache'];
    return new CacheFill(this.options.dir, domain, response.status, stored, response.ttlMs, age, largeFiles, finish);
  }

  /** Drops everything stored for a domain (its settings changed, or it left this edge). */
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

/** One response being stored while it streams to the client. */
export class CacheFill {
  private chunks: Buffer[] = [];
  private size = 0;
  private file: WriteStream | undefined;
  private tempPath = '';
  private abandoned = false;
  private readonly expected: number | undefined;

  constructor(
    private readonly dir: string,
    private readonly domain: string,
    private readonly status: number,
    private readonly headers: Record<string, string | string[]>,
    private readonly ttlMs: number,
    private readonly age: number,
    private readonly largeFiles: boolean,
    private readonly finish: (entry: Entry | undefined) => void,
  ) {
    const length = headers['content-length'];
    this.expected = length === undefined ? undefined : Number(length);
    if (this.expected !== undefined && this.expected > LARGE_FILE_BYTES) {
      if (!largeFiles || this.expected > MAX_FILE_BYTES) this.abandon();
      else this.toFile();
    }
  }

  private toFile(): void {
    this.tempPath = join(this.dir, `tmp-${randomBytes(12).toString('hex')}`);
    this.file = createWriteStream(this.tempPath);
    this.file.on('error', () => this.abandon());
    for (const chunk of this.chunks) this.file.write(chunk);
    this.chunks = [];
  }

  chunk(data: Buffer): void {
    if (this.abandoned) return;
    this.size += data.length;
    if (this.file) {
      if (this.size > MAX_FILE_BYTES) return this.abandon();
      this.file.write(data);
      return;
    }
    this.chunks.push(data);
    if (this.size > LARGE_FILE_BYTES) {
      if (this.largeFiles) this.toFile();
      else this.abandon();
    }
  }

  /** The response ended; `complete` false when it was cut short. */
  end(complete: boolean): void {
    if (this.abandoned) return;
    if (!complete || (this.expected !== undefined && this.expected !== this.size)) return this.abandon();
    const flat: string[] = [];
    for (const [name, value] of Object.entries(this.headers)) {
      if (name === 'content-length') continue;
      for (const one of Array.isArray(value) ? value : [value]) flat.push(name, one);
    }
    const entry = { domain: this.domain, status: this.status, headers: { ...this.headers, 'content-length': String(this.size) }, flat, size: this.size, storedAt: Date.now(), expiresAt: Date.now() + this.ttlMs, age: this.age };
    if (!this.file) {
      this.finish({ ...entry, body: Buffer.concat(this.chunks, this.size) });
      this.chunks = [];
      return;
    }
    const temp = this.tempPath;
    const final = temp.replace(/tmp-([^/]+)$/, 'obj-$1');
    this.file.end(() => {
      if (this.abandoned) return;
      rename(temp, final, (error) => {
        if (error) return this.abandon();
        this.finish({ ...entry, file: final });
      });
    });
  }

  abandon(): void {
    if (this.abandoned) return;
    this.abandoned = true;
    this.chunks = [];
    if (this.file) {
      const temp = this.tempPath;
      this.file.destroy();
      unlink(temp, () => undefined);
    }
    this.finish(undefined);
  }
}
