// Where an edge's resident memory goes: its own report (bench/edge/memory-report.mjs: the V8
// heap by space, buffers outside it) beside the kernel's view (/proc: anonymous, file-backed).
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

interface Report {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  spaces: Record<string, number>;
}

const mb = (bytes: number) => `${(bytes / 1048576).toFixed(0)}`;

function report(child: ChildProcess, timeoutMs = 5000): Promise<Report> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => done(new Error('no memory report (was bench/edge/memory-report.mjs preloaded?)')), timeoutMs);
    const onData = (d: Buffer) => {
      text += d.toString();
      const m = /BENCH-MEMORY (\{.*\})\n/.exec(text);
      if (m) done(undefined, JSON.parse(m[1]!) as Report);
    };
    const done = (error?: Error, value?: Report) => {
      clearTimeout(timer);
      child.stderr!.off('data', onData);
      if (error) reject(error);
      else resolve(value!);
    };
    child.stderr!.on('data', onData);
    child.kill('SIGUSR2');
  });
}

/** One line: RSS, anonymous and file-backed; the V8 heap (by its large spaces); buffers outside it. */
export async function memoryBreakdown(child: ChildProcess): Promise<string> {
  const r = await report(child);
  const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0) * 1024;
  const spaces = Object.entries(r.spaces)
    .filter(([, size]) => size >= 4 * 1048576)
    .map(([name, size]) => `${name.replace(/_space$/, '')} ${mb(size)}`)
    .join(', ');
  return (
    `RSS ${mb(kib('VmRSS'))} MB (anonymous ${mb(kib('RssAnon'))}, files ${mb(kib('RssFile'))}, shared memory ${mb(kib('RssShmem'))}); ` +
    `V8 heap ${mb(r.heapTotal)} MB reserved, ${mb(r.heapUsed)} used (${spaces}); buffers outside the heap ${mb(r.external)} MB (ArrayBuffers ${mb(r.arrayBuffers)})`
  );
}
