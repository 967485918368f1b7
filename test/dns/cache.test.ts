// The encoded-answer cache must be invisible: byte-identical to the engine's answer for every
// asker (ID, RD, CD, letter case patched), and never stale after a change.
import { describe, expect, it } from 'vitest';
import { QueryHandler } from '../../src/dns/server/handler.ts';
import { DnsMetrics } from '../../src/dns/metrics/dns-metrics.ts';
import { fixtureZone, indexWith, makeZone } from '../helpers/dns-fixture.ts';
import { decode, dns2Query, queryWithSubnet } from '../helpers/dns2-packets.ts';

const client = { address: '127.0.0.1' };

function query(name: string, type: number, opts: { id: number; rd?: boolean; cd?: boolean; edns?: boolean; do?: boolean; size?: number }): Buffer {
  const buf = dns2Query(name, type, { id: opts.id, rd: opts.rd, cd: opts.cd });
  if (!opts.edns) return buf;
  // Our own OPT, so the test controls the UDP size and the DO bit.
  const opt = Buffer.from([0, 0, 41, 0, 0, 0, 0, opts.do ? 0x80 : 0, 0, 0, 0]);
  opt.writeUInt16BE(opts.size ?? 1232, 3);
  const out = Buffer.concat([buf, opt]);
  out.writeUInt16BE(1, 10);
  return out;
}

const mixCase = (name: string, i: number) => [...name].map((c, j) => ((i >> j % 8) & 1 ? c.toUpperCase() : c)).join('');

describe('answer cache', () => {
  it('answers byte for byte what the engine answers, for every asker', () => {
    const zones = [fixtureZone(), makeZone({ domain: 'big.example' }, Array.from({ length: 60 }, (_, i) => ({ name: 'many', type: 1, value: `192.0.2.${i + 1}` })))];
    const cached = new QueryHandler(indexWith(zones), new DnsMetrics(), { cache: true });
    const uncached = new QueryHandler(indexWith(zones), new DnsMetrics(), { cache: false });
    const questions: Array<[string, number]> = [
      ['www.example.org', 1],
      ['example.org', 15],
      ['nx.example.org', 1],
      ['blog.example.org', 1],
      ['x.sub.example.org', 1],
      ['many.big.example', 1],
      ['www.example.com', 1],
      ['example.org', 255],
    ];
    let i = 0;
    for (const [name, type] of questions) {
      for (let round = 0; round < 12; round++, i++) {
        const opts = { id: (i * 7919) & 0xffff, rd: round % 2 === 0, cd: round % 3 === 0, edns: round % 4 !== 0, do: round % 5 === 0, size: round % 6 === 0 ? 512 : 1232 };
        const packet = query(mixCase(name, i), type, opts);
        for (const transport of ['udp', 'tcp'] as const) {
          const a = cached.handle(packet, transport, client)!;
          const b = uncached.handle(packet, transport, client)!;
          expect(a.equals(b), `${name} ${type} ${JSON.stringify(opts)} ${transport}`).toBe(true);
        }
      }
    }
    const metrics = (cached as unknown as { metrics: DnsMetrics }).metrics;
    expect(metrics.cacheHits).toBeGreaterThan(150);
  });

  it('never serves an answer from before a change', () => {
    const index = indexWith([fixtureZone()]);
    const handler = new QueryHandler(index, new DnsMetrics());
    const ask = (name: string) => decode(handler.handle(query(name, 1, { id: 1 }), 'udp', client)!);
    expect(ask('www.example.org').answers[0].address).toBe('192.0.2.1');
    expect(ask('www.example.org').answers[0].address).toBe('192.0.2.1');
    const zone = fixtureZone();
    zone.records = zone.records.map((r) => (r.name === 'www' && r.value === '192.0.2.1' ? { ...r, value: '192.0.2.99' } : r));
    index.putZone(zone);
    expect(ask('www.example.org').answers[0].address).toBe('192.0.2.99');

    // A zone appearing turns a cached REFUSED into an answer.
    expect(ask('www.example.net').header.rcode).toBe(5);
    index.putZone(makeZone({ domain: 'example.net' }, [{ name: 'www', type: 1, value: '192.0.2.7' }]));
    expect(ask('www.example.net').answers[0].address).toBe('192.0.2.7');
    index.deleteZone('example.net');
    expect(ask('www.example.net').header.rcode).toBe(5);
  });
});

