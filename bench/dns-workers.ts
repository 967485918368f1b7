// DNS workers benchmark (PALISADE_DNS_WORKERS): the shipped `palisade dns`, fed by a real
// `palisade api` over the change feed, with 1 and 2 DNS workers, beside NSD with 2 server
// processes and PowerDNS (bind backend) with 2 receiver threads: the same zones × ~20 records
// and query mix, dnsperf as the client (unpinned; on a 2-core machine it shares the cores with
// the servers). Prints qps, queries per server CPU-second (user + system time of every process
// of the server, read from /proc/<pid>/stat before and after each run) and the ratios of 2
// workers to 1.
//
//   node --import tsx bench/dns-workers.ts                     (needs dnsperf, nsd, pdns-server, pdns-backend-bind)
//   BENCH_SECONDS=10 BENCH_ZONES=1000 BENCH_ROUNDS=2 node --import tsx bench/dns-workers.ts
//   BENCH_MODE=sharing …   SO_REUSEPORT against the cluster module, 2 processes of the same DnsServer
//   BENCH_MODE=memory BENCH_ZONES=100000 [BENCH_SEEDED_DIR=dir] …   RSS of 1 and 2 DNS workers
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stopProcess } from '../test/helpers/spawn-palisade.ts';
import { apiWithZones, nameServer } from './dns/roles.ts';
import { cpuSeconds, dnsperf, memoryMiB, nsd, pdns, processTree, rssMiB, stop, type PerfResult } from './dns/servers.ts';
import { queryFile, workloadZones } from './dns/workload.ts';

const MODE = process.env.BENCH_MODE ?? 'qps';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
const ZONES = Number(process.env.BENCH_ZONES ?? (MODE === 'memory' ? 100_000 : 1000));
/** dnsperf source ports (each a separate flow for the kernel's SO_REUSEPORT hash) and threads. */
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 100);
const THREADS = Number(process.env.BENCH_THREADS ?? 2);

for (const tool of MODE === 'memory' ? [] : MODE === 'sharing' ? ['dnsperf'] : ['dnsperf', 'nsd', 'pdns_server']) {
  if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) {
    console.error(`bench:dns-workers needs ${tool} (Debian: apt-get install dnsperf nsd pdns-server pdns-backend-bind)`);
    process.exit(2);
  }
}

interface Measured extends PerfResult {
  cpu: number;
  perCpuSecond: number;
}

/** One dnsperf run against the server whose process tree starts at `pid`. */
function measure(pid: number, port: number, queries: string): Measured {
  const pids = processTree(pid);
  const before = cpuSeconds(pids);
  const result = dnsperf(port, queries, SECONDS, CLIENTS, THREADS);
  const cpu = cpuSeconds(pids) - before;
  return { ...result, cpu, perCpuSecond: result.completed / cpu };
}

/** The best of ROUNDS runs (by qps). */
function best(pid: number, port: number, queries: string): Measured {
  let top: Measured | undefined;
  for (let i = 0; i < ROUNDS; i++) {
    const r = measure(pid, port, queries);
    if (!top || r.qps > top.qps) top = r;
  }
  return top!;
}

const fmt = (label: string, r: Measured) =>
  `${label.padEnd(34)} ${Math.round(r.qps).toString().padStart(8)} qps   ${Math.round(r.perCpuSecond).toString().padStart(7)} q/CPU-s   server CPU ${(r.cpu / SECONDS).toFixed(2)} cores   avg ${r.avgMs.toFixed(3)} ms   lost ${r.lostPct.toFixed(2)}%`;

const apiWith = (seededDir: string | undefined) => apiWithZones(ZONES, seededDir);

