// A log reader that stops reading (a stalled log shipper, a full pipe) must not make a process
// grow without end: the backlog of lines waiting for standard output is bounded, lines past it
// are dropped and counted, and every line is either delivered whole or counted as dropped.
import { spawn } from 'node:child_process';
import { closeSync, openSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { mountTmpfs } from '../helpers/tmpfs.ts';

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
  const final = JSON.parse(/DRAINED (.*)\n/.exec(stderr)?.[1] ?? 'null') as { dropped: number } | null;
  console.log(`log backlog: ${report.written} written, ${report.dropped} dropped, ${received} delivered, RSS ${Math.round(report.startRss / 1048576)} MB at start, peak ${Math.round(report.peakRss / 1048576)} MB, heap held after the flood ${Math.round(report.heldHeap / 1048576)} MB`);
  expect(code).toBe(0);
  expect(partial).toBe('');
  expect(report.dropped).toBeGreaterThan(0);
  // Delivered whole or counted: the reader caught up, so nothing more was dropped after the report.
  expect(final, stderr).toEqual({ dropped: report.dropped });
  expect(received + report.dropped).toBe(report.written);
  expect(stderr).toMatch(/\d+ log line\(s\) dropped: the log output is not keeping up/);
  // What the heap holds once the garbage is collected: the backlog (16 Mi characters waiting, as
  // many in the write in flight), not the 330 MB written; the process's peak also counts the young
  // generation V8 grows under allocation.
  expect(report.heldHeap).toBeLessThan(64 * 1024 * 1024);
  expect(report.peakRss - report.startRss).toBeLessThan(250 * 1024 * 1024);
}, 120_000);

/** Runs the writer with `stdout` as its standard output; resolves with its report, what it said and how it ended. */
async function flood(lines: number, stdout: number | 'pipe', whileRunning?: (child: ReturnType<typeof spawn>) => void) {
  const started = performance.now();
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', FLOOD], { env: { ...process.env, LINES: String(lines) }, stdio: ['ignore', stdout, 'pipe'] });
  whileRunning?.(child);
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const line = /FLOOD (.*)\n/.exec(stderr);
  const final = /DRAINED (.*)\n/.exec(stderr);
  return { code, stderr, report: line ? (JSON.parse(line[1]!) as { written: number; dropped: number }) : undefined, dropped: final ? (JSON.parse(final[1]!) as { dropped: number }).dropped : undefined, ms: performance.now() - started };
}

it('a full disk behind standard output: the process lives on, every line is counted as dropped, and it exits', async () => {
  // /dev/full fails every write with ENOSPC, as a log file on a full disk does.
  const fd = openSync('/dev/full', 'w');
  const result = await flood(20_000, fd);
  closeSync(fd);
  expect(result.report, result.stderr).toBeDefined();
  expect(result.code, result.stderr).toBe(0);
  expect(result.dropped).toBe(result.report!.written);
  expect(result.stderr).toMatch(/log line\(s\) dropped: writing the log failed \(ENOSPC\)/);
  expect(result.stderr).not.toMatch(/Error|uncaught/i);
}, 60_000);

it('a log file on a disk that fills up: what fits is written, the rest counted as dropped, and the process exits', async () => {
  // 2 MiB of disk for ~6.6 MB of lines (a file is written asynchronously, as a pipe is).
  const disk = await mountTmpfs('palisade-log-full', '2m');
  try {
    const path = join(disk.path, 'palisade.log');
    const fd = openSync(path, 'w');
    const result = await flood(20_000, fd);
    closeSync(fd);
    expect(result.report, result.stderr).toBeDefined();
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/log line\(s\) dropped: writing the log failed \(ENOSPC\)/);
    // Every line either in the file or counted (a write that failed part-way may leave half a line).
    const kept = statSync(path).size / 330;
    expect(result.dropped! + kept).toBeGreaterThan(20_000 * 0.95);
    expect(result.dropped).toBeLessThan(20_000);
  } finally {
    await disk.unmount();
  }
}, 60_000);

it('a log reader that goes away (closed pipe): the process lives on and exits', async () => {
  const result = await flood(200_000, 'pipe', (child) => {
    // The reader reads a little, then closes its end.
    child.stdout!.once('data', () => child.stdout!.destroy());
  });
  expect(result.report, result.stderr).toBeDefined();
  expect(result.code, result.stderr).toBe(0);
  expect(result.dropped).toBeGreaterThan(0);
  expect(result.stderr).toMatch(/log line\(s\) dropped: the log output was closed/);
}, 60_000);

it('standard error on the same closed pipe (2>&1 into a reader that went away): the warning cannot end the process', async () => {
  const child = spawn('bash', ['-c', '"$0" --expose-gc --import tsx "$1" 2>&1 | head -c 1000 > /dev/null; echo "status ${PIPESTATUS[0]}"', process.execPath, FLOOD], { env: { ...process.env, LINES: '100000' }, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  await new Promise((resolve) => child.once('exit', resolve));
  expect(out.trim()).toBe('status 0');
}, 60_000);
