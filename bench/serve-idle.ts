// What `palisade serve` holds while nothing calls it: the PSS (smaps_rollup: shared pages such as
// the node binary's counted once across the processes) of the supervisor and each part, on a
// fresh data directory, after it has stood idle; then again with BENCH_ZONES domains created
// through the API (each with a backend, records and its name servers activated), idle again.
// Issue 42's goal for the fresh one: ≤ 250 MB in all.
//
//   npm run bench:serve-idle
//   BENCH_IDLE_SECONDS=30 BENCH_ZONES=1000 npm run bench:serve-idle
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { partPid, runAdminCli, startServe, stopProcess } from '../test/helpers/spawn-palisade.ts';
import { seedThroughApi } from './dns/api-seed.ts';
import { memoryMiB } from './dns/servers.ts';

const IDLE_S = Number(process.env.BENCH_IDLE_SECONDS ?? 30);
const ZONES = Number(process.env.BENCH_ZONES ?? 1000);
const GOAL_MB = 250;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const dir = mkdtempSync(join(tmpdir(), 'palisade-serve-idle-'));
const backend = createServer((_req, res) => res.end('ok'));
await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
const env = { PALISADE_DATA_DIR: dir, PALISADE_ALLOW_PRIVATE_BACKENDS: 'true' };
const key = (JSON.parse((await runAdminCli(env, ['user', 'create', '--name', 'bench', '--email', 'bench@example.org', '--max-domains', String(Math.max(1000, ZONES))])).stdout) as { key: { api_key: string } }).key.api_key;
// Every port chosen by the system (startServe's default).
const serve = await startServe(env, 120_000);

function report(what: string): number {
  const pids: Array<[string, number]> = [['supervisor', serve.child.pid!], ...(['api', 'dns', 'edge'] as const).map((part): [string, number] => [part, partPid(serve, part)])];
  const each = pids.map(([name, pid]) => [name, memoryMiB(pid)] as const);
  const total = each.reduce((sum, [, m]) => sum + m.pss, 0);
  console.log(`${what}: PSS ${Math.round(total)} MB in all — ${each.map(([name, m]) => `${name} ${Math.round(m.pss)} (RSS ${Math.round(m.rss)})`).join(', ')}`);
  return total;
}

try {
  console.log(`palisade serve, idle ${IDLE_S} s after each step`);
  await sleep(IDLE_S * 1000);
  const fresh = report('fresh data directory');
  const backendPort = (backend.address() as { port: number }).port;
  await seedThroughApi(serve.url, key, ZONES, `127.0.0.1:${backendPort}`, 8);
  await sleep(IDLE_S * 1000);
  report(`${ZONES} domains created through the API`);
  console.log(`goal (issue 42): fresh ≤ ${GOAL_MB} MB — ${fresh <= GOAL_MB ? 'met' : 'not met'}`);
} finally {
  await stopProcess(serve);
  backend.close();
  rmSync(dir, { recursive: true, force: true });
}
