// A signed zone's keys on their way to name servers, from the API's store: sealed at rest; opened
// for the serve role's in-process name server (at its start and through its change feed) while
// dnssec is on, gone from it once dnssec is off; a key that cannot be opened leaves the zone
// without keys (its name servers answer SERVFAIL rather than unsigned), never the feed stuck.
// Without an operator key, turning dnssec on is refused (409), as certificates are.
import { pino } from 'pino';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { DomainState } from '../../src/model/domain.ts';
import { ZoneIndex } from '../../src/dns/zone/index.ts';
import { nameServerDomain } from '../../src/sync/name-server-domain.ts';
import { StoreFeed } from '../../src/sync/store-feed.ts';
import { SecretBox } from '../../src/certs/secret-box.ts';
import { startApi, type TestApi } from '../helpers/api-server.ts';
import { TEST_SECRET_KEY } from '../helpers/config.ts';
import { HOSTMASTER, NAMESERVERS } from '../helpers/dns-fixture.ts';
import { removeTempDirs } from '../helpers/temp.ts';

const log = pino({ level: 'silent' });
const box = new SecretBox(Buffer.from(TEST_SECRET_KEY.PALISADE_SECRET_KEY, 'hex'));
const open = (sealed: string) => box.open(sealed);
const apis: TestApi[] = [];

/**
 * A real zone index, and the domains the feed gave it last (whole zones at start, settings
 * changes after): the keys a name server signs with are what it was given. (The index builds
 * answers from a domain and keeps no copy of it.)
 */
function watchedIndex() {
  const index = new ZoneIndex({ nameservers: NAMESERVERS, hostmaster: HOSTMASTER });
  const given = new Map<string, DomainState>();
  const replaceAll = index.replaceAll.bind(index);
  vi.spyOn(index, 'replaceAll').mockImplementation((zones, nodes, revision) => {
    const list = [...zones];
    for (const zone of list) given.set(zone.domain.domain, zone.domain);
    replaceAll(list, nodes, revision);
  });
  const applyHead = index.applyHead.bind(index);
  vi.spyOn(index, 'applyHead').mockImplementation((domain, source) => {
    given.set(domain.domain, domain);
    return applyHead(domain, source);
  });
  return { index, given };
}

afterAll(async () => {
  for (const api of apis) await api.close();
  removeTempDirs();
});

async function signedZone(api: TestApi, name: string) {
  const { key } = await api.user();
  expect((await api.request('POST', '/domains', { key, body: { domain: name, backend: '198.51.100.1' } })).status).toBe(201);
  expect((await api.request('GET', `/domains/${name}/activatens`, { key })).status).toBe(200);
  expect((await api.request('PATCH', `/domains/${name}`, { key, body: { dnssec: true } })).status).toBe(200);
  return key;
}

describe('DNSSEC keys from the store to a name server', () => {
  it('sealed at rest; the serve role\'s name server holds them opened while dnssec is on or turning off, and not once it is off', async () => {
    const api = await startApi();
    apis.push(api);
    const key = await signedZone(api, 'kept.example');
    const stored = (await api.store.getZoneHead('kept.example'))!.domain.signing!.keys[0]!;
    expect(SecretBox.isSealed(stored.private_key)).toBe(true);
    const plain = box.open(stored.private_key);
    expect(plain).not.toContain('pk1:');

    const { index, given } = watchedIndex();
    const feed = new StoreFeed(api.store, index, log, 3_600_000, (domain) => nameServerDomain(domain, open));
    await feed.start();
    // From the snapshot at start.
    expect(given.get('kept.example')!.signing!.keys[0]!.private_key).toBe(plain);

    expect((await api.request('PATCH', '/domains/kept.example', { key, body: { dnssec: false } })).status).toBe(200);
    await feed.catchUp();
    // Turning off: the parent may hold the DS (no resolver here to look), so the keys stay with the name servers.
    expect(given.get('kept.example')!.dnssec).toBe(false);
    expect(given.get('kept.example')!.signing).toMatchObject({ unsigning: true, keys: [{ private_key: plain }] });
    // Off once the turning off ends (the operator's word here): the name servers no longer get the keys.
    expect(await api.app.dnssecParent.endUnsigning('kept.example', (await api.store.getZoneHead('kept.example'))!.domain.ownerId, 'test')).toBe(true);
    await feed.catchUp();
    expect(given.get('kept.example')!.signing).toBeUndefined();

    // Through the change feed: the same key again (kept while off).
    expect((await api.request('PATCH', '/domains/kept.example', { key, body: { dnssec: true } })).status).toBe(200);
    await feed.catchUp();
    expect(given.get('kept.example')!.signing!.keys[0]!.private_key).toBe(plain);
    expect(index.size).toBe(1);
    feed.stop();
  });

  it('a key that does not open (another operator key): the zone reaches name servers without keys, the others as ever', async () => {
    const api = await startApi();
    apis.push(api);
    await signedZone(api, 'locked.example');
    await signedZone(api, 'plain.example');
    const troubles: string[] = [];
    const wrong = new SecretBox(Buffer.from('ab'.repeat(32), 'hex'));
    const { index, given } = watchedIndex();
    const openSome = (sealed: string) => (troubles.length === 0 ? wrong.open(sealed) : box.open(sealed));
    const feed = new StoreFeed(api.store, index, log, 3_600_000, (domain) => nameServerDomain(domain, openSome, (name, reason) => troubles.push(`${name}: ${reason}`)));
    await feed.start();
    expect(troubles).toHaveLength(1);
    expect(troubles[0]).toContain('does not open with PALISADE_SECRET_KEY');
    const [failed, opened] = troubles[0]!.startsWith('locked') ? ['locked.example', 'plain.example'] : ['plain.example', 'locked.example'];
    expect(given.get(failed)).toMatchObject({ dnssec: true });
    expect(given.get(failed)!.signing).toBeUndefined();
    expect(given.get(opened)!.signing!.keys).toHaveLength(1);
    feed.stop();
  });

  it('without an operator key, turning dnssec on is refused with 409 (and nothing is stored)', async () => {
    const api = await startApi({ PALISADE_SECRET_KEY: '' });
    apis.push(api);
    const { key } = await api.user();
    expect((await api.request('POST', '/domains', { key, body: { domain: 'nokey.example', backend: '198.51.100.1' } })).status).toBe(201);
    const refused = await api.request('PATCH', '/domains/nokey.example', { key, body: { dnssec: true } });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain('PALISADE_SECRET_KEY');
    expect((await api.store.getZoneHead('nokey.example'))!.domain).toMatchObject({ dnssec: false });
    expect((await api.store.getZoneHead('nokey.example'))!.domain.signing).toBeUndefined();
    const created = await api.request('POST', '/domains', { key, body: { domain: 'nokey2.example', backend: '198.51.100.1', dnssec: true } });
    expect(created.status).toBe(409);
    expect(await api.store.getZoneHead('nokey2.example')).toBeUndefined();
    // Everything else still changes.
    expect((await api.request('PATCH', '/domains/nokey.example', { key, body: { tags: ['a'] } })).status).toBe(200);
  });
});
