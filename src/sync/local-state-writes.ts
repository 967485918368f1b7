// When a consumer's (name server's, edge's) local state cannot be written — its disk is full
// (ENOSPC, EDQUOT) or failing (EIO) — the consumer keeps serving and keeps applying changes in
// memory; what is not written yet is kept by the owner (local-state.ts, edge-local-state.ts) and
// written whole, in one transaction, once a write succeeds, so that what is on disk is always a
// state the consumer served at some revision (a restart catches up from there). This is the part
// both owners share: writes one at a time; no write tried while the disk has no room (LMDB would
// fail it, and print a stack for it); retries, on a backoff, once room returns; and the state
// reported: one warning when writes stop, one line when they resume, the reason in /healthz.
import { existsSync, statfsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { open, type Key, type RootDatabase } from 'lmdb';
import type { Logger } from 'pino';
import { diskWriteFailure, quietly } from '../common/lmdb-commit-guard.ts';

/** Free bytes (besides what is to be written, and a quarter more for LMDB's pages) below which the disk counts as full. */
export const MIN_ROOM = 1_048_576;
/** How often the disk is looked at while writes are failing (a statfs: cheap). */
const CHECK_MS = 1000;
const FIRST_RETRY_MS = 1000;
const MAX_RETRY_MS = 60_000;

/** Bytes free for an unprivileged writer on the file system holding `path` (or its nearest existing parent). */
export function freeBytes(path: string): number {
  let at = path;
  while (!existsSync(at) && dirname(at) !== at) at = dirname(at);
  try {
    const stats = statfsSync(at);
    return stats.bavail * stats.bsize;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/** An error as the disk gives it, for a write not even tried (`what`: waits for room). */
export function noRoom(free: number, what?: string, needed = MIN_ROOM): NodeJS.ErrnoException {
  return Object.assign(new Error(`the disk is full (${free} bytes free, ${needed} wanted)${what ? `: ${what} waits for room` : ''}`), { code: 'ENOSPC' });
}

/**
 * Opens the LMDB environment of a local state, refusing (ENOSPC, before LMDB is touched) to create
 * one without room: a new environment on a full disk faults (SIGBUS) on its memory-mapped lock file.
 */
export function openLocalDb<K extends Key>(path: string): RootDatabase<unknown, K> {
  const fresh = !existsSync(join(path, 'data.mdb')) || !existsSync(join(path, 'lock.mdb'));
  const free = freeBytes(path);
  if (fresh && free < MIN_ROOM) throw noRoom(free, 'creating the local state');
  return open<unknown, K>({ path, compression: false, noSubdir: false });
}

/** LMDB's close waits for ever after a commit that failed (lmdb-js 3.5): it is not waited for longer. */
const CLOSE_BOUND_MS = 2000;

/** Closes a local state's environment, waiting at most CLOSE_BOUND_MS (see above). */
export async function closeLocalDb(db: { close(): Promise<void> }): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const closing = db.close();
  quietly(closing);
  await Promise.race([closing, new Promise((resolve) => (timer = setTimeout(resolve, CLOSE_BOUND_MS)))]);
  clearTimeout(timer);
}

export interface LocalStateWritesOptions {
  dir: string;
  log?: Logger;
  /** Prefix of log lines ("sync", "edge sync"). */
  who: string;
  /** Writes everything unwritten; true when nothing is left unwritten. Throws what the disk threw. */
  flush: () => Promise<boolean>;
  /** Bytes waiting to be written, or undefined when nothing is. */
  unwritten: () => number | undefined;
  /** Free bytes wanted before writing `bytes` (tests ask for none, so that LMDB's own failures are what is handled). */
  roomWanted?: (bytes: number) => number;
}

const roomWanted = (bytes: number) => MIN_ROOM + Math.ceil(bytes * 1.25);

export class LocalStateWrites {
  /** Why what is served is not all on disk (undefined: it is, or it will be at the next write). */
  problem: string | undefined;
  /** Since when (ms) writes have been failing. */
  since = 0;
  private lock: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private delay = FIRST_RETRY_MS;
  private nextTry = 0;
  private closed = false;

  constructor(private readonly options: LocalStateWritesOptions) {}

  /** Runs `fn` when no other write runs (writes are one at a time). */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.lock.then(fn);
    this.lock = run.catch(() => undefined);
    return run;
  }

  /** Whether the disk has room to write `bytes`. */
  roomFor(bytes: number): boolean {
    return freeBytes(this.options.dir) >= (this.options.roomWanted ?? roomWanted)(bytes);
  }

  /**
   * Writes what is unwritten, unless the disk has no room or a failed write is too recent to try
   * again; a failure of the disk leaves it unwritten (and is reported), never rejects.
   */
  write(): Promise<void> {
    return this.exclusive(async () => {
      const bytes = this.options.unwritten();
      if (!this.roomFor(bytes ?? 0)) {
        if (bytes !== undefined) this.fail(noRoom(freeBytes(this.options.dir), undefined, (this.options.roomWanted ?? roomWanted)(bytes)).message, false);
        return;
      }
      if (this.problem && Date.now() < this.nextTry) return;
      try {
        if (await this.options.flush()) this.recovered();
      } catch (error) {
        const disk = await diskWriteFailure(error);
        if (disk === undefined) throw error;
        this.fail(disk, true);
      }
    });
  }

  /** Writes are failing (`tried`: a write failed, so the next waits longer): one warning on entering. */
  fail(reason: string, tried: boolean): void {
    if (tried) {
      this.nextTry = Date.now() + this.delay;
      this.delay = Math.min(this.delay * 2, MAX_RETRY_MS);
    }
    if (this.problem === undefined) {
      this.since = Date.now();
      this.options.log?.warn(
        { dir: this.options.dir, err: reason },
        `${this.options.who}: cannot write the local state (disk full or failing); serving it and applying changes in memory, and writing them once the disk takes writes again`,
      );
      if (!this.closed) {
        this.timer = setInterval(() => this.retry(), CHECK_MS);
        this.timer.unref();
      }
    }
    this.problem = reason;
  }

  /** Everything served is written: one line when leaving the failing state. */
  recovered(): void {
    if (this.problem === undefined) return;
    this.options.log?.info({ dir: this.options.dir, failingMs: Date.now() - this.since }, `${this.options.who}: the local state is written again`);
    this.problem = undefined;
    this.delay = FIRST_RETRY_MS;
    this.nextTry = 0;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private retry(): void {
    if (this.closed || this.problem === undefined) return;
    if (!this.roomFor(this.options.unwritten() ?? 0) || Date.now() < this.nextTry) return;
    this.write().catch((error: unknown) => this.options.log?.error({ err: (error as Error).message }, `${this.options.who}: writing the local state failed`));
  }

  /** Stops retrying; a last write if there is room (what stays unwritten is caught up from the API at the next start). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.nextTry = 0;
    if (this.options.unwritten() !== undefined) await this.write().catch(() => undefined);
    await this.lock;
  }
}
