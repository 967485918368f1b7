import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../helpers/api-server.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startApi({ PALISADE_NS1: 'ns1.example.net', PALISADE_NS2: 'ns2.example.org' });
});
afterAll(() => api.close());

describe('activatens / deactivatens', () => {
  it('switch ns_active, name the configured name servers, and repeat harmlessly', async () => {
    const { key } = await api.user();
    await api.request('POST', '/domains', { key, body: { domain: 'ns.example', backend: '198.51.100.1' } });
    const on = await api.request('GET', '/domains/ns.example/activatens', { key });
    expect(on.status).toBe(200);
    expect(on.body).toMatchObject({ domain: 'ns.example', ns_active: true, nameservers: ['ns1.example.net', 'ns2.example.org'] });
    expect((await api.request('GET', '/domains/ns.example', { key })).body.ns_active).toBe(true);
    const again = await api.request('GET', '/domains/ns.example/activatens/', { key });
    expect(again.body.revision).toBe(on.body.revision);
    const off = await api.request('GET', '/domains/NS.example/deactivatens', { key });
    expect(off.body).toMatchObject({ ns_active: false });
    expect(off.body.revision).toBeGreaterThan(on.body.revision);
    const feed = await api.store.changesSince(on.body.revision - 1, 10);
    expect('changes' in feed && feed.changes.map((c) => [c.kind, c.key])).toEqual([
      ['zone', 'ns.example'],
      ['zone', 'ns.example'],
    ]);
    expect((await api.request('GET', '/domains/missing.example/activatens', { key })).status).toBe(404);
  });
});
