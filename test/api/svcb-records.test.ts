// HTTPS and SVCB records through the API: created by mnemonic or IANA number, stored in the form
// NSD prints, patched and bulk-changed, listed by type; refusals name the field and the rule; the
// OpenAPI description lists the types; the change feed carries them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../helpers/api-server.ts';

let api: TestApi;
let key: string;
const D = 'svcb-api.example';
const records = (path = '') => api.request('GET', `/domains/${D}/dnsrecords${path}`, { key });

beforeAll(async () => {
  api = await startApi();
  ({ key } = await api.user());
  expect((await api.request('POST', '/domains', { key, body: { domain: D, backend: '198.51.100.1' } })).status).toBe(201);
});
afterAll(() => api.close());

describe('HTTPS and SVCB through the API', () => {
  it('creates by mnemonic or number (65 HTTPS, 64 SVCB), stored canonical, type_name given', async () => {
    const https = await api.request('POST', `/domains/${D}/dnsrecords`, { key, body: { name: '@', type: 'HTTPS', value: '1 . alpn=h2,h3 ipv4hint=192.0.2.1' } });
    expect(https.status, JSON.stringify(https.body)).toBe(201);
    expect(https.body).toMatchObject({ type: 65, type_name: 'HTTPS', value: '1 . alpn="h2,h3" ipv4hint=192.0.2.1', priority: null });
    const svcb = await api.request('POST', `/domains/${D}/dnsrecords`, { key, body: { name: '_dns', type: 64, value: '1 dns port=853 alpn=dot' } });
    expect(svcb.status, JSON.stringify(svcb.body)).toBe(201);
    expect(svcb.body).toMatchObject({ type: 64, type_name: 'SVCB', value: '1 dns. alpn="dot" port=853' });
    const lower = await api.request('POST', `/domains/${D}/dnsrecords`, { key, body: { name: 'www', type: 'https', value: '0 svcb-api.example.' } });
    expect(lower.body).toMatchObject({ type: 65, value: `0 ${D}.` });
  });

  it('lists by type, as number or mnemonic', async () => {
    expect(((await records('?type=HTTPS')).body as unknown[]).length).toBe(2);
    expect(((await records('?type=65')).body as unknown[]).length).toBe(2);
    expect(((await records('?type=64')).body as unknown[]).length).toBe(1);
  });

  it('refuses broken values (400) with the rule in words, and a priority beside the value', async () => {
    const bad: Array<[unknown, RegExp]> = [
      [{ name: 'a', type: 'HTTPS', value: '1 . port=70000' }, /HTTPS value port must be an integer from 0 to 65535/],
      [{ name: 'a', type: 'HTTPS', value: '1 . alpn=h2 alpn=h3' }, /alpn is given twice/],
      [{ name: 'a', type: 'HTTPS', value: '0 . alpn=h2' }, /AliasMode/],
      [{ name: 'a', type: 'HTTPS', value: '1 . mandatory=ech alpn=h2' }, /mandatory lists ech, which the record does not have/],
      [{ name: 'a', type: 'HTTPS', value: '1 . ech=%%%' }, /ech must be an ECHConfigList in base64/],
      [{ name: 'a', type: 'HTTPS', value: '1 . ipv6hint=not-an-address' }, /ipv6hint: \\"not-an-address\\" is not an IPv6 address/],
      [{ name: 'a', type: 'SVCB', value: '1 . alpn=h2', priority: 1 }, /SVCB records have no priority/],
      [{ name: 'a', type: 66, value: '1 .' }, /record type/],
      [{ name: 'a', type: 'HTTPS', value: `1 . ${Array.from({ length: 100 }, (_, i) => `key${1000 + i}`).join(' ')}` }, /at most 64/],
    ];
    for (const [body, message] of bad) {
      const res = await api.request('POST', `/domains/${D}/dnsrecords`, { key, body });
      // A value's own rules are 400 (the request is malformed), as for every type.
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(JSON.stringify(res.body.errors), JSON.stringify(body)).toMatch(message);
    }
  });

  it('a CNAME cannot share its name with HTTPS; HTTPS cannot join a CNAME', async () => {
    expect((await api.request('POST', `/domains/${D}/dnsrecords`, { key, body: { name: 'c', type: 'CNAME', value: 'elsewhere.example' } })).status).toBe(201);
    const res = await api.request('POST', `/domains/${D}/dnsrecords`, { key, body: { name: 'c', type: 'HTTPS', value: '1 . alpn=h2' } });
    expect(res.status).toBe(422);
    expect(JSON.stringify(res.body.errors)).toMatch(/is a CNAME/);
  });

  it('patches a value (canonical again) and refuses a duplicate spelled differently', async () => {
    const list = (await records('?type=HTTPS&name=@')).body as Array<{ id: number }>;
    const patched = await api.request('PATCH', `/domains/${D}/dnsrecords/${list[0]!.id}`, { key, body: { value: '2 . port=443 alpn=h3' } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body.value).toBe('2 . alpn="h3" port=443');
    const dup = await api.request('POST', `/domains/${D}/dnsrecords`, { key, body: { name: '@', type: 'HTTPS', value: '2 . alpn="h3" port=443' } });
    expect(dup.status).toBe(422);
    expect(JSON.stringify(dup.body.errors)).toMatch(/duplicates record/);
  });

  it('bulk: all or nothing, with the bad entry named; the feed carries the records', async () => {
    const before = (await api.request('GET', `/domains/${D}`, { key })).body.revision as number;
    const refused = await api.request('POST', `/domains/${D}/dnsrecords/bulk`, {
      key,
      body: { create: [{ name: 'b1', type: 'HTTPS', value: '1 . alpn=h2' }, { name: 'b2', type: 'HTTPS', value: '1 . ipv4hint=1.2.3' }] },
    });
    expect(refused.status, JSON.stringify(refused.body)).toBeGreaterThanOrEqual(400);
    expect(JSON.stringify(refused.body)).toMatch(/ipv4hint: \\"1.2.3\\" is not an IPv4 address/);
    expect(((await records('?name=b1')).body as unknown[]).length).toBe(0);
    const done = await api.request('POST', `/domains/${D}/dnsrecords/bulk`, {
      key,
      body: { create: [{ name: 'b1', type: 'HTTPS', value: '1 . alpn=h2' }, { name: 'b2', type: 'SVCB', value: `0 b1.${D}` }] },
    });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    const feed = await api.store.changesSince(before, 1000);
    if ('gone' in feed) throw new Error('history gone');
    const put = feed.changes.filter((c) => c.key === D).flatMap((c) => c.records?.put ?? []);
    expect(put.map((r) => `${r.name} ${r.type} ${r.value}`)).toEqual(expect.arrayContaining([`b1 65 1 . alpn="h2"`, `b2 64 0 b1.${D}.`]));
  });

  it('the OpenAPI description names the types and the value form', async () => {
    const doc = JSON.stringify((await api.request('GET', '/openapi.json')).body);
    expect(doc).toContain('SVCB (64), HTTPS (65)');
    expect(doc).toContain('SvcPriority TargetName SvcParams');
    expect(doc).toMatch(/"enum":\[1,2,3,4,5,6,7,8,[0-9,]*64,65,[0-9,]*\]/);
  });
});
