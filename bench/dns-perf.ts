// DNS benchmark: dnsperf against our server and against NSD with the same 1,000 zones × ~20
// records and the same query mix, server pinned to CPU 1, dnsperf to CPU 0. Prints qps, average
// and p99 latency, lost %, and our/NSD ratios.
//
//   npm run bench:dns                       (needs dnsperf, nsd and taskset: Debian dnsperf, nsd, util-linux)
//   BENCH_SECONDS=15 BENCH_ZONES=1000 npm run bench:dns
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { queryFile, workloadZones } from './dns/workload.ts';
import { nsd as startNsd } from './dns/servers.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const ZONES = Number(process.env.BENCH_ZONES ?? 1000);
const SERVER_CPU = process.env.BENCH_SERVER_CPU ?? '1';
const CLIENT_CPU = process.env.BENCH_CLIENT_CPU ?? '0';

for (const tool of ['dnsperf', 'nsd', 'taskset']) {
  if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) {
    console.error(`bench:dns needs ${tool} (Debian: apt-get install dnsperf nsd util-linux)`);
    process.exit(2);
  }
}

interface PerfResult {
  qps: number;
  avgMs: number;
  p99Ms?: number;
  lostPct: number;
}

function dnsperf(port: number, file: string, extra: string[], verbose = false): PerfResult {
  const args = ['-c', CLIENT_CPU, 'dnsperf', '-s', '127.0.0.1', '-p', String(port), '-d', file, '-c', '20', '-q', '200', '-T', '1', '-l', String(SECONDS), ...extra];
  if (verbose) args.push('-v');
  const run = spawnSync('taskset', args, { encoding: 'utf8', maxBuffer: 1024 * 1024 * 1024 });
  const out = run.stdout;
  const qps = Number(/Queries per second:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
  const avg = Number(/Average Latency \(s\):\s+([\d.]+)/.exec(out)?.[1] ?? NaN) * 1000;
  const sent = Number(/Queries sent:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const lost = Number(/Queries lost:\s+(\d+)/.exec(out)?.[1] ?? 0);
  let p99: number | undefined;
  if (verbose) {
    // Verbose lines end in the latency in seconds: "> NOERROR www.z1.example A 0.000123".
    const latencies = [...out.matchAll(/^> \S+ .* ([\d.]+)$/gm)].map((m) => Number(m[1]));
    latencies.sort((a, b) => a - b);
    if (latencies.length > 0) p99 = latencies[Math.floor(latencies.length * 0.99)]! * 1000;
  }
  if (!Number.isFinite(qps)) throw new Error(`dnsperf failed:\n${out}\n${run.stderr}`);
  return { qps, avgMs: avg, p99Ms: p99, lostPct: sent ? (lost / sent) * 100 : 0 };
}

function waitFor(child: ChildProcess, pattern: RegExp, what: string): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`${what} did not start:\n${out}`)), 60_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = pattern.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${what} exited (${code}):\n${out}`)));
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.removeAllListeners('exit');
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

async function ours(cache: boolean): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn('taskset', ['-c', SERVER_CPU, process.execPath, '--import', 'tsx', 'bench/dns/server-process.ts'], {
    env: { ...process.env, BENCH_ZONES: String(ZONES), BENCH_CACHE: cache ? '1' : '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const m = await waitFor(child, /ready (\d+)/, 'palisade DNS');
  return { child, port: Number(m[1]) };
}

/** NSD with one server process, pinned like ours, on the same zones. */
const nsd = (dir: string) => startNsd(dir, workloadZones(ZONES), 1, SERVER_CPU);

const fmt = (r: PerfResult) =>
  `${Math.round(r.qps).toString().padStart(8)} qps   avg ${r.avgMs.toFixed(3)} ms${r.p99Ms === undefined ? '' : `   p99 ${r.p99Ms.toFixed(3)} ms`}   lost ${r.lostPct.toFixed(2)}%`;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'palisade-dnsperf-'));
  try {
    const queries = join(dir, 'queries.txt');
    writeFileSync(queries, queryFile(ZONES, 100_000));
    console.log(`DNS benchmark: ${ZONES} zones × 20 records, 100k-line query mix, ${SECONDS} s per run, server on CPU ${SERVER_CPU}, dnsperf on CPU ${CLIENT_CPU} (-c 20 -q 200 -T 1)`);

    const n = await nsd(dir);
    const nsdMax = dnsperf(n.port, queries, []);
    await stop(n.child);
    console.log(`NSD 4.6, max load              ${fmt(nsdMax)}`);

    const cached = await ours(true);
    const oursMax = dnsperf(cached.port, queries, []);
    console.log(`palisade (cache), max load     ${fmt(oursMax)}   = ${(oursMax.qps / nsdMax.qps).toFixed(2)}× NSD`);
    const fixed = dnsperf(cached.port, queries, ['-Q', '30000'], true);
    console.log(`palisade (cache), 30,000 qps   ${fmt(fixed)}`);
    await stop(cached.child);

    const uncached = await ours(false);
    const oursNoCache = dnsperf(uncached.port, queries, []);
    console.log(`palisade (no cache), max load  ${fmt(oursNoCache)}   = ${(oursNoCache.qps / nsdMax.qps).toFixed(2)}× NSD`);
    await stop(uncached.child);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
