// Preloaded into an edge under benchmark (node --import): on SIGUSR2 it prints one line on
// standard error saying where the process's memory goes, for bench/edge/memory.ts to read.
import { getHeapSpaceStatistics } from 'node:v8';

process.on('SIGUSR2', () => {
  const usage = process.memoryUsage();
  const spaces = Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, s.space_size]));
  process.stderr.write(`BENCH-MEMORY ${JSON.stringify({ ...usage, spaces })}\n`);
});
