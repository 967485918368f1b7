// Standard output for the process's log lines, never able to stop or grow the process:
// - a reader slower than the lines come (a stalled log shipper, a full pipe) would otherwise make
//   the backlog, and the process, grow without end — an edge at 50,000 requests a second writes
//   ~15 MB of access log a second: past a bound (16 MiB waiting) new lines are dropped;
// - a write that fails (a full disk behind a redirected stdout, a closed pipe) drops those lines
//   instead of throwing from a stream (pino's default destination ends the process on the first
//   ENOSPC, then retries it forever on the way out, so the process neither serves nor exits);
// - on exit what is waiting gets a bounded last try (two seconds), never an endless one.
// Dropped lines are counted (`droppedLogLines`, on the edge's /metrics) and said on standard
// error at most every 10 s. Writes are asynchronous (the event loop never waits for a log reader or
// a disk), but to /dev/null, and gathered for up to 5 ms.
import { fstatSync, write, writeSync } from 'node:fs';
import { isatty } from 'node:tty';

/** Characters waiting to be written before new lines are dropped (about a second of a busy edge's access log). */
export const LOG_BACKLOG = 16 * 1024 * 1024;
const WARN_EVERY_MS = 10_000;
/** A pipe that is full at exit is waited for two seconds at most (in steps of 10 ms). */
const EXIT_TRIES = 200;

let dropped = 0;
let droppedSinceWarning = 0;
let warnedAt = 0;

/** Log lines dropped since the process started because the output did not keep up or failed. */
export function droppedLogLines(): number {
  return dropped;
}

function lineCount(data: string | Buffer): number {
  let lines = 0;
  for (let at = data.indexOf('\n'); at !== -1; at = data.indexOf('\n', at + 1)) lines++;
  return Math.max(1, lines);
}

function drop(data: string | Buffer, why: string): void {
  const lines = lineCount(data);
  dropped += lines;
  droppedSinceWarning += lines;
  const now = Date.now();
  if (now - warnedAt < WARN_EVERY_MS) return;
  warnedAt = now;
  try {
    process.stderr.write(`palisade: ${droppedSinceWarning} log line(s) dropped: ${why}\n`);
  } catch {
    // Standard error gone too: the count on /metrics remains.
  }
  droppedSinceWarning = 0;
}

const sleep10 = new Int32Array(new SharedArrayBuffer(4));

/**
 * Lines are gathered this long (or until this much waits) before a write is handed to libuv's
 * thread pool: each hand-off costs more than the write of a few lines, and a busy edge's turns of
 * the event loop carry only a few (on a proxied miss the hand-offs cost ~10 % of its CPU time).
 */
const GATHER_MS = 5;
const GATHER_CHARACTERS = 64 * 1024;

/** A file descriptor written asynchronously, one write in flight, with a bounded backlog. */
export class LogOutput {
  /** Text waiting for the write in flight to finish. */
  private waiting: string[] = [];
  private waitingLength = 0;
  /** The bytes of the write in flight (what is left of them after a partial write). */
  private inFlight: Buffer | undefined;
  /** The reader is gone for good (EPIPE): everything from now on is dropped. */
  private closed = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private gatherTimer: NodeJS.Timeout | undefined;

  /**
   * `direct`: the descriptor is a device that takes writes at once (/dev/null): written there and
   * then. Anything else (a file, a pipe, a socket, a terminal) is written asynchronously, one write
   * in flight: a slow one must not stop the process.
   */
  constructor(
    private readonly fd: number,
    private readonly direct = false,
    private readonly backlog = LOG_BACKLOG,
  ) {}

  /** Characters not yet written (waiting, or in a write not finished). */
  get unwritten(): number {
    return this.waitingLength + (this.inFlight?.length ?? 0);
  }

  /** pino's stream interface: one or more whole lines. */
  write(text: string): boolean {
    if (this.closed) {
      drop(text, 'the log output was closed');
      return false;
    }
    if (this.direct) return this.writeNow(text);
    if (this.waitingLength + text.length > this.backlog) {
      drop(text, `the log output is not keeping up (backlog bound ${this.backlog / 1024 / 1024} MiB)`);
      return false;
    }
    this.waiting.push(text);
    this.waitingLength += text.length;
    this.schedule();
    return true;
  }

