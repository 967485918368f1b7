import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisStore } from '../../src/store/redis.ts';
import { startRedis, type TestRedis } from '../helpers/redis-server.ts';
import { storeContract } from './contract.ts';

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
