// Memory of the name server per DNS worker count: PSS (from /proc/PID/smaps_rollup: a page shared
// by k processes counts 1/k in each, so the sum over processes is what the host pays) of every
// process of `palisade dns` with 1, 2 and 4 workers, each started from the local state the first
// start stored and loaded with BENCH_ZONES zones × 20 records; NSD (4 server processes) and Knot
// (4 UDP workers) loaded with the same zones, in the same run. Then a short dnsperf run per
// worker count (PSS printed again after it, with whatever caches it filled): queries per server CPU-second (user + system of every process), compared with
// the figure of a run before a change when BENCH_QPS_PER_CORE_BEFORE gives it. Ends with:
//   pss MB: 1 worker A, 2 workers B, 4 workers C; nsd N; knot K; qps per core vs before R
//
// The workers answer from the pinned stored state (PALISADE_DNS_WORKER_ZONES=stored, what the
// memory goal is about); BENCH_WORKER_ZONES=index measures the default, an index per worker.
//
//   BENCH_ZONES=100000 npm run bench:dns-memory           (needs nsd, knotd, dnsperf)
//   BENCH_ZONES=10000 BENCH_SECONDS=5 BENCH_SEEDED_DIR=dir BENCH_QPS_PER_CORE_BEFORE=150000 …
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../test/helpers/redis-server.ts';
import { stopProcess } from '../test/helpers/spawn-palisade.ts';
import { apiWithZones, nameServer } from './dns/roles.ts';
import { cpuSeconds, dnsperf, memoryMiB, nsdConf, processTree, stop } from './dns/servers.ts';
import { KNOTD, knotConf } from './dns/knot.ts';
import { queryFile, workloadZones, zoneFile, zoneName } from './dns/workload.ts';

const ZONES = Number(process.env.BENCH_ZONES ?? 100_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS ?? 5000);
const BEFORE = Number(process.env.BENCH_QPS_PER_CORE_BEFORE ?? NaN);
const WORKER_ZONES = process.env.BENCH_WORKER_ZONES ?? 'stored';
const WORKERS = [1, 2, 4];
/** Reference servers: as many server processes / UDP threads as our largest worker count. */
const REFERENCE_THREADS = 4;

for (const tool of ['nsd', KNOTD, 'dnsperf', 'dig']) {
  if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) {
    console.error(`bench:dns-memory needs ${tool} (Debian: apt-get install nsd knot dnsperf dnsutils)`);
    process.exit(2);
  }
}

interface Mem {
  pid: number;
  name: string;
  rss: number;
  pss: number;
}

const comm = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '?';
  }
};

/** PSS and RSS (MiB) of every process in the tree of `pid`. */
function treeMemory(pid: number): Mem[] {
  return processTree(pid).flatMap((p) => {
    try {
      const m = memoryMiB(p);
      return [{ pid: p, name: comm(p), rss: m.rss, pss: m.pss }];
    } catch {
      return [];
    }
  });
}

const sum = (list: Mem[]) => list.reduce((a, m) => a + m.pss, 0);
const mb = (mib: number) => (mib * 1.048576).toFixed(0);

function printTree(label: string, list: Mem[]): void {
  console.log(`${label}: PSS ${mb(sum(list))} MB in all (RSS summed ${mb(list.reduce((a, m) => a + m.rss, 0))} MB)`);
  for (const m of list) console.log(`    pid ${m.pid} ${m.name.padEnd(16)} PSS ${mb(m.pss).padStart(6)} MB   RSS ${mb(m.rss).padStart(6)} MB`);
}

/** Waits until `port` answers the last workload zone (every zone loaded, for servers that load in order). */
async function answering(child: ChildProcess, port: number, what: string, timeoutMs = 600_000): Promise<void> {
  let errors = '';
  child.stderr?.on('data', (d: Buffer) => (errors = (errors + d.toString()).slice(-2000)));
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    const probe = spawnSync('dig', ['@127.0.0.1', '-p', String(port), '+tries=1', '+time=1', '+short', `www.${zoneName(ZONES - 1)}`], { encoding: 'utf8' });
    if (/^\d+\.\d+\.\d+\.\d+$/m.test(probe.stdout)) return;
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  await stop(child);
  throw new Error(`${what} did not answer (exit ${child.exitCode ?? child.signalCode}):\n${errors}`);
}

function writeZoneFiles(dir: string): string {
  const zonesDir = join(dir, 'zones');
  mkdirSync(zonesDir, { recursive: true });
  // In slices: 100,000 zones held at once as objects would weigh on this process for nothing.
  for (let from = 0; from < ZONES; from += 5000) {
    const zones = workloadZones(Math.min(ZONES, from + 5000)).slice(from);
    for (const zone of zones) writeFileSync(join(zonesDir, `${zone.domain.domain}.zone`), zoneFile(zone));
  }
  return zonesDir;
}

