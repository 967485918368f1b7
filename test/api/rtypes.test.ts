// The record types beyond the first eight through the API: create by mnemonic or IANA code,
// patch, bulk, list by type; errors that name the field and what is expected; DS only at a
// delegation; reverse zones as domains.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../helpers/api-server.ts';

let api: TestApi;
let key: string;
const D = 'rtapi.example';
const path = `/domains/${D}/dnsrecords`;
const hex = (n: number, c = 'ab') => c.repeat(n / 2);
const add = (body: Record<string, unknown>, domain = D) => api.request('POST', `/domains/${domain}/dnsrecords`, { key, body });

beforeAll(async () => {
  api = await startApi();
  ({ key } = await api.user());
  expect((await api.request('POST', '/domains', { key, body: { domain: D, backend: '198.51.100.1' } })).status).toBe(201);
});
afterAll(() => api.close());

describe('new record types through the API', () => {
  it('creates each by mnemonic and by IANA code, canonical, with its type_name', async () => {
    const made = [
      [{ name: '@', type: 'CAA', value: '0 ISSUE letsencrypt.org' }, 257, '0 issue "letsencrypt.org"'],
      [{ name: 'host', type: 12, value: 'www.rtapi.example.' }, 12, 'www.rtapi.example'],
      [{ name: '_443._tcp.www', type: 'tlsa', value: `3 1 1 ${hex(64, 'AB')}` }, 52, `3 1 1 ${hex(64)}`],
      [{ name: 'www', type: 44, value: `4 2 ${hex(64)}` }, 44, `4 2 ${hex(64)}`],
      [{ name: '@', type: 'NAPTR', value: '100 10 "S" "SIP+D2U" "" _sip._udp.rtapi.example.' }, 35, '100 10 "S" "SIP+D2U" "" _sip._udp.rtapi.example'],
    ] as const;
    for (const [body, type, value] of made) {
      const res = await add(body);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body).toMatchObject({ type, value, priority: null });
      expect(res.body.type_name).toBe(String(body.type).toUpperCase().replace(/^\d+$/, (n) => ({ 12: 'PTR', 44: 'SSHFP' })[n as '12']!));
    }
    const list = await api.request('GET', `${path}?type=CAA`, { key });
    expect(list.body.map((r: { type: number }) => r.type)).toEqual([257]);
  });

  it('DS only where the name is delegated, never at the apex; removing the NS under a DS is refused', async () => {
    const ds = { name: 'sub', type: 'DS', value: `12345 13 2 ${hex(64)}` };
    const lone = await add(ds);
    expect(lone.status).toBe(422);
    expect(lone.body.errors[0]).toMatchObject({ field: 'name', message: expect.stringMatching(/NS/) });
    const apex = await add({ ...ds, name: '@' });
    expect(apex.status).toBe(422);
    expect(apex.body.errors[0].message).toMatch(/apex.*parent/);
    const ns = await add({ name: 'sub', type: 'NS', value: 'ns1.elsewhere.example' });
    expect(ns.status).toBe(201);
    expect((await add(ds)).status).toBe(201);
    const removed = await api.request('DELETE', `${path}/${ns.body.id}`, { key });
    expect(removed.status, JSON.stringify(removed.body)).toBe(422);
    expect(removed.body.errors[0].message).toMatch(/DS/);
    const bulk = await api.request('POST', `${path}/bulk`, { key, body: { delete: [ns.body.id] } });
    expect(bulk.status).toBe(422);
    expect(bulk.body.errors[0]).toMatchObject({ field: 'delete.0', message: expect.stringMatching(/DS/) });
    const moved = await api.request('PATCH', `${path}/${ns.body.id}`, { key, body: { name: 'elsewhere' } });
    expect(moved.status).toBe(422);
  });

  it('patch and bulk take the new types and refuse bad values naming the field', async () => {
    const created = await add({ name: 'fp', type: 'SSHFP', value: `1 1 ${hex(40)}` });
    expect(created.status).toBe(201);
    const bad = await api.request('PATCH', `${path}/${created.body.id}`, { key, body: { value: `1 1 ${hex(64)}` } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatchObject({ field: 'value', message: expect.stringMatching(/^SSHFP value .*SHA-1.*40 hex digits/) });
    const good = await api.request('PATCH', `${path}/${created.body.id}`, { key, body: { value: `1 2 ${hex(64)}` } });
    expect(good.status, JSON.stringify(good.body)).toBe(200);
    const bulk = await api.request('POST', `${path}/bulk`, { key, body: { create: [{ name: 'b', type: 'CAA', value: '0 iodef "mailto:x@rtapi.example"' }, { name: 'b', type: 'TLSA', value: '3 1 1 00' }] } });
    expect(bulk.status).toBe(400);
    expect(JSON.stringify(bulk.body)).toMatch(/TLSA value .*SHA-256.*64 hex digits/);
    const type = await add({ name: 'x', type: 9, value: '1' });
    expect(type.status).toBe(400);
    expect(type.body.errors[0].message).toMatch(/CAA \(257\)/);
  });

  it('a reverse zone is a domain, and takes PTR records', async () => {
    const domain = '2.0.192.in-addr.arpa';
    const res = await api.request('POST', '/domains', { key, body: { domain, backend: '198.51.100.1' } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const ptr = await add({ name: '10', type: 'PTR', value: 'www.rtapi.example' }, domain);
    expect(ptr.status).toBe(201);
    expect(ptr.body).toMatchObject({ name: '10', type: 12, value: 'www.rtapi.example' });
    const bad = await api.request('POST', '/domains', { key, body: { domain: '168.192.in-addr.arpa', backend: '198.51.100.1' } });
    expect(bad.status).toBe(422);
  });
});
