// Loaded into the measured server (NODE_OPTIONS=--import): its event loop's delays, told on
// SIGUSR2 as one line `event-loop-delay {"maxMs":…,"p99Ms":…}` on stderr, then counted afresh.
import { monitorEventLoopDelay } from 'node:perf_hooks';

const histogram = monitorEventLoopDelay({ resolution: 5 });
histogram.enable();
process.on('SIGUSR2', () => {
  const ms = (ns) => Math.round(ns / 1e5) / 10;
  process.stderr.write(`event-loop-delay ${JSON.stringify({ maxMs: ms(histogram.max), p99Ms: ms(histogram.percentile(99)) })}\n`);
  histogram.reset();
});