async function nsdMemory(dir: string, zonesDir: string): Promise<number> {
  const port = await freePort();
  const conf = nsdConf(dir, port, zonesDir, Array.from({ length: ZONES }, (_, i) => zoneName(i)), REFERENCE_THREADS);
  const started = Date.now();
  const child = spawn('nsd', ['-d', '-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  try {
    await answering(child, port, 'nsd');
    const readyS = (Date.now() - started) / 1000;
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const list = treeMemory(child.pid!);
    printTree(`NSD, ${REFERENCE_THREADS} server processes, answering after ${readyS.toFixed(1)} s`, list);
    return sum(list);
  } finally {
    await stop(child);
  }
}

async function knotMemory(dir: string, zonesDir: string): Promise<number> {
  const port = await freePort();
  const conf = knotConf(dir, port, zonesDir, Array.from({ length: ZONES }, (_, i) => zoneName(i)), REFERENCE_THREADS, false);
  const started = Date.now();
  const child = spawn(KNOTD, ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  try {
    await answering(child, port, 'knotd');
    const readyS = (Date.now() - started) / 1000;
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const list = treeMemory(child.pid!);
    printTree(`Knot, ${REFERENCE_THREADS} UDP workers, answering after ${readyS.toFixed(1)} s`, list);
    return sum(list);
  } finally {
    await stop(child);
  }
}

/** dnsperf against the name server: queries per CPU-second of its whole process tree. */
function perCore(pid: number, port: number, queries: string): { qps: number; perCore: number } {
  const pids = processTree(pid);
  const before = cpuSeconds(pids);
  const result = dnsperf(port, queries, SECONDS, 100, 2);
  const cpu = cpuSeconds(pids) - before;
  return { qps: result.qps, perCore: result.completed / cpu };
}

const { api, consumer, cleanup } = await apiWithZones(ZONES, process.env.BENCH_SEEDED_DIR);
const dir = mkdtempSync(join(tmpdir(), 'palisade-dns-memory-'));
const pss: number[] = [];
const perCoreFigures: number[] = [];
try {
  console.log(`bench:dns-memory: ${ZONES} zones × 20 records; PSS from /proc/PID/smaps_rollup, ${SETTLE_MS / 1000} s after all answer; dnsperf ${SECONDS} s per worker count; PALISADE_DNS_WORKER_ZONES=${WORKER_ZONES}`);
  const queries = join(dir, 'queries.txt');
  writeFileSync(queries, queryFile(ZONES, 100_000));
  const nsDir = join(dir, 'ns');
  let started = Date.now();
  let ns = await nameServer(api, consumer, nsDir, 1, 900_000);
  console.log(`palisade dns first start (the snapshot from the API): ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  await stopProcess(ns);
  for (const workers of WORKERS) {
    started = Date.now();
    ns = await nameServer(api, consumer, nsDir, workers, 900_000, { PALISADE_DNS_WORKER_ZONES: WORKER_ZONES });
    const readyS = (Date.now() - started) / 1000;
    try {
      await new Promise((r) => setTimeout(r, SETTLE_MS));
      const list = treeMemory(ns.child.pid!);
      printTree(`palisade dns, ${workers} worker${workers > 1 ? 's' : ''}, from local state, all answering after ${readyS.toFixed(1)} s`, list);
      const loads = [...ns.output().matchAll(/"zones":(\d+),"ms":(\d+),"msg":"dns workers: worker caught up \(answering\)"/g)].map((m) => `${m[1]} zones in ${(Number(m[2]) / 1000).toFixed(1)} s`);
      if (loads.length > 0) console.log(`    workers loaded: ${loads.join(', ')}`);
      pss.push(sum(list));
      const q = perCore(ns.child.pid!, ns.dnsPort, queries);
      perCoreFigures.push(q.perCore);
      console.log(`    dnsperf: ${Math.round(q.qps)} qps, ${Math.round(q.perCore)} queries per server CPU-second`);
      // After answering the whole mix (every zone asked): what caches filled meanwhile.
      const after = treeMemory(ns.child.pid!);
      console.log(`    after the dnsperf run: PSS ${mb(sum(after))} MB in all (${after.map((m) => mb(m.pss)).join(' + ')})`);
    } finally {
      await stopProcess(ns);
    }
  }
  for (let i = 1; i < WORKERS.length; i++) console.log(`each worker after the first (${WORKERS[i]} workers): +${mb((pss[i]! - pss[0]!) / (WORKERS[i]! - 1))} MB PSS`);
  await stopProcess(api);

  const zonesDir = writeZoneFiles(dir);
  mkdirSync(join(dir, 'nsd'));
  const nsdPss = await nsdMemory(join(dir, 'nsd'), zonesDir);
  mkdirSync(join(dir, 'knot'));
  const knotPss = await knotMemory(join(dir, 'knot'), zonesDir);

  const last = perCoreFigures[perCoreFigures.length - 1]!;
  const ratio = Number.isFinite(BEFORE) ? (last / BEFORE).toFixed(2) : 'n/a (no BENCH_QPS_PER_CORE_BEFORE)';
  console.log(`queries per server CPU-second, ${WORKERS.join('/')} workers: ${perCoreFigures.map((f) => Math.round(f)).join(' / ')} (the ${WORKERS.at(-1)}-worker figure is compared)`);
  console.log(`pss MB: 1 worker ${mb(pss[0]!)}, 2 workers ${mb(pss[1]!)}, 4 workers ${mb(pss[2]!)}; nsd ${mb(nsdPss)}; knot ${mb(knotPss)}; qps per core vs before ${ratio}`);
} finally {
  await stopProcess(api);
  cleanup();
  rmSync(dir, { recursive: true, force: true });
}
