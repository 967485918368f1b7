// Nobody takes over names they do not own: overlapping domains of another account, public
// suffixes, special-use names, the service's own zones, mixed-script look-alikes, and requests
// that must not change state (HEAD on activatens).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdmin } from '../../src/cli/admin.ts';
import { startApi, type TestApi } from '../helpers/api-server.ts';

let api: TestApi;
let alice: string;
let bob: string;
let bobId: number;
const create = (key: string, domain: string) => api.request('POST', '/domains', { key, body: { domain, backend: '198.51.100.1' } });

beforeAll(async () => {
  // The service's own names live under palisade.example.net: its registrable domain, example.net, is reserved by default.
  api = await startApi({ PALISADE_NS1: 'ns1.palisade.example.net', PALISADE_NS2: 'ns2.palisade.example.net' });
  ({ key: alice } = await api.user());
  const b = await api.user();
  bob = b.key;
  bobId = b.user.id;
});
afterAll(() => api.close());

describe('domain ownership', () => {
  it("refuses another account's domain, names under it and names above it (409 DOMAIN_OVERLAP); nothing changes", async () => {
    expect((await create(alice, 'a-domain.com')).status).toBe(201);
    await api.request('POST', '/domains/a-domain.com/dnsrecords', { key: alice, body: { name: 'shop', type: 1, value: '192.0.2.1' } });
    await api.request('GET', '/domains/a-domain.com/activatens', { key: alice });
    const before = await api.store.currentRevision();
    for (const name of ['shop.a-domain.com', 'deep.shop.a-domain.com', 'SHOP.A-Domain.com.']) {
      const res = await create(bob, name);
      expect(res.status, name).toBe(409);
      expect(res.contentType).toContain('application/problem+json');
      expect(res.body).toMatchObject({ code: 'DOMAIN_OVERLAP', errors: [{ field: 'domain' }] });
    }
    expect((await create(alice, 'deep.sub.b-domain.com')).status).toBe(201);
    expect((await create(bob, 'b-domain.com')).body.code).toBe('DOMAIN_OVERLAP');
    expect((await create(bob, 'sub.b-domain.com')).body.code).toBe('DOMAIN_OVERLAP');
    expect((await create(bob, 'a-domain.com')).body.code).toBe('CONFLICT');
    expect(await api.store.currentRevision()).toBe(before + 1);
    // Look-alike suffixes are other names.
    expect((await create(bob, 'xa-domain.com')).status).toBe(201);
  });

  it('lets one account hold a domain under its own (decision: the more specific zone answers for its names)', async () => {
    expect((await create(alice, 'own.example')).status).toBe(201);
    expect((await create(alice, 'shop.own.example')).status).toBe(201);
    expect((await create(bob, 'other.shop.own.example')).body.code).toBe('DOMAIN_OVERLAP');
  });

  it.each([
    ['co.uk', 'public suffix'],
    ['com.au', 'public suffix'],
    ['github.io', 'public suffix'],
    ['blogspot.com', 'public suffix'],
    // Reverse zones are registrable (a network's whole octets or nibbles), but not these.
    ['1.0.0.127.in-addr.arpa', '1 to 3 octets'],
    ['127.in-addr.arpa', 'loopback'],
    ['ip6.arpa', '1 to 31 nibbles'],
    ['home.arpa', 'special-use'],
    ['localhost.localdomain', 'special-use'],
    ['foo.localhost', 'special-use'],
    ['hidden.onion', 'special-use'],
    ['x.invalid', 'special-use'],
    ['printer.local', 'special-use'],
    ['corp.internal', 'special-use'],
    ['made.up-tld', 'top-level domain'],
    ['pаypal.com', 'mixes the scripts Latin and Cyrillic'],
    ['xn--pypal-4ve.com', 'mixes the scripts Latin and Cyrillic'],
  ])('refuses %s (422 DOMAIN_NOT_REGISTRABLE: %s)', async (name, why) => {
    const res = await create(bob, name);
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('DOMAIN_NOT_REGISTRABLE');
    expect(res.body.detail).toContain(why);
  });

  it.each(['localhost', 'com', 'arpa'])('refuses the single label %s (400)', async (name) => {
    expect((await create(bob, name)).status).toBe(400);
  });

  it.each(['bücher.de', 'пример.рф', '日本語テキスト.jp', 'mine.test', 'b.a.example', 'shop.example.co.uk', 'me.github.io'])('accepts %s', async (name) => {
    expect((await create(bob, name)).status).toBe(201);
  });

  it("refuses the service's own zones to customers, at, under and above them, until the operator marks the account", async () => {
    for (const name of ['example.net', 'palisade.example.net', 'ns1.palisade.example.net']) {
      const res = await create(bob, name);
      expect(res.status, name).toBe(422);
      expect(res.body.code).toBe('DOMAIN_RESERVED');
    }
    const out: unknown[] = [];
    await runAdmin(api.store, ['user', 'reserved-zones', String(bobId), 'allow'], (v) => out.push(v));
    expect(out[0]).toMatchObject({ id: bobId, reservedZones: true });
    expect((await create(bob, 'palisade.example.net')).status).toBe(201);
    await runAdmin(api.store, ['user', 'reserved-zones', String(bobId), 'deny'], () => undefined);
    expect((await create(bob, 'example.net')).body.code).toBe('DOMAIN_RESERVED');
  });

  it('HEAD on activatens/deactivatens changes nothing; POST does what GET does', async () => {
    expect((await create(alice, 'head.example')).status).toBe(201);
    const before = await api.store.currentRevision();
    const head = await api.request('HEAD', '/domains/head.example/activatens', { key: alice });
    expect(head.status).toBe(200);
    expect((await api.request('HEAD', '/domains/head.example/activatens', { key: bob })).status).toBe(404);
    expect(await api.store.currentRevision()).toBe(before);
    expect((await api.store.getZone('head.example'))!.domain.ns_active).toBe(false);
    const post = await api.request('POST', '/domains/head.example/activatens', { key: alice });
    expect(post.status).toBe(200);
    expect(post.body).toMatchObject({ domain: 'head.example', ns_active: true });
    await api.request('HEAD', '/domains/head.example/deactivatens', { key: alice });
    expect((await api.store.getZone('head.example'))!.domain.ns_active).toBe(true);
    expect((await api.request('POST', '/domains/head.example/deactivatens', { key: alice })).body.ns_active).toBe(false);
  });

  it('refuses a body with an unpaired surrogate escape (400), keeps paired ones', async () => {
    const bad = await api.request('POST', '/domains', { key: bob, raw: '{"domain":"sur.example","backend":"198.51.100.1","tags":["\\ud800"]}', headers: { 'content-type': 'application/json' } });
    expect(bad.status).toBe(400);
    const good = await api.request('POST', '/domains', { key: bob, raw: '{"domain":"sur.example","backend":"198.51.100.1","tags":["\\ud83d\\ude42"]}', headers: { 'content-type': 'application/json' } });
    expect(good.status).toBe(201);
    expect(good.body.tags).toEqual(['🙂']);
  });
});
