// The Store contract, run against every adapter: what the API and the sync producer rely on.
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.ts';
import { DOMAIN_DEFAULTS, type DomainState } from '../../src/model/domain.ts';
import type { RecordState } from '../../src/model/record.ts';
import type { MutationContext, Store, Zone } from '../../src/store/types.ts';

function zoneFor(name: string, ownerId: number, ctx: MutationContext): Zone {
  const domain: DomainState = {
    ...DOMAIN_DEFAULTS,
    backend: '203.0.113.10',
    domain: name,
    ownerId,
    ns_active: false,
    created: ctx.now,
    updated: ctx.now,
    revision: 0,
  };
  return { domain, records: [] };
}

function aRecord(id: number, name: string, value: string): RecordState {
  return { id, name, type: 1, value, ttl: 300, priority: null, target: [] };
}

async function expectApiError(promise: Promise<unknown>, code: string): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  expect((error as ApiError).code).toBe(code);
}

export function storeContract(name: string, open: () => Promise<{ store: Store; reopen?: () => Promise<Store> }>): void {
  describe(`Store contract: ${name}`, () => {
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

    it('creates users and finds keys by hash only; revoked keys stay revoked', async () => {
      const { store } = await open();
      const user = await store.createUser({ name: 'a', email: 'a@example.org', limits: { max_domains: 3 } });
      expect(user.limits.max_domains).toBe(3);
      expect(user.limits.max_records_per_domain).toBeGreaterThan(0);
      const key = await store.addApiKey(user.id, 'ab'.repeat(32), 'k');
      expect((await store.findApiKeyByHash('ab'.repeat(32)))?.userId).toBe(user.id);
      expect(await store.findApiKeyByHash('cd'.repeat(32))).toBeUndefined();
      expect((await store.revokeApiKey(key.id))?.revoked).toBeTruthy();
      expect((await store.findApiKeyByHash('ab'.repeat(32)))?.revoked).toBeTruthy();
      expect(await store.revokeApiKey(9999)).toBeUndefined();
      await expectApiError(store.addApiKey(9999, 'ef'.repeat(32), 'x'), 'NOT_FOUND');
      expect((await store.listApiKeys(user.id)).map((k) => k.id)).toEqual([key.id]);
      await store.close();
    });

    it('every mutation advances the revision by one and records a change in the same step', async () => {
      const { store } = await open();
      const r0 = await store.currentRevision();
      const user = await store.createUser({ name: 'b', email: 'b@example.org' });
      const zone = await store.createZone((ctx) => zoneFor('rev.example', user.id, ctx));
      expect(zone.domain.revision).toBe(r0 + 2);
      const updated = await store.updateZone('rev.example', user.id, (z) => ({ ...z, domain: { ...z.domain, ssl: true } }));
      expect(updated.domain.revision).toBe(r0 + 3);
      expect(updated.domain.created).toBe(zone.domain.created);
      // A mutation that changes nothing spends no revision.
      const same = await store.updateZone('rev.example', user.id, () => undefined);
      expect(same.domain.revision).toBe(r0 + 3);
      expect(await store.deleteZone('rev.example', user.id)).toBe(true);
      expect(await store.currentRevision()).toBe(r0 + 4);
      const feed = await store.changesSince(r0, 100);
      expect('changes' in feed && feed.changes.map((c) => [c.revision, c.kind, c.key, c.op])).toEqual([
        [r0 + 1, 'user', String(user.id), 'put'],
        [r0 + 2, 'zone', 'rev.example', 'put'],
        [r0 + 3, 'zone', 'rev.example', 'put'],
        [r0 + 4, 'zone', 'rev.example', 'delete'],
      ]);
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

    it('a rejected mutation changes nothing, not even the record id counter', async () => {
      const { store } = await open();
      const user = await store.createUser({ name: 'c', email: 'c@example.org' });
      await store.createZone((ctx) => zoneFor('reject.example', user.id, ctx));
      const before = await store.currentRevision();
      await expectApiError(
        store.updateZone('reject.example', user.id, (z, ctx) => {
          ctx.nextRecordId();
          throw new ApiError('UNPROCESSABLE', 'no');
        }),
        'UNPROCESSABLE',
      );
      expect(await store.currentRevision()).toBe(before);
      await expectApiError(
        store.changeRecords('reject.example', user.id, (_view, ctx) => {
          ctx.nextRecordId();
          throw new ApiError('UNPROCESSABLE', 'no');
        }),
        'UNPROCESSABLE',
      );
      expect(await store.currentRevision()).toBe(before);
      const z = await store.changeRecords('reject.example', user.id, (_view, ctx) => ({ put: [aRecord(ctx.nextRecordId(), 'www', '192.0.2.1')], del: [] }));
      const again = await store.changeRecords('reject.example', user.id, (_view, ctx) => ({ put: [aRecord(ctx.nextRecordId(), 'www', '192.0.2.2')], del: [] }));
      expect(again.delta.put[0]!.id).toBe(z.delta.put[0]!.id + 1);
      await store.close();
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
      await expectApiError(store.changeRecords('rec.example', other.id, () => ({ put: [], del: [w1!.id] })), 'NOT_FOUND');
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
      await expectApiError(store.createZone((ctx) => zoneFor('one.example', b.id, ctx)), 'CONFLICT');
      await store.createZone((ctx) => zoneFor('two.example', a.id, ctx));
      await expectApiError(store.createZone((ctx) => zoneFor('three.example', a.id, ctx)), 'LIMIT_EXCEEDED');
      await expectApiError(store.updateZone('one.example', b.id, (z) => z), 'NOT_FOUND');
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

    it('IP lists: owner-scoped, paged by id, limited in number', async () => {
      const { store } = await open();
      const u = await store.createUser({ name: 'g', email: 'g@example.org', limits: { max_iplists: 3 } });
      const other = await store.createUser({ name: 'h', email: 'h@example.org' });
      const make = (name: string) =>
        store.createIpList((ctx) => ({ id: ctx.id, ownerId: u.id, name, ips: [], allnodes: true, nodes: [], created: ctx.now, updated: ctx.now, revision: 0 }));
      const l1 = await make('one');
      const l2 = await make('two');
      await make('three');
      await expectApiError(make('four'), 'LIMIT_EXCEEDED');
      expect(l2.id).toBeGreaterThan(l1.id);
      const page = await store.listIpLists(u.id, { limit: 2 });
      expect(page.items.map((l) => l.name)).toEqual(['one', 'two']);
      expect((await store.listIpLists(u.id, { limit: 2, cursor: page.next })).items.map((l) => l.name)).toEqual(['three']);
      await expectApiError(store.updateIpList(l1.id, other.id, (l) => l), 'NOT_FOUND');
      const changed = await store.updateIpList(l1.id, u.id, (l) => ({ ...l, ips: ['192.0.2.1'] }));
      expect(changed.ips).toEqual(['192.0.2.1']);
      expect(changed.revision).toBeGreaterThan(l1.revision);
      expect(await store.deleteIpList(l1.id, other.id)).toBe(false);
      expect(await store.deleteIpList(l1.id, u.id)).toBe(true);
      expect(await store.getIpList(l1.id)).toBeUndefined();
      await store.close();
    });

    it('IP list entries one at a time: the same list as a sorted set would be, a revision only when something changes, the count checked inside the step', async () => {
      const { store } = await open();
      const u = await store.createUser({ name: 'ipe', email: 'ipe@example.org' });
      const start = Array.from({ length: 3000 }, (_, i) => `10.0.${i >> 8}.${i & 255}`).sort();
      const list = await store.createIpList((ctx) => ({ id: ctx.id, ownerId: u.id, name: 'big', ips: start, allnodes: true, nodes: [], created: ctx.now, updated: ctx.now, revision: 0 }));
      const want = new Set(start);
      let seed = 11;
      const next = (n: number) => Math.floor(((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * n);
      const lots = Array.from({ length: 300 }, () => `${next(2) === 0 ? '10.0' : '10.1'}.${next(16)}.${next(256)}`);
      for (const [i, ip] of lots.entries()) {
        const remove = i % 3 === 2;
        const before = await store.currentRevision();
        const changed = remove ? want.has(ip) : !want.has(ip);
        const after = await store.changeIpEntries(list.id, u.id, remove ? { add: [], del: [ip] } : { add: [ip], del: [] }, () => undefined);
        if (remove) want.delete(ip);
        else want.add(ip);
        expect(await store.currentRevision()).toBe(before + (changed ? 1 : 0));
        expect(after.count).toBe(want.size);
        if (changed) expect(after.revision).toBe(before + 1);
        if (i % 30 === 0) expect((await store.getIpList(list.id))!.ips).toEqual([...want].sort());
      }
      // Emptied entirely in one change, then filled again from nothing.
      await store.changeIpEntries(list.id, u.id, { add: [], del: [...want] }, () => undefined);
      expect((await store.getIpList(list.id))!.ips).toEqual([]);
      await store.changeIpEntries(list.id, u.id, { add: ['192.0.2.1', '2001:db8::1', '192.0.2.0/24'], del: [] }, () => undefined);
      expect((await store.getIpList(list.id))!.ips).toEqual(['192.0.2.0/24', '192.0.2.1', '2001:db8::1']);
      // Refused by the count check: nothing written.
      const before = await store.currentRevision();
      await expectApiError(
        store.changeIpEntries(list.id, u.id, { add: ['198.51.100.1'], del: [] }, (count) => {
          throw new ApiError('LIMIT_EXCEEDED', `would be ${count}`);
        }),
        'LIMIT_EXCEEDED',
      );
      expect(await store.currentRevision()).toBe(before);
      const other = await store.createUser({ name: 'ipe2', email: 'ipe2@example.org' });
      await expectApiError(store.changeIpEntries(list.id, other.id, { add: ['198.51.100.1'], del: [] }, () => undefined), 'NOT_FOUND');
      // A whole replacement (PATCH) and the pages of lists see the same entries.
      await store.updateIpList(list.id, u.id, (l) => ({ ...l, ips: ['203.0.113.0/24'] }));
      expect((await store.listIpLists(u.id, { limit: 10 })).items.map((l) => l.ips)).toEqual([['203.0.113.0/24']]);
      await store.close();
    });

    it('the largest IP list the schema allows (100,000 entries) is stored, changed one entry at a time, and read back whole', async () => {
      const { store } = await open();
      const u = await store.createUser({ name: 'ipmax', email: 'ipmax@example.org', limits: { max_ips_per_list: 100_001 } });
      const ips = Array.from({ length: 100_000 }, (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`).sort();
      const list = await store.createIpList((ctx) => ({ id: ctx.id, ownerId: u.id, name: 'max', ips, allnodes: true, nodes: [], created: ctx.now, updated: ctx.now, revision: 0 }));
      const changed = await store.changeIpEntries(list.id, u.id, { add: ['2001:db8::1'], del: [ips[50_000]!] }, () => undefined);
      expect(changed.count).toBe(100_000);
      const read = await store.getIpList(list.id);
      expect(read!.ips).toHaveLength(100_000);
      expect(read!.ips).toEqual([...ips.filter((_, i) => i !== 50_000), '2001:db8::1'].sort());
      expect(await store.deleteIpList(list.id, u.id)).toBe(true);
      expect(await store.getIpList(list.id)).toBeUndefined();
      await store.close();
    });

    it('nodes: create, update, and no removal while a domain names them', async () => {
      const { store } = await open();
      const node = await store.createNode({ name: 'edge1', ipv4: '192.0.2.10', ipv6: null, location: 'DE', status: 'active' });
      const u = await store.createUser({ name: 'i', email: 'i@example.org' });
      await store.createZone((ctx) => {
        const z = zoneFor('bound.example', u.id, ctx);
        return { ...z, domain: { ...z.domain, bind_node: [node.id] } };
      });
      expect((await store.updateNode(node.id, { status: 'maintenance' })).status).toBe('maintenance');
      await expectApiError(store.deleteNode(node.id), 'CONFLICT');
      await store.updateZone('bound.example', u.id, (z) => ({ ...z, domain: { ...z.domain, bind_node: [] } }));
      const list = await store.createIpList((ctx) => ({ id: ctx.id, ownerId: u.id, name: 'l', ips: [], allnodes: false, nodes: [node.id], created: ctx.now, updated: ctx.now, revision: 0 }));
      await expectApiError(store.deleteNode(node.id), 'CONFLICT');
      await store.deleteIpList(list.id, u.id);
      expect(await store.deleteNode(node.id)).toBe(true);
      expect(await store.deleteNode(node.id)).toBe(false);
      expect(await store.listNodes()).toEqual([]);
      await store.close();
    });

    it('concurrent mutations of one zone all land, with distinct increasing revisions', async () => {
      const { store } = await open();
      const u = await store.createUser({ name: 'j', email: 'j@example.org' });
      await store.createZone((ctx) => zoneFor('busy.example', u.id, ctx));
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          store.changeRecords('busy.example', u.id, (view, ctx) => {
            // A rule read inside the step: the count seen is the count at commit time.
            if (view.head.recordCount >= 50) throw new ApiError('LIMIT_EXCEEDED', 'full');
            return { put: [aRecord(ctx.nextRecordId(), `n${i}`, '192.0.2.1')], del: [] };
          }),
        ),
      );
      const revisions = results.map((z) => z.head.domain.revision);
      expect(Math.max(...results.map((z) => z.head.recordCount))).toBe(50);
      expect(new Set(revisions).size).toBe(50);
      const final = await store.getZone('busy.example');
      expect(final!.records).toHaveLength(50);
      expect(new Set(final!.records.map((r) => r.id)).size).toBe(50);
      await store.close();
    });

    it('registers change-feed consumers, found by token hash only', async () => {
      const { store } = await open();
      const before = await store.currentRevision();
      const c = await store.createConsumer({ name: 'ns1', url: 'http://127.0.0.1:9/notify', tokenHash: '12'.repeat(32), secret: 's3cret' });
      expect(await store.currentRevision()).toBe(before + 1);
      expect((await store.findConsumerByTokenHash('12'.repeat(32)))?.name).toBe('ns1');
      expect(await store.findConsumerByTokenHash('34'.repeat(32))).toBeUndefined();
      expect((await store.listConsumers()).map((x) => x.id)).toEqual([c.id]);
      expect(await store.deleteConsumer(c.id)).toBe(true);
      expect(await store.deleteConsumer(c.id)).toBe(false);
      expect(await store.findConsumerByTokenHash('12'.repeat(32))).toBeUndefined();
      await store.close();
    });

    it('a consumer that is up to date gets no changes', async () => {
      const { store } = await open();
      const now = await store.currentRevision();
      const feed = await store.changesSince(now, 10);
      expect(feed).toEqual({ changes: [] });
      await store.close();
    });

    it('state survives closing and reopening', async () => {
      const opened = await open();
      if (!opened.reopen) return void (await opened.store.close());
      const u = await opened.store.createUser({ name: 'k', email: 'k@example.org' });
      await opened.store.createZone((ctx) => zoneFor('kept.example', u.id, ctx));
      const rev = await opened.store.currentRevision();
      await opened.store.close();
      const again = await opened.reopen();
      expect((await again.getZone('kept.example'))?.domain.ownerId).toBe(u.id);
      expect(await again.currentRevision()).toBe(rev);
      await again.close();
    });

    it('refuses a domain at, under or above another owner\'s domain, also when both race; the same owner may nest', async () => {
      const { store } = await open();
      const a = await store.createUser({ name: 'a', email: 'a@example.org' });
      const b = await store.createUser({ name: 'b', email: 'b@example.org' });
      await store.createZone((ctx) => zoneFor('a-domain.example', a.id, ctx));
      await expectApiError(store.createZone((ctx) => zoneFor('shop.a-domain.example', b.id, ctx)), 'DOMAIN_OVERLAP');
      await expectApiError(store.createZone((ctx) => zoneFor('deep.shop.a-domain.example', b.id, ctx)), 'DOMAIN_OVERLAP');
      await store.createZone((ctx) => zoneFor('x.other.example', a.id, ctx));
      await expectApiError(store.createZone((ctx) => zoneFor('other.example', b.id, ctx)), 'DOMAIN_OVERLAP');
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
        expect((lost.reason as ApiError).code).toBe('DOMAIN_OVERLAP');
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
      await expectApiError(store.createZone(pending('brand.example', a.id)), 'CONFLICT');
      await expectApiError(store.createZone(pending('brand.example', b.id)), 'CONFLICT');
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
      await expectApiError(store.createZone((ctx) => zoneFor('y.brand.example', c.id, ctx)), 'DOMAIN_OVERLAP');
      // A pending claim beside a proven holder cannot be proven while the holder's proof stands.
      await store.createZone(pending('brand.example', c.id));
      await expectApiError(store.proveClaim('brand.example', c.id, (h) => ({ ...h.domain, claim: { ...h.domain.claim!, verified: true } })), 'CONFLICT');
      await expectApiError(store.proveClaim('nothing.example', c.id, (h) => h.domain), 'NOT_FOUND');
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
      await expectApiError(store.createZone((ctx) => zoneFor('sub.legacy.example', b.id, ctx)), 'DOMAIN_OVERLAP');
      const claim = { verified: false, token: 't', nameservers: ['ns3.example.net', 'ns4.example.net'] as [string, string] };
      await store.createZone((ctx) => ({ ...zoneFor('legacy.example', b.id, ctx), domain: { ...zoneFor('legacy.example', b.id, ctx).domain, claim } }));
      await expectApiError(store.proveClaim('legacy.example', b.id, (h) => ({ ...h.domain, claim: { ...claim, verified: true } })), 'CONFLICT');
      expect((await store.snapshot()).zones.map((z) => z.domain.ownerId)).toEqual([a.id]);
    });

    it('stores any text a customer can send exactly as sent, and reads it back equal', async () => {
      const { store } = await open();
      const user = await store.createUser({ name: 'text', email: 'text@example.org' });
      const samples = [
        '__REVISION__',
        '"__REVISION__"',
        '{"revision":"__REVISION__"}',
        '%s %d %% $1 \\1 \\\\ \\" \'',
        ']] end -- ) local x = 1',
        'ümlaut ☃ 日本 🙂 \u0000 \u001f \u2028',
        `"revision":${'9'.repeat(30)}`,
        'x'.repeat(4000),
      ];
      // Deterministic pseudo-random strings over the whole BMP's well-formed code points.
      let seed = 7;
      const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
      for (let i = 0; i < 40; i++) {
        let text = '';
        for (let j = 0; j < 1 + (next() % 60); j++) {
          const c = next() % 3 === 0 ? next() % 128 : next() % 0xd7ff;
          text += String.fromCharCode(c);
        }
        samples.push(text);
      }
      for (const [i, text] of samples.entries()) {
        const name = `text${i}.example`;
        await store.createZone((ctx) => ({ ...zoneFor(name, user.id, ctx), domain: { ...zoneFor(name, user.id, ctx).domain, tags: [text], ns_active: true } }));
        const updated = await store.changeRecords(name, user.id, (_zone, ctx) => ({
          put: [{ id: ctx.nextRecordId(), name: 'txt', type: 6, value: text, ttl: 300, priority: null, target: [] }],
          del: [],
        }));
        const read = await store.getZone(name);
        expect(read).toEqual({ domain: updated.head.domain, records: updated.delta.put });
        const feed = await store.changesSince(updated.head.domain.revision - 1, 1);
        expect('changes' in feed && feed.changes[0]!.records?.put[0]!.value).toBe(text);
        expect(read!.records[0]!.value).toBe(text);
        expect(read!.domain.tags).toEqual([text]);
        expect(typeof read!.domain.revision).toBe('number');
        const list = await store.createIpList((ctx) => ({ id: ctx.id, name: text, ips: [], allnodes: true, nodes: [], ownerId: user.id, created: ctx.now, updated: ctx.now, revision: 0 }));
        expect((await store.getIpList(list.id))!.name).toBe(text);
      }
      const served = (await store.snapshot()).zones.filter((z) => z.domain.domain.startsWith('text'));
      expect(served).toHaveLength(samples.length);
      for (const zone of served) expect(zone.records[0]!.value).toBe(samples[Number(zone.domain.domain.slice(4, -8))]);
    });

    it('updates and deletes accounts: delete refused while they hold domains, keys gone after', async () => {
      const { store } = await open();
      const user = await store.createUser({ name: 'del', email: 'del@example.org' });
      await store.addApiKey(user.id, 'cd'.repeat(32), 'k');
      expect(await store.updateUser(user.id, { limits: { max_domains: 2 }, disabled: true })).toMatchObject({ disabled: true, limits: { max_domains: 2, max_iplists: 100 } });
      await store.createZone((ctx) => zoneFor('held.example', user.id, ctx));
      await expectApiError(store.deleteUser(user.id), 'CONFLICT');
      await store.deleteZone('held.example', user.id);
      expect(await store.deleteUser(user.id)).toBe(true);
      expect(await store.getUser(user.id)).toBeUndefined();
      expect(await store.findApiKeyByHash('cd'.repeat(32))).toBeUndefined();
      expect(await store.deleteUser(user.id)).toBe(false);
      await expectApiError(store.updateUser(user.id, { disabled: false }), 'NOT_FOUND');
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

    it('internal documents: durable, listed in id order by prefix, no revision spent; a lease has one holder at a time', async () => {
      const { store, reopen } = await open();
      const before = await store.currentRevision();
      for (const id of ['2/b.example', '1/a.example', '10/c.example', '1/z.example', '1/m.example']) await store.putDoc('task', id, { id, n: 1 });
      await store.putDoc('task', '1/a.example', { id: '1/a.example', n: 2 });
      expect(await store.getDoc('task', '1/a.example')).toEqual({ id: '1/a.example', n: 2 });
      expect(await store.getDoc('task', '3/none.example')).toBeUndefined();
      expect(await store.getDoc('acme', '1/a.example')).toBeUndefined();
      const ids: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.listDocs<{ id: string }>('task', { limit: 2, cursor }, '1/');
        for (const item of page.items) {
          expect(item.value.id).toBe(item.id);
          ids.push(item.id);
        }
        cursor = page.next;
      } while (cursor);
      expect(ids).toEqual(['1/a.example', '1/m.example', '1/z.example']);
      expect((await store.listDocs('task', { limit: 10 })).items.map((d) => d.id)).toEqual(['1/a.example', '1/m.example', '1/z.example', '10/c.example', '2/b.example']);
      expect(await store.deleteDoc('task', '1/m.example')).toBe(true);
      expect(await store.deleteDoc('task', '1/m.example')).toBe(false);
      expect(await store.currentRevision()).toBe(before);

      expect(await store.tryLease('certs', 'one', 60_000)).toBe(true);
      expect(await store.tryLease('certs', 'two', 60_000)).toBe(false);
      expect(await store.tryLease('certs', 'one', 60_000)).toBe(true);
      expect(await store.tryLease('certs', 'two', 60_000)).toBe(false);
      expect(await store.tryLease('other', 'two', 60_000)).toBe(true);
      // An expired lease is free for the next holder.
      expect(await store.tryLease('short', 'one', 50)).toBe(true);
      await new Promise((r) => setTimeout(r, 120));
      expect(await store.tryLease('short', 'two', 60_000)).toBe(true);
      if (reopen) {
        const again = await reopen();
        expect(await again.getDoc('task', '1/a.example')).toEqual({ id: '1/a.example', n: 2 });
      }
    });

    it('updates a document atomically: concurrent read-decide-writes lose no step, undefined leaves it alone', async () => {
      const { store } = await open();
      const before = await store.currentRevision();
      const bump = () => store.updateDoc<{ n: number }>('health', 'counter', (doc) => ({ n: (doc?.n ?? 0) + 1 }));
      await Promise.all(Array.from({ length: 40 }, bump));
      expect(await store.getDoc('health', 'counter')).toEqual({ n: 40 });
      const same = await store.updateDoc<{ n: number }>('health', 'counter', () => undefined);
      expect(same.before).toEqual({ n: 40 });
      expect(same.after).toBe(same.before);
      const made = await store.updateDoc<{ n: number }>('health', 'fresh', (doc) => (doc ? undefined : { n: 1 }));
      expect(made).toEqual({ before: undefined, after: { n: 1 } });
      // The callback gets a copy: changing it in place changes nothing stored.
      await store.updateDoc<{ n: number }>('health', 'fresh', (doc) => {
        doc!.n = 99;
        return undefined;
      });
      expect(await store.getDoc('health', 'fresh')).toEqual({ n: 1 });
      expect((await store.listDocs('health', { limit: 10 })).items.map((d) => d.id)).toEqual(['counter', 'fresh']);
      expect(await store.currentRevision()).toBe(before);
    });

    it('keeps uptime measures per minute, hour and day, node by node, adding parts of a period up', async () => {
      const { store } = await open();
      const now = Date.now();
      const minute = now - (now % 60_000);
      const m = (c: number, u: number, ch: Record<string, number> = {}) => ({ c, u, r: 2, o: 1, ch, rh: { 5: 2 } });
      await store.addUptime([
        { domain: 'up.example', node: 1, minute, measure: m(10, 9, { 3: 9 }) },
        { domain: 'up.example', node: 1, minute, measure: m(2, 2, { 3: 1, 4: 1 }) },
        { domain: 'up.example', node: 2, minute, measure: m(5, 0) },
        { domain: 'up.example', node: 1, minute: minute - 60_000, measure: m(12, 12) },
        { domain: 'other.example', node: 1, minute, measure: m(1, 1) },
      ]);
      const minutes = await store.readUptime('up.example', 'minute', minute - 3_600_000, now);
      const at = (period: number, node: number) => minutes.find((p) => p.period === period && p.node === node)?.measure;
      expect(at(minute, 1)).toEqual({ c: 12, u: 11, r: 4, o: 2, ch: { 3: 10, 4: 1 }, rh: { 5: 4 } });
      expect(at(minute, 2)).toEqual({ c: 5, u: 0, r: 2, o: 1, ch: {}, rh: { 5: 2 } });
      expect(at(minute - 60_000, 1)).toMatchObject({ c: 12, u: 12 });
      expect(minutes).toHaveLength(3);
      const day = await store.readUptime('up.example', 'day', now - 86_400_000 * 30, now);
      const today = day.filter((p) => p.node === 1);
      expect(today.reduce((n, p) => n + p.measure.c, 0)).toBe(24);
      expect((await store.readUptime('up.example', 'hour', now - 86_400_000, now)).reduce((n, p) => n + p.measure.c, 0)).toBe(29);
      // A domain's removal takes its measures; another domain's stay.
      await store.deleteUptime('up.example');
      for (const resolution of ['minute', 'hour', 'day'] as const) expect(await store.readUptime('up.example', resolution, 0, now)).toEqual([]);
      expect(await store.readUptime('other.example', 'minute', minute, now)).toHaveLength(1);
    });

    it('keeps uptime measures no longer than their retention', async () => {
      const { store } = await open();
      const now = Date.now();
      const minute = now - (now % 60_000);
      const m = { c: 1, u: 1, r: 0, o: 0, ch: {}, rh: {} };
      // Three hours back is past the minute retention (65 minutes): not read, and dropped at the next new minute.
      await store.addUptime([{ domain: 'old.example', node: 1, minute: minute - 3 * 3_600_000, measure: m }]);
      await store.addUptime([{ domain: 'old.example', node: 1, minute, measure: m }]);
      const minutes = await store.readUptime('old.example', 'minute', 0, now);
      expect(minutes.map((p) => p.period)).toEqual([minute]);
    });
  });
}
