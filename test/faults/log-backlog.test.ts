// A log reader that stops reading (a stalled log shipper, a full pipe) must not make a process
// grow without end: the backlog of lines waiting for standard output is bounded, lines past it
// are dropped and counted, and every line is either delivered whole or counted as dropped.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const FLOOD = fileURLToPath(new URL('../helpers/log-flood.ts', import.meta.url));

it('a stalled log reader: the backlog stays bounded, dropped lines are counted and said, none is lost silently', async () => {
  // 1,000,000 lines of ~330 bytes: 330 MB, twenty times the backlog's bound.
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', FLOOD], { env: { ...process.env, LINES: '1000000' }, stdio: ['ignore', 'pipe', 'pipe'] });
  // Standard output is not read until the writer is done: the pipe fills and stays full.
  child.stdout.pause();
  let stderr = '';
  const report = await new Promise<{ written: number; dropped: number; backlog: number; startRss: number; peakRss: number; heldHeap: number }>((resolve, reject) => {
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      const line = /FLOOD (.*)\n/.exec(stderr);
      if (line) resolve(JSON.parse(line[1]!));
    });
    child.once('exit', (code) => reject(new Error(`the writer exited (${code}) before reporting:\n${stderr}`)));
  });
  // Now the reader catches up: what was kept arrives, whole lines only, and the process exits.
  let received = 0;
  let partial = '';
  child.stdout.on('data', (d: Buffer) => {
    const text = partial + d.toString();
    const lines = text.split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      expect(JSON.parse(line)).toMatchObject({ msg: 'request', status: 200 });
      received++;
    }
  });
  child.stdout.resume();
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  await new Promise((r) => setTimeout(r, 50));
  console.log(`log backlog: ${report.written} written, ${report.dropped} dropped, ${received} delivered, RSS ${Math.round(report.startRss / 1048576)} MB at start, peak ${Math.round(report.peakRss / 1048576)} MB, heap held after the flood ${Math.round(report.heldHeap / 1048576)} MB`);
  expect(code).toBe(0);
  expect(partial).toBe('');
  expect(report.dropped).toBeGreaterThan(0);
  expect(received + report.dropped).toBe(report.written);
  expect(stderr).toMatch(/log output is not keeping up: \d+ line\(s\) dropped/);
  // What the heap holds once the garbage is collected: the backlog (16 Mi characters), not the
  // 330 MB written; the process's peak also counts the young generation V8 grows under allocation.
  expect(report.heldHeap).toBeLessThan(48 * 1024 * 1024);
  expect(report.peakRss - report.startRss).toBeLessThan(250 * 1024 * 1024);
}, 120_000);
