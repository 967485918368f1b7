// What the service adds to a zone: protected names resolving to edge nodes (or the backend when
// protection is off), the serial, and rebuilds when nodes change.
import { describe, expect, it } from 'vitest';
import { answer } from '../../../src/dns/engine/answer.ts';
import { QTYPE } from '../../../src/dns/wire/constants.ts';
import type { ZoneIndex } from '../../../src/dns/zone/index.ts';
import { countryByIsoCode } from '../../../src/geo/targets.ts';
import type { EdgeNode } from '../../../src/model/node.ts';
import { addressOf, EDGE_NODES, indexWith, makeZone } from '../../helpers/dns-fixture.ts';

const addresses = (index: ZoneIndex, qname: string, qtype: number) =>
  answer(index, { qname, qtype }, {}).answer.flatMap((s) => s.rdata.map(addressOf));

describe('protected names', () => {
  it('the apex and mask names resolve to the active edge nodes', () => {
    const index = indexWith([makeZone({ domain: 'shop.example', mask: 'www,api' }, [{ name: 'mail', type: 1, value: '192.0.2.9' }])]);
    for (const name of ['shop.example', 'www.shop.example', 'api.shop.example']) {
      expect(addresses(index, name, QTYPE.A)).toEqual(['192.0.2.101', '192.0.2.102']);
      expect(addresses(index, name, QTYPE.AAAA)).toHaveLength(1);
    }
    expect(addresses(index, 'mail.shop.example', QTYPE.A)).toEqual(['192.0.2.9']);
    expect(answer(index, { qname: 'other.shop.example', qtype: QTYPE.A }, {}).rcode).toBe(3);
  });

  it('bind_node limits the nodes; a customer A/AAAA or CNAME at the name wins', () => {
    const index = indexWith([
      makeZone({ domain: 'bound.example', bind_node: [2], mask: 'www,alias' }, [
        { name: 'www', type: 1, value: '203.0.113.5' },
        { name: 'alias', type: 3, value: 'target.example.com' },
      ]),
    ]);
    expect(addresses(index, 'bound.example', QTYPE.A)).toEqual(['192.0.2.102']);
    expect(addresses(index, 'bound.example', QTYPE.AAAA)).toEqual([]);
    expect(addresses(index, 'www.bound.example', QTYPE.A)).toEqual(['203.0.113.5']);
    expect(answer(index, { qname: 'alias.bound.example', qtype: QTYPE.A }, {}).answer[0]!.type).toBe(QTYPE.CNAME);
  });

  it('"*" in the mask protects every name through a wildcard', () => {
    const index = indexWith([makeZone({ domain: 'all.example', mask: '*' }, [{ name: 'txtonly', type: 6, value: 'hi' }])]);
    expect(addresses(index, 'anything.all.example', QTYPE.A)).toEqual(['192.0.2.101', '192.0.2.102']);
    // A name that exists keeps its own data: the wildcard does not apply to it.
    expect(addresses(index, 'txtonly.all.example', QTYPE.A)).toEqual([]);
  });

  it('protection off ("DNS only") resolves protected names to the backend', () => {
    const v4 = indexWith([makeZone({ domain: 'plain.example', enabled: false, backend: '198.51.100.20' }, [])]);
    expect(addresses(v4, 'plain.example', QTYPE.A)).toEqual(['198.51.100.20']);
    expect(addresses(v4, 'www.plain.example', QTYPE.AAAA)).toEqual([]);
    const v6 = indexWith([makeZone({ domain: 'plain6.example', enabled: false, backend: '2001:db8::20' }, [])]);
    expect(addresses(v6, 'plain6.example', QTYPE.AAAA)).toHaveLength(1);
  });

  it('node changes rebuild protected zones and advance their serial', () => {
    const zone = makeZone({ domain: 'nodes.example' }, [], 5);
    const index = indexWith([zone], EDGE_NODES, 3);
    const serial = () => (answer(index, { qname: 'nodes.example', qtype: QTYPE.SOA }, {}).answer[0]!.rdata[0] as { serial: number }).serial;
    expect(serial()).toBe(5);
    const before = index.get('nodes.example')!;
    index.setNodes([{ ...EDGE_NODES[0]!, status: 'maintenance' }, EDGE_NODES[1]!], 9, (name) => (name === zone.domain.domain ? zone : undefined));
    expect(before.stale).toBe(true);
    expect(addresses(index, 'nodes.example', QTYPE.A)).toEqual(['192.0.2.102']);
    expect(serial()).toBe(9);
  });

  it('zones whose name servers are not active are not served', () => {
    const index = indexWith([makeZone({ domain: 'off.example', ns_active: false }, [])]);
    expect(answer(index, { qname: 'off.example', qtype: QTYPE.A }, {}).rcode).toBe(5);
  });

  it('geo variants: country, then continent, then general', () => {
    const DE = 2921044;
    const FR = 3017382;
    const EUROPE = 6255148;
    const index = indexWith([
      makeZone({ domain: 'geo.example' }, [
        { name: 'www', type: 1, value: '192.0.2.1' },
        { name: 'www', type: 1, value: '192.0.2.2', target: [DE] },
        { name: 'www', type: 1, value: '192.0.2.3', target: [EUROPE] },
      ]),
    ]);
    const pick = (country?: number, continent?: number) => {
      const a = answer(index, { qname: 'www.geo.example', qtype: QTYPE.A }, { country, continent });
      return { value: addressOf(a.answer[0]!.rdata[0]!), geo: a.geoUsed };
    };
    expect(pick(DE, EUROPE)).toEqual({ value: '192.0.2.2', geo: true });
    expect(pick(FR, EUROPE)).toEqual({ value: '192.0.2.3', geo: true });
    expect(pick()).toEqual({ value: '192.0.2.1', geo: true });
    expect(answer(index, { qname: 'geo.example', qtype: QTYPE.SOA }, { country: DE }).geoUsed).toBe(false);
  });

  it('protected names prefer serving nodes in the client’s country, else its continent, else all', () => {
    const place = (iso: string) => ({ country: countryByIsoCode(iso)!.id, continent: countryByIsoCode(iso)!.continentId });
    const nodes: EdgeNode[] = [
      { id: 1, name: 'fra1', ipv4: '192.0.2.101', ipv6: '2001:db8::101', location: 'DE', status: 'active' },
      { id: 2, name: 'fra2', ipv4: '192.0.2.111', ipv6: null, location: 'DE', status: 'active' },
      { id: 3, name: 'nyc1', ipv4: '192.0.2.102', ipv6: null, location: 'US', status: 'active' },
      { id: 4, name: 'tyo1', ipv4: '192.0.2.104', ipv6: '2001:db8::104', location: 'JP', status: 'active' },
      { id: 5, name: 'par1', ipv4: '192.0.2.105', ipv6: null, location: 'FR', status: 'maintenance' },
    ];
    const index = indexWith([makeZone({ domain: 'near.example', mask: 'www' }, [{ name: 'mail', type: 1, value: '192.0.2.9' }])], nodes);
    const near = (iso: string | undefined, qtype: number, qname = 'www.near.example') => {
      const a = answer(index, { qname, qtype }, iso ? place(iso) : {});
      return { addresses: a.answer.flatMap((s) => s.rdata.map(addressOf)).sort(), geo: a.geoUsed };
    };
    expect(near('DE', QTYPE.A)).toEqual({ addresses: ['192.0.2.101', '192.0.2.111'], geo: true });
    expect(near('DE', QTYPE.A, 'near.example').addresses).toEqual(['192.0.2.101', '192.0.2.111']);
    // France has only a node in maintenance: the continent's nodes answer.
    expect(near('FR', QTYPE.A).addresses).toEqual(['192.0.2.101', '192.0.2.111']);
    expect(near('CA', QTYPE.A).addresses).toEqual(['192.0.2.102']);
    expect(near('JP', QTYPE.A).addresses).toEqual(['192.0.2.104']);
    expect(near('BR', QTYPE.A).addresses).toEqual(['192.0.2.101', '192.0.2.102', '192.0.2.104', '192.0.2.111']);
    expect(near(undefined, QTYPE.A).addresses).toHaveLength(4);
    // IPv6: a place with no IPv6 node falls through to the next one that has some.
    expect(near('DE', QTYPE.AAAA).addresses).toHaveLength(1);
    expect(near('US', QTYPE.AAAA).addresses).toHaveLength(2);
    // Customer records are untouched by node places.
    expect(near('DE', QTYPE.A, 'mail.near.example')).toEqual({ addresses: ['192.0.2.9'], geo: false });
  });

  it('nodes all in one place, or a bound node: the answer does not depend on location', () => {
    const nodes: EdgeNode[] = [
      { id: 1, name: 'fra1', ipv4: '192.0.2.101', ipv6: null, location: 'DE', status: 'active' },
      { id: 2, name: 'fra2', ipv4: '192.0.2.111', ipv6: null, location: 'DE', status: 'active' },
      { id: 3, name: 'nyc1', ipv4: '192.0.2.102', ipv6: null, location: 'US', status: 'active' },
    ];
    const index = indexWith([makeZone({ domain: 'one.example' }, []), makeZone({ domain: 'bound.example', bind_node: [3] }, [])], nodes.slice(0, 2));
    const de = { country: countryByIsoCode('DE')!.id, continent: countryByIsoCode('DE')!.continentId };
    expect(answer(index, { qname: 'one.example', qtype: QTYPE.A }, de).geoUsed).toBe(false);
    const both = indexWith([makeZone({ domain: 'bound.example', bind_node: [3] }, [])], nodes);
    expect(answer(both, { qname: 'bound.example', qtype: QTYPE.A }, de).geoUsed).toBe(false);
  });
});
