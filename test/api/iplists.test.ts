import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../helpers/api-server.ts';

let api: TestApi;
let key: string;
beforeAll(async () => {
  api = await startApi();
  ({ key } = await api.user());
});
afterAll(() => api.close());

const create = (body: Record<string, unknown>, k = key) => api.request('POST', '/security/iplist/', { key: k, body });

describe('IP lists', () => {
  it('creates a list with canonical, sorted, deduplicated entries (addresses and CIDR prefixes)', async () => {
    const res = await create({ name: 'office', ips: ['2001:DB8:0::1', '192.0.2.1', '192.0.2.1', '10.0.0.0/8', '2001:db8::/32', '198.51.100.7/32'] });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'office',
      ips: ['10.0.0.0/8', '192.0.2.1', '198.51.100.7', '2001:db8::/32', '2001:db8::1'],
      allnodes: true,
      nodes: [],
    });
    expect(res.headers.get('location')).toBe(`/security/iplist/${res.body.id}`);
  });

  it('rejects bad entries naming each one, and prefixes with host bits set', async () => {
    const res = await create({ name: 'bad', ips: ['192.0.2.1', 'nope', '192.0.2.5/24', '2001:db8::/129', '1.2.3.4/x'] });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual(['ips.1', 'ips.2', 'ips.3', 'ips.4']);
  });

  it('PUT and DELETE of one address are idempotent, IPv6 and CIDR (as %2F) included', async () => {
    const list = (await create({ name: 'edit' })).body;
    const p = `/security/iplist/${list.id}`;
    const put1 = await api.request('PUT', `${p}/2001:DB8::5`, { key });
    expect(put1.status).toBe(200);
    expect(put1.body.ips).toEqual(['2001:db8::5']);
    const put2 = await api.request('PUT', `${p}/2001:db8::5`, { key });
    expect(put2.body).toEqual(put1.body);
    expect((await api.request('PUT', `${p}/203.0.113.0%2F24`, { key })).body.ips).toEqual(['2001:db8::5', '203.0.113.0/24']);
    expect((await api.request('PUT', `${p}/999.1.1.1`, { key })).status).toBe(400);
    const del1 = await api.request('DELETE', `${p}/2001:db8::5`, { key });
    expect(del1.status).toBe(200);
    expect(del1.body.ips).toEqual(['203.0.113.0/24']);
    const del2 = await api.request('DELETE', `${p}/2001:db8::5`, { key });
    expect(del2.status).toBe(200);
    expect(del2.body.revision).toBe(del1.body.revision);
  });

  it('with Prefer: return=minimal, a one-entry change answers 204 without the list; the change is made all the same', async () => {
    const list = (await create({ name: 'minimal' })).body;
    const p = `/security/iplist/${list.id}`;
    const put = await api.request('PUT', `${p}/192.0.2.77`, { key, headers: { prefer: 'return=minimal' } });
    expect(put.status).toBe(204);
    expect(put.headers.get('preference-applied')).toBe('return=minimal');
    expect(put.body).toBe('');
    expect((await api.request('GET', p, { key })).body.ips).toEqual(['192.0.2.77']);
    const del = await api.request('DELETE', `${p}/192.0.2.77`, { key, headers: { prefer: 'respond-async, return=minimal' } });
    expect(del.status).toBe(204);
    expect((await api.request('GET', p, { key })).body.ips).toEqual([]);
    // Any other preference: the list as usual.
    expect((await api.request('PUT', `${p}/192.0.2.78`, { key, headers: { prefer: 'return=representation' } })).body.ips).toEqual(['192.0.2.78']);
    // Someone else's list is still not found, preference or not.
    const other = await api.user();
    expect((await api.request('PUT', `${p}/192.0.2.79`, { key: other.key, headers: { prefer: 'return=minimal' } })).status).toBe(404);
  });

  it('PATCH changes only the supplied fields; node ids must exist', async () => {
    const node = await api.store.createNode({ name: 'edge-x', ipv4: '192.0.2.60', ipv6: null, location: 'FR', status: 'active' });
    const list = (await create({ name: 'scoped', ips: ['192.0.2.1'] })).body;
    const p = `/security/iplist/${list.id}`;
    const res = await api.request('PATCH', p, { key, body: { allnodes: false, nodes: [node.id] } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'scoped', ips: ['192.0.2.1'], allnodes: false, nodes: [node.id] });
    const bad = await api.request('PATCH', p, { key, body: { nodes: [node.id, 9999] } });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].field).toBe('nodes');
    expect((await create({ name: 'x', nodes: [9999] })).status).toBe(422);
    expect((await api.request('PATCH', p, { key, body: { name: '' } })).status).toBe(400);
  });

  it('lists with paging and deletes', async () => {
    const { key: k } = await api.user();
    for (const name of ['a', 'b', 'c']) await create({ name }, k);
    const first = await api.request('GET', '/security/iplist?limit=2', { key: k });
    expect(first.body.map((l: { name: string }) => l.name)).toEqual(['a', 'b']);
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link') ?? '')![1]!;
    const second = await api.request('GET', next, { key: k });
    expect(second.body.map((l: { name: string }) => l.name)).toEqual(['c']);
    expect(second.headers.get('link')).toBeNull();
    const id = first.body[0].id;
    expect((await api.request('DELETE', `/security/iplist/${id}/`, { key: k })).status).toBe(204);
    expect((await api.request('DELETE', `/security/iplist/${id}`, { key: k })).status).toBe(404);
  });

  it('enforces entries per list and lists per account', async () => {
    const { key: k } = await api.user({ max_ips_per_list: 2, max_iplists: 1 });
    expect((await create({ name: 'big', ips: ['192.0.2.1', '192.0.2.2', '192.0.2.3'] }, k)).status).toBe(422);
    const list = (await create({ name: 'ok', ips: ['192.0.2.1', '192.0.2.2'] }, k)).body;
    const put = await api.request('PUT', `/security/iplist/${list.id}/192.0.2.3`, { key: k });
    expect(put.status).toBe(422);
    expect(put.body.code).toBe('LIMIT_EXCEEDED');
    expect((await create({ name: 'second' }, k)).status).toBe(422);
  });
});
