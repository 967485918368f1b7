// What `palisade serve`'s API part spends while nothing calls it, with N domains created through
// the API whose backends do not answer (a refused port): the edge checks them, finds them down,
// reports them; once the first verdicts are in, every later round repeats unchanged verdicts.
// Prints, per 10 s window, the API part's CPU-s (utime + stime from /proc) and what its metrics
// say it did meanwhile (reports, changed verdicts, events, domains looked at again, the health
// tracker's store writes).
//
//   npm run bench:api-idle
//   BENCH_ZONES=1000 BENCH_ROUNDS=3 BENCH_WINDOW_SECONDS=10 npm run bench:api-idle
//   BENCH_PROFILE_DIR=DIR npm run bench:api-idle   a CPU profile of the API part over one window
//                                                  (DIR/api-idle.cpuprofile, .folded) and its top frames
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve as resolvePath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/helpers/redis-server.ts';
import { partPid, runAdminCli, startServe, stopProcess } from '../test/helpers/spawn-palisade.ts';
import { seedThroughApi } from './dns/api-seed.ts';
import { cpuSeconds } from './dns/servers.ts';

const ZONES = Number(process.env.BENCH_ZONES ?? 1000);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const WINDOW_S = Number(process.env.BENCH_WINDOW_SECONDS ?? 10);
const PROFILE_DIR = process.env.BENCH_PROFILE_DIR ? resolvePath(process.env.BENCH_PROFILE_DIR) : undefined;
const PROFILER = fileURLToPath(new URL('./edge/profiler.mjs', import.meta.url));
/** Bounds the wait for the first verdicts (three failed checks, then the report that tells them). */
const SETTLE_TIMEOUT_MS = 120_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The metrics this bench follows, summed over their labels. */
async function counters(url: string): Promise<{ reports: number; verdicts: number; events: number; looks: number; store_writes: number }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const sum = (name: string) => [...text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+)$`, 'gm'))].reduce((n, m) => n + Number(m[1]), 0);
  return {
    reports: sum('palisade_uptime_reports_total'),
    verdicts: sum('palisade_uptime_verdicts_total'),
    events: sum('palisade_events_total'),
    looks: sum('palisade_uptime_looks_total'),
    store_writes: sum('palisade_uptime_store_writes_total'),
  };
}

const dir = mkdtempSync(join(tmpdir(), 'palisade-api-idle-'));
const dataDir = join(dir, 'data');
mkdirSync(dataDir);
// A port nothing listens on: every check is refused at once, as a backend that is down.
const deadBackend = `127.0.0.1:${await freePort()}`;
const env = { PALISADE_DATA_DIR: dataDir };
const key = (JSON.parse((await runAdminCli(env, ['user', 'create', '--name', 'bench', '--email', 'bench@example.org'])).stdout) as { key: { api_key: string } }).key.api_key;
if (PROFILE_DIR) mkdirSync(PROFILE_DIR, { recursive: true });
const serve = await startServe(
  {
    ...env,
    PALISADE_API_PORT: String(await freePort()),
    PALISADE_DNS_PORT: String(await freePort()),
    PALISADE_EDGE_HTTP_PORT: String(await freePort()),
    PALISADE_EDGE_HTTPS_PORT: String(await freePort()),
    PALISADE_ALLOW_PRIVATE_BACKENDS: 'true',
    ...(PROFILE_DIR ? { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${PROFILER}`, BENCH_PROFILE_DIR: PROFILE_DIR } : {}),
  },
  120_000,
);
try {
  const started = Date.now();
  await seedThroughApi(serve.url, key, ZONES, deadBackend);
  console.log(`API idle: ${ZONES} domains created through the API in ${((Date.now() - started) / 1000).toFixed(1)} s, backend ${deadBackend} (refused)`);
  const api = partPid(serve, 'api');
  // Settled: every domain's first verdict taken, and one more report after it (the steady state).
  const settleStart = Date.now();
  for (;;) {
    const c = await counters(serve.url);
    if (c.verdicts >= ZONES) break;
    if (Date.now() - settleStart > SETTLE_TIMEOUT_MS) throw new Error(`not settled: ${JSON.stringify(c)}`);
    await sleep(1000);
  }
  const settledReports = (await counters(serve.url)).reports;
  while ((await counters(serve.url)).reports <= settledReports && Date.now() - settleStart < SETTLE_TIMEOUT_MS) await sleep(1000);
  console.log(`  first verdicts in after ${((Date.now() - settleStart) / 1000).toFixed(1)} s`);
  const perWindow: number[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const profiling = PROFILE_DIR && round === 1;
    if (profiling) process.kill(api, 'SIGTTIN');
    const before = { cpu: cpuSeconds([api]), ...(await counters(serve.url)) };
    await sleep(WINDOW_S * 1000);
    const after = { cpu: cpuSeconds([api]), ...(await counters(serve.url)) };
    if (profiling) {
      writeFileSync(join(PROFILE_DIR, 'next'), 'api-idle');
      process.kill(api, 'SIGTTOU');
      const deadline = Date.now() + 30_000;
      while (!existsSync(join(PROFILE_DIR, 'api-idle.done')) && Date.now() < deadline) await sleep(100);
      rmSync(join(PROFILE_DIR, 'api-idle.done'), { force: true });
    }
    const cpu = after.cpu - before.cpu;
    perWindow.push(cpu);
    const deltas = Object.keys(after)
      .filter((k) => k !== 'cpu')
      .map((k) => `${k} +${after[k as keyof typeof after] - before[k as keyof typeof before]}`)
      .join(', ');
    console.log(`  window ${round}: API part ${cpu.toFixed(2)} CPU-s per ${WINDOW_S} s  (${deltas})`);
  }
  perWindow.sort((a, b) => a - b);
  console.log(`median: API part ${perWindow[Math.floor(perWindow.length / 2)]!.toFixed(2)} CPU-s per ${WINDOW_S} s idle, ${ZONES} domains with their backend down`);
  if (PROFILE_DIR) {
    const top = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./profile-top.ts', import.meta.url)), join(PROFILE_DIR, 'api-idle.cpuprofile'), '30'], { encoding: 'utf8' });
    console.log(top.stdout || top.stderr);
  }
} finally {
  await stopProcess(serve);
  rmSync(dir, { recursive: true, force: true });
}
