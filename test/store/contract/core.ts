// The Store contract, the core: revisions, atomic steps, durability, any text: run against every adapter by index.ts.
import { expect, it } from 'vitest';
import { ApiError } from '../../../src/errors.ts';
import { aRecord, expectApiError, zoneFor, type OpenStore } from './helpers.ts';

export function coreContract(open: OpenStore): void {
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
}
