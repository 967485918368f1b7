// Does one account's largest zone-file import (or bulk record change) stall the others' API?
//   npm run bench:import-stall                     (both stores, 20,000 records)
//   BENCH_STORE=lmdb|redis BENCH_RECORDS=20000 BENCH_STEPS=import|bulk npm run bench:import-stall
// Runs `palisade api` as shipped. Account A imports a zone file of BENCH_RECORDS records into an
// empty zone, then a file of as many different records (every record removed, as many added),
// then makes the largest bulk changes allowed (BULK_MAX_ITEMS creates, updates, deletes), while
// account B reads its own records in a loop. Printed per step: A's time, B's p50/p99/max latency
// and largest gap between answers, and the server's longest event-loop delay meanwhile.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BULK_MAX_ITEMS } from '../src/api/routes/records-bulk.ts';
import { generateApiKey, hashApiKey } from '../src/model/user.ts';
import { openStore } from '../src/store/index.ts';
import { startRedis, type TestRedis } from '../test/helpers/redis-server.ts';
import { startServe, stopProcess, type RunningServer } from '../test/helpers/spawn-palisade.ts';
import { largeZoneFile, startTenantProbe } from '../test/helpers/tenant-probe.ts';
import { Redis } from 'ioredis';
import { percentile } from './stats.ts';

const RECORDS = Number(process.env.BENCH_RECORDS ?? 20_000);
const STORES = (process.env.BENCH_STORE ?? 'lmdb,redis').split(',');
/** BENCH_STEPS=import: only the two imports (bulk updates of 10,000 records on Redis took minutes before this change). */
const ONLY = process.env.BENCH_STEPS;
const LOOP_DELAY = fileURLToPath(new URL('./import-stall/loop-delay.mjs', import.meta.url));

async function loopDelay(server: RunningServer): Promise<number> {
  const before = server.output().length;
  server.child.kill('SIGUSR2');
  for (let i = 0; i < 100; i++) {
    const line = /event-loop-delay (\{.*\})/.exec(server.output().slice(before));
    if (line) return (JSON.parse(line[1]!) as { maxMs: number }).maxMs;
    await new Promise((r) => setTimeout(r, 20));
  }
  return NaN;
}

async function run(storeKind: string): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'palisade-import-stall-'));
  let redis: TestRedis | undefined;
  let server: RunningServer | undefined;
  try {
    redis = storeKind === 'redis' ? await startRedis() : undefined;
    const env: Record<string, string> = { PALISADE_DATA_DIR: dataDir, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${LOOP_DELAY}`.trim(), ...(redis && { REDIS_URL: redis.url }) };
    server = await startServe(env, undefined, 'api');
    const store = openStore({ dataDir, redisUrl: redis?.url });
    // Redis's own longest commands during a step (what holds every account's requests there).
    const watcher = redis && new Redis(redis.url);
    await watcher?.config('SET', 'slowlog-log-slower-than', '10000');
    const account = async (name: string, maxRecords?: number) => {
      const user = await store.createUser({ name, email: `${name}@example.org`, limits: maxRecords === undefined ? undefined : { max_records_per_domain: maxRecords } });
      const key = generateApiKey();
      await store.addApiKey(user.id, hashApiKey(key), 'bench');
      return key;
    };
    const a = await account('a', RECORDS + 10);
    const b = await account('b');
    await store.close();
    const call = async (key: string, method: string, path: string, body?: string, type = 'application/json') => {
      const res = await fetch(server!.url + path, { method, headers: { 'x-auth-key': key, ...(body !== undefined && { 'content-type': type }) }, body });
      const text = await res.text();
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
      return text;
    };
    for (const [key, domain] of [[a, 'a.example'], [a, 'bulk.example'], [b, 'b.example']] as const) await call(key, 'POST', '/domains', JSON.stringify({ domain, backend: '198.51.100.1' }));
    for (let i = 0; i < 10; i++) await call(b, 'POST', '/domains/b.example/dnsrecords', JSON.stringify({ name: `b${i}`, type: 'A', value: `192.0.2.${i + 1}` }));

    const first = largeZoneFile(RECORDS, 'h');
    const second = largeZoneFile(RECORDS, 'g');
    const bulkCreate = JSON.stringify({ create: Array.from({ length: BULK_MAX_ITEMS }, (_, i) => ({ name: `n${i}`, type: 'A', value: `198.51.${(i >> 8) & 255}.${i & 255}` })) });
    let bulkIds: number[] = [];
    const steps: Array<[string, () => Promise<unknown>]> = [
      // What B sees of the machine itself (a loaded one stalls an idle server too).
      ['nothing (2 s, baseline)', () => new Promise((r) => setTimeout(r, 2000))],
      [`import ${RECORDS} new`, () => call(a, 'POST', '/domains/a.example/zonefile', first, 'text/dns')],
      [`import ${RECORDS} replacing ${RECORDS}`, () => call(a, 'POST', '/domains/a.example/zonefile', second, 'text/dns')],
      [`bulk create ${BULK_MAX_ITEMS}`, async () => (bulkIds = (JSON.parse(await call(a, 'POST', '/domains/bulk.example/dnsrecords/bulk', bulkCreate)) as { created: Array<{ id: number }> }).created.map((r) => r.id))],
      [`bulk update ${BULK_MAX_ITEMS}`, () => call(a, 'POST', '/domains/bulk.example/dnsrecords/bulk', JSON.stringify({ update: bulkIds.map((id) => ({ id, ttl: 600 })) }))],
      [`bulk delete ${BULK_MAX_ITEMS}`, () => call(a, 'POST', '/domains/bulk.example/dnsrecords/bulk', JSON.stringify({ delete: bulkIds }))],
    ];
    console.log(`${storeKind}: account A's step, while account B reads GET /domains/b.example/dnsrecords in a loop (ms)`);
    console.log('  step                              A took   B reads   p50    p99    max  largest gap  event-loop max');
    for (const [label, step] of steps.filter(([label]) => ONLY === undefined || label.startsWith(ONLY) || label.startsWith('nothing'))) {
      await new Promise((r) => setTimeout(r, 300));
      await loopDelay(server);
      await watcher?.slowlog('RESET');
      const probe = startTenantProbe({ url: server.url, path: '/domains/b.example/dnsrecords', key: b, maxMs: 120_000 });
      await new Promise((r) => setTimeout(r, 200));
      const at = performance.now();
      await step();
      const took = performance.now() - at;
      await new Promise((r) => setTimeout(r, 200));
      const seen = await probe.stop();
      const delay = await loopDelay(server);
      const f = (n: number, w = 6) => n.toFixed(1).padStart(w);
      console.log(
        `  ${label.padEnd(32)} ${f(took, 8)} ${String(seen.count).padStart(8)} ${f(percentile(seen.latencies, 50))} ${f(percentile(seen.latencies, 99))} ${f(seen.latencies.at(-1)!)} ${f(seen.largestGapMs, 12)} ${f(delay, 15)}`,
      );
      if (seen.failures > 0) console.log(`    (${seen.failures} of B's reads failed)`);
      const slow = ((await watcher?.slowlog('GET', 3)) ?? []) as Array<[number, number, number, string[]]>;
      for (const [, , micros, args] of slow.sort((x, y) => y[2] - x[2])) console.log(`    redis held ${(micros / 1000).toFixed(1)} ms by ${args.slice(0, 2).join(' ').slice(0, 80)}`);
    }
    watcher?.disconnect();
  } finally {
    if (server) await stopProcess(server);
    await redis?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

for (const kind of STORES) await run(kind);
