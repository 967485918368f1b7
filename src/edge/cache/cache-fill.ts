// One response stored while it streams to the client: in memory up to LARGE_FILE_BYTES, past it a
// temp file (cachelargefiles) renamed into place only when complete with the announced length.
import { createWriteStream, rename, unlink, utimes, type WriteStream } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { flatten, LARGE_FILE_BYTES, MAX_FILE_BYTES, type Entry } from './cache-entry.ts';

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
    /** Shared: where a large file goes when complete, and the trailer it gets first. */
    private readonly place?: { path: string; trailer: (entry: Omit<Entry, 'flat'>) => Buffer },
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
    const flat = flatten(this.headers);
    const entry = { domain: this.domain, status: this.status, headers: { ...this.headers, 'content-length': String(this.size) }, flat, size: this.size, storedAt: Date.now(), expiresAt: Date.now() + this.ttlMs, age: this.age };
    if (!this.file) {
      this.finish({ ...entry, body: Buffer.concat(this.chunks, this.size) });
      this.chunks = [];
      return;
    }
    const temp = this.tempPath;
    const final = this.place?.path ?? temp.replace(/tmp-([^/]+)$/, 'obj-$1');
    if (this.place) this.file.write(this.place.trailer(entry));
    this.file.end(() => {
      if (this.abandoned) return;
      const moveIn = () =>
        rename(temp, final, (error) => {
          if (error) return this.abandon();
          this.finish({ ...entry, file: final });
        });
      // Shared: the expiry is the file's mtime (what the janitor reads).
      if (this.place) utimes(temp, new Date(), new Date(entry.expiresAt), () => moveIn());
      else moveIn();
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
