import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../helpers/api-server.ts';

let api: TestApi;
let key: string;
const zone = 'rec.example';
const path = `/domains/${zone}/dnsrecords`;
const DE = 2921044;
const EUROPE = 6255148;

beforeAll(async () => {
  api = await startApi();
  ({ key } = await api.user());
  expect((await api.request('POST', '/domains', { key, body: { domain: zone, backend: '198.51.100.1' } })).status).toBe(201);
});
afterAll(() => api.close());

const add = (body: Record<string, unknown>) => api.request('POST', path, { key, body });

describe('records: each type, canonical values', () => {
  const cases: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
    ['A', { name: 'www', type: 1, value: '192.0.2.1' }, { name: 'www', type_name: 'A', value: '192.0.2.1', ttl: 300, priority: null, target: [] }],
    ['AAAA lower-cased and compressed', { name: 'WWW', type: 2, value: '2001:DB8:0:0:0:0:0:1' }, { name: 'www', value: '2001:db8::1' }],
    ['CNAME with a trailing dot', { name: 'blog', type: 3, value: 'Hosted.Example.NET.' }, { value: 'hosted.example.net' }],
    ['MX with priority', { name: '@', type: 4, value: 'mail.rec.example', priority: 10 }, { name: '@', priority: 10 }],
    ['NS delegation below the apex', { name: 'sub', type: 5, value: 'ns.sub.rec.example' }, { name: 'sub' }],
    ['TXT longer than 255', { name: '@', type: 6, value: 'v'.repeat(600) }, { value: 'v'.repeat(600) }],
    ['SOA with timers', { name: '@', type: 7, value: 'dns@rec.example 7200 900 1209600 600', ttl: 3600 }, { value: 'dns.rec.example 7200 900 1209600 600' }],
    ['SRV', { name: '_sip._tcp', type: 8, value: '5 5060 SIP.rec.example.', priority: 1 }, { value: '5 5060 sip.rec.example', priority: 1 }],
    ['full name inside the zone', { name: 'API.rec.example.', type: 1, value: '192.0.2.2' }, { name: 'api' }],
    ['wildcard', { name: '*.dev', type: 1, value: '192.0.2.3' }, { name: '*.dev' }],
    ['geo variant', { name: 'www', type: 1, value: '192.0.2.9', target: [EUROPE, DE, DE] }, { target: [DE, EUROPE] }],
  ];
  for (const [what, body, expected] of cases) {
    it(what, async () => {
      const res = await add(body);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body).toMatchObject(expected);
      expect(res.headers.get('location')).toBe(`${path}/${res.body.id}`);
    });
  }

  it('lists, filters by name and type, and pages by id', async () => {
    const all = await api.request('GET', path, { key });
    expect(all.status).toBe(200);
    expect(all.body.length).toBeGreaterThanOrEqual(cases.length);
    const ids = all.body.map((r: { id: number }) => r.id);
    expect(ids).toEqual([...ids].sort((a: number, b: number) => a - b));
    const www = await api.request('GET', `${path}?name=www.rec.example&type=1`, { key });
    expect(www.body.map((r: { value: string }) => r.value).sort()).toEqual(['192.0.2.1', '192.0.2.9']);
    const mx = await api.request('GET', `${path}?type=4`, { key });
    expect(mx.body).toHaveLength(1);
    const first = await api.request('GET', `${path}?limit=3`, { key });
    expect(first.body).toHaveLength(3);
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link') ?? '')![1]!;
    const second = await api.request('GET', next, { key });
    expect(second.body[0].id).toBeGreaterThan(first.body[2].id);
    expect((await api.request('GET', `${path}?type=9`, { key })).status).toBe(400);
  });

  it('the domain counts its records', async () => {
    const d = await api.request('GET', `/domains/${zone}`, { key });
    expect(d.body.records).toBe((await api.request('GET', `${path}?limit=1000`, { key })).body.length);
  });
});

