// Change-feed figures: how long from the API's 2xx until both name servers answer the new data
// (with pushes, and with polling alone), and the snapshot's size and load time for many zones.
//   npm run bench:sync                      (1,000 writes with push, 50 with polling only, 100,000-zone snapshot)
//   BENCH_WRITES=200 BENCH_ZONES=10000 npm run bench:sync
//   BENCH_WRITES=0 BENCH_POLL_WRITES=0 npm run bench:sync   (the snapshot alone)
//   BENCH_SEEDED_DIR=/path/seeded ...                        (a store seeded before by bench/sync/seed-store.ts)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../test/helpers/redis-server.ts';
import { answerCounter } from './sync/answer-count.ts';
import { runAdminCli, startNameServer, startServe, stopProcess, type RunningNameServer } from '../test/helpers/spawn-palisade.ts';

const WRITES = Number(process.env.BENCH_WRITES ?? 1000);
const POLL_WRITES = Number(process.env.BENCH_POLL_WRITES ?? 50);
const POLL_MS = 1000;
const ZONES = Number(process.env.BENCH_ZONES ?? 100_000);

const { answers, close: closeUdp } = answerCounter();

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

async function setup(dataDir: string, withUrls: boolean) {
  const env = { PALISADE_DATA_DIR: dataDir, PALISADE_API_PORT: String(await freePort()) };
  const users = JSON.parse((await runAdminCli(env, ['user', 'list'])).stdout) as unknown[];
  const key = users.length === 0 ? JSON.parse((await runAdminCli(env, ['user', 'create', '--name', 'bench', '--email', 'bench@example.org', '--max-records', '100000', '--max-domains', '1000000'])).stdout).key.api_key : undefined;
  const nsEnvs: Array<Record<string, string>> = [];
  for (const name of ['ns1', 'ns2']) {
    const port = await freePort();
    const args = ['consumer', 'add', '--name', name, ...(withUrls ? ['--url', `http://127.0.0.1:${port}/notify`] : [])];
    const c = JSON.parse((await runAdminCli(env, args)).stdout);
    nsEnvs.push({ PALISADE_DATA_DIR: mkdtempSync(join(tmpdir(), 'palisade-ns-')), PALISADE_SYNC_TOKEN: c.token, PALISADE_SYNC_SECRET: c.secret, PALISADE_SYNC_PORT: String(port), PALISADE_SYNC_POLL_MS: String(POLL_MS) });
  }
  return { env, key, nsEnvs };
}

