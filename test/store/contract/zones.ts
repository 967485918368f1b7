// The Store contract, zones, records and claims: run against every adapter by index.ts.
import { expect, it } from 'vitest';
import { StoreError } from '../../../src/store/errors.ts';
import { type DomainState } from '../../../src/model/domain.ts';
import type { MutationContext } from '../../../src/store/types.ts';
import { aRecord, expectStoreError, type OpenStore, zoneFor } from './helpers.ts';

export function zonesContract(open: OpenStore): void {
  it('applies a change set computed against a revision as one change, or nothing once the zone moved (small and large sets alike)', async () => {
    const { store } = await open();
    const user = await store.createUser({ name: 'set', email: 'set@example.org', limits: { max_records_per_domain: 5000 } });
    await store.createZone((ctx) => ({ ...zoneFor('set.example', user.id, ctx), records: [aRecord(ctx.nextRecordId(), '@', '192.0.2.1')] }));
    for (const size of [3, 1200]) {
      const before = (await store.getZone('set.example', user.id))!;
      const create = Array.from({ length: size }, (_, i) => aRecord(0, `n${size}-${i}`, `198.51.100.${i % 250}`));
      const gone = before.records.slice(1);
      const kept = { ...before.records[0]!, ttl: before.records[0]!.ttl + 1 };
      const applied = await store.applyRecordChangeSet('set.example', user.id, { revision: before.domain.revision, create, put: [kept], del: gone.map((r) => r.id) });
      if (applied === 'moved') throw new Error('moved');
      expect(applied.ids).toHaveLength(size);
      expect(new Set(applied.ids).size).toBe(size);
      expect(applied.head.recordCount).toBe(size + 1);
      expect(applied.head.domain.revision).toBeGreaterThan(before.domain.revision);
      const after = (await store.getZone('set.example', user.id))!;
      expect(after.records.map((r) => r.id)).toEqual([kept.id, ...applied.ids].sort((a, b) => a - b));
      expect(after.records.find((r) => r.id === kept.id)).toEqual(kept);
      expect(await store.getRecordsAt('set.example', `n${size}-0`)).toEqual([{ ...create[0]!, id: applied.ids[0] }]);
      // One revision, one change entry carrying the whole difference.
      const feed = await store.changesSince(before.domain.revision, 10);
      if (!('changes' in feed)) throw new Error('gone');
      expect(feed.changes.map((c) => c.revision)).toEqual([applied.head.domain.revision]);
      expect(feed.changes[0]!.records!.put).toHaveLength(size + 1);
      expect(feed.changes[0]!.records!.del).toEqual(gone.map((r) => ({ id: r.id, name: r.name })));
      // Computed against the revision before: nothing changes.
      expect(await store.applyRecordChangeSet('set.example', user.id, { revision: before.domain.revision, create, put: [], del: [kept.id] })).toBe('moved');
      expect(await store.getZone('set.example', user.id)).toEqual(after);
      expect(await store.currentRevision()).toBe(applied.head.domain.revision);
    }
    await expectStoreError(store.applyRecordChangeSet('none.example', user.id, { revision: 1, create: [], put: [], del: [] }), 'NOT_FOUND');
  });

  it('changes records in one revision, reading only the names asked for; the change entry carries the difference', async () => {
    const { store } = await open();
    const user = await store.createUser({ name: 'rec', email: 'rec@example.org' });
    await store.createZone((ctx) => ({ ...zoneFor('rec.example', user.id, ctx), records: [aRecord(ctx.nextRecordId(), '@', '192.0.2.1')] }));
    const created = await store.changeRecords('rec.example', user.id, (view, ctx) => {
      expect(view.head.recordCount).toBe(1);
      expect(view.at('www')).toEqual([]);
      expect(view.at('@').map((r) => r.value)).toEqual(['192.0.2.1']);
      return { put: [aRecord(ctx.nextRecordId(), 'www', '192.0.2.2'), aRecord(ctx.nextRecordId(), 'www', '192.0.2.3'), aRecord(ctx.nextRecordId(), 'mail', '192.0.2.4')], del: [] };
    });
    expect(created.head.recordCount).toBe(4);
    const [w1, w2, mail] = created.delta.put;
    expect((await store.getZoneHead('rec.example'))).toEqual(created.head);
    expect(await store.getRecord('rec.example', mail!.id)).toEqual(mail);
    expect(await store.getRecord('rec.example', 999_999)).toBeUndefined();
    // A record moved to another name and one removed: the difference names where they were.
    const moved = await store.changeRecords('rec.example', user.id, (view) => {
      expect(view.at('www').map((r) => r.id).sort()).toEqual([w1!.id, w2!.id].sort());
      expect(view.byId(w2!.id)).toEqual(w2);
      return { put: [{ ...w2!, name: 'shop' }], del: [mail!.id] };
    });
    expect(moved.head.recordCount).toBe(3);
    expect(moved.delta).toEqual({ put: [{ ...w2!, name: 'shop' }], del: [{ id: mail!.id, name: 'mail' }, { id: w2!.id, name: 'www' }] });
    const feed = await store.changesSince(moved.head.domain.revision - 1, 10);
    expect('changes' in feed && feed.changes).toEqual([
      { revision: moved.head.domain.revision, at: expect.any(String), kind: 'zone', key: 'rec.example', op: 'put', records: moved.delta, bytes: JSON.stringify(moved.delta).length },
    ]);
    await store.changeRecords('rec.example', user.id, (view) => {
      expect(view.at('www').map((r) => r.id)).toEqual([w1!.id]);
      expect(view.at('shop').map((r) => r.id)).toEqual([w2!.id]);
      expect(view.byId(mail!.id)).toBeUndefined();
      return undefined;
    });
    const zone = await store.getZone('rec.example');
    expect(zone!.records.map((r) => [r.name, r.value])).toEqual([
      ['@', '192.0.2.1'],
      ['www', '192.0.2.2'],
      ['shop', '192.0.2.3'],
    ]);
    // Reading the feed holds no more differences than asked for (at least one change).
    const bulkStart = await store.currentRevision();
    for (let i = 0; i < 3; i++) {
      await store.changeRecords('rec.example', user.id, (_view, ctx) => ({
        put: Array.from({ length: 300 }, () => ({ ...aRecord(ctx.nextRecordId(), `bulk${i}`, '192.0.2.9'), type: 6 as const, value: 'x'.repeat(3000) })),
        del: [],
      }));
    }
    const bounded = await store.changesSince(bulkStart, 100, 1_500_000);
    expect('changes' in bounded && bounded.changes.map((c) => c.records!.put.length)).toEqual([300]);
    const two = await store.changesSince(bulkStart, 100, 2_000_000);
    expect('changes' in two && two.changes).toHaveLength(2);
    const all = await store.changesSince(bulkStart, 100, 10_000_000);
    expect('changes' in all && all.changes).toHaveLength(3);
    // A reader that skips differences (an edge) reads none and is not bounded by them.
    const bare = await store.changesSince(bulkStart, 100, 1_500_000, false);
    expect('changes' in bare && bare.changes.map((c) => [c.records, typeof c.bytes])).toEqual([
      [undefined, 'number'],
      [undefined, 'number'],
      [undefined, 'number'],
    ]);
    await store.changeRecords('rec.example', user.id, (view) => ({ put: [], del: [0, 1, 2].flatMap((i) => view.at(`bulk${i}`).map((r) => r.id)) }));
    // Another owner cannot change them; a settings change keeps them and the count.
    const other = await store.createUser({ name: 'rec2', email: 'rec2@example.org' });
    await expectStoreError(store.changeRecords('rec.example', other.id, () => ({ put: [], del: [w1!.id] })), 'NOT_FOUND');
    const head = await store.updateZone('rec.example', user.id, (z) => ({ domain: { ...z.domain, ssl: true } }));
    expect(head.recordCount).toBe(3);
    expect((await store.getZone('rec.example'))!.records).toHaveLength(3);
    // A removed zone takes its records with it: registered again, it starts empty.
    await store.deleteZone('rec.example', user.id);
    expect(await store.getRecord('rec.example', w1!.id)).toBeUndefined();
    await store.createZone((ctx) => zoneFor('rec.example', user.id, ctx));
    expect(await store.getZone('rec.example')).toMatchObject({ records: [] });
    expect((await store.getZoneHead('rec.example'))!.recordCount).toBe(0);
    await store.close();
  });

  it('domain names are unique across owners; limits hold; other owners see NOT_FOUND', async () => {
    const { store } = await open();
    const a = await store.createUser({ name: 'd', email: 'd@example.org', limits: { max_domains: 2 } });
    const b = await store.createUser({ name: 'e', email: 'e@example.org' });
    await store.createZone((ctx) => zoneFor('one.example', a.id, ctx));
    await expectStoreError(store.createZone((ctx) => zoneFor('one.example', b.id, ctx)), 'CONFLICT');
    await store.createZone((ctx) => zoneFor('two.example', a.id, ctx));
    await expectStoreError(store.createZone((ctx) => zoneFor('three.example', a.id, ctx)), 'LIMIT_EXCEEDED');
    await expectStoreError(store.updateZone('one.example', b.id, (z) => z), 'NOT_FOUND');
    expect(await store.deleteZone('one.example', b.id)).toBe(false);
    expect(await store.countZones(a.id)).toBe(2);
    expect(await store.countZones(b.id)).toBe(0);
    await store.close();
  });

  it('lists zones in name order with cursors and tag filters', async () => {
    const { store } = await open();
    const u = await store.createUser({ name: 'f', email: 'f@example.org' });
    for (const n of ['c', 'a', 'e', 'b', 'd']) {
      await store.createZone((ctx) => {
        const z = zoneFor(`${n}.example`, u.id, ctx);
        return { ...z, domain: { ...z.domain, tags: n === 'b' || n === 'd' ? ['blue'] : [] } };
      });
    }
    const p1 = await store.listZones(u.id, { limit: 2 });
    expect(p1.items.map((z) => z.domain.domain)).toEqual(['a.example', 'b.example']);
    const p2 = await store.listZones(u.id, { limit: 2, cursor: p1.next });
    expect(p2.items.map((z) => z.domain.domain)).toEqual(['c.example', 'd.example']);
    const p3 = await store.listZones(u.id, { limit: 2, cursor: p2.next });
    expect(p3.items.map((z) => z.domain.domain)).toEqual(['e.example']);
    expect(p3.next).toBeUndefined();
    const blue = await store.listZones(u.id, { limit: 10 }, 'blue');
    expect(blue.items.map((z) => z.domain.domain)).toEqual(['b.example', 'd.example']);
    await store.close();
  });

  it('refuses a domain at, under or above another owner\'s domain, also when both race; the same owner may nest', async () => {
    const { store } = await open();
    const a = await store.createUser({ name: 'a', email: 'a@example.org' });
    const b = await store.createUser({ name: 'b', email: 'b@example.org' });
    await store.createZone((ctx) => zoneFor('a-domain.example', a.id, ctx));
    await expectStoreError(store.createZone((ctx) => zoneFor('shop.a-domain.example', b.id, ctx)), 'DOMAIN_OVERLAP');
    await expectStoreError(store.createZone((ctx) => zoneFor('deep.shop.a-domain.example', b.id, ctx)), 'DOMAIN_OVERLAP');
    await store.createZone((ctx) => zoneFor('x.other.example', a.id, ctx));
    await expectStoreError(store.createZone((ctx) => zoneFor('other.example', b.id, ctx)), 'DOMAIN_OVERLAP');
    // Siblings and look-alike suffixes do not overlap.
    await store.createZone((ctx) => zoneFor('other-domain.example', b.id, ctx));
    await store.createZone((ctx) => zoneFor('xa-domain.example', b.id, ctx));
    // The same owner may hold a domain under its own.
    await store.createZone((ctx) => zoneFor('shop.a-domain.example', a.id, ctx));
    // Once the owner lets go, the name is free for another account.
    await store.deleteZone('x.other.example', a.id);
    await store.createZone((ctx) => zoneFor('other.example', b.id, ctx));

    // Two accounts racing for a name and a name under it: exactly one wins each round.
    for (let round = 0; round < 30; round++) {
      const results = await Promise.allSettled([
        store.createZone((ctx) => zoneFor(`race${round}.example`, a.id, ctx)),
        store.createZone((ctx) => zoneFor(`b.race${round}.example`, b.id, ctx)),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      expect(lost.reason).toBeInstanceOf(StoreError);
      expect((lost.reason as StoreError).code).toBe('DOMAIN_OVERLAP');
    }
  });

  it('pending claims (issue 26): several accounts may claim a name, above and under it; only proven domains overlap no one', async () => {
    const { store } = await open();
    const a = await store.createUser({ name: 'a', email: 'a@example.org' });
    const b = await store.createUser({ name: 'b', email: 'b@example.org' });
    const c = await store.createUser({ name: 'c', email: 'c@example.org' });
    const claim = (verified: boolean, token = 't'): DomainState['claim'] => ({ verified, token, nameservers: ['ns1.example.net', 'ns2.example.net'] });
    const pending = (name: string, owner: number, ns_active = true) => (ctx: MutationContext) => ({ ...zoneFor(name, owner, ctx), domain: { ...zoneFor(name, owner, ctx).domain, ns_active, claim: claim(false, `t-${owner}`) } });
    // B squats the name and a name under it; A claims the same name beside B's: nothing refused.
    await store.createZone(pending('brand.example', b.id));
    await store.createZone(pending('shop.brand.example', b.id));
    await store.changeRecords('brand.example', b.id, (_v, ctx) => ({ put: [aRecord(ctx.nextRecordId(), 'www', '192.0.2.66')], del: [] }));
    const mine = await store.createZone(pending('brand.example', a.id));
    expect(mine.domain).toMatchObject({ domain: 'brand.example', ownerId: a.id, claim: { verified: false } });
    await expectStoreError(store.createZone(pending('brand.example', a.id)), 'CONFLICT');
    await expectStoreError(store.createZone(pending('brand.example', b.id)), 'CONFLICT');
    const before = await store.currentRevision();
    const { delta } = await store.changeRecords('brand.example', a.id, (_v, ctx) => ({ put: [aRecord(ctx.nextRecordId(), 'www', '192.0.2.1'), aRecord(ctx.nextRecordId(), '@', '192.0.2.2')], del: [] }));
    // A claim beside the holder's is no consumer's business: its entry names no zone and carries no records.
    const entries = await store.changesSince(before, 10);
    expect('changes' in entries && entries.changes.map((e) => [e.kind, e.key, e.records])).toEqual([['claim', 'brand.example', undefined]]);
    // Name-only reads see the holder (B); the owner's reads see the owner's claim.
    expect((await store.getZoneHead('brand.example'))!.domain.ownerId).toBe(b.id);
    expect((await store.getZoneHead('brand.example', a.id))!).toMatchObject({ domain: { ownerId: a.id }, recordCount: 2 });
    expect((await store.getZone('brand.example', a.id))!.records.map((r) => r.value).sort()).toEqual(['192.0.2.1', '192.0.2.2']);
    expect(await store.getRecord('brand.example', delta.put[0]!.id, a.id)).toEqual(delta.put[0]);
    expect(await store.getRecord('brand.example', delta.put[0]!.id, c.id)).toBeUndefined();
    expect((await store.listZones(a.id, { limit: 10 })).items.map((z) => [z.domain.domain, z.domain.ownerId])).toEqual([['brand.example', a.id]]);
    expect((await store.listClaims('brand.example')).map((z) => z.domain.ownerId)).toEqual([b.id, a.id]);
    expect((await store.listAllZones({ limit: 10 })).items.map((z) => [z.domain.domain, z.domain.ownerId])).toEqual([['brand.example', b.id], ['shop.brand.example', b.id]]);
    const refs = (await store.pendingClaimsUnder('brand.example')).map((r) => `${r.name}|${r.ownerId}`).sort();
    expect(refs).toEqual([`brand.example|${a.id}`, `brand.example|${b.id}`, `shop.brand.example|${b.id}`].sort());
    // Pending: served by no name server, whatever ns_active says.
    expect((await store.snapshot()).zones).toEqual([]);

    // A proves: B's pending claim of the name is released in the same step, A's takes the name, records and all.
    const proof = await store.proveClaim('brand.example', a.id, (h) => ({ ...h.domain, claim: { ...h.domain.claim!, verified: true, method: 'delegation' } }));
    expect(proof.released?.domain.ownerId).toBe(b.id);
    expect(proof.head.domain).toMatchObject({ ownerId: a.id, claim: { verified: true } });
    const held = await store.getZone('brand.example');
    expect(held!.domain.ownerId).toBe(a.id);
    expect(held!.records.map((r) => r.value).sort()).toEqual(['192.0.2.1', '192.0.2.2']);
    expect(await store.getZoneHead('brand.example', b.id)).toBeUndefined();
    expect((await store.listZones(b.id, { limit: 10 })).items.map((z) => z.domain.domain)).toEqual(['shop.brand.example']);
    expect(await store.countZones(b.id)).toBe(1);
    expect((await store.snapshot()).zones.map((z) => [z.domain.domain, z.domain.ownerId, z.records.length])).toEqual([['brand.example', a.id, 2]]);
    const proofEntries = await store.changesSince(proof.head.domain.revision - 1, 10);
    expect('changes' in proofEntries && proofEntries.changes.map((e) => [e.kind, e.key, e.op])).toEqual([['zone', 'brand.example', 'put']]);
    expect((await store.pendingClaimsUnder('brand.example')).map((r) => `${r.name}|${r.ownerId}`)).toEqual([`shop.brand.example|${b.id}`]);
    // B's claim under it is still there (the prover releases it through deleteZone); a pending one of C under the proven name is allowed.
    expect(await store.deleteZone('shop.brand.example', b.id)).toBe(true);
    await store.createZone(pending('x.brand.example', c.id));
    // A proven domain of another account under, at or above a proven one: DOMAIN_OVERLAP as before.
    await expectStoreError(store.createZone((ctx) => zoneFor('y.brand.example', c.id, ctx)), 'DOMAIN_OVERLAP');
    // A pending claim beside a proven holder cannot be proven while the holder's proof stands.
    await store.createZone(pending('brand.example', c.id));
    await expectStoreError(store.proveClaim('brand.example', c.id, (h) => ({ ...h.domain, claim: { ...h.domain.claim!, verified: true } })), 'CONFLICT');
    await expectStoreError(store.proveClaim('nothing.example', c.id, (h) => h.domain), 'NOT_FOUND');
    expect(await store.deleteZone('brand.example', c.id)).toBe(true);
    expect((await store.getZoneHead('brand.example'))!.domain.ownerId).toBe(a.id);
    // The holder's proof lost: unserved, and no longer in the way of proven domains under it.
    await store.updateZone('brand.example', a.id, (h) => ({ domain: { ...h.domain, claim: { ...h.domain.claim!, verified: false } } }));
    expect((await store.snapshot()).zones).toEqual([]);
    await store.createZone((ctx) => zoneFor('y.brand.example', c.id, ctx));
    // The holder's records at a name (what a proof under a proven zone reads).
    expect((await store.getRecordsAt('brand.example', 'www')).map((r) => r.value)).toEqual(['192.0.2.1']);
    expect(await store.getRecordsAt('brand.example', 'none')).toEqual([]);
  });

  it('a domain stored before claims existed is proven: served, first come, in the way of other accounts\' proven domains (upgrade)', async () => {
    const { store } = await open();
    const a = await store.createUser({ name: 'a', email: 'a@example.org' });
    const b = await store.createUser({ name: 'b', email: 'b@example.org' });
    await store.createZone((ctx) => ({ ...zoneFor('legacy.example', a.id, ctx), domain: { ...zoneFor('legacy.example', a.id, ctx).domain, ns_active: true } }));
    expect((await store.snapshot()).zones.map((z) => z.domain.domain)).toEqual(['legacy.example']);
    await expectStoreError(store.createZone((ctx) => zoneFor('sub.legacy.example', b.id, ctx)), 'DOMAIN_OVERLAP');
    const claim = { verified: false, token: 't', nameservers: ['ns3.example.net', 'ns4.example.net'] as [string, string] };
    await store.createZone((ctx) => ({ ...zoneFor('legacy.example', b.id, ctx), domain: { ...zoneFor('legacy.example', b.id, ctx).domain, claim } }));
    await expectStoreError(store.proveClaim('legacy.example', b.id, (h) => ({ ...h.domain, claim: { ...claim, verified: true } })), 'CONFLICT');
    expect((await store.snapshot()).zones.map((z) => z.domain.ownerId)).toEqual([a.id]);
  });

  it('lists every zone of every owner, paged in name order', async () => {
    const { store } = await open();
    const a = await store.createUser({ name: 'a', email: 'a@example.org' });
    const b = await store.createUser({ name: 'b', email: 'b@example.org' });
    const names = Array.from({ length: 25 }, (_, i) => `all${String(i).padStart(2, '0')}.example`);
    for (const [i, n] of names.entries()) await store.createZone((ctx) => zoneFor(n, i % 2 ? a.id : b.id, ctx));
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.listAllZones({ limit: 10, cursor });
      seen.push(...page.items.map((z) => z.domain.domain));
      cursor = page.next;
    } while (cursor);
    expect(seen).toEqual(names);
  });
}
