// Uptime and notifications as they ship, on loopback:
//   1. Detection → notification: `palisade api` + `palisade edge` (node 1) + 50 backends + a webhook
//      receiver; all backends stopped at once, then started again, 3 times. Per event: from the
//      API recording the edge's verdict to the receiver holding the signed POST, and from the
//      backend's stop (or start) to the receiver (this includes the edge's detection: 3 failed
//      checks, or 2 passed, at PALISADE_EDGE_CHECK_INTERVAL_MS = 500 here).
//   2. Write load: 10,000 domains × 10 nodes — ten edges' reports of every domain (one row each),
//      POSTed together to `palisade api`, per store (embedded, Redis). The first round carries
//      every verdict (new health documents); later rounds only measures.
//   3. GET /domains/{domain}/uptime for a domain with 30 days of data from 10 nodes, per store.
//   4. Store growth: one domain, 10 nodes, a day of minute reports; bytes kept per resolution.
// Run: npm run bench:uptime   (BENCH_UPTIME_DOMAINS=10000 BENCH_UPTIME_NODES=10 BENCH_UPTIME_ROUNDS=4)
import { Redis } from 'ioredis';
import { open } from 'lmdb';
import { hashApiKey } from '../src/model/user.ts';
import { DOMAIN_DEFAULTS } from '../src/model/domain.ts';
import { openStore } from '../src/store/index.ts';
import type { Store } from '../src/store/types.ts';
import { freePort, startRedis } from '../test/helpers/redis-server.ts';
import { runAdminCli, startEdge, startServe, stopProcess } from '../test/helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../test/helpers/temp.ts';
import { startReceiver } from '../test/helpers/webhook-receiver.ts';
import { startBackendAt, type StoppableBackend } from '../test/helpers/stoppable-backend.ts';

const DOMAINS = Number(process.env.BENCH_UPTIME_DOMAINS ?? 10_000);
const NODES = Number(process.env.BENCH_UPTIME_NODES ?? 10);
const ROUNDS = Number(process.env.BENCH_UPTIME_ROUNDS ?? 4);
const OUTAGE_DOMAINS = 50;
/** Outages per domain: 3 outages are 6 changes; a 4th within 15 minutes would be told as flapping (by design). */
const OUTAGE_ROUNDS = 3;
const DEADLINE_MS = 60_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
};
const fmt = (values: number[]) => `p50 ${pct(values, 0.5).toFixed(0)} ms, p99 ${pct(values, 0.99).toFixed(0)} ms (n=${values.length})`;

