// Two API processes sharing one Redis: uniqueness, ids, revision order and no lost updates under
// concurrency; 503 within a second while Redis is down, and recovery when it returns.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisStore } from '../../src/store/redis/index.ts';
import { dig } from '../helpers/dig.ts';
import { startRedis, type TestRedis } from '../helpers/redis-server.ts';
import { runAdminCli, START_TIMEOUT_MS, startServe, type RunningServer } from '../helpers/spawn-palisade.ts';

let redis: TestRedis;
let apis: RunningServer[];
let key: string;
let env: Record<string, string>;

const call = (i: number, method: string, path: string, body?: unknown) =>
  fetch(`${apis[i % 2]!.url}${path}`, {
    method,
    headers: { 'x-auth-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

beforeAll(async () => {
  redis = await startRedis();
  env = { REDIS_URL: redis.url, PALISADE_DATA_DIR: '/nonexistent-unused' };
  const created = await runAdminCli(env, ['user', 'create', '--name', 'shared', '--email', 'shared@example.org']);
  expect(created.code, created.stderr).toBe(0);
  key = JSON.parse(created.stdout).key.api_key;
  apis = await Promise.all([startServe(env, START_TIMEOUT_MS, 'api'), startServe(env, START_TIMEOUT_MS, 'api')]);
});

afterAll(async () => {
  for (const api of apis ?? []) {
    api.child.kill('SIGTERM');
    await api.exited;
  }
  await redis?.stop();
});

describe('two API processes on one Redis', () => {
  it('200 parallel creates of one domain: exactly one 201 and 199 × 409', async () => {
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => call(i, 'POST', '/domains', { domain: 'race.example', backend: '198.51.100.1' })));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(199);
  });

  it('parallel record writes: unique ids, and every change in the feed in revision order without gaps', async () => {
    const store = new RedisStore({ url: redis.url });
    const start = await store.currentRevision();
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => call(i, 'POST', '/domains/race.example/dnsrecords', { name: `r${i}`, type: 1, value: '192.0.2.1' })));
    expect(results.every((r) => r.status === 201)).toBe(true);
    const ids = await Promise.all(results.map(async (r) => ((await r.json()) as { id: number }).id));
    expect(new Set(ids).size).toBe(100);
    const feed = await store.changesSince(start, 1000);
    if (!('changes' in feed)) throw new Error('feed gone');
    expect(feed.changes.map((c) => c.revision)).toEqual(Array.from({ length: 100 }, (_, i) => start + i + 1));
    const zone = await store.getZone('race.example');
    expect(zone!.records).toHaveLength(100);
    await store.close();
  });

  it('concurrent PATCHes of different fields lose nothing', async () => {
    const patches = [{ ssl: true }, { cachelevel: 3 }, { bwlimit: 512 }, { fhttps: true }, { sjschallenge: true }, { tags: ['a'] }, { geomode: 1 }, { cachelargefiles: true }];
    const results = await Promise.all(patches.map((body, i) => call(i, 'PATCH', '/domains/race.example', body)));
    expect(results.every((r) => r.status === 200)).toBe(true);
    const domain = (await (await call(0, 'GET', '/domains/race.example')).json()) as Record<string, unknown>;
    expect(domain).toMatchObject(Object.assign({}, ...patches));
  });

  it('DNSSEC turned on by 20 racing PATCHes through both processes: one key, sealed in Redis, the same DS from both', async () => {
    expect((await call(0, 'POST', '/domains', { domain: 'signed-race.example', backend: '198.51.100.1' })).status).toBe(201);
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => call(i, 'PATCH', '/domains/signed-race.example', { dnssec: true })));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    const shown = await Promise.all([0, 1].map(async (i) => (await (await call(i, 'GET', '/domains/signed-race.example/dnssec')).json()) as { state: string; keys: Array<{ ds: string }> }));
    expect(shown[0]!.state).toBe('signing');
    expect(shown[0]!.keys).toHaveLength(1);
    // (`parent`, when the parent was last looked at, may move between the two reads.)
    expect(shown[1]!.keys).toEqual(shown[0]!.keys);
    const store = new RedisStore({ url: redis.url });
    const keys = (await store.getZoneHead('signed-race.example'))!.domain.signing!.keys;
    expect(keys).toHaveLength(1);
    expect(keys[0]!.private_key.startsWith('pk1:')).toBe(true);
    await store.close();
  });

  it('answers 503 within a second while Redis is down, and recovers by itself', async () => {
    await redis.pause();
    const started = Date.now();
    const res = await call(0, 'GET', '/domains/race.example');
    expect(res.status).toBe(503);
    expect(((await res.json()) as { code: string }).code).toBe('STORE_UNAVAILABLE');
    // About a second by design; a request that waited for Redis to come back would wait until
    // the restart below, i.e. never. 5 s: room for a loaded machine, far from that.
    expect(Date.now() - started).toBeLessThan(5000);
    expect((await call(1, 'POST', '/domains', { domain: 'down.example', backend: '198.51.100.1' })).status).toBe(503);
    await redis.restart();
    // A fresh, empty Redis (no persistence in the test): recovery means answering again.
    let status = 0;
    for (let i = 0; i < 50 && status !== 401; i++) {
      status = (await call(0, 'GET', '/me')).status;
      if (status !== 401) await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(401);
  });
});

describe('the serve role on Redis', () => {
  it('keeps answering DNS from what it has while Redis is down', async () => {
    const created = await runAdminCli(env, ['user', 'create', '--name', 'dns', '--email', 'dns@example.org']);
    const dnsKey = JSON.parse(created.stdout).key.api_key as string;
    const serve = await startServe(env);
    try {
      const headers = { 'x-auth-key': dnsKey, 'content-type': 'application/json' };
      expect((await fetch(`${serve.url}/domains`, { method: 'POST', headers, body: JSON.stringify({ domain: 'kept.example', backend: '198.51.100.1', enabled: false }) })).status).toBe(201);
      expect((await fetch(`${serve.url}/domains/kept.example/activatens`, { headers })).status).toBe(200);
      let answer = await dig(serve.dnsPort, 'kept.example');
      for (let i = 0; i < 20 && answer.answer.length === 0; i++) {
        await new Promise((r) => setTimeout(r, 50));
        answer = await dig(serve.dnsPort, 'kept.example');
      }
      expect(answer.answer[0]!.data).toBe('198.51.100.1');
      await redis.pause();
      await new Promise((r) => setTimeout(r, 1500));
      expect((await dig(serve.dnsPort, 'kept.example')).answer[0]!.data).toBe('198.51.100.1');
      expect((await fetch(`${serve.url}/domains/kept.example`, { headers })).status).toBe(503);
      await redis.restart();
    } finally {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
  });
});
