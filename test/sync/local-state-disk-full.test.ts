// The name server's local state on a disk that fills (a real tmpfs), with writes tried whatever
// the room (so that LMDB's own failures, mid-transaction and mid-snapshot, are what is handled):
// nothing rejects, what is read back is what was applied, and once space returns all of it is
// written — a reopened state holds exactly what was served.
import { mkdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalState } from '../../src/sync/local-state.ts';
import { LineSplitter } from '../../src/common/ndjson.ts';
import { zoneJson } from '../../src/sync/snapshot-format.ts';
import type { Zone } from '../../src/store/types.ts';
import { makeZone } from '../helpers/dns-fixture.ts';
import { fillDisk, mountTmpfsKept, unmountAll } from '../helpers/tmpfs.ts';

afterAll(() => unmountAll());

const ndjson = (revision: number, zones: Zone[]) =>
  [JSON.stringify({ snapshot: { revision, nodes_revision: 0, nodes: [] } }), ...zones.map((z) => JSON.stringify({ zone: z })), JSON.stringify({ end: { zones: zones.length } })].map((l) => `${l}\n`).join('');

/** Zones with a few records each, one of them large (so that writes need pages). */
const zonesNamed = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, i) =>
    makeZone({ domain: `${prefix}${i}.example` }, [
      { name: 'www', type: 1, value: `192.0.2.${(i % 250) + 1}` },
      { name: 'txt', type: 6, value: `${prefix} ${i} `.padEnd(2000, 'x') },
    ]),
  );

async function storeSnapshot(state: LocalState, revision: number, zones: Zone[], between?: (chunk: number) => void): Promise<void> {
  const bytes = Buffer.from(ndjson(revision, zones));
  const writer = await state.beginSnapshot();
  const splitter = new LineSplitter();
  let n = 0;
  for (let i = 0; i < bytes.length; i += 4000, n++) {
    between?.(n);
    const chunk = bytes.subarray(i, i + 4000);
    await writer.write(chunk);
    for (const line of splitter.push(chunk)) {
      const json = zoneJson(line.text);
      if (json) writer.noteZone((JSON.parse(json) as Zone).domain.domain, line.offset);
    }
  }
  await writer.commit({ revision, nodesRevision: 0, nodes: [] });
}

const sorted = (zones: Iterable<Zone | undefined>) =>
  [...zones]
    .filter((z): z is Zone => z !== undefined)
    .map((z) => ({ ...z, records: [...z.records].sort((a, b) => a.id - b.id) }))
    .sort((a, b) => a.domain.domain.localeCompare(b.domain.domain));

async function until(check: () => boolean, timeoutMs = 10_000): Promise<boolean> {
  const started = Date.now();
  while (!check() && Date.now() - started < timeoutMs) await new Promise((r) => setTimeout(r, 100));
  return check();
}

const setUp = async () => {
  const mount = await mountTmpfsKept('palisade-local-state', '4m');
  mkdirSync(join(mount, 'data'));
  return { dir: join(mount, 'data', 'ns-state'), filler: join(mount, 'filler') };
};
const anyRoom = { roomWanted: () => 0 };

describe('local state on a disk that fills', () => {
  it('changes that fail to commit are served from memory and written whole once space returns', async () => {
    const { dir, filler } = await setUp();
    const state = new LocalState(dir, undefined, anyRoom);
    const zones = zonesNamed('s', 40);
    await storeSnapshot(state, 5, zones);
    fillDisk(filler);

    const z1 = zones[1]!;
    const big = { ...z1.records[0]!, id: 9001, name: 'big', type: 6 as const, value: 'y'.repeat(200_000) };
    const whole = makeZone({ domain: 's2.example' }, [{ name: 'www', type: 1, value: '198.51.100.2' }], 6);
    // Every apply resolves: the commit fails (LMDB: ENOSPC/EIO), the state keeps it in memory.
    await state.apply([{ name: 's1.example', domain: z1.domain, delta: { put: [big], del: [{ id: z1.records[0]!.id, name: 'www' }] } }], { revision: 6, nodesRevision: 0, nodes: [] }, false);
    expect(state.problem?.reason).toBeDefined();
    await state.apply(
      [
        { name: 's2.example', zone: whole },
        { name: 's3.example', zone: undefined },
        { name: 's2.example', domain: whole.domain, delta: { put: [{ ...whole.records[0]!, ttl: 60 }], del: [] } },
        { name: 's1.example', domain: z1.domain, delta: { put: [{ ...big, value: 'z'.repeat(100_000) }], del: [] } },
      ],
      { revision: 7, nodesRevision: 0, nodes: [] },
      false,
    );
    const want = sorted([
      ...zones.filter((z) => !['s1.example', 's2.example', 's3.example'].includes(z.domain.domain)),
      { domain: z1.domain, records: [z1.records[1]!, { ...big, value: 'z'.repeat(100_000) }] },
      { ...whole, records: [{ ...whole.records[0]!, ttl: 60 }] },
    ]);
    expect(state.header().revision).toBe(7);
    for (const zone of want) expect(sorted([state.zone(zone.domain.domain)])).toEqual([zone]);
    expect(state.zone('s3.example')).toBeUndefined();
    expect(sorted(state.zones())).toEqual(want);

    unlinkSync(filler);
    expect(await until(() => state.problem === undefined)).toBe(true);
    await state.close();
    const reopened = new LocalState(dir);
    expect(reopened.header().revision).toBe(7);
    expect(sorted(reopened.zones())).toEqual(want);
    expect(sorted([reopened.zone('s1.example')])).toEqual(want.filter((z) => z.domain.domain === 's1.example'));
    await reopened.close();
  }, 60_000);

  it('a snapshot that cannot be stored (the disk fills while it arrives) is served from memory, patched there, and stored once space returns', async () => {
    const { dir, filler } = await setUp();
    const state = new LocalState(dir, undefined, anyRoom);
    await storeSnapshot(state, 5, zonesNamed('old', 5));
    const zones = zonesNamed('n', 300);
    // Half of it is stored, then the disk is full.
    await storeSnapshot(state, 9, zones, (chunk) => chunk === 60 && fillDisk(filler));
    expect(state.problem?.reason).toBeDefined();
    expect(state.header().revision).toBe(9);
    expect(state.zone('old0.example')).toBeUndefined();
    for (const zone of [zones[0]!, zones[150]!, zones[299]!]) expect(state.zone(zone.domain.domain)).toEqual(zone);
    const z7 = zones[7]!;
    const added = { ...z7.records[0]!, id: 7001, name: 'added', value: '203.0.113.7' };
    await state.apply([{ name: 'n7.example', domain: z7.domain, delta: { put: [added], del: [{ id: z7.records[1]!.id, name: 'txt' }] } }], { revision: 10, nodesRevision: 0, nodes: [] }, false);
    const want = sorted([...zones.filter((z) => z !== z7), { domain: z7.domain, records: [z7.records[0]!, added] }]);
    expect(sorted(state.zones())).toEqual(want);

    unlinkSync(filler);
    expect(await until(() => state.problem === undefined)).toBe(true);
    await state.close();
    const reopened = new LocalState(dir);
    expect(reopened.header().revision).toBe(10);
    expect(sorted(reopened.zones())).toEqual(want);
    expect(sorted([reopened.zone('n7.example')])).toEqual(want.filter((z) => z.domain.domain === 'n7.example'));
    await reopened.close();
  }, 60_000);
});
