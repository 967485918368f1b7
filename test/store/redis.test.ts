import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { DOMAIN_DEFAULTS } from '../../src/model/domain.ts';
import { RedisStore } from '../../src/store/redis/index.ts';
import { startRedis, type TestRedis } from '../helpers/redis-server.ts';
import { storeContract } from './contract/index.ts';

let redis: TestRedis;
let n = 0;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(() => redis.stop());

// Each contract test gets its own key prefix on the one server: isolated, and cheap.
storeContract('redis', async () => {
  const prefix = `{t${++n}}:`;
  return { store: new RedisStore({ url: redis.url, prefix }), reopen: async () => new RedisStore({ url: redis.url, prefix }) };
});

describe('redis store retention', () => {
  it('keeps about the configured number of change entries and says gone before them', async () => {
    const store = new RedisStore({ url: redis.url, prefix: '{retention}:', changeRetention: 5 });
    for (let i = 0; i < 300; i++) await store.createUser({ name: `u${i}`, email: `u${i}@example.org` });
    const gone = await store.changesSince(0, 1000);
    expect(gone).toMatchObject({ gone: true });
    const oldest = (gone as { oldest: number }).oldest;
    const feed = await store.changesSince(oldest - 1, 1000);
    expect('changes' in feed && feed.changes.map((c) => c.revision)).toEqual(Array.from({ length: 300 - oldest + 1 }, (_, i) => oldest + i));
    await store.close();
  });
});

describe('redis store layout upgrade', () => {
  it('splits zone documents that held their records (an earlier release) once, and serves them', async () => {
    const prefix = '{upgrade}:';
    const store = new RedisStore({ url: redis.url, prefix });
    const user = await store.createUser({ name: 'old', email: 'old@example.org' });
    const head = await store.createZone((ctx) => ({
      domain: { ...DOMAIN_DEFAULTS, backend: '203.0.113.10', domain: 'old.example', ownerId: user.id, ns_active: true, created: ctx.now, updated: ctx.now, revision: 0 },
      records: [],
    }));
    await store.close();
    const records = [
      { id: 1, name: 'www', type: 1, value: '192.0.2.1', ttl: 300, priority: null, target: [] },
      { id: 2, name: 'www', type: 6, value: 'text | with "quotes" and \u0000', ttl: 300, priority: null, target: [] },
    ];
    const raw = new Redis(redis.url);
    await raw.set(`${prefix}zone:old.example`, JSON.stringify({ domain: head.domain, records }));
    await raw.del(`${prefix}meta:recordLayout`, `${prefix}zrec:old.example`, `${prefix}zat:old.example`);
    await raw.quit();
    const again = new RedisStore({ url: redis.url, prefix });
    expect(await again.getZone('old.example')).toEqual({ domain: head.domain, records });
    expect((await again.getZoneHead('old.example'))!.recordCount).toBe(2);
    expect((await again.snapshot()).zones).toEqual([{ domain: head.domain, records }]);
    const changed = await again.changeRecords('old.example', user.id, (view) => {
      expect(view.at('www')).toEqual(records);
      return { put: [], del: [1] };
    });
    expect(changed.head.recordCount).toBe(1);
    await again.close();
  });
});

describe('redis store IP list upgrade', () => {
  it('moves the entries of lists written whole (an earlier release) into the sorted set, once', async () => {
    const prefix = '{ipupgrade}:';
    const store = new RedisStore({ url: redis.url, prefix });
    const user = await store.createUser({ name: 'old', email: 'old@example.org' });
    const list = await store.createIpList((ctx) => ({ id: ctx.id, ownerId: user.id, name: 'old', ips: [], allnodes: true, nodes: [], created: ctx.now, updated: ctx.now, revision: 0 }));
    await store.close();
    const ips = Array.from({ length: 2500 }, (_, i) => `10.9.${i >> 8}.${i & 255}`).sort();
    const raw = new Redis(redis.url);
    await raw.set(`${prefix}iplist:${list.id}`, JSON.stringify({ ...list, ips }));
    await raw.del(`${prefix}meta:ipEntries`, `${prefix}ipe:${list.id}`);
    await raw.quit();
    const again = new RedisStore({ url: redis.url, prefix });
    expect(await again.getIpList(list.id)).toEqual({ ...list, ips });
    const changed = await again.changeIpEntries(list.id, user.id, { add: ['10.9.0.0/16'], del: [ips[0]!] }, () => undefined);
    expect(changed.count).toBe(2500);
    expect((await again.getIpList(list.id))!.ips).toEqual(['10.9.0.0/16', ...ips.slice(1)].sort());
    await again.close();
  });
});
