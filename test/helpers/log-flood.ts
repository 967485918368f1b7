// Run as a process of its own (node --expose-gc) by test/faults/log-backlog.test.ts: writes LINES access-log-sized
// lines through the service's logger as fast as it can, in turns of the event loop, then says on
// standard error how many were dropped and how much memory the process holds, and once the
// output has taken or failed everything, the final count of dropped lines.
import { droppedLogLines, LOG_BACKLOG, standardOutput } from '../../src/common/log-output.ts';
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
    // Then, once what was kept is written (or has failed), the final count.
    const drained = setInterval(() => {
      if (standardOutput().unwritten > 0) return;
      clearInterval(drained);
      process.stderr.write(`DRAINED ${JSON.stringify({ dropped: droppedLogLines() })}\n`);
    }, 20);
  }
}
turn();
