import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type ApiResponse, type TestApi } from '../helpers/api-server.ts';

let api: TestApi;
let key: string;
beforeAll(async () => {
  api = await startApi();
  ({ key } = await api.user());
});
afterAll(() => api.close());

const create = (body: Record<string, unknown>, k = key) => api.request('POST', '/domains/', { key: k, body });

describe('domains: happy paths', () => {
  it('creates a domain with documented defaults, IDN in punycode, Location header', async () => {
    const res = await create({ domain: 'Bücher.Example', backend: '2001:DB8::10' });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe('/domains/xn--bcher-kva.example');
    expect(res.body).toMatchObject({
      domain: 'xn--bcher-kva.example',
      enabled: true,
      mask: 'www',
      ssl: false,
      tags: [],
      backend: '2001:db8::10',
      failover: null,
      fhttps: false,
      cachelevel: 0,
      sjschallenge: false,
      baseprotection: true,
      bwlimit: 0,
      geomode: 0,
      geolist: [],
      bind_node: [],
      cachelargefiles: false,
      ns_active: false,
      nameservers: ['ns1.palisade.example.net', 'ns2.palisade.example.net'],
      records: 0,
    });
    expect(res.body.revision).toBeGreaterThan(0);
    expect(Date.parse(res.body.created)).not.toBeNaN();
  });

  it('accepts and returns every field', async () => {
    const node = await api.store.createNode({ name: 'edge-a', ipv4: '192.0.2.50', ipv6: null, location: 'NL', status: 'active' });
    const body = {
      domain: 'full.example',
      enabled: false,
      mask: 'Shop.full.example, www *',
      ssl: true,
      tags: ['blue', 'prod', 'blue'],
      backend: '198.51.100.7',
      failover: '198.51.100.8',
      fhttps: true,
      cachelevel: 3,
      sjschallenge: true,
      baseprotection: false,
      bwlimit: 2048,
      geomode: 2,
      geolist: ['de', 'US'],
      bind_node: [node.id],
      cachelargefiles: true,
    };
    const res = await create(body);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ ...body, mask: '*,shop,www', tags: ['blue', 'prod'], geolist: ['DE', 'US'] });
    const read = await api.request('GET', '/domains/full.example', { key });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(res.body);
  });

  it('PATCH changes only the supplied fields; an empty change spends no revision', async () => {
    const created = (await create({ domain: 'patch.example', backend: '198.51.100.1', tags: ['a'] })).body;
    const res = await api.request('PATCH', '/domains/patch.example', { key, body: { cachelevel: 2, failover: '198.51.100.2' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...created, cachelevel: 2, failover: '198.51.100.2', updated: res.body.updated, revision: res.body.revision });
    expect(res.body.revision).toBeGreaterThan(created.revision);
    const again = await api.request('PATCH', '/domains/patch.example', { key, body: { cachelevel: 2 } });
    expect(again.body.revision).toBe(res.body.revision);
    const cleared = await api.request('PATCH', '/domains/patch.example', { key, body: { failover: null } });
    expect(cleared.body.failover).toBeNull();
  });

  it('lists domains, filters by tag, and deletes', async () => {
    await create({ domain: 'tagged.example', backend: '198.51.100.1', tags: ['green'] });
    const list = await api.request('GET', '/domains', { key });
    expect(list.status).toBe(200);
    expect(list.body.map((d: { domain: string }) => d.domain)).toContain('tagged.example');
    const green = await api.request('GET', '/domains/?tag=green', { key });
    expect(green.body.map((d: { domain: string }) => d.domain)).toEqual(['tagged.example']);
    expect((await api.request('DELETE', '/domains/tagged.example/', { key })).status).toBe(204);
    expect((await api.request('GET', '/domains/tagged.example', { key })).status).toBe(404);
    expect((await api.request('DELETE', '/domains/tagged.example', { key })).status).toBe(404);
  });

  it('pages with limit, cursor and a Link header', async () => {
    const { key: k } = await api.user();
    for (const n of ['p1', 'p2', 'p3', 'p4', 'p5']) expect((await create({ domain: `${n}.example`, backend: '198.51.100.1' }, k)).status).toBe(201);
    const seen: string[] = [];
    let path: string | undefined = '/domains/?limit=2';
    while (path) {
      const res: ApiResponse<Array<{ domain: string }>> = await api.request('GET', path, { key: k });
      expect(res.status).toBe(200);
      expect(res.body.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.map((d: { domain: string }) => d.domain));
      path = /<([^>]+)>; rel="next"/.exec(res.headers.get('link') ?? '')?.[1];
    }
    expect(seen).toEqual(['p1.example', 'p2.example', 'p3.example', 'p4.example', 'p5.example']);
    expect((await api.request('GET', '/domains/?cursor=bogus!', { key: k })).status).toBe(400);
  });

  it('answers 409 for a domain already registered, by anyone', async () => {
    await create({ domain: 'taken.example', backend: '198.51.100.1' });
    const again = await create({ domain: 'TAKEN.example.', backend: '198.51.100.1' });
    expect(again.status).toBe(409);
    expect(again.contentType).toContain('application/problem+json');
    const { key: other } = await api.user();
    expect((await create({ domain: 'taken.example', backend: '198.51.100.1' }, other)).status).toBe(409);
  });

  it('enforces the account domain limit', async () => {
    const { key: k } = await api.user({ max_domains: 1 });
    expect((await create({ domain: 'limit1.example', backend: '198.51.100.1' }, k)).status).toBe(201);
    const res = await create({ domain: 'limit2.example', backend: '198.51.100.1' }, k);
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('LIMIT_EXCEEDED');
  });
});

