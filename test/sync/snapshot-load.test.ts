// A name server loading a streamed snapshot from an HTTP peer that answers what each test scripts
// (a whole snapshot, a cut-short one, a lying end line): only a complete stream replaces what is
// served and stored, and the stored state survives a restart and an interrupted load.
import { createServer, type Server } from 'node:http';
import { open } from 'lmdb';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZoneIndex } from '../../src/dns/zone/index.ts';
import { LocalState } from '../../src/sync/local-state.ts';
import { LineSplitter } from '../../src/common/ndjson.ts';
import { zoneJson } from '../../src/sync/snapshot-format.ts';
import { RemoteFeed } from '../../src/sync/remote-feed.ts';
import type { Zone } from '../../src/store/types.ts';
import type { EdgeNode } from '../../src/model/node.ts';
import { answer } from '../../src/dns/engine/answer.ts';
import { addressOf } from '../helpers/dns-fixture.ts';
import { HOSTMASTER, makeZone, NAMESERVERS } from '../helpers/dns-fixture.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';

let snapshotBody = '';
/** The changes the peer holds after the snapshot (served to since < their revision). */
let changes: Array<{ revision: number; kind: string; key: string; op: 'put' | 'delete'; data?: unknown }> = [];
let server: Server;
let url = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url?.startsWith('/sync/snapshot')) {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.end(snapshotBody);
    } else {
      const since = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('since'));
      const after = changes.filter((c) => c.revision > since);
      const revision = after.at(-1)?.revision ?? since;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ since, revision, current: revision, changes: after }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

afterAll(async () => {
  server.close();
  removeTempDirs();
});

const ndjson = (revision: number, zones: Zone[], end: number | null = zones.length, nodes: EdgeNode[] = []) =>
  [JSON.stringify({ snapshot: { revision, nodes_revision: nodes.length > 0 ? revision : 0, nodes } }), ...zones.map((z) => JSON.stringify({ zone: z })), ...(end === null ? [] : [JSON.stringify({ end: { zones: end } })])]
    .map((line) => `${line}\n`)
    .join('');

const zonesNamed = (...names: string[]) => names.map((name) => makeZone({ domain: name }, [{ name: 'www', type: 1, value: '192.0.2.1' }]));

function newFeed(dataDir: string) {
  const index = new ZoneIndex({ nameservers: NAMESERVERS, hostmaster: HOSTMASTER });
  const feed = new RemoteFeed(index, { url, token: 'nt_token_for_tests_only_0000', pollMs: 60_000, dataDir, log: pino({ level: 'silent' }) });
  return { index, feed };
}

const served = (index: ZoneIndex) => [...index.zoneNames()].sort();

