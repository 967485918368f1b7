// buildZone drops duplicate RDATA (records the zone holds twice, in general and geo variants) in
// linear time, and the worst zones the limits allow build to the right sets.
import { describe, expect, it } from 'vitest';
import { answer } from '../../../src/dns/engine/answer.ts';
import { buildZone } from '../../../src/dns/zone/build.ts';
import { typeSet } from '../../../src/dns/zone/types.ts';
import { worstZones } from '../../../bench/zone-stall/worst-zones.ts';
import { EDGE_NODES, HOSTMASTER, indexWith, makeZone, NAMESERVERS } from '../../helpers/dns-fixture.ts';

const ctx = { nameservers: NAMESERVERS, hostmaster: HOSTMASTER, nodes: EDGE_NODES, nodesRevision: 1 };

describe('zone build', () => {
  it('drops records that repeat, keeping the lowest TTL, in general sets and geo variants alike', () => {
    const zone = makeZone({ domain: 'dup.example' }, [
      { name: 'a', type: 6, value: 'same', ttl: 600 },
      { name: 'a', type: 6, value: 'other' },
      { name: 'a', type: 1, value: '192.0.2.1', target: [2921044, 6255148] },
      { name: 'a', type: 1, value: '192.0.2.2', target: [2921044] },
    ]);
    // The API refuses exact duplicates; the index must still cope with them (older data, imports).
    zone.records.push({ ...zone.records[0]!, id: 99, ttl: 60 }, { ...zone.records[2]!, id: 100, target: [2921044] });
    const data = buildZone(zone, ctx);
    const owner = data.nodes.get('a.dup.example')!;
    const txt = typeSet(owner, 16)!;
    expect(txt.rdata).toHaveLength(2);
    expect(txt.ttl).toBe(60);
    const a = typeSet(owner, 1)!;
    expect(a.byTarget!.get(2921044)!.rdata).toHaveLength(2);
    expect(a.byTarget!.get(6255148)!.rdata).toHaveLength(1);
  });

  it('builds the worst zones the default limits allow to the expected sets', () => {
    for (const worst of worstZones(1000, (label) => `${label}.w.example`)) {
      const apex = `${worst.label}.w.example`;
      const zone = makeZone({ domain: apex, mask: worst.mask ?? 'www' }, []);
      zone.records = worst.records;
      const data = buildZone(zone, ctx);
      const big = data.nodes.get(`${worst.bigName}.${apex}`);
      expect(big, worst.label).toBeDefined();
      const index = indexWith([zone]);
      const result = answer(index, { qname: `${worst.bigName}.${apex}`, qtype: worst.bigType }, {});
      if (worst.bigType === 16) expect(result.answer[0]!.rdata).toHaveLength(1000);
      if (worst.label === 'a-one-name-all-targets') {
        expect(typeSet(big!, 1)!.byTarget!.get(2921044)!.rdata).toHaveLength(1000);
      }
      if (worst.label === 'longest-names') expect(data.ents.size).toBeGreaterThan(100);
    }
  });
});
