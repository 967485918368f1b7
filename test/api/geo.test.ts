import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../helpers/api-server.ts';

let api: TestApi;
let key: string;
beforeAll(async () => {
  api = await startApi();
  ({ key } = await api.user());
});
afterAll(() => api.close());

describe('GET /geo/targets', () => {
  it('lists 7 continents and 250 countries, paged like every list (Link: rel="next")', async () => {
    const all: Array<{ kind: string }> = [];
    let path: string | undefined = '/geo/targets?limit=100';
    while (path) {
      const res: Awaited<ReturnType<TestApi['request']>> = await api.request('GET', path, { key });
      expect(res.status).toBe(200);
      all.push(...(res.body as Array<{ kind: string }>));
      path = /<([^>]+)>; rel="next"/.exec(res.headers.get('link') ?? '')?.[1];
    }
    expect(all.filter((t) => t.kind === 'continent')).toHaveLength(7);
    expect(all.filter((t) => t.kind === 'country')).toHaveLength(250);
    expect((await api.request('GET', '/geo/targets?limit=1000', { key })).body).toHaveLength(257);
  });

  it('finds by ISO code or part of the name, and every ID it gives is accepted as a target', async () => {
    const de = await api.request('GET', '/geo/targets?code=de', { key });
    expect(de.body).toEqual([{ id: 2921044, kind: 'country', code: 'DE', name: 'Germany', continent_id: 6255148 }]);
    const europe = await api.request('GET', '/geo/targets?kind=continent&q=EUR', { key });
    expect(europe.body).toEqual([{ id: 6255148, kind: 'continent', code: 'EU', name: 'Europe' }]);
    expect((await api.request('GET', '/geo/targets?kind=planet', { key })).status).toBe(400);

    await api.request('POST', '/domains', { key, body: { domain: 'geo-ids.example', backend: '198.51.100.1' } });
    const res = await api.request('POST', '/domains/geo-ids.example/dnsrecords', { key, body: { name: 'www', type: 1, value: '192.0.2.1', target: [de.body[0].id, europe.body[0].id] } });
    expect(res.status).toBe(201);
  });

  it('needs a key like every other endpoint', async () => {
    expect((await api.request('GET', '/geo/targets')).status).toBe(401);
  });
});
