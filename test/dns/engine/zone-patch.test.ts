// A record-level change patched into a built zone must serve exactly what building the changed
// zone from scratch serves: every owner's sets, the empty non-terminals, the delegations, the
// protected names, the SOA and serial. Checked over many random changes of a zone that has all
// of them, and on answers through the index.
import { describe, expect, it } from 'vitest';
import { answer } from '../../../src/dns/engine/answer.ts';
import { QTYPE } from '../../../src/dns/wire/constants.ts';
import { buildZone, type ZoneBuildContext } from '../../../src/dns/zone/build.ts';
import { ZoneIndex } from '../../../src/dns/zone/index.ts';
import { patchZone } from '../../../src/dns/zone/patch.ts';
import type { RecordState } from '../../../src/model/record.ts';
import type { RecordDelta, Zone } from '../../../src/store/types.ts';
import { EDGE_NODES, makeZone } from '../../helpers/dns-fixture.ts';
import { servedForm } from '../../helpers/zone-form.ts';

const ctx: ZoneBuildContext = { nameservers: ['ns1.palisade.example', 'ns2.palisade.example'], hostmaster: 'hostmaster.palisade.example', nodes: EDGE_NODES, nodesRevision: 3 };

const served = servedForm;

/** Deterministic pseudo-random numbers (the same run every time). */
function random(seed: number) {
  return (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    // The high bits: an LCG's low bits repeat with short periods.
    return Math.floor((seed / 2 ** 31) * n);
  };
}

const NAMES = ['@', 'www', 'mail', 'a.b.c', 'b.c', 'x.a.b.c', 'sub', 'host.sub', 'deep.host.sub', '*', 'api', '_sip._tcp'];

function randomRecord(pick: (n: number) => number, id: number): RecordState {
  const name = NAMES[pick(NAMES.length)]!;
  const kind = pick(10);
  const target = pick(4) === 0 ? [6255148] : []; // Europe, sometimes
  if (kind < 4) return { id, name, type: 1, value: `192.0.2.${1 + pick(6)}`, ttl: 60 + pick(3) * 60, priority: null, target };
  if (kind < 5) return { id, name, type: 2, value: `2001:db8::${1 + pick(4)}`, ttl: 300, priority: null, target };
  if (kind < 7) return { id, name, type: 6, value: `text ${pick(5)}`, ttl: 300, priority: null, target: [] };
  if (kind < 8 && name !== '@') return { id, name, type: 5, value: 'ns.elsewhere.example', ttl: 300, priority: null, target: [] };
  if (kind < 9) return { id, name, type: 4, value: 'mx.example.net', ttl: 300, priority: 10 + pick(2), target: [] };
  if (name === '@') return { id, name, type: 7, value: `host.example.net ${7200 + pick(3)} 1800 1209600 ${60 + pick(100)}`, ttl: 900, priority: null, target: [] };
  return { id, name, type: 3, value: 'target.example.net', ttl: 300, priority: null, target: [] };
}