async function qps(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'palisade-dnsworkers-'));
  const running: ChildProcess[] = [];
  const { api, consumer, cleanup } = await apiWith(process.env.BENCH_SEEDED_DIR);
  try {
    const queries = join(dir, 'queries.txt');
    writeFileSync(queries, queryFile(ZONES, 100_000));
    const zones = workloadZones(ZONES);
    console.log(
      `DNS workers benchmark: ${ZONES} zones × 20 records, 100k-line query mix, ${SECONDS} s per run (best of ${ROUNDS}), dnsperf -c ${CLIENTS} -T ${THREADS} unpinned, ${spawnSync('nproc', { encoding: 'utf8' }).stdout.trim()} cores shared by client and server`,
    );

    mkdirSync(join(dir, 'nsd'));
    const n = await nsd(join(dir, 'nsd'), zones, 2);
    running.push(n.child);
    const nsdResult = best(n.child.pid!, n.port, queries);
    await stop(n.child);
    console.log(fmt('NSD 4.6, 2 server processes', nsdResult));

    mkdirSync(join(dir, 'pdns'));
    const p = await pdns(join(dir, 'pdns'), zones, 2);
    running.push(p.child);
    const pdnsResult = best(p.child.pid!, p.port, queries);
    await stop(p.child);
    console.log(fmt('PowerDNS 4.7 bind, 2 receivers', pdnsResult));

    const results: Measured[] = [];
    for (const workers of [1, 2]) {
      const ns = await nameServer(api, consumer, join(dir, `ns-${workers}`), workers);
      try {
        results.push(best(ns.child.pid!, ns.dnsPort, queries));
      } finally {
        await stopProcess(ns);
      }
      console.log(fmt(`palisade dns, ${workers} worker${workers > 1 ? 's' : ''}`, results[results.length - 1]!));
    }
    const [one, two] = results as [Measured, Measured];
    console.log(
      `2 workers / 1: qps ${(two.qps / one.qps).toFixed(2)}×, queries per CPU-second ${(two.perCpuSecond / one.perCpuSecond).toFixed(2)}×; ` +
        `2 workers / NSD: ${(two.qps / nsdResult.qps).toFixed(2)}× qps, ${(two.perCpuSecond / nsdResult.perCpuSecond).toFixed(2)}× per CPU-s; ` +
        `2 workers / PowerDNS: ${(two.qps / pdnsResult.qps).toFixed(2)}× qps, ${(two.perCpuSecond / pdnsResult.perCpuSecond).toFixed(2)}× per CPU-s`,
    );
    // One worker that did not use its core was not the limit: more workers cannot add qps then.
    const oneCores = one.cpu / SECONDS;
    if (oneCores < 0.9) console.log(`client-limited: 1 worker used ${oneCores.toFixed(2)} of its core, so qps cannot scale with workers here; compare queries per CPU-second`);
  } finally {
    for (const child of running) await stop(child);
    await stopProcess(api);
    cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** SO_REUSEPORT against the cluster module: the same DnsServer in 2 processes, both ways. */
async function sharing(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'palisade-sharing-'));
  try {
    const queries = join(dir, 'queries.txt');
    writeFileSync(queries, queryFile(ZONES, 100_000));
    console.log(`port sharing: 2 processes of the DnsServer, ${ZONES} zones, ${SECONDS} s per run (best of ${ROUNDS}), dnsperf -c ${CLIENTS} -T ${THREADS}`);
    const results: Record<string, Measured> = {};
    for (const how of ['reuseport', 'cluster']) {
      const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./dns/shared-port-process.ts', import.meta.url))], {
        env: { ...process.env, BENCH_SHARING: how, BENCH_WORKERS: '2', BENCH_ZONES: String(ZONES) },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const port = await new Promise<number>((resolve, reject) => {
        let out = '';
        child.stdout!.on('data', (d: Buffer) => {
          out += d.toString();
          const m = /ready (\d+)/.exec(out);
          if (m) resolve(Number(m[1]));
        });
        child.once('exit', (code) => reject(new Error(`${how} server exited (${code})`)));
      });
      try {
        results[how] = best(child.pid!, port, queries);
      } finally {
        child.removeAllListeners('exit');
        await stop(child);
      }
      console.log(fmt(how === 'cluster' ? 'cluster module (one shared socket)' : 'SO_REUSEPORT (a socket each)', results[how]!));
    }
    console.log(`SO_REUSEPORT / cluster: qps ${(results.reuseport!.qps / results.cluster!.qps).toFixed(2)}×, per CPU-s ${(results.reuseport!.perCpuSecond / results.cluster!.perCpuSecond).toFixed(2)}×`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** RSS with ZONES zones: 1 worker, then 2, each started from the local state the first one stored. */
async function memory(): Promise<void> {
  const { api, consumer, cleanup } = await apiWith(process.env.BENCH_SEEDED_DIR);
  const nsDir = mkdtempSync(join(tmpdir(), 'palisade-workers-ns-'));
  const settle = () => new Promise((r) => setTimeout(r, 5000));
  try {
    let started = Date.now();
    let ns = await nameServer(api, consumer, nsDir, 1, 600_000);
    console.log(`${ZONES} zones × 20 records: first start (snapshot from the API) ready in ${((Date.now() - started) / 1000).toFixed(1)} s, RSS ${rssMiB([ns.child.pid!]).toFixed(0)} MiB`);
    await stopProcess(ns);
    const totals: Array<{ rss: number; anon: number; pss: number }> = [];
    for (const workers of [1, 2]) {
      started = Date.now();
      ns = await nameServer(api, consumer, nsDir, workers, 600_000);
      const readyS = (Date.now() - started) / 1000;
      await settle();
      const pids = processTree(ns.child.pid!);
      const each = pids.map(memoryMiB);
      const total = each.reduce((a, m) => ({ rss: a.rss + m.rss, anon: a.anon + m.anon, pss: a.pss + m.pss }), { rss: 0, anon: 0, pss: 0 });
      totals.push(total);
      const one = (m: { rss: number; anon: number; pss: number }) => `RSS ${m.rss.toFixed(0)} (anon ${m.anon.toFixed(0)}, PSS ${m.pss.toFixed(0)})`;
      console.log(`${workers} DNS worker${workers > 1 ? 's' : ''} from local state, all answering after ${readyS.toFixed(1)} s: ${one(total)} MiB in all`);
      const comm = (pid: number) => readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
      each.forEach((m, i) => console.log(`    ${i === 0 ? 'primary' : `pid ${pids[i]} (${comm(pids[i]!)})`}: ${one(m)} MiB`));
      const loads = [...ns.output().matchAll(/"zones":(\d+),"ms":(\d+),"msg":"dns workers: worker caught up \(answering\)"/g)].map((m) => `${m[1]} zones in ${(Number(m[2]) / 1000).toFixed(1)} s`);
      if (loads.length > 0) console.log(`    workers read the local state: ${loads.join(', ')}`);
      await stopProcess(ns);
    }
    const [a, b] = totals as [{ rss: number; anon: number; pss: number }, { rss: number; anon: number; pss: number }];
    console.log(`an extra DNS worker with ${ZONES} zones: +${(b.anon - a.anon).toFixed(0)} MiB anonymous (its own heap), +${(b.pss - a.pss).toFixed(0)} MiB PSS, +${(b.rss - a.rss).toFixed(0)} MiB RSS as summed per process`);
  } finally {
    await stopProcess(api);
    cleanup();
    rmSync(nsDir, { recursive: true, force: true });
  }
}

if (MODE === 'memory') await memory();
else if (MODE === 'sharing') await sharing();
else await qps();