async function propagation(label: string, withUrls: boolean, writes: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'palisade-sync-'));
  const { env, key, nsEnvs } = await setup(dir, withUrls);
  const api = await startServe(env, 20_000, 'api');
  const servers: RunningNameServer[] = [];
  try {
    for (const e of nsEnvs) servers.push(await startNameServer({ ...e, PALISADE_SYNC_URL: api.url }));
    const call = (method: string, path: string, body?: unknown) =>
      fetch(`${api.url}${path}`, { method, headers: { 'x-auth-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    await call('POST', '/domains', { domain: 'prop.example', backend: '198.51.100.1', enabled: false });
    await call('GET', '/domains/prop.example/activatens');
    const delays: number[] = [];
    for (let i = 0; i < writes; i++) {
      const res = await call('POST', '/domains/prop.example/dnsrecords', { name: `p${i}`, type: 1, value: '192.0.2.1' });
      if (res.status !== 201) throw new Error(`write failed: ${res.status}`);
      const acknowledged = performance.now();
      for (const s of servers) {
        while ((await answers(s.dnsPort, `p${i}.prop.example`)) === 0) {
          if (performance.now() - acknowledged > 10_000) throw new Error('name server did not catch up in 10 s');
        }
      }
      delays.push(performance.now() - acknowledged);
    }
    delays.sort((a, b) => a - b);
    console.log(`${label.padEnd(34)} ${writes} writes: p50 ${pct(delays, 0.5).toFixed(1)} ms   p99 ${pct(delays, 0.99).toFixed(1)} ms   max ${delays[delays.length - 1]!.toFixed(1)} ms`);
  } finally {
    for (const s of servers) await stopProcess(s);
    await stopProcess(api);
    rmSync(dir, { recursive: true, force: true });
    for (const e of nsEnvs) rmSync(e.PALISADE_DATA_DIR!, { recursive: true, force: true });
  }
}

/** A store of ZONES served zones × 20 records, seeded by a child process. */
function seedStore(dir: string): void {
  const seed = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./sync/seed-store.ts', import.meta.url)), dir, String(ZONES)], { stdio: 'inherit' });
  if (seed.status !== 0) throw new Error(`seeding the store failed (${seed.status ?? seed.signal})`);
}

async function snapshot(): Promise<void> {
  // BENCH_SEEDED_DIR: a store seeded before (bench/sync/seed-store.ts), kept afterwards: seeding
  // 100,000 zones takes minutes.
  const seeded = process.env.BENCH_SEEDED_DIR;
  const dir = seeded ?? mkdtempSync(join(tmpdir(), 'palisade-snap-'));
  let seedMs = performance.now();
  if (!seeded) seedStore(dir);
  seedMs = performance.now() - seedMs;
  const { env, nsEnvs } = await setup(dir, false);
  const api = await startServe(env, 60_000, 'api');
  let ns: RunningNameServer | undefined;
  try {
    // A new name server first, against an API that has served nothing yet (as on a first start).
    let started = performance.now();
    ns = await startNameServer({ ...nsEnvs[0]!, PALISADE_SYNC_URL: api.url, PALISADE_LOG_LEVEL: 'info' }, 120_000);
    while (!ns.output().includes('snapshot loaded')) {
      if (performance.now() - started > 120_000) throw new Error('snapshot not loaded in 120 s');
      await new Promise((r) => setTimeout(r, 50));
    }
    const loadMs = performance.now() - started;
    // The name server's own figure: from its snapshot request to serving the snapshot.
    const streamMs = Number(/"ms":(\d+),"msg":"sync: snapshot loaded"/.exec(ns.output())?.[1] ?? NaN);
    const rss = rssMb(ns.child.pid!);
    await stopProcess(ns);
    started = performance.now();
    ns = await startNameServer({ ...nsEnvs[0]!, PALISADE_SYNC_URL: api.url, PALISADE_LOG_LEVEL: 'info' }, 120_000);
    const restartMs = performance.now() - started;
    await stopProcess(ns);
    ns = undefined;
    // The snapshot's size and the API's rate alone: read and counted, not kept.
    started = performance.now();
    const res = await fetch(`${api.url}/sync/snapshot`, { headers: { authorization: `Bearer ${nsEnvs[0]!.PALISADE_SYNC_TOKEN!}` } });
    let bytes = 0;
    for await (const chunk of res.body!) bytes += chunk.byteLength;
    const fetchMs = performance.now() - started;
    console.log(
      `snapshot of ${ZONES} zones × 20 records (seeded in ${(seedMs / 1000).toFixed(0)} s): ${(bytes / 1024 / 1024).toFixed(0)} MB NDJSON, sent by the API alone in ${(fetchMs / 1000).toFixed(1)} s; ` +
        `a new name server loads it in ${(streamMs / 1000).toFixed(1)} s from its request, serving ${(loadMs / 1000).toFixed(1)} s after its process started (RSS ${rss.toFixed(0)} MB); a restart from local state serves after ${(restartMs / 1000).toFixed(1)} s`,
    );
  } finally {
    if (ns) await stopProcess(ns);
    await stopProcess(api);
    if (!seeded) rmSync(dir, { recursive: true, force: true });
    for (const e of nsEnvs) rmSync(e.PALISADE_DATA_DIR!, { recursive: true, force: true });
  }
}

try {
  if (WRITES > 0) await propagation('with push', true, WRITES);
  if (POLL_WRITES > 0) await propagation(`polling only (every ${POLL_MS} ms)`, false, POLL_WRITES);
  if (ZONES > 0) await snapshot();
} finally {
  closeUdp();
}

