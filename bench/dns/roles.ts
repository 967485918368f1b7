// The shipped roles for the DNS benchmarks: a `palisade api` over a store seeded with the
// workload, `palisade dns` fed by it over the change feed (ready once it holds the API's
// revision), `palisade serve` over a store of its own; and pinning a running process to CPUs.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../test/helpers/redis-server.ts';
import { runAdminCli, startNameServer, startServe, type RunningNameServer, type RunningServer } from '../../test/helpers/spawn-palisade.ts';

/** A store in `dir` (a new scratch directory when absent) seeded with `zones` workload zones, in a process of its own. */
export function seededStore(zones: number, dir = mkdtempSync(join(tmpdir(), 'palisade-bench-store-'))): string {
  const seed = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('../sync/seed-store.ts', import.meta.url)), dir, String(zones)], { stdio: 'inherit' });
  if (seed.status !== 0) throw new Error(`seeding the store failed (${seed.status ?? seed.signal})`);
  return dir;
}

/** A `palisade api` over a store seeded with the workload (or `seededDir`, seeded before), and a way to add change-feed consumers. */
export async function apiWithZones(zones: number, seededDir?: string) {
  const dir = seededDir ?? seededStore(zones);
  const env = { PALISADE_DATA_DIR: dir, PALISADE_API_PORT: String(await freePort()) };
  const consumer = async () => JSON.parse((await runAdminCli(env, ['consumer', 'add', '--name', `bench-${Date.now()}-${Math.random()}`])).stdout) as { token: string; secret: string };
  const first = await consumer();
  const api = await startServe(env, 120_000, 'api');
  return { api, dir, consumer: first, newConsumer: consumer, cleanup: () => (seededDir ? undefined : rmSync(dir, { recursive: true, force: true })) };
}

interface Health {
  revision: number;
  api_revision: number;
  workers?: Array<{ live: boolean; revision: number; pid: number | null }>;
}

/** `palisade dns` with `workers` DNS workers (and `env` on top), once every worker holds the API's revision. */
export async function nameServer(api: RunningServer, consumer: { token: string; secret: string }, dataDir: string, workers: number, timeoutMs = 60_000, env: Record<string, string> = {}): Promise<RunningNameServer> {
  const ns = await startNameServer(
    { PALISADE_DATA_DIR: dataDir, PALISADE_SYNC_URL: api.url, PALISADE_SYNC_TOKEN: consumer.token, PALISADE_SYNC_SECRET: consumer.secret, PALISADE_SYNC_PORT: '0', PALISADE_DNS_WORKERS: String(workers), ...env },
    timeoutMs,
  );
  const started = Date.now();
  for (;;) {
    const health = (await (await fetch(ns.notifyUrl.replace('/notify', '/healthz'))).json()) as Health;
    const ready = health.revision > 0 && health.revision >= health.api_revision && (workers === 1 || (health.workers ?? []).every((w) => w.live && w.revision === health.revision));
    if (ready) return ns;
    if (Date.now() - started > timeoutMs) throw new Error(`palisade dns (${workers} workers) not ready: ${JSON.stringify(health)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Every thread of the running process `pid` onto `cpus` (taskset -a -p). */
export function pin(pid: number, cpus: string): void {
  const run = spawnSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`taskset -a -p -c ${cpus} ${pid}: ${run.stderr}`);
}
