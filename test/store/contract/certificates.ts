// The Store contract, certificates and ACME challenges: run against every adapter by index.ts.
import { expect, it } from 'vitest';
import { expectApiError, zoneFor, type OpenStore } from './helpers.ts';

export function certificatesContract(open: OpenStore): void {
  it('certificates: one per domain, replaced whole, in the change feed, gone with their domain; every IP list listed across owners', async () => {
    const { store } = await open();
    const a = await store.createUser({ name: 'ca', email: 'ca@example.org' });
    const b = await store.createUser({ name: 'cb', email: 'cb@example.org' });
    for (const n of ['c1.example', 'c2.example', 'c3.example']) await store.createZone((ctx) => zoneFor(n, a.id, ctx));
    const cert = (domain: string, fingerprint: string) => ({
      domain,
      names: [domain, `*.${domain}`],
      cert: '-----BEGIN CERTIFICATE-----\nleaf\n-----END CERTIFICATE-----\n',
      chain: '',
      key: '-----BEGIN PRIVATE KEY-----\n"quoted" \\ text\n-----END PRIVATE KEY-----\n',
      notBefore: '2026-11-01T00:00:00.000Z',
      notAfter: '2027-02-01T00:00:00.000Z',
      fingerprint,
    });
    await expectApiError(store.putCertificate(cert('nowhere.example', 'x')), 'NOT_FOUND');
    const before = await store.currentRevision();
    const first = await store.putCertificate(cert('c1.example', 'f1'));
    expect(first.revision).toBe(before + 1);
    expect(await store.getCertificate('c1.example')).toEqual(first);
    const second = await store.putCertificate(cert('c1.example', 'f2'));
    expect((await store.getCertificate('c1.example'))?.fingerprint).toBe('f2');
    expect(second.revision).toBe(before + 2);
    await store.putCertificate(cert('c2.example', 'f3'));
    await store.putCertificate(cert('c3.example', 'f4'));
    const feed = await store.changesSince(before, 10);
    expect('changes' in feed && feed.changes.map((c) => [c.kind, c.key, c.op])).toEqual([
      ['certificate', 'c1.example', 'put'],
      ['certificate', 'c1.example', 'put'],
      ['certificate', 'c2.example', 'put'],
      ['certificate', 'c3.example', 'put'],
    ]);
    const listed: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.listCertificates({ limit: 2, cursor });
      listed.push(...page.items.map((c) => c.domain));
      cursor = page.next;
    } while (cursor);
    expect(listed).toEqual(['c1.example', 'c2.example', 'c3.example']);
    expect(await store.deleteCertificate('c2.example')).toBe(true);
    expect(await store.deleteCertificate('c2.example')).toBe(false);
    expect(await store.getCertificate('c2.example')).toBeUndefined();
    await store.deleteZone('c3.example', a.id);
    expect(await store.getCertificate('c3.example')).toBeUndefined();
    expect((await store.listCertificates({ limit: 10 })).items.map((c) => c.domain)).toEqual(['c1.example']);

    for (const [i, owner] of [a, b, a, b, a].entries()) {
      await store.createIpList((ctx) => ({ id: ctx.id, name: `l${i}`, ips: [], allnodes: true, nodes: [], ownerId: owner.id, created: ctx.now, updated: ctx.now, revision: 0 }));
    }
    const lists: string[] = [];
    cursor = undefined;
    do {
      const page = await store.listAllIpLists({ limit: 2, cursor });
      lists.push(...page.items.map((l) => l.name));
      cursor = page.next;
    } while (cursor);
    expect(lists).toEqual(['l0', 'l1', 'l2', 'l3', 'l4']);
  });

  it('ACME challenges: one per domain, in the change feed, gone with their domain', async () => {
    const { store } = await open();
    const a = await store.createUser({ name: 'ha', email: 'ha@example.org' });
    for (const n of ['h1.example', 'h2.example']) await store.createZone((ctx) => zoneFor(n, a.id, ctx));
    const challenge = (domain: string, token: string) => ({ domain, tokens: [{ token, keyAuthorization: `${token}.thumb` }], expires: '2027-01-01T00:00:00.000Z' });
    await expectApiError(store.putChallenge(challenge('nowhere.example', 'x'.repeat(43))), 'NOT_FOUND');
    const before = await store.currentRevision();
    const first = await store.putChallenge(challenge('h1.example', 'a'.repeat(43)));
    expect(first.revision).toBe(before + 1);
    expect(await store.getChallenge('h1.example')).toEqual(first);
    await store.putChallenge(challenge('h2.example', 'b'.repeat(43)));
    expect((await store.listChallenges({ limit: 1 })).items.map((c) => c.domain)).toEqual(['h1.example']);
    expect(await store.deleteChallenge('h1.example')).toBe(true);
    expect(await store.deleteChallenge('h1.example')).toBe(false);
    await store.deleteZone('h2.example', a.id);
    expect(await store.getChallenge('h2.example')).toBeUndefined();
    const feed = await store.changesSince(before, 10);
    expect('changes' in feed && feed.changes.map((c) => [c.kind, c.key, c.op])).toEqual([
      ['challenge', 'h1.example', 'put'],
      ['challenge', 'h2.example', 'put'],
      ['challenge', 'h1.example', 'delete'],
      ['zone', 'h2.example', 'delete'],
    ]);
  });
}
