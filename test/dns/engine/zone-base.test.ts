// A DNS worker's index over a base (the stored state pinned at one revision): it holds only the
// zones changed since, builds any other on its first question in a bounded cache, and answers
// exactly as an index holding every zone, before and after the same batches (records, settings,
// zones added and removed, edge nodes).
import { describe, expect, it } from 'vitest';
import { answer } from '../../../src/dns/engine/answer.ts';
import { QTYPE } from '../../../src/dns/wire/constants.ts';
import { ZoneIndex, type RebuildLimits } from '../../../src/dns/zone/index.ts';
import { applyBatch, type IndexBatch } from '../../../src/dns/zone/apply.ts';
import type { ZoneStore } from '../../../src/dns/zone/base-zones.ts';
import type { Zone } from '../../../src/store/types.ts';
import { EDGE_NODES, HOSTMASTER, makeZone, NAMESERVERS } from '../../helpers/dns-fixture.ts';

const UNBOUNDED: RebuildLimits = { zonePerMinute: 1e9, zoneBurst: 1e9, accountMsPerSecond: 1e9, accountBurstMs: 1e9 };
const FROZEN = () => 0;

const zones: Zone[] = Array.from({ length: 12 }, (_, i) =>
  makeZone({ domain: `z${i}.example`, mask: i % 3 === 0 ? 'www' : '', enabled: i % 3 === 0, ns_active: i !== 11 }, [
    { name: '@', type: 1, value: `192.0.2.${i + 1}` },
    { name: 'mail', type: 1, value: `198.51.100.${i + 1}` },
    { name: 'blog', type: 3, value: `z${(i + 1) % 12}.example` },
    { name: '@', type: 6, value: `zone ${i}` },
  ]),
);

/** The zones as a store (what the stored state gives a worker), counting its reads. */
function storeOf(list: Zone[]): ZoneStore & { reads: number } {
  const byName = new Map(list.map((z) => [z.domain.domain, z]));
  const store = {
    reads: 0,
    zone: (name: string) => {
      store.reads++;
      return byName.get(name);
    },
    names: () => byName.keys(),
    count: byName.size,
  };
  return store;
}

const full = () => {
  const index = new ZoneIndex({ nameservers: NAMESERVERS, hostmaster: HOSTMASTER }, UNBOUNDED, FROZEN);
  index.replaceAll(zones, EDGE_NODES, 1);
  return index;
};
const based = (cache?: number) => {
  const index = new ZoneIndex({ nameservers: NAMESERVERS, hostmaster: HOSTMASTER }, UNBOUNDED, FROZEN);
  const store = storeOf(zones);
  index.rebase(store, EDGE_NODES, 1, cache);
  return { index, store };
};

const QUESTIONS: Array<[string, number]> = [];
for (let i = 0; i < 13; i++) {
  for (const name of [`z${i}.example`, `www.z${i}.example`, `mail.z${i}.example`, `blog.z${i}.example`, `nx.z${i}.example`]) {
    for (const type of [QTYPE.A, QTYPE.TXT, QTYPE.SOA, QTYPE.NS]) QUESTIONS.push([name, type]);
  }
}
QUESTIONS.push(['other.test', QTYPE.A]);

/** Every question's answer, as comparable data. */
const answers = (index: ZoneIndex) => QUESTIONS.map(([qname, qtype]) => JSON.stringify(answer(index, { qname, qtype }, {}), (_, v: unknown) => (Buffer.isBuffer(v) ? v.toString('hex') : v)));

/** The same batches, from the same feeder copy (the zones as they are before each). */
function applyBoth(indexes: ZoneIndex[], batch: IndexBatch, current: Map<string, Zone>): void {
  for (const index of indexes) applyBatch(index, batch, (name) => current.get(name));
  // Compared after every batch (which also builds every zone into the cache before the next).
  expect(answers(indexes[1]!)).toEqual(answers(indexes[0]!));
  for (const change of batch.zones) {
    if ('zone' in change) {
      if (change.zone) current.set(change.name, change.zone);
      else current.delete(change.name);
    }
  }
}

