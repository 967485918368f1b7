import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../helpers/api-server.ts';

let api: TestApi;
let key: string;
beforeAll(async () => {
  api = await startApi();
  ({ key } = await api.user());
  await api.request('POST', '/domains', { key, body: { domain: 'race.example', backend: '198.51.100.1' } });
});
afterAll(() => api.close());

describe('concurrent writes to one domain', () => {
  it('all land, with unique record ids and strictly increasing revisions recorded in commit order', async () => {
    const start = await api.store.currentRevision();
    const writes = Array.from({ length: 100 }, (_, i) =>
      i % 4 === 0
        ? api.request('PATCH', '/domains/race.example', { key, body: { bwlimit: i + 1 } })
        : api.request('POST', '/domains/race.example/dnsrecords', { key, body: { name: `c${i}`, type: 6, value: `v${i}` } }),
    );
    const results = await Promise.all(writes);
    expect(results.every((r) => r.status === 200 || r.status === 201)).toBe(true);
    const records = results.filter((r) => r.status === 201).map((r) => r.body.id as number);
    expect(new Set(records).size).toBe(75);

    const end = await api.store.currentRevision();
    expect(end - start).toBe(100);
    const feed = await api.store.changesSince(start, 1000);
    if (!('changes' in feed)) throw new Error('feed gone');
    expect(feed.changes.map((c) => c.revision)).toEqual(Array.from({ length: 100 }, (_, i) => start + i + 1));
    const zone = await api.request('GET', '/domains/race.example', { key });
    expect(zone.body.records).toBe(75);
    expect(zone.body.revision).toBe(end);
  });

  it('two writers racing for one name: exactly one CNAME wins', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        api.request('POST', '/domains/race.example/dnsrecords', { key, body: { name: 'contested', type: 3, value: `t${i}.example.org` } }),
      ),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 422)).toHaveLength(19);
  });
});
