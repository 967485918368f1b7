// Sync signals that tell the truth: genuine pushes are never taken for replays (a unique id in
// each), a replayed push after a name-server restart changes nothing, oversized push bodies get
// 413, a consumer that is down is logged once (and its recovery once) with counts in /metrics,
// and a name server that stops keeping up says so on /healthz.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signNotification } from '../../src/sync/notifier.ts';
import { freePort } from '../helpers/redis-server.ts';
import { runAdminCli, START_TIMEOUT_MS, startNameServer, startServe, stopProcess, type RunningNameServer, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';
import { until } from '../helpers/until.ts';

let apiEnv: Record<string, string>;
let api: RunningServer;
let key: string;
let ns: RunningNameServer;
let nsEnv: Record<string, string>;
let secret: string;
let downPort: number;

const call = (method: string, path: string, body?: unknown) =>
  fetch(`${api.url}${path}`, { method, headers: { 'x-auth-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
const nsMetrics = async () => (await fetch(ns.notifyUrl.replace('/notify', '/metrics'))).text();
const metricValue = (text: string, name: string) => Number(new RegExp(`^${name.replace(/[{}"]/g, (c) => `\\${c}`)} (\\d+)`, 'm').exec(text)?.[1] ?? NaN);
const push = (body: string, timestamp = Math.floor(Date.now() / 1000), sign = secret) =>
  fetch(ns.notifyUrl, { method: 'POST', headers: { 'x-palisade-timestamp': String(timestamp), 'x-palisade-signature': signNotification(sign, timestamp, body) }, body });

beforeAll(async () => {
  apiEnv = { PALISADE_DATA_DIR: tempDir(), PALISADE_API_PORT: String(await freePort()) };
  key = JSON.parse((await runAdminCli(apiEnv, ['user', 'create', '--name', 'sig', '--email', 'sig@example.org'])).stdout).key.api_key;
  const notifyPort = await freePort();
  const added = JSON.parse((await runAdminCli(apiEnv, ['consumer', 'add', '--name', 'ns1', '--url', `http://127.0.0.1:${notifyPort}/notify`])).stdout);
  secret = added.secret;
  downPort = await freePort();
  await runAdminCli(apiEnv, ['consumer', 'add', '--name', 'ns-down', '--url', `http://127.0.0.1:${downPort}/notify`]);
  api = await startServe(apiEnv, START_TIMEOUT_MS, 'api');
  nsEnv = {
    PALISADE_DATA_DIR: tempDir(),
    PALISADE_SYNC_TOKEN: added.token,
    PALISADE_SYNC_SECRET: secret,
    PALISADE_SYNC_PORT: String(notifyPort),
    PALISADE_SYNC_POLL_MS: '60000',
    PALISADE_SYNC_MAX_LAG_MS: '1500',
  };
  ns = await startNameServer({ ...nsEnv, PALISADE_SYNC_URL: api.url });
  expect((await call('POST', '/domains', { domain: 'sig.example', backend: '198.51.100.1', enabled: false })).status).toBe(201);
  await call('GET', '/domains/sig.example/activatens');
});

afterAll(async () => {
  if (ns) await stopProcess(ns);
  if (api) await stopProcess(api);
  removeTempDirs();
});

describe('push notifications', () => {
  it('a burst of writes (many pushes a second) is taken whole: no genuine push refused as a replay', async () => {
    for (let i = 0; i < 60; i++) expect((await call('PATCH', '/domains/sig.example', { bwlimit: i + 1 })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 500));
    const metrics = await nsMetrics();
    expect(metricValue(metrics, 'palisade_sync_notifications_total{outcome="rejected"}')).toBe(0);
    expect(metricValue(metrics, 'palisade_sync_notifications_total{outcome="accepted"}')).toBeGreaterThan(10);
    expect(ns.output()).not.toContain('replayed notification');
    expect(api.output()).not.toContain('consumer refuses notifications');
    // Two pushes with the same revision in the same second, different ids: both taken.
    const revision = Number(metricValue(metrics, 'palisade_dns_revision_applied'));
    expect([200, 202]).toContain((await push(JSON.stringify({ revision: revision + 1, id: 'a1' }))).status);
    expect([200, 202]).toContain((await push(JSON.stringify({ revision: revision + 1, id: 'a2' }))).status);
    expect((await push(JSON.stringify({ revision: revision + 1, id: 'a2' }))).status).toBe(401);
  });

  it('a push replayed after a restart changes nothing (the name server already holds its revision)', async () => {
    const applied = metricValue(await nsMetrics(), 'palisade_dns_revision_applied');
    const captured = JSON.stringify({ revision: applied, id: 'captured-before-restart' });
    const timestamp = Math.floor(Date.now() / 1000);
    expect((await push(captured, timestamp)).status).toBe(200);
    await stopProcess(ns);
    ns = await startNameServer({ ...nsEnv, PALISADE_SYNC_URL: api.url });
    const replayed = await push(captured, timestamp);
    expect(replayed.status).toBe(200);
    expect(await replayed.json()).toMatchObject({ status: 'up to date' });
    expect(metricValue(await nsMetrics(), 'palisade_sync_notifications_total{outcome="up_to_date"}')).toBe(1);
  });

  it('a push body over 4 KB gets 413', async () => {
    const res = await push(JSON.stringify({ revision: 1, id: 'x', pad: 'p'.repeat(5000) }));
    expect(res.status).toBe(413);
  });
});

describe('a consumer that is down', () => {
  it('is logged once when pushes stop reaching it and once when they reach it again; /metrics counts them', async () => {
    for (let i = 0; i < 30; i++) await call('PATCH', '/domains/sig.example', { cachelevel: i % 4 });
    const downLines = () => api.output().split('\n').filter((l) => l.includes('do not reach the consumer'));
    await until('the pushes to fail', async () => downLines().length > 0 && metricValue(await (await fetch(`${api.url}/metrics`)).text(), 'palisade_sync_pushes_total{consumer="ns-down",outcome="failed"}') >= 5).catch(() => undefined);
    const down = downLines();
    expect(down).toHaveLength(1);
    let metrics = await (await fetch(`${api.url}/metrics`)).text();
    expect(metricValue(metrics, 'palisade_sync_consumer_up{consumer="ns-down"}')).toBe(0);
    expect(metricValue(metrics, 'palisade_sync_pushes_total{consumer="ns-down",outcome="failed"}')).toBeGreaterThanOrEqual(5);
    expect(metricValue(metrics, 'palisade_sync_consumer_up{consumer="ns1"}')).toBe(1);
    // Something listens there again: one recovery line.
    const { createServer } = await import('node:http');
    const listener = createServer((_req, res) => res.writeHead(202).end());
    await new Promise<void>((r) => listener.listen(downPort, '127.0.0.1', () => r()));
    try {
      await call('PATCH', '/domains/sig.example', { cachelevel: 3 });
      await call('PATCH', '/domains/sig.example', { cachelevel: 1 });
      const againLines = () => api.output().split('\n').filter((l) => l.includes('takes notifications again'));
      await until('a push to reach it again', () => againLines().length > 0).catch(() => undefined);
      expect(againLines()).toHaveLength(1);
      metrics = await (await fetch(`${api.url}/metrics`)).text();
      expect(metricValue(metrics, 'palisade_sync_consumer_up{consumer="ns-down"}')).toBe(1);
    } finally {
      await new Promise((r) => listener.close(r));
    }
  });
});

describe('name-server health', () => {
  it('says degraded (503, with the reason and the lag) while it cannot apply the API\'s revision, ok again after', async () => {
    const health = () => fetch(ns.notifyUrl.replace('/notify', '/healthz'));
    expect((await health()).status).toBe(200);
    await stopProcess(api);
    // Pulls now fail (a push-less poll every 60 s, so trigger pulls with pushes).
    let res = await health();
    for (let i = 0; i < 40 && res.status === 200; i++) {
      await new Promise((r) => setTimeout(r, 100));
      await push(JSON.stringify({ revision: 1_000_000 + i, id: `wake${i}` }));
      res = await health();
    }
    expect(res.status).toBe(503);
    const body = (await res.json()) as { status: string; reason: string; lag: number };
    expect(body.status).toBe('degraded');
    expect(body.reason).toMatch(/no successful pull from the API for \d+ s/);
    api = await startServe(apiEnv, START_TIMEOUT_MS, 'api');
    await push(JSON.stringify({ revision: 2_000_000, id: 'back' }));
    for (let i = 0; i < 40 && res.status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 100));
      res = await health();
    }
    expect(res.status).toBe(200);
  }, 30_000);
});