describe('record-level changes patched into a built zone', () => {
  it('serve exactly what a full build of the changed records serves (750 random changes, 5 zone shapes)', () => {
    for (const [seed, mask, enabled] of [
      [1, 'www,api', true],
      [2, '*', true],
      [3, 'www,sub', false],
      [4, '', true],
      [5, 'host.sub,x.a.b.c,deep.host.sub', true],
    ] as const) {
      const pick = random(seed);
      let nextId = 1;
      let records: RecordState[] = Array.from({ length: 20 }, () => randomRecord(pick, nextId++));
      const domain = makeZone({ domain: 'patch.example', mask, enabled }, [], 10).domain;
      let built = buildZone({ domain, records }, ctx);
      // The first difference asks for the records (a whole build keeps none); later ones use those kept.
      let asked = 0;
      for (let step = 0; step < 150; step++) {
        const previous = records;
        const delta: RecordDelta = { put: [], del: [] };
        // Now and then a bulk change (past the size where the zone is rebuilt whole).
        const changes = step % 25 === 24 ? 80 : 1 + pick(4);
        for (let c = 0; c < changes; c++) {
          const what = pick(3);
          if (what === 0 || records.length < 3) {
            const record = randomRecord(pick, nextId++);
            records = [...records, record];
            delta.put.push(record);
          } else if (what === 1) {
            const old = records[pick(records.length)]!;
            if (delta.put.some((r) => r.id === old.id) || delta.del.some((d) => d.id === old.id)) continue;
            records = records.filter((r) => r !== old);
            delta.del.push({ id: old.id, name: old.name });
          } else {
            const old = records[pick(records.length)]!;
            if (delta.put.some((r) => r.id === old.id) || delta.del.some((d) => d.id === old.id)) continue;
            const changed = { ...randomRecord(pick, old.id) };
            records = records.map((r) => (r === old ? changed : r));
            if (changed.name !== old.name) delta.del.push({ id: old.id, name: old.name });
            delta.put.push(changed);
          }
        }
        const revision = 11 + step;
        built = patchZone(built, delta, revision, ctx, () => {
          asked++;
          return { domain: { ...domain, revision: revision - 1 }, records: previous };
        });
        expect(asked, 'records asked for once').toBe(1);
        const fresh = buildZone({ domain: { ...domain, revision }, records }, ctx);
        expect(served(built), `seed ${seed}, step ${step}`).toEqual(served(fresh));
        if (fresh.hasGeo) expect(built.hasGeo).toBe(true);
      }
    }
  });

  it('settings changes (mask, protection, nodes bound, failover) between record changes: the same (600 random steps)', () => {
    const MASKS = ['', 'www', '*', 'www,api', 'sub,host.sub', 'a.b.c,b.c,mail', 'deep.host.sub,x.a.b.c', '*,www'];
    for (const seed of [11, 12, 13, 14]) {
      const pick = random(seed);
      let nextId = 1;
      let records: RecordState[] = Array.from({ length: 20 }, () => randomRecord(pick, nextId++));
      let domain = makeZone({ domain: 'settings.example', mask: 'www', enabled: true }, [], 10).domain;
      let built = buildZone({ domain, records }, ctx);
      for (let step = 0; step < 150; step++) {
        const revision = 11 + step;
        const previous = { domain, records };
        const stored = () => previous;
        if (pick(2) === 0) {
          const change = [
            () => ({ mask: MASKS[pick(MASKS.length)]! }),
            () => ({ enabled: !domain.enabled }),
            () => ({ bind_node: [[], [1], [2], [1, 2]][pick(4)]! }),
            () => ({ failover: pick(2) === 0 ? null : '198.51.100.9', failover_active: pick(2) === 0 }),
            () => ({ backend: `198.51.100.${1 + pick(3)}`, mask: MASKS[pick(MASKS.length)]! }),
          ][pick(5)]!();
          domain = { ...domain, ...change, revision };
          built = patchZone(built, { put: [], del: [] }, 0, ctx, stored, domain);
        } else {
          const record = randomRecord(pick, pick(3) === 0 || records.length < 3 ? nextId++ : records[pick(records.length)]!.id);
          const old = records.find((r) => r.id === record.id);
          records = [...records.filter((r) => r.id !== record.id), record];
          const delta: RecordDelta = { put: [record], del: old && old.name !== record.name ? [{ id: old.id, name: old.name }] : [] };
          domain = { ...domain, revision };
          built = patchZone(built, delta, revision, ctx, stored);
        }
        const fresh = buildZone({ domain, records }, ctx);
        expect(served(built), `seed ${seed}, step ${step}`).toEqual(served(fresh));
        expect(built.usesNodes).toBe(fresh.usesNodes);
        if (fresh.hasGeo) expect(built.hasGeo).toBe(true);
      }
    }
  });

  it('through the index: the old zone goes stale, answers follow, other zones are untouched, a zone not served ignores it', () => {
    const index = new ZoneIndex({ nameservers: ctx.nameservers, hostmaster: ctx.hostmaster });
    const zone: Zone = makeZone({ domain: 'idx.example', mask: 'www' }, [{ name: 'mail', type: 1, value: '192.0.2.9' }], 5);
    const other = makeZone({ domain: 'other.example' }, [{ name: 'www', type: 1, value: '192.0.2.50' }], 5);
    index.replaceAll([zone, other], EDGE_NODES, 3);
    const before = index.get('idx.example')!;
    const otherBefore = index.get('other.example')!;
    const record: RecordState = { id: 100, name: 'www', type: 1, value: '203.0.113.7', ttl: 120, priority: null, target: [] };
    const asked: string[] = [];
    const fromFeeder = (name: string) => {
      asked.push(name);
      return name === 'idx.example' ? zone : undefined;
    };
    expect(index.needsRecords('idx.example')).toBe(true);
    expect(index.patchZone('idx.example', { put: [record], del: [{ id: 1, name: 'mail' }] }, 6, fromFeeder)).toBe(true);
    expect(asked).toEqual(['idx.example']);
    expect(index.needsRecords('idx.example')).toBe(false);
    expect(before.stale).toBe(true);
    expect(index.get('other.example')).toBe(otherBefore);
    const a = (qname: string) => answer(index, { qname, qtype: QTYPE.A }, {});
    expect(a('www.idx.example').answer[0]!.rdata).toEqual([{ type: 1, address: (203 << 24) | (0 << 16) | (113 << 8) | 7 }]);
    expect(a('mail.idx.example').rcode).toBe(3);
    expect((answer(index, { qname: 'idx.example', qtype: QTYPE.SOA }, {}).answer[0]!.rdata[0] as { serial: number }).serial).toBe(6);
    expect(index.patchZone('unknown.example', { put: [record], del: [] }, 7, fromFeeder)).toBe(false);
    // A node change rebuilds the protected zones: the patched one from the records it keeps, the
    // other from the feeder's.
    index.setNodes([EDGE_NODES[0]!], 8, (name) => (name === 'other.example' ? other : fromFeeder(name)));
    expect(asked).toEqual(['idx.example']);
    expect(a('www.idx.example').answer[0]!.rdata).toHaveLength(1);
    expect(a('idx.example').answer[0]!.rdata).toHaveLength(1);
    expect(a('mail.idx.example').rcode).toBe(3);
  });
});