  /** The next write: now when enough waits, else once the gathering time is over. */
  private schedule(): void {
    if (this.inFlight || this.retryTimer || this.waitingLength === 0) return;
    if (this.waitingLength >= GATHER_CHARACTERS) {
      if (this.gatherTimer) clearTimeout(this.gatherTimer);
      this.gatherTimer = undefined;
      return this.next();
    }
    if (this.gatherTimer) return;
    // Unreferenced: lines still gathering when the process ends are written by flushSync at exit.
    this.gatherTimer = setTimeout(this.gathered, GATHER_MS);
    this.gatherTimer.unref();
  }

  private readonly gathered = (): void => {
    this.gatherTimer = undefined;
    if (!this.inFlight && !this.retryTimer) this.next();
  };

  private writeNow(text: string): boolean {
    let bytes = Buffer.from(text);
    try {
      while (bytes.length > 0) bytes = bytes.subarray(writeSync(this.fd, bytes));
      return true;
    } catch (error) {
      // A full disk, an I/O error: these lines are lost, later ones are tried.
      drop(bytes, `writing the log failed (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
      return false;
    }
  }

  private next(): void {
    if (this.waiting.length === 0) return;
    const text = this.waiting.length === 1 ? this.waiting[0]! : this.waiting.join('');
    this.waiting = [];
    this.waitingLength = 0;
    this.send(Buffer.from(text));
  }

  private send(bytes: Buffer): void {
    this.inFlight = bytes;
    write(this.fd, bytes, 0, bytes.length, null, (error, written) => {
      if (!error) {
        const rest = written < bytes.length ? bytes.subarray(written) : undefined;
        if (rest) return this.send(rest);
        this.inFlight = undefined;
        return this.schedule();
      }
      if (error.code === 'EAGAIN' || error.code === 'EBUSY' || error.code === 'EINTR') {
        // Full for now: tried again shortly; what comes meanwhile waits (within the bound).
        this.retryTimer = setTimeout(() => {
          this.retryTimer = undefined;
          this.send(bytes);
        }, 10);
        this.retryTimer.unref();
        return;
      }
      this.inFlight = undefined;
      if (error.code === 'EPIPE') {
        this.closed = true;
        drop(bytes, 'the log output was closed');
        const rest = this.waiting.join('');
        this.waiting = [];
        this.waitingLength = 0;
        if (rest) drop(rest, 'the log output was closed');
        return;
      }
      // A full disk, an I/O error: these lines are lost, later ones are tried.
      drop(bytes, `writing the log failed (${error.code ?? error.message})`);
      this.schedule();
    });
  }

  /** What is waiting, written now (at exit): a bounded number of tries, errors given up on. */
  flushSync(): void {
    if (this.closed) return;
    // A write in flight is the kernel's already (written again, its lines would appear twice);
    // one waiting to be tried again is not.
    const unsent = this.retryTimer ? this.inFlight : undefined;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    if (this.gatherTimer) clearTimeout(this.gatherTimer);
    this.gatherTimer = undefined;
    let bytes = Buffer.concat([unsent ?? Buffer.alloc(0), Buffer.from(this.waiting.join(''))]);
    this.waiting = [];
    this.waitingLength = 0;
    for (let tries = 0; bytes.length > 0 && tries < EXIT_TRIES; ) {
      try {
        bytes = bytes.subarray(writeSync(this.fd, bytes));
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code !== 'EAGAIN' && code !== 'EBUSY' && code !== 'EINTR') break;
        tries++;
        Atomics.wait(sleep10, 0, 0, 10);
      }
    }
    if (bytes.length > 0) drop(bytes, 'the log output did not take them before the process ended');
  }
}

let output: LogOutput | undefined;

/** Standard output for every logger of the process (one backlog, one write in flight). */
export function standardOutput(): LogOutput {
  if (!output) {
    let direct = false;
    try {
      const stat = fstatSync(1);
      // /dev/null and its kind: at once. A file is not: a write into the page cache can wait
      // on the disk's journal and writeback (100+ ms stalls of a busy edge's event loop were
      // measured with an access log written so); nor a terminal (a paused one blocks) or a pipe.
      direct = stat.isCharacterDevice() && !isatty(1);
    } catch {
      // No standard output at all: written (and failing) asynchronously.
    }
    // Standard error shares a closed pipe with standard output (2>&1 into a shipper that died):
    // its failure to carry the warning must not end the process (an unhandled 'error').
    process.stderr.on('error', () => undefined);
    const out = (output = new LogOutput(1, direct));
    // What waits is written before the process ends (after a graceful end nothing does).
    process.once('exit', () => out.flushSync());
  }
  return output;
}
