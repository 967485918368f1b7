// DNS benchmark: what ships, beside NSD and PowerDNS, on one pinned core each, the same zones
// (1,000 × ~20 records) and query mix (60% A/AAAA, 15% MX/TXT/SRV, 5% CNAME, 20% NXDOMAIN):
//   - `palisade dns` fed by a real `palisade api` over the change feed, the bundled GeoIP
//     database, cookies on; response-rate limiting off, and at its default (both printed: one
//     dnsperf client at one address is exactly what RRL exists to slow down);
//   - `palisade serve` (its name server part pinned), RRL off;
//   - NSD (one server process) and PowerDNS (bind backend, packet cache, one receiver thread);
//   - diagnostics, labelled as such: the stripped harness (bench/dns/server-process.ts: the
//     DnsServer alone, no feed, no GeoIP), cached and uncached; `palisade dns` with its answer
//     cache off (PALISADE_DNS_CACHE=false: the uncached path as shipped); and the runtime's floor,
//     a bare dgram socket sending precomputed replies with the ID patched (bench/dns/bare-socket.ts).
// Rounds are interleaved (every server once per round), dnsperf on the other core. Each run prints
// qps, queries per server CPU-second (user + system of the server's processes, from /proc), lost,
// and the response codes (non-NOERROR count, any rcode the mix cannot produce); the summary gives
// medians with their range and the ratios to NSD and PowerDNS per round (median, min–max). A ratio
// over runs with unexpected rcodes or > 1% lost is not printed.
//
//   npm run bench:dns                     (needs dnsperf, nsd, pdns-server, pdns-backend-bind, taskset)
//   BENCH_SECONDS=10 BENCH_ROUNDS=5 BENCH_ZONES=1000 npm run bench:dns
//   BENCH_SEED=api npm run bench:dns      `palisade serve` loaded as customers load it (bench/dns/api-seed.ts:
//                                         domains with a backend, records and NS activation through its API),
//                                         many distinct questions over every zone (80% answers, 20% NXDOMAIN),
//                                         beside NSD and a serve over a directly seeded store; prints queries per
//                                         CPU-second of serve's DNS part, and the CPU its API and edge parts use meanwhile
//   BENCH_MODE=latency npm run bench:dns  fixed 30,000 qps against `palisade dns` with 100,000 zones (BENCH_ZONES, BENCH_RATE)
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DNS_RRL_DEFAULTS } from '../src/config.ts';
import { freePort } from '../test/helpers/redis-server.ts';
import { partPid, runAdminCli, startServe, stopProcess, type RunningServer } from '../test/helpers/spawn-palisade.ts';
import { apiWithZones, nameServer, pin, seededStore } from './dns/roles.ts';
import { cpuSeconds, nsd, pdns, processTree, stop } from './dns/servers.ts';
import { seedThroughApi } from './dns/api-seed.ts';
import { distinctLines, distinctQueryFile, queryFile, workloadZones } from './dns/workload.ts';
import { createServer } from 'node:http';
import { median, percentile, spread } from './stats.ts';

const MODE = process.env.BENCH_MODE ?? 'qps';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const ZONES = Number(process.env.BENCH_ZONES ?? (MODE === 'latency' ? 100_000 : 1000));
const RATE = Number(process.env.BENCH_RATE ?? 30_000);
const SERVER_CPU = process.env.BENCH_SERVER_CPU ?? '1';
const CLIENT_CPU = process.env.BENCH_CLIENT_CPU ?? '0';

for (const tool of ['dnsperf', 'nsd', 'pdns_server', 'taskset']) {
  if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) {
    console.error(`bench:dns needs ${tool} (Debian: apt-get install dnsperf nsd pdns-server pdns-backend-bind util-linux)`);
    process.exit(2);
  }
}

interface Run {
  qps: number;
  completed: number;
  lostPct: number;
  /** Queries answered per CPU-second the server's processes used. */
  perCpuSecond: number;
  /** Share of one core the server used. */
  cores: number;
  rcodes: Record<string, number>;
  /** Answers that were not NOERROR. */
  nonNoError: number;
  /** Answers with an rcode the mix cannot produce (anything but NOERROR and NXDOMAIN). */
  unexpected: number;
  latenciesMs?: number[];
}

