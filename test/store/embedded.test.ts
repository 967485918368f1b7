import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { open } from 'lmdb';
import { DOMAIN_DEFAULTS } from '../../src/model/domain.ts';
import { EmbeddedStore } from '../../src/store/lmdb/index.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';
import { storeContract } from './contract/index.ts';

afterAll(removeTempDirs);

storeContract('embedded (LMDB)', async () => {
  const path = tempDir();
  return { store: new EmbeddedStore({ path }), reopen: async () => new EmbeddedStore({ path }) };
});

describe('embedded store data directory', () => {
  it('is a directory even when its name has a dot in it', async () => {
    const path = join(tempDir(), 'palisade.d');
    mkdirSync(path);
    const store = new EmbeddedStore({ path });
    await store.createUser({ name: 'dot', email: 'dot@example.org' });
    await store.close();
    const again = new EmbeddedStore({ path });
    expect((await again.listUsers()).map((u) => u.name)).toEqual(['dot']);
    await again.close();
  });
});

describe('embedded store layout upgrade', () => {
  it('splits zone documents that held their records (an earlier release) once, at open', async () => {
    const path = tempDir();
    const store = new EmbeddedStore({ path });
    const user = await store.createUser({ name: 'old', email: 'old@example.org' });
    const head = await store.createZone((ctx) => ({
      domain: { ...DOMAIN_DEFAULTS, backend: '203.0.113.10', domain: 'old.example', ownerId: user.id, ns_active: true, created: ctx.now, updated: ctx.now, revision: 0 },
      records: [],
    }));
    await store.close();
    // As an earlier release left it: the records inside the zone document, the served zone's JSON beside it.
    const records = [
      { id: 1, name: 'www', type: 1, value: '192.0.2.1', ttl: 300, priority: null, target: [] },
      { id: 2, name: 'www', type: 1, value: '192.0.2.2', ttl: 300, priority: null, target: [] },
    ];
    const raw = open({ path, noSubdir: false });
    await raw.put(['zone', 'old.example'], { domain: head.domain, records });
    await raw.put(['served', 'old.example'], JSON.stringify({ domain: head.domain, records }));
    await raw.put(['seq', 'record'], 2);
    await raw.remove(['meta', 'recordLayout']);
    await raw.close();
    const again = new EmbeddedStore({ path });
    expect(await again.getZone('old.example')).toEqual({ domain: head.domain, records });
    expect((await again.getZoneHead('old.example'))!.recordCount).toBe(2);
    expect((await again.snapshot()).zones).toEqual([{ domain: head.domain, records }]);
    const changed = await again.changeRecords('old.example', user.id, (view) => {
      expect(view.at('www')).toEqual(records);
      return { put: [], del: [1] };
    });
    expect(changed.head.recordCount).toBe(1);
    await again.close();
  });
});

describe('embedded store IP list upgrade', () => {
  it('moves the entries of lists written whole (an earlier release) into blocks, once, at open', async () => {
    const path = tempDir();
    const store = new EmbeddedStore({ path });
    const user = await store.createUser({ name: 'old', email: 'old@example.org' });
    const list = await store.createIpList((ctx) => ({ id: ctx.id, ownerId: user.id, name: 'old', ips: [], allnodes: true, nodes: [], created: ctx.now, updated: ctx.now, revision: 0 }));
    await store.close();
    const ips = Array.from({ length: 2500 }, (_, i) => `10.9.${i >> 8}.${i & 255}`).sort();
    const raw = open({ path, noSubdir: false });
    await raw.put(['iplist', list.id], { ...list, ips });
    await raw.remove(['meta', 'ipBlocks']);
    await raw.close();
    const again = new EmbeddedStore({ path });
    expect(await again.getIpList(list.id)).toEqual({ ...list, ips });
    const changed = await again.changeIpEntries(list.id, user.id, { add: ['10.9.0.0/16'], del: [ips[0]!] }, () => undefined);
    expect(changed.count).toBe(2500);
    expect((await again.getIpList(list.id))!.ips).toEqual(['10.9.0.0/16', ...ips.slice(1)].sort());
    await again.close();
  });
});

describe('embedded store retention', () => {
  it('keeps only the configured number of change entries and says gone before them', async () => {
    const store = new EmbeddedStore({ path: tempDir(), changeRetention: 5 });
    for (let i = 0; i < 12; i++) await store.createUser({ name: `u${i}`, email: `u${i}@example.org` });
    expect(await store.changesSince(0, 100)).toEqual({ gone: true, oldest: 8 });
    const feed = await store.changesSince(7, 100);
    expect('changes' in feed && feed.changes.map((c) => c.revision)).toEqual([8, 9, 10, 11, 12]);
    await store.close();
  });
});
