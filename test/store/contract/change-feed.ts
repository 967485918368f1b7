// The Store contract, the change feed: snapshots and change entries: run against every adapter by index.ts.
import { expect, it } from 'vitest';
import type { Zone } from '../../../src/store/types.ts';
import { aRecord, type OpenStore, zoneFor } from './helpers.ts';

export function changeFeedContract(open: OpenStore): void {
  it('keeps a domain\'s DNSSEC signing keys as written (sealed texts), in the head, the zone and the snapshot; a change of them is a settings change named `signing`', async () => {
    const { store } = await open();
    const user = await store.createUser({ name: 'dnssec', email: 'dnssec@example.org' });
    const signing = { keys: [{ algorithm: 13 as const, flags: 257, public_key: 'AAAA', private_key: 'pk1:c2VhbGVk', key_tag: 4242, active: true }] };
    await store.createZone((ctx) => ({ ...zoneFor('signed.example', user.id, ctx), domain: { ...zoneFor('signed.example', user.id, ctx).domain, ns_active: true } }));
    const before = await store.currentRevision();
    await store.updateZone('signed.example', user.id, (zone) => ({ ...zone, domain: { ...zone.domain, dnssec: true, signing } }));
    expect((await store.getZoneHead('signed.example'))!.domain.signing).toEqual(signing);
    expect((await store.getZone('signed.example'))!.domain.signing).toEqual(signing);
    const served = (await store.snapshot()).zones.find((z) => z.domain.domain === 'signed.example');
    expect(served!.domain.signing).toEqual(signing);
    const feed = await store.changesSince(before, 10);
    expect('changes' in feed && feed.changes.map((c) => c.settings)).toEqual([['dnssec', 'signing']]);
    await store.close();
  });

  it('streams a snapshot: the header, then every served zone once, as JSON equal to the stored document', async () => {
    const { store } = await open();
    const user = await store.createUser({ name: 'snap', email: 'snap@example.org', limits: { max_domains: 1500 } });
    const names = Array.from({ length: 1200 }, (_, i) => `snap${i}.example`);
    await Promise.all(names.map((n, i) => store.createZone((ctx) => ({ ...zoneFor(n, user.id, ctx), domain: { ...zoneFor(n, user.id, ctx).domain, ns_active: i % 3 !== 0 } }))));
    // Served state follows updates and deletes.
    await store.updateZone('snap0.example', user.id, (zone) => ({ ...zone, domain: { ...zone.domain, ns_active: true } }));
    await store.updateZone('snap1.example', user.id, (zone) => ({ ...zone, domain: { ...zone.domain, ns_active: false } }));
    await store.deleteZone('snap2.example', user.id);
    const chunks = [];
    for await (const chunk of store.streamSnapshot()) chunks.push(chunk);
    const [header, ...rest] = chunks;
    expect(header).toMatchObject({ kind: 'header', revision: await store.currentRevision() });
    expect(rest.length).toBeGreaterThan(1);
    const served = rest.flatMap((c) => (c.kind === 'zones' ? c.json.map((j) => JSON.parse(j) as Zone) : []));
    const expected = names.filter((n, i) => (i % 3 !== 0 || n === 'snap0.example') && n !== 'snap1.example' && n !== 'snap2.example');
    expect(served.map((z) => z.domain.domain).sort()).toEqual(expected.sort());
    expect(served.find((z) => z.domain.domain === 'snap0.example')).toEqual(await store.getZone('snap0.example'));
    const whole = await store.snapshot();
    expect(whole.zones.map((z) => z.domain.domain).sort()).toEqual(expected.sort());
  });

  it('snapshots taken while writes commit hold nothing once read (300 of them, then the store still reads)', async () => {
    const { store } = await open();
    const user = await store.createUser({ name: 'snapw', email: 'snapw@example.org' });
    // A served zone first, then one not served: a snapshot's walk of the records stops early.
    await store.createZone((ctx) => ({ ...zoneFor('a-served.example', user.id, ctx), domain: { ...zoneFor('a-served.example', user.id, ctx).domain, ns_active: true }, records: [aRecord(ctx.nextRecordId(), 'www', '192.0.2.1')] }));
    await store.createZone((ctx) => ({ ...zoneFor('z-off.example', user.id, ctx), records: [aRecord(ctx.nextRecordId(), 'www', '192.0.2.2')] }));
    for (let i = 0; i < 300; i++) {
      const [snap] = await Promise.all([store.snapshot(), store.updateZone('z-off.example', user.id, (z) => ({ domain: { ...z.domain, tags: [`t${i}`] } }))]);
      expect(snap.zones.map((z) => z.domain.domain)).toEqual(['a-served.example']);
    }
    expect((await store.getZoneHead('z-off.example'))!.domain.tags).toEqual(['t299']);
    await store.close();
  });

  it('a settings change names the settings it changed; the revision name servers answer from stays at their last change', async () => {
    const { store } = await open();
    const user = await store.createUser({ name: 'set', email: 'set@example.org' });
    const created = await store.createZone((ctx) => zoneFor('set.example', user.id, ctx));
    const entries = async (from: number) => {
      const feed = await store.changesSince(from, 100);
      return 'changes' in feed ? feed.changes.map((c) => [c.revision, c.settings]) : [];
    };
    const r0 = created.domain.revision;
    // Tags only: none of a name server's business, so its serial's revision is the creation's.
    const tagged = await store.updateZone('set.example', user.id, (z) => ({ domain: { ...z.domain, tags: ['a'] } }));
    expect(tagged.domain).toMatchObject({ revision: r0 + 1, nsRevision: r0 });
    const again = await store.updateZone('set.example', user.id, (z) => ({ domain: { ...z.domain, tags: ['b'], cachelevel: 2 } }));
    expect(again.domain).toMatchObject({ revision: r0 + 2, nsRevision: r0 });
    // A setting name servers answer from moves it; so does a change of records.
    const masked = await store.updateZone('set.example', user.id, (z) => ({ domain: { ...z.domain, mask: 'shop', tags: ['c'] } }));
    expect(masked.domain.revision).toBe(r0 + 3);
    expect(masked.domain.nsRevision).toBeUndefined();
    await store.updateZone('set.example', user.id, (z) => ({ domain: { ...z.domain, tags: [] } }));
    const recorded = await store.changeRecords('set.example', user.id, (_v, ctx) => ({ put: [aRecord(ctx.nextRecordId(), 'www', '192.0.2.1')], del: [] }));
    expect(recorded.head.domain.revision).toBe(r0 + 5);
    expect(recorded.head.domain.nsRevision).toBeUndefined();
    // A mutation that rewrites the settings unchanged still spends a revision, naming none.
    const same = await store.updateZone('set.example', user.id, (z) => ({ domain: { ...z.domain } }));
    expect(same.domain).toMatchObject({ revision: r0 + 6, nsRevision: r0 + 5 });
    expect(await store.getZoneHead('set.example')).toEqual(same);
    expect(await entries(r0 - 1)).toEqual([
      [r0, undefined],
      [r0 + 1, ['tags']],
      [r0 + 2, ['cachelevel', 'tags']],
      [r0 + 3, ['mask', 'tags']],
      [r0 + 4, ['tags']],
      [r0 + 5, undefined],
      [r0 + 6, []],
    ]);
    // The snapshot carries the domain as stored.
    await store.updateZone('set.example', user.id, (z) => ({ domain: { ...z.domain, ns_active: true } }));
    await store.updateZone('set.example', user.id, (z) => ({ domain: { ...z.domain, tags: ['d'] } }));
    const snap = await store.snapshot();
    expect(snap.zones.find((z) => z.domain.domain === 'set.example')!.domain).toEqual((await store.getZoneHead('set.example'))!.domain);
    expect(snap.zones.find((z) => z.domain.domain === 'set.example')!.domain.nsRevision).toBe(r0 + 7);
    await store.close();
  });

  it('a consumer that is up to date gets no changes', async () => {
    const { store } = await open();
    const now = await store.currentRevision();
    const feed = await store.changesSince(now, 10);
    expect(feed).toEqual({ changes: [] });
    await store.close();
  });
}
