// The read-only view of the local state a DNS worker pins: one whole revision, that does not move
// while the name server writes the next ones; any zone read back from it (its line in the stored
// snapshot through the lines table, its stored changes on top) as the name server's own state
// reads it; a state stored before the lines table existed still read, and given the table.
import { afterAll, describe, expect, it } from 'vitest';
import { LocalState } from '../../src/sync/local-state.ts';
import { StoredZones } from '../../src/sync/stored-zones.ts';
import { LineSplitter } from '../../src/common/ndjson.ts';
import { zoneJson } from '../../src/sync/snapshot-format.ts';
import { openSides } from '../../src/sync/local-state-layout.ts';
import type { Zone } from '../../src/store/types.ts';
import { makeZone } from '../helpers/dns-fixture.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';

afterAll(() => removeTempDirs());

const ndjson = (revision: number, zones: Zone[]) =>
  [JSON.stringify({ snapshot: { revision, nodes_revision: 0, nodes: [] } }), ...zones.map((z) => JSON.stringify({ zone: z })), JSON.stringify({ end: { zones: zones.length } })].map((l) => `${l}\n`).join('');

/** Zones whose lines span several of the snapshot's chunks (each 300 bytes here). */
const zonesNamed = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, i) =>
    makeZone({ domain: `${prefix}${i}.example` }, [
      { name: 'www', type: 1, value: `192.0.2.${i + 1}` },
      { name: 'txt', type: 6, value: `${prefix} ${i} `.padEnd(700, 'x') },
    ]),
  );

async function storeSnapshot(state: LocalState, revision: number, zones: Zone[]): Promise<void> {
  const bytes = Buffer.from(ndjson(revision, zones));
  const writer = await state.beginSnapshot();
  const splitter = new LineSplitter();
  for (let i = 0; i < bytes.length; i += 300) {
    const chunk = bytes.subarray(i, i + 300);
    await writer.write(chunk);
    for (const line of splitter.push(chunk)) {
      const json = zoneJson(line.text);
      if (json) writer.noteZone((JSON.parse(json) as Zone).domain.domain, line.offset);
    }
  }
  await writer.commit({ revision, nodesRevision: 0, nodes: [] });
}

const byId = (zone: Zone | undefined) => zone && { ...zone, records: [...zone.records].sort((a, b) => a.id - b.id) };

describe('a pinned view of the local state', () => {
  it('reads any zone as the state does, and does not move while the next revisions are written', async () => {
    const dir = tempDir();
    const state = new LocalState(dir);
    const zones = zonesNamed('p', 6);
    await storeSnapshot(state, 7, zones);
    const root = StoredZones.openState(dir);
    const pinned = StoredZones.pin(root);
    expect(pinned.revision).toBe(7);
    expect(pinned.count).toBe(6);
    for (const zone of zones) expect(byId(pinned.zone(zone.domain.domain))).toEqual(byId(zone));
    expect(pinned.zone('nope.example')).toBeUndefined();

    const p0 = zones[0]!;
    const added = { ...p0.records[0]!, id: 500, name: 'new', value: '203.0.113.5' };
    const newcomer = makeZone({ domain: 'q.example' }, [{ name: '@', type: 1, value: '198.51.100.1' }], 8);
    await state.apply(
      [
        { name: 'p0.example', domain: { ...p0.domain, revision: 8 }, delta: { put: [added], del: [{ id: p0.records[1]!.id, name: p0.records[1]!.name }] } },
        { name: 'p1.example', zone: undefined },
        { name: 'q.example', zone: newcomer },
      ],
      { revision: 8, nodesRevision: 0, nodes: [] },
      false,
    );
    // The pin is still revision 7, whole.
    expect(pinned.revision).toBe(7);
    expect(byId(pinned.zone('p0.example'))).toEqual(byId(p0));
    expect(byId(pinned.zone('p1.example'))).toEqual(byId(zones[1]));
    expect(pinned.zone('q.example')).toBeUndefined();
    expect([...pinned.names()].sort()).toEqual(zones.map((z) => z.domain.domain).sort());

    const next = StoredZones.pin(root);
    expect(next.revision).toBe(8);
    expect(next.count).toBe(6);
    for (const name of ['p0.example', 'p1.example', 'p2.example', 'q.example']) expect(byId(next.zone(name))).toEqual(byId(state.zone(name)));
    expect(next.zone('p1.example')).toBeUndefined();
    expect(next.zone('p0.example')!.records.map((r) => r.id).sort((a, b) => a - b)).toEqual([p0.records[0]!.id, 500]);
    expect([...next.names()].sort()).toEqual(['p0.example', 'p2.example', 'p3.example', 'p4.example', 'p5.example', 'q.example']);
    pinned.release();
    next.release();
    await StoredZones.closeState(root);
    await state.close();
  });

  it('reads a state stored before the lines table by reading it through; the name server then writes the table', async () => {
    const dir = tempDir();
    const state = new LocalState(dir);
    const zones = zonesNamed('o', 4);
    await storeSnapshot(state, 3, zones);
    await state.close();
    // As an earlier release left it: no lines table.
    const root = StoredZones.openState(dir);
    const active = root.get(['meta', 'active']) as 'a' | 'b';
    await openSides(root)[active].lines.clearAsync();
    const old = StoredZones.pin(root);
    expect(byId(old.zone('o2.example'))).toEqual(byId(zones[2]));
    expect(old.count).toBe(4);
    old.release();

    const reopened = new LocalState(dir);
    expect([...reopened.zones()].length).toBe(4);
    let written = 0;
    for (let i = 0; i < 50 && written === 0; i++) {
      await new Promise((r) => setTimeout(r, 20));
      written = openSides(root)[active].lines.getKeysCount();
    }
    expect(written).toBe(4);
    const now = StoredZones.pin(root);
    expect(byId(now.zone('o3.example'))).toEqual(byId(zones[3]));
    now.release();
    await reopened.close();
    await StoredZones.closeState(root);
  });
});