describe('answer cache for geo names', () => {
  it('keeps one answer per client place, and never gives one place another’s answer', () => {
    const DE = { country: 2921044, continent: 6255148 };
    const US = { country: 6252001, continent: 6255149 };
    const zone = makeZone({ domain: 'geo.example' }, [
      { name: 'www', type: 1, value: '192.0.2.1' },
      { name: 'www', type: 1, value: '192.0.2.49', target: [DE.country] },
      { name: 'www', type: 1, value: '192.0.2.2', target: [US.continent] },
    ]);
    const metrics = new DnsMetrics();
    const places: Record<string, { country?: number; continent?: number }> = { '127.0.0.2': DE, '127.0.0.3': US };
    const handler = new QueryHandler(indexWith([zone]), metrics, { locate: (address) => places[address] ?? {} });
    const ask = (address: string, id: number) =>
      decode(handler.handle(query('www.geo.example', 1, { id }), 'udp', { address })!).answers.map((a: { address: string }) => a.address);
    for (let round = 0; round < 3; round++) {
      expect(ask('127.0.0.2', round)).toEqual(['192.0.2.49']);
      expect(ask('127.0.0.3', round)).toEqual(['192.0.2.2']);
      expect(ask('127.0.0.9', round)).toEqual(['192.0.2.1']);
    }
    expect(metrics.cacheHits).toBe(6);
  });
});

describe('answer cache for ECS queries', () => {
  it('echoes each asker’s subnet onto the cached answer, byte for byte what the engine answers', () => {
    const DE = { country: 2921044, continent: 6255148, prefix: 24 };
    const BR = { country: 3469034, continent: 6255150, prefix: 32 };
    const locate = (address: string) => (address.startsWith('192.0.2.') ? DE : address.startsWith('2001:db8:') ? BR : {});
    const zones = [
      fixtureZone(),
      makeZone({ domain: 'geo.example' }, [
        { name: 'www', type: 1, value: '203.0.113.1' },
        { name: 'www', type: 1, value: '203.0.113.49', target: [DE.country] },
        { name: 'www', type: 1, value: '203.0.113.55', target: [BR.continent] },
      ]),
      makeZone({ domain: 'big.example' }, Array.from({ length: 60 }, (_, i) => ({ name: 'many', type: 1, value: `192.0.2.${i + 1}` }))),
    ];
    const metrics = new DnsMetrics();
    const cached = new QueryHandler(indexWith(zones), metrics, { cache: true, locate });
    const uncached = new QueryHandler(indexWith(zones), new DnsMetrics(), { cache: false, locate });
    const subnets: Array<[1 | 2, number, number[]]> = [
      [1, 24, [192, 0, 2]],
      [1, 24, [198, 51, 100]],
      [1, 0, []],
      [1, 20, [192, 0, 0]],
      [2, 56, [0x20, 0x01, 0x0d, 0xb8, 0x45, 0, 0]],
      [2, 48, [0x20, 0x01, 0x0d, 0xb9, 0, 0]],
    ];
    const questions: Array<[string, number]> = [
      ['www.geo.example', 1],
      ['www.example.org', 1],
      ['nx.example.org', 1],
      ['many.big.example', 1],
      ['example.org', 15],
    ];
    const sources = ['127.0.0.1', '192.0.2.77'];
    let i = 0;
    for (let round = 0; round < 3; round++) {
      for (const [name, type] of questions) {
        for (const [family, prefix, address] of subnets) {
          for (const source of sources) {
            const packet = queryWithSubnet(mixCase(name, i), type, family, prefix, address);
            packet.writeUInt16BE((i++ * 7919) & 0xffff, 0);
            if (round === 2) packet.writeUInt16BE(512, packet.length - 16 - address.length); // a 512-octet client (the OPT's CLASS)
            for (const transport of ['udp', 'tcp'] as const) {
              const a = cached.handle(packet, transport, { address: source })!;
              const b = uncached.handle(packet, transport, { address: source })!;
              expect(a.equals(b), `${name} ${type} ${family}/${prefix} from ${source} round ${round} ${transport}`).toBe(true);
            }
          }
        }
      }
    }
    expect(metrics.cacheHits).toBeGreaterThan(250);
  });
});
