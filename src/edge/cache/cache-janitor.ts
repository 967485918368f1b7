// The shared cache directory's keeper (the edge role's primary, for all its workers; see
// edge-cache.ts "Shared"): empties it at start (files of an earlier run are not trusted), then
// every minute deletes expired files (a file's mtime is its expiry) and temp files no fill has
// written to for ten minutes (a worker that died mid-fill), and while the directory holds more
// than its bound, the files closest to expiry until it is back to nine tenths.
import { mkdirSync, rmSync } from 'node:fs';
import { readdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';

const SWEEP_MS = 60_000;
const TEMP_IDLE_MS = 10 * 60_000;

export class CacheJanitor {
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;
  /** What the last sweep found (after its deletions). */
  bytes = 0;
  files = 0;

  constructor(
    private readonly dir: string,
    private readonly boundBytes: number,
    private readonly log: Logger,
    private readonly sweepMs = SWEEP_MS,
  ) {}

  /** Empties the directory and makes its 256 subdirectories (before any worker starts). */
  prepare(): void {
    rmSync(this.dir, { recursive: true, force: true });
    for (let i = 0; i < 256; i++) mkdirSync(join(this.dir, i.toString(16).padStart(2, '0')), { recursive: true });
  }

  start(): void {
    this.timer = setInterval(() => void this.sweep(), this.sweepMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.sweeping;
  }

  sweep(): Promise<void> {
    this.sweeping ??= this.walk()
      .catch((error: Error) => this.log.warn({ err: error.message }, 'edge cache: sweep failed'))
      .finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  private async walk(): Promise<void> {
    const now = Date.now();
    const kept: Array<{ path: string; size: number; expires: number }> = [];
    let removed = 0;
    const remove = async (path: string) => {
      await unlink(path).catch(() => undefined);
      removed++;
    };
    for (const name of await readdir(this.dir)) {
      const path = join(this.dir, name);
      if (name.startsWith('tmp-')) {
        const info = await stat(path).catch(() => undefined);
        if (info && now - info.mtimeMs > TEMP_IDLE_MS) await remove(path);
        continue;
      }
      if (name.length !== 2) continue;
      for (const file of await readdir(path).catch(() => [] as string[])) {
        const full = join(path, file);
        const info = await stat(full).catch(() => undefined);
        if (!info) continue;
        if (info.mtimeMs <= now) await remove(full);
        else kept.push({ path: full, size: info.size, expires: info.mtimeMs });
      }
    }
    let bytes = kept.reduce((sum, f) => sum + f.size, 0);
    if (bytes > this.boundBytes) {
      kept.sort((a, b) => a.expires - b.expires);
      while (kept.length > 0 && bytes > this.boundBytes * 0.9) {
        const file = kept.shift()!;
        await remove(file.path);
        bytes -= file.size;
      }
    }
    this.bytes = bytes;
    this.files = kept.length;
    if (removed > 0) this.log.debug({ removed, files: this.files, bytes }, 'edge cache: swept');
  }
}
