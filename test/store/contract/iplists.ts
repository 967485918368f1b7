// The Store contract, IP lists: run against every adapter by index.ts.
import { expect, it } from 'vitest';
import { ApiError } from '../../../src/errors.ts';
import { expectApiError, type OpenStore } from './helpers.ts';

export function ipListsContract(open: OpenStore): void {
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
}