describe('domains: validation', () => {
  const cases: Array<[string, Record<string, unknown>, number, string]> = [
    ['wrong type', { domain: 'v.example', backend: '198.51.100.1', ssl: 'yes' }, 400, 'ssl'],
    ['string for a number', { domain: 'v.example', backend: '198.51.100.1', cachelevel: '1' }, 400, 'cachelevel'],
    ['unknown field', { domain: 'v.example', backend: '198.51.100.1', colour: 'red' }, 400, 'colour'],
    ['missing backend', { domain: 'v.example' }, 400, 'backend'],
    ['cachelevel out of range', { domain: 'v.example', backend: '198.51.100.1', cachelevel: 4 }, 400, 'cachelevel'],
    ['geomode out of range', { domain: 'v.example', backend: '198.51.100.1', geomode: 3 }, 400, 'geomode'],
    ['negative bwlimit', { domain: 'v.example', backend: '198.51.100.1', bwlimit: -1 }, 400, 'bwlimit'],
    ['invalid backend IP', { domain: 'v.example', backend: '300.1.1.1' }, 400, 'backend'],
    ['loopback backend', { domain: 'v.example', backend: '127.0.0.1' }, 400, 'backend'],
    ['invalid failover', { domain: 'v.example', backend: '198.51.100.1', failover: 'example.org' }, 400, 'failover'],
    ['label over 63', { domain: `${'a'.repeat(64)}.example`, backend: '198.51.100.1' }, 400, 'domain'],
    ['name over 253', { domain: `${'abcdefghi.'.repeat(26)}example`, backend: '198.51.100.1' }, 400, 'domain'],
    ['bad characters', { domain: 'exa$mple.com', backend: '198.51.100.1' }, 400, 'domain'],
    ['single label', { domain: 'localhost', backend: '198.51.100.1' }, 400, 'domain'],
    ['empty label', { domain: 'a..example', backend: '198.51.100.1' }, 400, 'domain'],
    ['hyphen at label start', { domain: '-a.example', backend: '198.51.100.1' }, 400, 'domain'],
    ['unknown ISO code', { domain: 'v.example', backend: '198.51.100.1', geolist: ['DE', 'XX'] }, 400, 'geolist.1'],
    ['bad mask entry', { domain: 'v.example', backend: '198.51.100.1', mask: 'www, bad$name' }, 400, 'mask'],
    ['unknown node id', { domain: 'v.example', backend: '198.51.100.1', bind_node: [4242] }, 422, 'bind_node'],
  ];
  for (const [what, body, status, field] of cases) {
    it(`rejects ${what} with ${status} naming ${field}, changing nothing`, async () => {
      const before = await api.store.currentRevision();
      const res = await create(body);
      expect(res.status).toBe(status);
      expect(res.contentType).toContain('application/problem+json');
      expect(res.body.status).toBe(status);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
      expect(await api.store.currentRevision()).toBe(before);
      expect((await api.request('GET', '/domains/v.example', { key })).status).toBe(404);
    });
  }

  it('names every offending field at once', async () => {
    const res = await create({ domain: 'v.example', backend: '198.51.100.1', ssl: 1, cachelevel: 9, extra: true });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['cachelevel', 'extra', 'ssl']);
  });

  it('PATCH rejects unknown fields, bad values and unknown nodes without changing the domain', async () => {
    const created = (await create({ domain: 'pv.example', backend: '198.51.100.1' })).body;
    for (const body of [{ domain: 'other.example' }, { backend: '::1' }, { geolist: ['ZZ'] }, { bind_node: [777] }, { tags: 'x' }]) {
      const res = await api.request('PATCH', '/domains/pv.example', { key, body });
      expect([400, 422]).toContain(res.status);
    }
    expect((await api.request('GET', '/domains/pv.example', { key })).body).toEqual(created);
  });
});