describe('records: PATCH and DELETE', () => {
  it('PATCH changes only the supplied fields', async () => {
    const rec = (await add({ name: 'patchme', type: 1, value: '192.0.2.20', ttl: 600 })).body;
    const res = await api.request('PATCH', `${path}/${rec.id}`, { key, body: { ttl: 900 } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...rec, ttl: 900 });
  });

  it('PATCH can change the type, dropping a priority the new type lacks', async () => {
    const rec = (await add({ name: 'morph', type: 4, value: 'mx.example.org', priority: 5 })).body;
    const res = await api.request('PATCH', `${path}/${rec.id}`, { key, body: { type: 3, value: 'target.example.org' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ type: 3, type_name: 'CNAME', priority: null, value: 'target.example.org' });
  });

  it('PATCH that breaks a rule is refused and changes nothing', async () => {
    const a = (await add({ name: 'pair', type: 1, value: '192.0.2.30' })).body;
    const b = (await add({ name: 'pair', type: 1, value: '192.0.2.31' })).body;
    const dup = await api.request('PATCH', `${path}/${b.id}`, { key, body: { value: '192.0.2.30' } });
    expect(dup.status).toBe(422);
    const bad = await api.request('PATCH', `${path}/${a.id}`, { key, body: { value: 'not-an-ip' } });
    expect(bad.status).toBe(400);
    const list = (await api.request('GET', `${path}?name=pair`, { key })).body;
    expect(list).toEqual([a, b]);
  });

  it('DELETE removes; unknown ids are 404', async () => {
    const rec = (await add({ name: 'gone', type: 6, value: 'bye' })).body;
    expect((await api.request('DELETE', `${path}/${rec.id}`, { key })).status).toBe(204);
    expect((await api.request('DELETE', `${path}/${rec.id}`, { key })).status).toBe(404);
    expect((await api.request('PATCH', `${path}/${rec.id}`, { key, body: { ttl: 60 } })).status).toBe(404);
    expect((await api.request('PATCH', `${path}/abc`, { key, body: { ttl: 60 } })).status).toBe(400);
  });
});

describe('records: validation', () => {
  const cases: Array<[string, Record<string, unknown>, number, string]> = [
    ['MX without priority', { name: 'm', type: 4, value: 'mx.example.org' }, 400, 'priority'],
    ['SRV without priority', { name: '_x._tcp', type: 8, value: '1 80 a.example.org' }, 400, 'priority'],
    ['priority on an A record', { name: 'p', type: 1, value: '192.0.2.1', priority: 1 }, 400, 'priority'],
    ['invalid A value', { name: 'x', type: 1, value: '192.0.2.256' }, 400, 'value'],
    ['IPv6 in an A record', { name: 'x', type: 1, value: '2001:db8::1' }, 400, 'value'],
    ['IPv4 in an AAAA record', { name: 'x', type: 2, value: '192.0.2.1' }, 400, 'value'],
    ['CNAME to a non-name', { name: 'x', type: 3, value: 'not a name' }, 400, 'value'],
    ['TXT over 4000 bytes', { name: 'x', type: 6, value: 'é'.repeat(2001) }, 400, 'value'],
    ['SRV with a bad port', { name: '_x._udp', type: 8, value: '1 70000 a.example.org', priority: 1 }, 400, 'value'],
    ['SOA with too few fields', { name: '@', type: 7, value: 'hostmaster.rec.example 3600' }, 400, 'value'],
    ['SOA minimum out of range', { name: '@', type: 7, value: 'h.rec.example 3600 600 86400 5' }, 400, 'value'],
    ['TTL below the minimum', { name: 'x', type: 1, value: '192.0.2.1', ttl: 29 }, 400, 'ttl'],
    ['TTL above the maximum', { name: 'x', type: 1, value: '192.0.2.1', ttl: 604801 }, 400, 'ttl'],
    ['type out of range', { name: 'x', type: 9, value: '192.0.2.1' }, 400, 'type'],
    ['unknown field', { name: 'x', type: 1, value: '192.0.2.1', weight: 1 }, 400, 'weight'],
    ['label over 63', { name: 'a'.repeat(64), type: 1, value: '192.0.2.1' }, 400, 'name'],
    ['name outside the zone', { name: 'www.other.example.', type: 1, value: '192.0.2.1' }, 400, 'name'],
    ['wildcard not leftmost', { name: 'a.*', type: 1, value: '192.0.2.1' }, 400, 'name'],
    ['unknown geo target', { name: 'x', type: 1, value: '192.0.2.1', target: [12345] }, 400, 'target'],
    ['CNAME at the apex', { name: '@', type: 3, value: 'a.example.org' }, 422, 'type'],
    ['NS at the apex', { name: '@', type: 5, value: 'ns.example.org' }, 422, 'type'],
    ['SOA below the apex', { name: 'sub2', type: 7, value: 'h.rec.example 3600 600 86400 300' }, 422, 'name'],
    ['geo-targeted NS', { name: 'deleg', type: 5, value: 'ns.example.org', target: [DE] }, 422, 'target'],
  ];
  for (const [what, body, status, field] of cases) {
    it(`rejects ${what} (${status}, ${field}) and changes nothing`, async () => {
      const before = await api.store.currentRevision();
      const res = await add(body);
      expect(res.status, JSON.stringify(res.body)).toBe(status);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
      expect(await api.store.currentRevision()).toBe(before);
    });
  }

  it('refuses a CNAME beside other data, both ways round', async () => {
    expect((await add({ name: 'both', type: 1, value: '192.0.2.1' })).status).toBe(201);
    const cname = await add({ name: 'both', type: 3, value: 'x.example.org' });
    expect(cname.status).toBe(422);
    expect((await add({ name: 'alias', type: 3, value: 'x.example.org' })).status).toBe(201);
    const txt = await add({ name: 'alias', type: 6, value: 'hello' });
    expect(txt.status).toBe(422);
    expect(txt.body.errors[0].field).toBe('name');
  });

  it('allows one CNAME per disjoint geo target set', async () => {
    expect((await add({ name: 'geoalias', type: 3, value: 'eu.example.org', target: [EUROPE] })).status).toBe(201);
    expect((await add({ name: 'geoalias', type: 3, value: 'any.example.org' })).status).toBe(201);
    expect((await add({ name: 'geoalias', type: 3, value: 'eu2.example.org', target: [EUROPE, DE] })).status).toBe(422);
  });

  it('refuses duplicates but not the same data for another target', async () => {
    expect((await add({ name: 'dup', type: 1, value: '192.0.2.77' })).status).toBe(201);
    const again = await add({ name: 'DUP', type: 1, value: '192.0.2.77', ttl: 60 });
    expect(again.status).toBe(422);
    expect(again.body.errors[0]).toMatchObject({ field: 'value' });
    expect((await add({ name: 'dup', type: 1, value: '192.0.2.77', target: [DE] })).status).toBe(201);
  });

  it('refuses a second SOA', async () => {
    const res = await add({ name: '@', type: 7, value: 'h.rec.example 3600 600 86400 300' });
    expect(res.status).toBe(422);
  });

  it('enforces the records-per-domain limit', async () => {
    const { key: k } = await api.user({ max_records_per_domain: 2 });
    await api.request('POST', '/domains', { key: k, body: { domain: 'small.example', backend: '198.51.100.1' } });
    const p = '/domains/small.example/dnsrecords';
    expect((await api.request('POST', p, { key: k, body: { name: 'a', type: 1, value: '192.0.2.1' } })).status).toBe(201);
    expect((await api.request('POST', p, { key: k, body: { name: 'b', type: 1, value: '192.0.2.1' } })).status).toBe(201);
    const third = await api.request('POST', p, { key: k, body: { name: 'c', type: 1, value: '192.0.2.1' } });
    expect(third.status).toBe(422);
    expect(third.body.code).toBe('LIMIT_EXCEEDED');
  });

  it('records of an unknown domain are 404', async () => {
    expect((await api.request('GET', '/domains/nope.example/dnsrecords', { key })).status).toBe(404);
    expect((await api.request('POST', '/domains/nope.example/dnsrecords', { key, body: { name: 'a', type: 1, value: '192.0.2.1' } })).status).toBe(404);
  });
});

describe('records: paging cursors', () => {
  it('refuses a cursor the service did not issue', async () => {
    const bogus = Buffer.from('not-a-number').toString('base64url');
    expect((await api.request('GET', `${path}?cursor=${bogus}`, { key })).status).toBe(400);
    expect((await api.request('GET', `/security/iplist?cursor=${bogus}`, { key })).status).toBe(400);
  });
});
