// Standard output for the process's log lines, through a bounded backlog: a reader slower than
// the lines come (a stalled log shipper, a full pipe) would otherwise make the backlog, and the
// process, grow without end — an edge at 50,000 requests a second writes ~15 MB of access log a
// second. Past the bound new lines are dropped, counted (`droppedLogLines`, on the edge's
// /metrics) and said on standard error at most every 10 s; the process never waits for its log.
import { pino } from 'pino';

/** Characters waiting to be written before new lines are dropped (about a second of a busy edge's access log). */
export const LOG_BACKLOG = 16 * 1024 * 1024;
const WARN_EVERY_MS = 10_000;

let dropped = 0;
let droppedSinceWarning = 0;
let warnedAt = 0;

/** Log lines dropped since the process started because the output did not keep up. */
export function droppedLogLines(): number {
  return dropped;
}

function lineCount(data: string | Buffer): number {
  const text = typeof data === 'string' ? data : data.toString('latin1');
  let lines = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) lines++;
  return Math.max(1, lines);
}

function onDrop(data: string | Buffer): void {
  const lines = lineCount(data);
  dropped += lines;
  droppedSinceWarning += lines;
  const now = Date.now();
  if (now - warnedAt < WARN_EVERY_MS) return;
  warnedAt = now;
  process.stderr.write(`palisade: log output is not keeping up: ${droppedSinceWarning} line(s) dropped (backlog bound ${LOG_BACKLOG / 1024 / 1024} MiB)\n`);
  droppedSinceWarning = 0;
}

let output: ReturnType<typeof pino.destination> | undefined;

/** Standard output with its bounded backlog, one per process (every logger writes through it). */
export function standardOutput(): ReturnType<typeof pino.destination> {
  if (!output) {
    output = pino.destination({ dest: 1, sync: false, maxLength: LOG_BACKLOG });
    // (pino.destination also writes what is waiting when the process exits, and stops at a closed pipe.)
    output.on('drop', onDrop);
  }
  return output;
}