const scratch = mkdtempSync(join(tmpdir(), 'palisade-dnsperf-'));
process.once('exit', () => rmSync(scratch, { recursive: true, force: true }));
let runs = 0;

/** dnsperf on the client core; `rate`: at most that many queries a second (-Q), per-query latencies kept (-v). */
function dnsperf(port: number, file: string, seconds: number, rate?: number): Omit<Run, 'perCpuSecond' | 'cores'> {
  const args = ['-c', CLIENT_CPU, 'dnsperf', '-s', '127.0.0.1', '-p', String(port), '-d', file, '-c', '20', '-T', '1', '-l', String(seconds)];
  // At a fixed rate, room for 10,000 queries in flight: a slow answer does not hold back the next sends.
  if (rate) args.push('-Q', String(rate), '-q', '10000', '-v');
  else args.push('-q', '200');
  // Its output goes to a file: at a fixed rate it prints a line per query, and a reader of a pipe
  // (this process, on no pinned core) would take CPU time from the server it measures.
  const outFile = join(scratch, `dnsperf-${process.pid}-${runs++}.txt`);
  const fd = openSync(outFile, 'w');
  const run = spawnSync('taskset', args, { encoding: 'utf8', stdio: ['ignore', fd, 'pipe'] });
  closeSync(fd);
  const out = readFileSync(outFile, 'utf8');
  rmSync(outFile);
  const qps = Number(/Queries per second:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
  if (!Number.isFinite(qps)) throw new Error(`dnsperf failed:\n${out.slice(-3000)}\n${run.stderr}`);
  const completed = Number(/Queries completed:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const sent = Number(/Queries sent:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const lost = Number(/Queries lost:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const rcodes: Record<string, number> = {};
  for (const m of (/Response codes:\s+(.*)/.exec(out)?.[1] ?? '').matchAll(/([A-Z]+) (\d+)/g)) rcodes[m[1]!] = Number(m[2]);
  const nonNoError = Object.entries(rcodes).reduce((sum, [code, n]) => sum + (code === 'NOERROR' ? 0 : n), 0);
  const unexpected = Object.entries(rcodes).reduce((sum, [code, n]) => sum + (code === 'NOERROR' || code === 'NXDOMAIN' ? 0 : n), 0);
  let latenciesMs: number[] | undefined;
  if (rate) {
    // Verbose lines end in the latency in seconds: "> NOERROR www.z1.example A 0.000123".
    latenciesMs = [...out.matchAll(/^> \S+ .* ([\d.]+)$/gm)].map((m) => Number(m[1]) * 1000).sort((a, b) => a - b);
  }
  return { qps, completed, lostPct: sent ? (lost / sent) * 100 : 0, rcodes, nonNoError, unexpected, latenciesMs };
}

interface Server {
  name: string;
  port: number;
  /** The processes whose CPU time is the server's. */
  pids: () => number[];
  diagnostic?: boolean;
  /** RRL on: lost queries and slipped (TC=1) answers are its work, not a fault; no ratio. */
  limited?: boolean;
}

function measure(server: Server, file: string, seconds: number, rate?: number): Run {
  const pids = server.pids();
  const before = cpuSeconds(pids);
  const result = dnsperf(server.port, file, seconds, rate);
  const cpu = cpuSeconds(pids) - before;
  return { ...result, perCpuSecond: result.completed / cpu, cores: cpu / seconds };
}

const fmtRun = (r: Run) =>
  `${Math.round(r.qps).toString().padStart(7)} qps ${Math.round(r.perCpuSecond).toString().padStart(7)} q/CPU-s  ${r.cores.toFixed(2)} cores  lost ${r.lostPct.toFixed(2)}%  non-NOERROR ${r.nonNoError} (${Object.entries(r.rcodes)
    .filter(([code]) => code !== 'NOERROR')
    .map(([code, n]) => `${code} ${n}`)
    .join(', ') || 'none'})  unexpected ${r.unexpected}`;

/** A harness process (bench/dns/server-process.ts, or bare-socket.ts) on the server core. */
async function harness(cache: boolean, script = './dns/server-process.ts'): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn('taskset', ['-c', SERVER_CPU, process.execPath, '--import', 'tsx', fileURLToPath(new URL(script, import.meta.url))], {
    env: { ...process.env, BENCH_ZONES: String(ZONES), BENCH_CACHE: cache ? '1' : '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /ready (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`harness exited (${code})`)));
  });
  child.removeAllListeners('exit');
  return { child, port };
}

async function qps(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'palisade-dnsperf-'));
  const children: ChildProcess[] = [];
  const roles: Array<{ child: ChildProcess; exited: Promise<unknown> }> = [];
  const { api, newConsumer, cleanup } = await apiWithZones(ZONES);
  const serveDir = seededStore(ZONES);
  try {
    const queries = join(dir, 'queries.txt');
    const text = queryFile(ZONES, 100_000);
    writeFileSync(queries, text);
    const nxShare = (text.match(/^nx/gm)?.length ?? 0) / 100_000;
    const zones = workloadZones(ZONES);
    console.log(
      `DNS benchmark: ${ZONES} zones × 20 records, 100k-line query mix (${(nxShare * 100).toFixed(1)}% NXDOMAIN by design), ${SECONDS} s per run, ${ROUNDS} interleaved rounds; every server on CPU ${SERVER_CPU}, dnsperf -c 20 -q 200 -T 1 on CPU ${CLIENT_CPU}`,
    );
    const servers: Server[] = [];

    mkdirSync(join(dir, 'nsd'));
    const n = await nsd(join(dir, 'nsd'), zones, 1, SERVER_CPU);
    children.push(n.child);
    servers.push({ name: 'NSD 4.6, 1 server process', port: n.port, pids: () => processTree(n.child.pid!) });

    mkdirSync(join(dir, 'pdns'));
    const p = await pdns(join(dir, 'pdns'), zones, 1);
    children.push(p.child);
    pin(p.child.pid!, SERVER_CPU);
    servers.push({ name: 'PowerDNS 4.7 bind, 1 receiver', port: p.port, pids: () => processTree(p.child.pid!) });

    const dnsRole = async (name: string, env: Record<string, string>, extra: Partial<Server> = {}) => {
      const ns = await nameServer(api, await newConsumer(), join(dir, `ns-${servers.length}`), 1, 120_000, env);
      roles.push(ns);
      for (const pid of processTree(ns.child.pid!)) pin(pid, SERVER_CPU);
      servers.push({ name, port: ns.dnsPort, pids: () => processTree(ns.child.pid!), ...extra });
    };
    await dnsRole('palisade dns, RRL off', { PALISADE_DNS_RRL_RATE: '0' });
    await dnsRole(`palisade dns, RRL default (${DNS_RRL_DEFAULTS.rate}/s)`, { PALISADE_DNS_RRL_RATE: String(DNS_RRL_DEFAULTS.rate), PALISADE_DNS_RRL_SLIP: String(DNS_RRL_DEFAULTS.slip) }, { limited: true });

    const serve = await startServe(
      {
        PALISADE_DATA_DIR: serveDir,
        PALISADE_API_PORT: String(await freePort()),
        PALISADE_DNS_PORT: String(await freePort()),
        PALISADE_EDGE_HTTP_PORT: String(await freePort()),
        PALISADE_EDGE_HTTPS_PORT: String(await freePort()),
        PALISADE_DNS_RRL_RATE: '0',
      },
      120_000,
    );
    roles.push(serve);
    const dnsPart = partPid(serve, 'dns');
    pin(dnsPart, SERVER_CPU);
    servers.push({ name: 'palisade serve (dns part), RRL off', port: serve.dnsPort, pids: () => [dnsPart] });

    await dnsRole('diagnostic: palisade dns, answer cache off', { PALISADE_DNS_RRL_RATE: '0', PALISADE_DNS_CACHE: 'false' }, { diagnostic: true });
    for (const cache of [true, false]) {
      const h = await harness(cache);
      children.push(h.child);
      servers.push({ name: `diagnostic: stripped harness, ${cache ? 'cached' : 'uncached'}`, port: h.port, pids: () => processTree(h.child.pid!), diagnostic: true });
    }
    const bare = await harness(true, './dns/bare-socket.ts');
    children.push(bare.child);
    servers.push({ name: 'diagnostic: bare dgram socket, reply ID-patched', port: bare.port, pids: () => processTree(bare.child.pid!), diagnostic: true });

    // Warm-up: every server answers the whole mix once (fills caches, compiles hot paths).
    for (const s of servers) dnsperf(s.port, queries, 2);
    const runs = new Map<string, Run[]>(servers.map((s) => [s.name, []]));
    for (let round = 1; round <= ROUNDS; round++) {
      console.log(`round ${round}`);
      for (const s of servers) {
        const r = measure(s, queries, SECONDS);
        runs.get(s.name)!.push(r);
        console.log(`  ${s.name.padEnd(46)} ${fmtRun(r)}`);
      }
    }

    console.log(`\nmedian of ${ROUNDS} rounds (range):`);
    for (const s of servers) {
      const rs = runs.get(s.name)!;
      const [qLo, qHi] = spread(rs.map((r) => r.qps));
      const [cLo, cHi] = spread(rs.map((r) => r.perCpuSecond));
      console.log(
        `  ${s.name.padEnd(46)} ${Math.round(median(rs.map((r) => r.qps))).toString().padStart(7)} qps (${Math.round(qLo)}–${Math.round(qHi)})  ${Math.round(median(rs.map((r) => r.perCpuSecond))).toString().padStart(7)} q/CPU-s (${Math.round(cLo)}–${Math.round(cHi)})  lost ${median(rs.map((r) => r.lostPct)).toFixed(2)}%  unexpected rcodes ${rs.reduce((sum, r) => sum + r.unexpected, 0)}`,
      );
    }
    const [nsdRuns, pdnsRuns] = [runs.get(servers[0]!.name)!, runs.get(servers[1]!.name)!];
    console.log('\nratios, round by round (median, min–max):');
    for (const s of servers.slice(2)) {
      const rs = runs.get(s.name)!;
      const faults = [...rs, ...nsdRuns, ...pdnsRuns].filter((r) => r.unexpected > 0 || r.lostPct > 1).length;
      if (s.limited || faults > 0) {
        console.log(`  ${s.name.padEnd(46)} NO RATIO — ${s.limited ? 'response-rate limiting drops and slips this one client’s queries by design' : `${faults} runs with unexpected rcodes or > 1% lost`}`);
        continue;
      }
      const ratio = (other: Run[], key: 'qps' | 'perCpuSecond') => {
        const each = rs.map((r, i) => r[key] / other[i]![key]);
        const [lo, hi] = spread(each);
        return `${median(each).toFixed(2)} (${lo.toFixed(2)}–${hi.toFixed(2)})`;
      };
      console.log(`  ${s.name.padEnd(46)} /NSD qps ${ratio(nsdRuns, 'qps')}, per CPU-s ${ratio(nsdRuns, 'perCpuSecond')};  /PowerDNS qps ${ratio(pdnsRuns, 'qps')}, per CPU-s ${ratio(pdnsRuns, 'perCpuSecond')}`);
    }
    console.log('  targets: palisade dns ≥ 0.75× NSD and ≥ 0.9× PowerDNS qps; uncached path ≥ 0.45× NSD');
  } finally {
    for (const child of children) await stop(child);
    for (const role of roles) await stopProcess(role);
    await stopProcess(api);
    cleanup();
    rmSync(serveDir, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * `palisade dns` (RRL off) with ZONES zones at a fixed RATE: latency percentiles and lost queries,
 * NSD and a bare dgram socket (the runtime's floor) beside it. One server runs at a time: another
 * one loading 100,000 zones (or collecting what it loaded) on the same core would be measured too.
 */
async function latency(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'palisade-dnslatency-'));
  const { api, consumer, cleanup } = await apiWithZones(ZONES, process.env.BENCH_SEEDED_DIR);
  try {
    const queries = join(dir, 'queries.txt');
    writeFileSync(queries, queryFile(ZONES, 200_000));
    console.log(`DNS latency at a fixed ${RATE} qps for ${SECONDS} s: ${ZONES} zones × 20 records; server on CPU ${SERVER_CPU}, dnsperf -Q ${RATE} -q 10000 on CPU ${CLIENT_CPU}; one server at a time`);
    const starts: Array<{ name: string; start: () => Promise<{ port: number; pid: number; stop: () => Promise<unknown> }> }> = [
      {
        name: 'palisade dns, RRL off',
        start: async () => {
          const ns = await nameServer(api, consumer, join(dir, 'ns'), 1, 600_000, { PALISADE_DNS_RRL_RATE: '0' });
          for (const pid of processTree(ns.child.pid!)) pin(pid, SERVER_CPU);
          return { port: ns.dnsPort, pid: ns.child.pid!, stop: () => stopProcess(ns) };
        },
      },
      {
        name: 'NSD 4.6',
        start: async () => {
          mkdirSync(join(dir, 'nsd'));
          const n = await nsd(join(dir, 'nsd'), workloadZones(ZONES), 1, SERVER_CPU);
          return { port: n.port, pid: n.child.pid!, stop: () => stop(n.child) };
        },
      },
      {
        name: 'diagnostic: bare dgram socket',
        start: async () => {
          const bare = await harness(true, './dns/bare-socket.ts');
          return { port: bare.port, pid: bare.child.pid!, stop: () => stop(bare.child) };
        },
      },
    ];
    for (const { name, start } of starts) {
      const server = await start();
      try {
        // A few seconds to settle after loading (the collection of what was loaded), then a first
        // pass over the mix fills the answer cache: the measured one is the steady state.
        await new Promise((r) => setTimeout(r, 3000));
        dnsperf(server.port, queries, Math.min(SECONDS, 5), RATE);
        const r = measure({ name, port: server.port, pids: () => processTree(server.pid) }, queries, SECONDS, RATE);
        const l = r.latenciesMs!;
        console.log(
          `  ${name.padEnd(30)} ${Math.round(r.qps)} qps answered   p50 ${percentile(l, 50).toFixed(3)} ms   p99 ${percentile(l, 99).toFixed(3)} ms   p99.9 ${percentile(l, 99.9).toFixed(3)} ms   max ${l.at(-1)?.toFixed(3)} ms   lost ${r.lostPct.toFixed(3)}%   unexpected rcodes ${r.unexpected}   ${r.cores.toFixed(2)} cores`,
        );
      } finally {
        await server.stop();
      }
    }
    console.log('  target: palisade dns p99 ≤ 2 ms, 0 lost');
  } finally {
    await stopProcess(api);
    cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * BENCH_SEED=api: `palisade serve` with its zones created through the API, against NSD and a serve
 * over a directly seeded store, on a query file of many distinct questions. Besides the DNS part's
 * queries per CPU-second, the CPU the other parts use during the run (nothing calls them).
 */
async function qpsThroughApi(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'palisade-dnsperf-api-'));
  const children: ChildProcess[] = [];
  const roles: RunningServer[] = [];
  // The customers' backend: reachable, answering every health check.
  const backend = createServer((_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
  const backendPort = (backend.address() as { port: number }).port;
  const seededDir = seededStore(ZONES);
  try {
    const queries = join(dir, 'queries.txt');
    // BENCH_QUERIES=few: the default mode's file (few distinct questions), for comparison.
    const text = process.env.BENCH_QUERIES === 'few' ? queryFile(ZONES, 200_000) : distinctQueryFile(ZONES, 200_000);
    writeFileSync(queries, text);
    const nxShare = (text.match(/^nx/gm)?.length ?? 0) / 200_000;
    console.log(
      `DNS benchmark, zones loaded through the API: ${ZONES} zones × 20 records, 200k-line query mix with ${distinctLines(text)} distinct questions (${(nxShare * 100).toFixed(1)}% NXDOMAIN), ${SECONDS} s per run, ${ROUNDS} interleaved rounds; servers on CPU ${SERVER_CPU}, dnsperf on CPU ${CLIENT_CPU}`,
    );
    const servers: Array<Server & { others?: () => Record<string, number>; output?: () => string }> = [];
    mkdirSync(join(dir, 'nsd'));
    const n = await nsd(join(dir, 'nsd'), workloadZones(ZONES), 1, SERVER_CPU);
    children.push(n.child);
    servers.push({ name: 'NSD 4.6, 1 server process', port: n.port, pids: () => processTree(n.child.pid!) });

    const startServeOn = async (dataDir: string) => {
      const serve = await startServe(
        {
          PALISADE_DATA_DIR: dataDir,
          PALISADE_API_PORT: String(await freePort()),
          PALISADE_DNS_PORT: String(await freePort()),
          PALISADE_EDGE_HTTP_PORT: String(await freePort()),
          PALISADE_EDGE_HTTPS_PORT: String(await freePort()),
          PALISADE_DNS_RRL_RATE: '0',
          PALISADE_ALLOW_PRIVATE_BACKENDS: 'true',
          ...(process.env.BENCH_SERVE_ENV ? (JSON.parse(process.env.BENCH_SERVE_ENV) as Record<string, string>) : {}),
        },
        120_000,
      );
      roles.push(serve);
      return serve;
    };
    const addServe = (name: string, serve: RunningServer) => {
      const dnsPart = partPid(serve, 'dns');
      pin(dnsPart, SERVER_CPU);
      const others = { api: partPid(serve, 'api'), edge: partPid(serve, 'edge'), supervisor: serve.child.pid! };
      servers.push({ name, port: serve.dnsPort, pids: () => [dnsPart], output: serve.output, others: () => Object.fromEntries(Object.entries(others).map(([k, pid]) => [k, cpuSeconds([pid])])) });
    };

    const apiDir = join(dir, 'serve-api');
    mkdirSync(apiDir);
    const env = { PALISADE_DATA_DIR: apiDir };
    const key = (JSON.parse((await runAdminCli(env, ['user', 'create', '--name', 'bench', '--email', 'bench@example.org'])).stdout) as { key: { api_key: string } }).key.api_key;
    const throughApi = await startServeOn(apiDir);
    const started = Date.now();
    // BENCH_BACKEND=HOST:PORT: the domains' backend instead of the bench's own (e.g. one that is down).
    await seedThroughApi(throughApi.url, key, ZONES, process.env.BENCH_BACKEND ?? `127.0.0.1:${backendPort}`);
    console.log(`  loaded ${ZONES} zones through the API in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    addServe('palisade serve (dns part), zones via API', throughApi);
    addServe('palisade serve (dns part), seeded store', await startServeOn(seededDir));

    // Settle (the edge's first health checks, the feed), then warm every server over the whole mix.
    await new Promise((r) => setTimeout(r, 3000));
    for (const s of servers) dnsperf(s.port, queries, 4);
    const runs = new Map<string, Array<Run & { others?: Record<string, number> }>>(servers.map((s) => [s.name, []]));
    for (let round = 1; round <= ROUNDS; round++) {
      console.log(`round ${round}`);
      for (const s of servers) {
        const before = s.others?.();
        const r = measure(s, queries, SECONDS);
        const after = s.others?.();
        const others = before && after ? Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - before[k]!])) : undefined;
        runs.get(s.name)!.push({ ...r, others });
        const otherText = others ? `  other parts' CPU-s: ${Object.entries(others).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ')}` : '';
        console.log(`  ${s.name.padEnd(46)} ${fmtRun(r)}${otherText}`);
        // A server that stopped answering: what it said of itself (warnings and errors).
        if (r.lostPct > 50 && s.output) console.log(s.output().split('\n').filter((l) => !/"level":(10|20|30),/.test(l)).slice(-15).join('\n'));
      }
    }
    console.log(`\nmedian of ${ROUNDS} rounds (range):`);
    const nsdRuns = runs.get(servers[0]!.name)!;
    for (const s of servers) {
      const rs = runs.get(s.name)!;
      const [cLo, cHi] = spread(rs.map((r) => r.perCpuSecond));
      const ratios = rs.map((r, i) => r.perCpuSecond / nsdRuns[i]!.perCpuSecond);
      const others = rs[0]!.others ? `  other parts' CPU-s per run: ${Object.keys(rs[0]!.others).map((k) => `${k} ${median(rs.map((r) => r.others![k]!)).toFixed(2)}`).join(', ')}` : '';
      console.log(
        `  ${s.name.padEnd(46)} ${Math.round(median(rs.map((r) => r.qps))).toString().padStart(7)} qps  ${Math.round(median(rs.map((r) => r.perCpuSecond))).toString().padStart(7)} q/CPU-s (${Math.round(cLo)}–${Math.round(cHi)}) ${median(ratios).toFixed(2)}× NSD  lost ${median(rs.map((r) => r.lostPct)).toFixed(2)}%  unexpected rcodes ${rs.reduce((sum, r) => sum + r.unexpected, 0)}${others}`,
      );
    }
  } finally {
    for (const child of children) await stop(child);
    for (const role of roles) await stopProcess(role);
    backend.close();
    rmSync(seededDir, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  }
}

if (MODE === 'latency') await latency();
else if (process.env.BENCH_SEED === 'api') await qpsThroughApi();
else await qps();
