import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../helpers/api-server.ts';

let api: TestApi;
let owner: string;
let intruder: string;
let recordId: number;
let listId: number;

beforeAll(async () => {
  api = await startApi();
  ({ key: owner } = await api.user());
  ({ key: intruder } = await api.user());
  await api.request('POST', '/domains', { key: owner, body: { domain: 'mine.example', backend: '198.51.100.1', tags: ['secret'] } });
  recordId = (await api.request('POST', '/domains/mine.example/dnsrecords', { key: owner, body: { name: 'www', type: 1, value: '192.0.2.1' } })).body.id;
  listId = (await api.request('POST', '/security/iplist', { key: owner, body: { name: 'private', ips: ['192.0.2.1'] } })).body.id;
});
afterAll(() => api.close());

// Each pair: the owner's resource, and the same request on a resource that does not exist.
// The intruder must get byte-identical answers for both (apart from the name in the detail).
const probes = () => [
  ['GET', '/domains/mine.example', '/domains/none.example', undefined],
  ['PATCH', '/domains/mine.example', '/domains/none.example', { ssl: true }],
  ['DELETE', '/domains/mine.example', '/domains/none.example', undefined],
  ['GET', '/domains/mine.example/dnsrecords', '/domains/none.example/dnsrecords', undefined],
  ['POST', '/domains/mine.example/dnsrecords', '/domains/none.example/dnsrecords', { name: 'x', type: 1, value: '192.0.2.9' }],
  ['GET', `/domains/mine.example/dnsrecords/${recordId}`, `/domains/none.example/dnsrecords/${recordId}`, undefined],
  ['PATCH', `/domains/mine.example/dnsrecords/${recordId}`, `/domains/none.example/dnsrecords/${recordId}`, { ttl: 60 }],
  ['DELETE', `/domains/mine.example/dnsrecords/${recordId}`, `/domains/none.example/dnsrecords/${recordId}`, undefined],
  ['GET', '/domains/mine.example/activatens', '/domains/none.example/activatens', undefined],
  ['GET', '/domains/mine.example/deactivatens', '/domains/none.example/deactivatens', undefined],
  ['GET', `/security/iplist/${listId}`, '/security/iplist/999999', undefined],
  ['PATCH', `/security/iplist/${listId}`, '/security/iplist/999999', { name: 'stolen' }],
  ['DELETE', `/security/iplist/${listId}`, '/security/iplist/999999', undefined],
  ['PUT', `/security/iplist/${listId}/192.0.2.2`, '/security/iplist/999999/192.0.2.2', undefined],
  ['DELETE', `/security/iplist/${listId}/192.0.2.1`, '/security/iplist/999999/192.0.2.1', undefined],
] as const;

describe('tenancy', () => {
  it("another user's resources answer 404 exactly like missing ones, on every endpoint, and stay unchanged", async () => {
    const before = await api.store.currentRevision();
    for (const [method, theirs, missing, body] of probes()) {
      const a = await api.request(method, theirs, { key: intruder, body });
      const b = await api.request(method, missing, { key: intruder, body });
      expect(a.status, `${method} ${theirs}`).toBe(404);
      expect(b.status).toBe(404);
      expect({ ...a.body, detail: '' }).toEqual({ ...b.body, detail: '' });
      expect(a.body.detail).not.toContain('owner');
    }
    expect(await api.store.currentRevision()).toBe(before);
    const domain = await api.request('GET', '/domains/mine.example', { key: owner });
    expect(domain.body).toMatchObject({ ssl: false, ns_active: false, records: 1 });
    expect((await api.request('GET', `/security/iplist`, { key: owner })).body[0].ips).toEqual(['192.0.2.1']);
  });

  it("another user's record id addressed through one's own domain is not found and stays unchanged (records are kept per zone)", async () => {
    expect((await api.request('POST', '/domains', { key: intruder, body: { domain: 'theirs.example', backend: '198.51.100.2' } })).status).toBe(201);
    const before = await api.store.currentRevision();
    for (const [method, body] of [['GET', undefined], ['PATCH', { value: '203.0.113.66' }], ['DELETE', undefined]] as const) {
      const res = await api.request(method, `/domains/theirs.example/dnsrecords/${recordId}`, { key: intruder, body });
      expect(res.status, method).toBe(404);
    }
    expect(await api.store.currentRevision()).toBe(before);
    expect((await api.request('GET', `/domains/mine.example/dnsrecords/${recordId}`, { key: owner })).body).toMatchObject({ name: 'www', value: '192.0.2.1' });
    await api.request('DELETE', '/domains/theirs.example', { key: intruder });
  });

  it('lists show only the caller’s own resources', async () => {
    expect((await api.request('GET', '/domains', { key: intruder })).body).toEqual([]);
    expect((await api.request('GET', '/domains?tag=secret', { key: intruder })).body).toEqual([]);
    expect((await api.request('GET', '/security/iplist', { key: intruder })).body).toEqual([]);
    const me = (await api.request('GET', '/me', { key: intruder })).body;
    expect(me.usage).toEqual({ domains: 0, iplists: 0 });
  });
});