async function until(what: string, probe: () => boolean): Promise<void> {
  const deadline = Date.now() + DEADLINE_MS;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

async function detectionToNotification(): Promise<void> {
  const env: Record<string, string> = { PALISADE_DATA_DIR: tempDir(), PALISADE_ALLOW_PRIVATE_BACKENDS: 'true', PALISADE_WEBHOOK_ALLOW_PRIVATE: 'true' };
  const admin = async (args: string[]) => JSON.parse((await runAdminCli(env, args)).stdout) as Record<string, unknown>;
  const key = ((await admin(['user', 'create', '--name', 'bench', '--email', 'b@example.org'])).key as { api_key: string }).api_key;
  await admin(['node', 'add', '--name', 'e1', '--ipv4', '127.0.0.1', '--location', 'DE']);
  const syncPort = await freePort();
  const consumer = (await admin(['consumer', 'add', '--name', 'edge', '--node', '1', '--url', `http://127.0.0.1:${syncPort}/notify`])) as { token: string; secret: string };
  const api = await startServe(env, 20_000, 'api');
  const edge = await startEdge({ PALISADE_DATA_DIR: tempDir(), PALISADE_EDGE_NODE: '1', PALISADE_SYNC_URL: api.url, PALISADE_SYNC_TOKEN: consumer.token, PALISADE_SYNC_SECRET: consumer.secret, PALISADE_SYNC_PORT: String(syncPort), PALISADE_EDGE_CHECK_INTERVAL_MS: '500', PALISADE_ALLOW_PRIVATE_BACKENDS: 'true' });
  const receiver = await startReceiver();
  const call = (method: string, path: string, body?: unknown) => fetch(`${api.url}${path}`, { method, headers: { 'x-auth-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  await call('POST', '/me/webhooks', { url: receiver.url });
  const ports: number[] = [];
  const backends: Array<StoppableBackend | undefined> = [];
  const start = async (i: number) => {
    backends[i] = await startBackendAt(ports[i]!, (_req, res) => res.end('ok'));
  };
  for (let i = 0; i < OUTAGE_DOMAINS; i++) {
    ports.push(await freePort());
    await start(i);
    await call('POST', '/domains', { domain: `outage${i}.example`, backend: `127.0.0.1:${ports[i]}` });
  }
  const count = (type: string) => receiver.received.filter((r) => r.json.type === type).length;
  const fromVerdict: number[] = [];
  const fromChange: number[] = [];
  await sleep(3000);
  for (let round = 0; round < OUTAGE_ROUNDS; round++) {
    for (const [type, act] of [
      ['backend.down', async () => Promise.all(backends.map((b, i) => ((backends[i] = undefined), b!.stop())))],
      ['backend.recovered', async () => Promise.all(ports.map((_p, i) => start(i)))],
    ] as const) {
      const before = receiver.received.length;
      const target = count(type) + OUTAGE_DOMAINS;
      const at = Date.now();
      await act();
      await until(`${OUTAGE_DOMAINS} × ${type}`, () => count(type) >= target);
      for (const r of receiver.received.slice(before).filter((x) => x.json.type === type)) {
        fromVerdict.push(r.at - Date.parse(String(r.json.data.since)));
        fromChange.push(r.at - at);
      }
      await sleep(1500);
    }
  }
  console.log(`detection → notification (${OUTAGE_DOMAINS} domains, ${OUTAGE_ROUNDS} outages each, down and recovered; all ${OUTAGE_DOMAINS} events of a round go to one webhook, 2 at a time):`);
  console.log(`  the API recording the edge's verdict → the receiver holding the signed POST: ${fmt(fromVerdict)}`);
  console.log(`  the backend stopping/starting → the receiver (edge checks every 500 ms, down after 3 fails, up after 2 passes): ${fmt(fromChange)}`);
  const extra = receiver.received.length - OUTAGE_DOMAINS * OUTAGE_ROUNDS * 2;
  console.log(`  events received beyond one down and one recovered per outage: ${extra}`);
  await stopProcess(edge);
  await stopProcess(api);
  for (const b of backends) await b?.stop();
  await receiver.close();
}

async function seed(store: Store, domains: number): Promise<number> {
  const user = await store.createUser({ name: 'load', email: 'load@example.org', limits: { max_domains: domains + 10 } });
  for (let i = 0; i < domains; i += 500) {
    await Promise.all(
      Array.from({ length: Math.min(500, domains - i) }, (_, j) =>
        store.createZone((ctx) => ({ domain: { ...DOMAIN_DEFAULTS, backend: '198.51.100.1', domain: `load${i + j}.example`, ownerId: user.id, ns_active: false, created: ctx.now, updated: ctx.now, revision: 0 }, records: [] })),
      ),
    );
  }
  for (let n = 1; n <= NODES; n++) {
    await store.createNode({ name: `n${n}`, ipv4: `198.51.100.${n}`, ipv6: null, location: 'DE', status: 'active' });
    await store.createConsumer({ name: `edge${n}`, url: null, node: n, tokenHash: hashApiKey(`nt_bench_edge_token_${n}_000000000000`), secret: 'unused' });
  }
  return user.id;
}

/**
 * The endpoint shows no period before a domain's creation, which the store sets to the time of
 * the write: the measured domain's head is rewritten as if registered 31 days ago (the bench's
 * only write around the store's interface).
 */
async function backdate(dataDir: string, redisUrl: string | undefined, name: string): Promise<void> {
  const monthAgo = new Date(Date.now() - 31 * 86_400_000).toISOString();
  if (redisUrl) {
    const client = new Redis(redisUrl);
    const key = `{palisade}:zone:${name}`;
    const head = JSON.parse((await client.get(key))!) as { domain: { created: string } };
    head.domain.created = monthAgo;
    await client.set(key, JSON.stringify(head));
    client.disconnect();
    return;
  }
  const db = open({ path: dataDir, compression: false });
  const head = db.get(['zone', name]) as { domain: { created: string } };
  head.domain.created = monthAgo;
  await db.put(['zone', name], head);
  await db.close();
}

const measure = (c: number) => ({ c, u: c, r: 20, o: 20, ch: { 0: c }, rh: { 8: 12, 9: 6, 11: 2 } });

async function writeLoadAndRead(kind: 'embedded' | 'redis'): Promise<void> {
  const redis = kind === 'redis' ? await startRedis() : undefined;
  const dataDir = tempDir();
  const store = openStore({ dataDir, redisUrl: redis?.url });
  const owner = await seed(store, DOMAINS);
  // 30 days from 10 nodes for one domain: an hour's measures per row beyond the last two hours, minutes within them.
  const now = Date.now();
  const rows = [];
  for (let n = 1; n <= NODES; n++) {
    for (let h = 30 * 24; h >= 2; h--) rows.push({ domain: 'load0.example', node: n, minute: now - (now % 3_600_000) - h * 3_600_000, measure: measure(720) });
    for (let m = 119; m >= 0; m--) rows.push({ domain: 'load0.example', node: n, minute: now - (now % 60_000) - m * 60_000, measure: measure(12) });
  }
  await store.addUptime(rows);
  await store.close();
  await backdate(dataDir, redis?.url, 'load0.example');

  const env: Record<string, string> = { PALISADE_DATA_DIR: dataDir, ...(redis && { REDIS_URL: redis.url }) };
  const apiKey = (JSON.parse((await runAdminCli(env, ['key', 'create', '--user', String(owner), '--label', 'bench'])).stdout) as { api_key: string }).api_key;
  const api = await startServe(env, 60_000, 'api');
  const bodies = (state: string) => {
    const minute = Date.now() - (Date.now() % 60_000);
    return Array.from({ length: NODES }, () => JSON.stringify({ rows: Array.from({ length: DOMAINS }, (_, i) => ({ domain: `load${i}.example`, state, measures: [{ minute, ...measure(6) }] })) }));
  };
  const round = async (state: string) => {
    const texts = bodies(state);
    const started = performance.now();
    await Promise.all(
      texts.map(async (body, i) => {
        const res = await fetch(`${api.url}/sync/edge/report`, { method: 'POST', headers: { authorization: `Bearer nt_bench_edge_token_${i + 1}_000000000000`, 'content-type': 'application/json' }, body });
        if (!res.ok) throw new Error(`report ${res.status}: ${await res.text()}`);
        await res.json();
      }),
    );
    return { ms: performance.now() - started, bytes: texts.reduce((n, t) => n + t.length, 0) };
  };
  const first = await round('up');
  console.log(`${kind}: ${NODES} reports of ${DOMAINS.toLocaleString()} domains (${(first.bytes / 1_048_576).toFixed(1)} MB), every verdict new: ${first.ms.toFixed(0)} ms`);
  const steady: number[] = [];
  for (let i = 0; i < ROUNDS; i++) steady.push((await round('up')).ms);
  const median = pct(steady, 0.5);
  const rowsPerSecond = (DOMAINS * NODES) / (median / 1000);
  console.log(`${kind}: steady rounds (measures only): median ${median.toFixed(0)} ms per round of ${(DOMAINS * NODES).toLocaleString()} rows → ${Math.round(rowsPerSecond).toLocaleString()} rows/s; at the default 30 s report interval the API is busy ${((100 * median) / 30_000).toFixed(1)} % of the time`);

  const headers = { 'x-auth-key': apiKey };
  const times: number[] = [];
  let size = 0;
  for (let i = 0; i < 200; i++) {
    const t = performance.now();
    const res = await fetch(`${api.url}/domains/load0.example/uptime`, { headers });
    const text = await res.text();
    if (!res.ok) throw new Error(`uptime ${res.status}: ${text}`);
    size = text.length;
    times.push(performance.now() - t);
  }
  const body = JSON.parse((await (await fetch(`${api.url}/domains/load0.example/uptime`, { headers })).text())) as { day: { periods: Array<{ checks: number }> } };
  console.log(`${kind}: GET /domains/{domain}/uptime, 30 days × ${NODES} nodes (${body.day.periods.filter((p) => p.checks > 0).length} days with data, ${(size / 1024).toFixed(0)} KB): p50 ${pct(times, 0.5).toFixed(1)} ms, p99 ${pct(times, 0.99).toFixed(1)} ms`);
  await stopProcess(api);
  await redis?.stop();
}

async function storeGrowth(): Promise<void> {
  for (const kind of ['embedded', 'redis'] as const) {
    const redis = kind === 'redis' ? await startRedis() : undefined;
    const dataDir = tempDir();
    const store = openStore({ dataDir, redisUrl: redis?.url });
    // One day of minute reports, ending now (older minutes past the retention are dropped as new ones come).
    const now = Date.now();
    const rows = [];
    for (let m = 24 * 60 - 1; m >= 0; m--) for (let n = 1; n <= NODES; n++) rows.push({ domain: 'grow.example', node: n, minute: now - (now % 60_000) - m * 60_000, measure: { c: 12, u: 12, r: 40, o: 40, ch: { 0: 11, 1: 1 }, rh: { 7: 10, 8: 20, 9: 8, 11: 2 } } });
    await store.addUptime(rows);
    await store.close();
    const bytes = { minute: 0, hour: 0, day: 0 };
    const periods = { minute: new Set<number>(), hour: new Set<number>(), day: new Set<number>() };
    if (redis) {
      const client = new Redis(redis.url);
      for (const resolution of ['minute', 'hour', 'day'] as const) {
        for (const k of await client.keys(`*upt:grow.example:${resolution}:*`)) {
          bytes[resolution] += (await client.call('MEMORY', 'USAGE', k, 'SAMPLES', '0')) as number;
          periods[resolution].add(Number(k.split(':').pop()));
        }
      }
      client.disconnect();
    } else {
      const env = open({ path: dataDir, compression: false });
      const db = env.openDB({ name: 'uptime' });
      for (const { key } of db.getRange({ start: ['grow.example'], end: ['grow.example', '\uffff'] })) {
        const [, resolution, period] = key as [string, 'minute' | 'hour' | 'day', number, number];
        // The value and the key as stored (ordered-binary: the domain, the resolution, two numbers).
        bytes[resolution] += (db.getBinary(key)?.length ?? 0) + 'grow.example'.length + resolution.length + 20;
        periods[resolution].add(period);
      }
      await env.close();
    }
    const per = (r: 'minute' | 'hour' | 'day') => bytes[r] / Math.max(1, periods[r].size);
    const steady = per('minute') * 65 + per('hour') * 48 + per('day') * 35;
    console.log(
      `${kind}: one domain, ${NODES} nodes, a day of minute reports → kept: ${periods.minute.size} minutes ${(bytes.minute / 1024).toFixed(0)} KB, ${periods.hour.size} hours ${(bytes.hour / 1024).toFixed(0)} KB, ${periods.day.size} day(s) ${(bytes.day / 1024).toFixed(1)} KB; ` +
        `per day kept beyond two days (its day period): ${(per('day') / 1024).toFixed(1)} KB; bounded at ~${(steady / 1024).toFixed(0)} KB per domain (65 minutes, 48 hours, 35 days)`,
    );
    await redis?.stop();
  }
}

try {
  console.log(`uptime bench: ${DOMAINS.toLocaleString()} domains × ${NODES} nodes, ${ROUNDS} rounds`);
  await detectionToNotification();
  await writeLoadAndRead('embedded');
  await writeLoadAndRead('redis');
  await storeGrowth();
} finally {
  removeTempDirs();
}
