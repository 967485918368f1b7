import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../helpers/api-server.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startApi();
});
afterAll(() => api.close());

describe('/me and /nodes/', () => {
  it('/me tells who is calling, the limits and the usage', async () => {
    const { user, key } = await api.user({ max_domains: 7 });
    await api.request('POST', '/domains', { key, body: { domain: 'me.example', backend: '198.51.100.1' } });
    await api.request('POST', '/security/iplist', { key, body: { name: 'l' } });
    const res = await api.request('GET', '/me/', { key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: user.id,
      name: user.name,
      email: user.email,
      created: user.created,
      limits: { ...user.limits, max_domains: 7 },
      usage: { domains: 1, iplists: 1 },
      // The account's pair of name servers (one pair: the default pool).
      nameservers: ['ns1.palisade.example.net', 'ns2.palisade.example.net'],
    });
  });

  it('/nodes/ lists the operator-registered nodes', async () => {
    const { key } = await api.user();
    const a = await api.store.createNode({ name: 'fra1', ipv4: '192.0.2.10', ipv6: '2001:db8::10', location: 'DE', status: 'active' });
    const b = await api.store.createNode({ name: 'nyc1', ipv4: null, ipv6: '2001:db8::20', location: 'US', status: 'maintenance' });
    for (const path of ['/nodes', '/nodes/']) {
      const res = await api.request('GET', path, { key });
      expect(res.status).toBe(200);
      expect(res.body).toEqual([a, b]);
    }
  });

  it('/healthz and /readyz answer without a key', async () => {
    const res = await api.request('GET', '/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ok', store: 'embedded' });
    expect((await api.request('GET', '/readyz')).status).toBe(200);
  });
});
