// Run as a process of its own (node --expose-gc) by test/faults/log-backlog.test.ts: writes LINES access-log-sized
// lines through the service's logger as fast as it can, in turns of the event loop, then says on
// standard error how many were dropped and how much memory the process holds. Its standard output
// is a pipe the test does not read until then.
import { droppedLogLines, LOG_BACKLOG } from '../../src/common/log-output.ts';
import { createLogger } from '../../src/log.ts';

const LINES = Number(process.env.LINES ?? 200_000);
const log = createLogger('info').child({ component: 'edge' });
const path = `/${'a'.repeat(200)}`;
let written = 0;
const gc = (globalThis as { gc?: () => void }).gc!;
gc();
const startRss = process.memoryUsage().rss;
const startHeap = process.memoryUsage().heapUsed;
let peakRss = 0;
function turn(): void {
  for (let i = 0; i < 2000 && written < LINES; i++, written++) log.info({ domain: 'example.com', path, status: 200, n: written }, 'request');
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
  if (written < LINES) setImmediate(turn);
  else {
    // What is still held once the garbage is gone: the backlog.
    gc();
    const heldHeap = process.memoryUsage().heapUsed - startHeap;
    process.stderr.write(`FLOOD ${JSON.stringify({ written, dropped: droppedLogLines(), backlog: LOG_BACKLOG, startRss, peakRss, heldHeap })}\n`);
  }
}
turn();