describe('an index over a base', () => {
  it('answers as an index holding every zone, reading only the zones asked', () => {
    const whole = full();
    const { index, store } = based();
    expect(index.size).toBe(zones.length);
    expect(store.reads).toBe(0);
    expect(answers(index)).toEqual(answers(whole));
    expect([...index.zoneNames()].sort()).toEqual([...whole.zoneNames()].sort());
    expect(index.changedSinceBase).toBe(0);
  });

  it('takes the same batches to the same answers: records, settings, zones added and removed, edge nodes', () => {
    const whole = full();
    const { index } = based();
    const current = new Map(zones.map((z) => [z.domain.domain, z]));
    // Asked first (built into the cache), then changed: the cached copy goes stale.
    const asked = index.get('z1.example')!;
    const z1 = zones[1]!;
    applyBoth([whole, index], { zones: [{ name: 'z1.example', delta: { put: [{ ...z1.records[0]!, id: 900, name: 'new', value: '203.0.113.9' }], del: [{ id: z1.records[1]!.id, name: z1.records[1]!.name }] }, revision: 2 }] }, current);
    expect(asked.stale).toBe(true);
    // Never asked, then changed: read from the base to be patched.
    const z2 = zones[2]!;
    applyBoth([whole, index], { zones: [{ name: 'z2.example', delta: { put: [{ ...z2.records[0]!, id: 901, name: 'more', value: '203.0.113.10' }], del: [] }, revision: 3 }] }, current);
    applyBoth([whole, index], { zones: [{ name: 'z4.example', head: { ...zones[4]!.domain, mask: 'mail', enabled: true, revision: 4 } }] }, current);
    applyBoth([whole, index], { zones: [{ name: 'z5.example', zone: undefined }, { name: 'z12.example', zone: makeZone({ domain: 'z12.example' }, [{ name: '@', type: 1, value: '192.0.2.200' }], 5) }] }, current);
    applyBoth([whole, index], { zones: [], nodes: { list: EDGE_NODES.slice(0, 1), revision: 6 } }, current);
    expect(answers(index)).toEqual(answers(whole));
    expect([...index.zoneNames()].sort()).toEqual([...whole.zoneNames()].sort());
    expect(index.size).toBe(zones.length);
    expect(index.changedSinceBase).toBeGreaterThan(0);
    expect(index.changedSinceBase).toBeLessThan(8);
  });

  it('keeps at most the zones its cache allows, an evicted zone marked stale, and answers the same', () => {
    const whole = full();
    const { index, store } = based(3);
    const first = index.get('z0.example')!;
    for (const name of ['z1.example', 'z2.example', 'z3.example']) index.get(name);
    expect(first.stale).toBe(true);
    const readsBefore = store.reads;
    index.get('z3.example');
    expect(store.reads).toBe(readsBefore);
    // Made-up names are read each time, never cached: they push no zone out.
    for (let i = 0; i < 10; i++) index.findZone(`made-up-${i}.test`);
    expect(index.get('z3.example')!.stale).toBe(false);
    expect(store.reads).toBe(readsBefore + 20);
    expect(answers(index)).toEqual(answers(whole));
  });

  it('a rebase swaps every zone at once: the held ones go stale, the new base answers', () => {
    const { index } = based();
    const held = index.get('z0.example')!;
    const changed = zones.map((z) => (z.domain.domain === 'z0.example' ? makeZone({ ...z.domain, mask: '', enabled: false }, [{ name: '@', type: 1, value: '203.0.113.77' }], 9) : z));
    const generation = index.generation;
    index.rebase(storeOf(changed), EDGE_NODES, 1);
    expect(held.stale).toBe(true);
    expect(index.generation).toBeGreaterThan(generation);
    const rdata = answer(index, { qname: 'z0.example', qtype: QTYPE.A }, {}).answer[0]!.rdata[0] as { address: number };
    expect(rdata.address >>> 0).toBe(((203 << 24) | (0 << 16) | (113 << 8) | 77) >>> 0);
  });
});