describe('snapshot load', () => {
  it('serves a complete snapshot, stores it, and serves it again after a restart with no API', async () => {
    const dataDir = tempDir();
    snapshotBody = ndjson(7, zonesNamed('a.example', 'b.example', 'c.example'));
    const first = newFeed(dataDir);
    first.feed.start();
    await first.feed.catchUp();
    expect(served(first.index)).toEqual(['a.example', 'b.example', 'c.example']);
    expect(first.feed.applied).toBe(7);
    await first.feed.stop();

    snapshotBody = 'not even json\n';
    const again = newFeed(dataDir);
    again.feed.start();
    // Served from disk before any pull.
    expect(served(again.index)).toEqual(['a.example', 'b.example', 'c.example']);
    expect(again.feed.applied).toBe(7);
    await again.feed.stop();
  });

  it('a stream cut short, or whose end line disagrees, changes nothing served or stored', async () => {
    const dataDir = tempDir();
    snapshotBody = ndjson(3, zonesNamed('keep.example'));
    const { index, feed } = newFeed(dataDir);
    feed.start();
    await feed.catchUp();
    expect(served(index)).toEqual(['keep.example']);

    for (const body of [ndjson(9, zonesNamed('new1.example', 'new2.example'), null), ndjson(9, zonesNamed('new1.example'), 2), ndjson(9, []).slice(0, -5)]) {
      snapshotBody = body;
      feed.applied = 0; // as after a 410: the next pull loads a snapshot
      await feed.catchUp();
      expect(served(index)).toEqual(['keep.example']);
      feed.applied = 3;
    }
    await feed.stop();
    const state = new LocalState(dataDir);
    expect([...state.zones()].map((zone) => zone.domain.domain)).toEqual(['keep.example']);
    expect(state.header().revision).toBe(3);
    await state.close();
  });

  it('a load interrupted before its commit leaves the previous state, and the next load succeeds', async () => {
    const dataDir = tempDir();
    const store = async (state: LocalState, names: string[], revision: number, commit: boolean) => {
      const writer = await state.beginSnapshot();
      await writer.write(Buffer.from(ndjson(revision, zonesNamed(...names))));
      if (commit) await writer.commit({ revision, nodesRevision: 0, nodes: [] });
    };
    const state = new LocalState(dataDir);
    await store(state, ['old.example'], 1, true);
    await store(state, ['half.example'], 2, false);
    await state.close(); // the process dies here

    const reopened = new LocalState(dataDir);
    expect([...reopened.zones()].map((zone) => zone.domain.domain)).toEqual(['old.example']);
    await store(reopened, ['new.example'], 3, true);
    expect([...reopened.zones()].map((zone) => zone.domain.domain)).toEqual(['new.example']);
    expect(reopened.header().revision).toBe(3);
    await reopened.close();
  });

  it('keeps changes at their size over the stored bytes (chunks split lines), whole zones and record differences, across a restart', async () => {
    const dataDir = tempDir();
    const state = new LocalState(dataDir);
    const zones = Array.from({ length: 40 }, (_, i) =>
      makeZone({ domain: `z${i}.example` }, [{ name: 'www', type: 1, value: `192.0.2.${i + 1}` }, { name: '@', type: 6, value: `zone ${i} ✓ Zürich` }]),
    );
    const bytes = Buffer.from(ndjson(5, zones));
    const writer = await state.beginSnapshot();
    const splitter = new LineSplitter();
    // Odd-sized chunks, so lines straddle them.
    for (let i = 0; i < bytes.length; i += 97) {
      const chunk = bytes.subarray(i, i + 97);
      await writer.write(chunk);
      for (const line of splitter.push(chunk)) {
        const json = zoneJson(line.text);
        if (json) writer.noteZone((JSON.parse(json) as Zone).domain.domain, line.offset);
      }
    }
    await writer.commit({ revision: 5, nodesRevision: 0, nodes: [] });
    // Single zones read back from the stored bytes (what a zone's first difference patches from).
    for (const zone of zones) expect(state.zone(zone.domain.domain)).toEqual(zone);
    expect(state.zone('missing.example')).toBeUndefined();
    expect([...state.zones()]).toEqual(zones);

    const whole = makeZone({ domain: 'z3.example' }, [{ name: 'www', type: 1, value: '198.51.100.3' }], 6);
    const z5 = zones[5]!;
    const added = { ...z5.records[0]!, id: 9001, name: 'new', value: '203.0.113.5' };
    const z5domain = { ...z5.domain, revision: 7 };
    const z7 = zones[7]!;
    const moved = { ...z7.records[0]!, name: 'moved' };
    await state.apply(
      [
        { name: 'z3.example', zone: whole },
        { name: 'z4.example', zone: undefined },
        { name: 'z5.example', domain: z5domain, delta: { put: [added], del: [{ id: z5.records[0]!.id, name: 'www' }] } },
        { name: 'z7.example', domain: z7.domain, delta: { put: [moved], del: [{ id: moved.id, name: 'www' }] } },
        { name: 'brand-new.example', zone: whole.domain && { ...whole, domain: { ...whole.domain, domain: 'brand-new.example' } } },
      ],
      { revision: 7, nodesRevision: 0, nodes: [] },
      false,
    );
    // A difference on a zone that came whole is applied to what is stored of it.
    const wholeRecord = whole.records[0]!;
    await state.apply([{ name: 'z3.example', domain: whole.domain, delta: { put: [{ ...wholeRecord, ttl: 60 }], del: [] } }], { revision: 8, nodesRevision: 0, nodes: [] }, false);
    const expected = (list: Zone[]) => {
      const byName = new Map(list.map((z) => [z.domain.domain, z]));
      const sortRecords = (z: Zone) => ({ ...z, records: [...z.records].sort((a, b) => a.id - b.id) });
      return [...byName.values()].map(sortRecords).sort((a, b) => a.domain.domain.localeCompare(b.domain.domain));
    };
    const want = expected([
      ...zones.filter((z) => !['z3.example', 'z4.example', 'z5.example', 'z7.example'].includes(z.domain.domain)),
      { ...whole, records: [{ ...wholeRecord, ttl: 60 }] },
      { domain: z5domain, records: [added, z5.records[1]!] },
      { domain: z7.domain, records: [moved, z7.records[1]!] },
      { ...whole, domain: { ...whole.domain, domain: 'brand-new.example' } },
    ]);
    expect(expected([...state.zones()])).toEqual(want);
    for (const zone of want) expect(expected([state.zone(zone.domain.domain)!])).toEqual([zone]);
    expect(state.zone('z4.example')).toBeUndefined();
    await state.close();

    const reopened = new LocalState(dataDir);
    expect(expected([...reopened.zones()])).toEqual(want);
    expect(expected([reopened.zone('z5.example')!, reopened.zone('z17.example')!])).toEqual(want.filter((z) => ['z5.example', 'z17.example'].includes(z.domain.domain)));
    expect(reopened.header().revision).toBe(8);
    await reopened.close();
  });

  it('changed zones kept whole by the previous layout are served after the upgrade', async () => {
    const dataDir = tempDir();
    const zone = zonesNamed('kept.example')[0]!;
    const gone = zonesNamed('gone.example')[0]!;
    const raw = open({ path: dataDir, noSubdir: false });
    await raw.put(['meta', 'revision'], 9);
    await raw.put(['meta', 'layout'], 2);
    await raw.put(['meta', 'active'], 'a');
    const snapshot = raw.openDB<Buffer, number>({ name: 'snapshot-a', encoding: 'binary' });
    await snapshot.put(0, Buffer.from(ndjson(8, [gone])));
    const changed = raw.openDB<string, string>({ name: 'changed-a', encoding: 'string' });
    await changed.put('kept.example', JSON.stringify(zone));
    await changed.put('gone.example', '');
    await raw.close();
    const state = new LocalState(dataDir);
    expect([...state.zones()]).toEqual([zone]);
    await state.close();
  });

  it('a node change rebuilds protected zones from the stored snapshot, before and after a restart', async () => {
    const dataDir = tempDir();
    const node = (id: number, ipv4: string): EdgeNode => ({ id, name: `edge${id}`, ipv4, ipv6: null, location: 'DE', status: 'active' });
    const shielded = makeZone({ domain: 'shield.example', enabled: true, mask: 'www' }, [{ name: 'mail', type: 1, value: '192.0.2.9' }]);
    snapshotBody = ndjson(10, [shielded, ...zonesNamed('plain.example')], 2, [node(1, '192.0.2.101')]);
    changes = [];
    const apex = (index: ZoneIndex) => answer(index, { qname: 'www.shield.example', qtype: 1 }, {}).answer.flatMap((set) => set.rdata.map(addressOf)).sort();
    const first = newFeed(dataDir);
    first.feed.start();
    await first.feed.catchUp();
    expect(apex(first.index)).toEqual(['192.0.2.101']);

    changes = [{ revision: 11, kind: 'node', key: '2', op: 'put', data: node(2, '192.0.2.102') }];
    await first.feed.catchUp();
    expect(first.feed.applied).toBe(11);
    expect(apex(first.index)).toEqual(['192.0.2.101', '192.0.2.102']);
    await first.feed.stop();

    changes.push({ revision: 12, kind: 'node', key: '1', op: 'delete' });
    const again = newFeed(dataDir);
    again.feed.start();
    expect(apex(again.index)).toEqual(['192.0.2.101', '192.0.2.102']);
    await again.feed.catchUp();
    expect(apex(again.index)).toEqual(['192.0.2.102']);
    await again.feed.stop();
    changes = [];
  });

  it('state left by the one-entry-per-zone layout is served after the upgrade', async () => {
    const dataDir = tempDir();
    const zone = zonesNamed('legacy.example')[0]!;
    const raw = open({ path: dataDir, noSubdir: false });
    await raw.put(['meta', 'revision'], 9);
    await raw.put(['meta', 'nodesRevision'], 0);
    await raw.put(['zone', 'legacy.example'], zone);
    await raw.close();
    const state = new LocalState(dataDir);
    expect([...state.zones()]).toEqual([zone]);
    expect(state.header().revision).toBe(9);
    await state.close();
    const again = new LocalState(dataDir);
    expect([...again.zones()]).toEqual([zone]);
    await again.close();
  });
});
