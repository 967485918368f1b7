// EDNS Client Subnet on the authoritative side (RFC 7871): echo on every answer to an ECS query,
// SCOPE 0 unless the answer depended on location, the subnet (not the resolver) locates the
// client, FORMERR for malformed options, and nothing added to queries without ECS.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClientLocation } from '../../src/dns/engine/types.ts';
import { subnetAddress } from '../../src/dns/wire/query.ts';
import { dig } from '../helpers/dig.ts';
import { fixtureZone, makeZone } from '../helpers/dns-fixture.ts';
import { startDns, type TestDns } from '../helpers/dns-server.ts';

const DE = 2921044;
const EUROPE = 6255148;
const US = 6252001;
const NORTH_AMERICA = 6255149;
const BR = 3469034;
const SOUTH_AMERICA = 6255150;

// A fixed table in place of the GeoIP database: these tests are about the ECS protocol; the real
// reader is exercised end to end in geo-serve.test and geo-default-serve.test.
function locate(address: string): ClientLocation {
  if (address.startsWith('192.0.2.')) return { country: DE, continent: EUROPE };
  if (address.startsWith('198.51.100.')) return { country: US, continent: NORTH_AMERICA };
  if (address.startsWith('2001:db8:')) return { country: BR, continent: SOUTH_AMERICA };
  return {};
}

let dns: TestDns;
beforeAll(async () => {
  dns = await startDns(
    [
      fixtureZone(),
      makeZone({ domain: 'geo.example' }, [
        { name: 'www', type: 1, value: '203.0.113.1' },
        { name: 'www', type: 1, value: '203.0.113.49', target: [DE] },
        { name: 'www', type: 1, value: '203.0.113.2', target: [NORTH_AMERICA] },
        { name: 'www', type: 1, value: '203.0.113.55', target: [SOUTH_AMERICA] },
      ]),
    ],
    { handler: { locate } },
  );
});
afterAll(() => dns.close());

const ecsOf = (r: Awaited<ReturnType<typeof dig>>) => r.edns?.options.find((o) => o.startsWith('CLIENT-SUBNET'));

describe('EDNS Client Subnet', () => {
  it('picks the variant by the subnet and answers SCOPE = source prefix', async () => {
    const de = await dig(dns.port, 'www.geo.example', 'A', ['+subnet=192.0.2.0/24']);
    expect(de.answer.map((r) => r.data)).toEqual(['203.0.113.49']);
    expect(ecsOf(de)).toBe('CLIENT-SUBNET: 192.0.2.0/24/24');
    const us = await dig(dns.port, 'www.geo.example', 'A', ['+subnet=198.51.100.0/24']);
    expect(us.answer.map((r) => r.data)).toEqual(['203.0.113.2']);
    const br = await dig(dns.port, 'www.geo.example', 'A', ['+subnet=2001:db8:1200::/56']);
    expect(br.answer.map((r) => r.data)).toEqual(['203.0.113.55']);
    expect(ecsOf(br)).toBe('CLIENT-SUBNET: 2001:db8:1200::/56/56');
    const nowhere = await dig(dns.port, 'www.geo.example', 'A', ['+subnet=203.0.113.0/24']);
    expect(nowhere.answer.map((r) => r.data)).toEqual(['203.0.113.1']);
  });

  it('echoes ECS with SCOPE 0 when location did not matter, NXDOMAIN and SOA included', async () => {
    for (const [name, type] of [
      ['mail.example.org', 'A'],
      ['nx.geo.example', 'A'],
      ['geo.example', 'SOA'],
    ] as const) {
      const r = await dig(dns.port, name, type, ['+subnet=192.0.2.0/24']);
      expect(ecsOf(r), `${name} ${type}`).toBe('CLIENT-SUBNET: 192.0.2.0/24/0');
    }
  });

  it('source prefix 0: answers from the resolver address with SCOPE 0', async () => {
    const r = await dig(dns.port, 'www.geo.example', 'A', ['+subnet=0.0.0.0/0']);
    expect(r.status).toBe('NOERROR');
    expect(r.answer.map((a) => a.data)).toEqual(['203.0.113.1']);
    expect(ecsOf(r)).toBe('CLIENT-SUBNET: 0.0.0.0/0/0');
  });

  it('malformed options are FORMERR', async () => {
    // unknown family; a bit set past a /23; four octets for a /24; a /33 for IPv4
    for (const option of ['0003080001', '00011700c00003', '00011800c0000201', '0001210001020304ff']) {
      const r = await dig(dns.port, 'www.geo.example', 'A', [`+ednsopt=8:${option}`]);
      expect(r.status, option).toBe('FORMERR');
    }
  });

  it('no ECS in the answer to a query without it', async () => {
    const r = await dig(dns.port, 'www.geo.example', 'A');
    expect(ecsOf(r)).toBeUndefined();
    expect(r.answer.map((a) => a.data)).toEqual(['203.0.113.1']);
  });

  it('turns the option address into text for the lookup', () => {
    expect(subnetAddress({ family: 1, sourcePrefix: 24, scopePrefix: 0, address: Uint8Array.from([192, 0, 2]) })).toBe('192.0.2.0');
    expect(subnetAddress({ family: 2, sourcePrefix: 56, scopePrefix: 0, address: Uint8Array.from([0x20, 1, 0xd, 0xb8, 0x12, 0, 0]) })).toBe('2001:db8:1200::');
    expect(subnetAddress({ family: 2, sourcePrefix: 0, scopePrefix: 0, address: new Uint8Array() })).toBe('::');
  });
});
