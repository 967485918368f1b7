// End to end through the real `dig`, over real UDP and TCP sockets.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dig } from '../helpers/dig.ts';
import { fixtureZone, makeZone } from '../helpers/dns-fixture.ts';
import { decode, dns2Query } from '../helpers/dns2-packets.ts';
import { startDns, udpExchange, type TestDns } from '../helpers/dns-server.ts';

let dns: TestDns;
let port: number;

beforeAll(async () => {
  dns = await startDns([
    fixtureZone(),
    makeZone({ domain: 'big.example' }, [
      ...Array.from({ length: 40 }, (_, i) => ({ name: 'many', type: 1, value: `192.0.2.${i + 1}` })),
      ...Array.from({ length: 100 }, (_, i) => ({ name: 'lots', type: 1, value: `198.51.100.${i + 1}` })),
      { name: 'long', type: 6, value: `${'a'.repeat(255)}${'b'.repeat(255)}ccc` },
    ]),
  ]);
  port = dns.port;
});
afterAll(() => dns.close());

describe('header and question', () => {
  it('QR, AA; RD copied; RA never set', async () => {
    const norec = await dig(port, 'www.example.org');
    expect(norec.flags).toEqual(['qr', 'aa']);
    const rec = await dig(port, 'www.example.org', 'A', ['+rec']);
    expect(rec.flags).toEqual(['qr', 'aa', 'rd']);
  });

  it('echoes the question’s letter case and matches case-insensitively', async () => {
    const r = await dig(port, 'wWw.ExAmPlE.oRg', 'A');
    expect(r.question).toMatch(/^wWw\.ExAmPlE\.oRg\.\s+IN\s+A$/);
    expect(r.answer).toEqual([{ name: 'wWw.ExAmPlE.oRg.', ttl: 300, type: 'A', data: '192.0.2.1' }]);
  });

  it('non-IN classes are REFUSED', async () => {
    const r = await dig(port, 'version.bind', 'TXT', ['-c', 'CH']);
    expect(r.status).toBe('REFUSED');
  });

  it('unknown opcodes get NOTIMP with the opcode and question echoed', async () => {
    const response = decode((await udpExchange(port, dns2Query('www.example.org', 1, { id: 321, opcode: 2 })))!);
    expect(response.header).toMatchObject({ id: 321, qr: 1, opcode: 2, rcode: 4, qdcount: 1 });
  });

  it('QDCOUNT 0 gets FORMERR', async () => {
    const raw = Buffer.from('abcd00000000000000000000', 'hex');
    const response = decode((await udpExchange(port, raw))!);
    expect(response.header).toMatchObject({ id: 0xabcd, qr: 1, rcode: 1 });
  });
});

describe('answers', () => {
  it('NXDOMAIN and NODATA carry the SOA at TTL 300 = min(3600, 300)', async () => {
    const nx = await dig(port, 'nope.example.org');
    expect(nx.status).toBe('NXDOMAIN');
    expect(nx.flags).toContain('aa');
    expect(nx.authority).toEqual([expect.objectContaining({ name: 'example.org.', ttl: 300, type: 'SOA' })]);
    const nodata = await dig(port, 'www.example.org', 'MX');
    expect(nodata.status).toBe('NOERROR');
    expect(nodata.answer).toEqual([]);
    expect(nodata.authority[0]!.type).toBe('SOA');
    const ent = await dig(port, 'b.example.org');
    expect([ent.status, ent.answer.length]).toEqual(['NOERROR', 0]);
    const unknown = await dig(port, 'www.example.org', 'TYPE65535');
    expect([unknown.status, unknown.answer.length, unknown.authority[0]!.type]).toEqual(['NOERROR', 0, 'SOA']);
  });

  it('chases a CNAME in the zone and adds MX/SRV target addresses', async () => {
    const cname = await dig(port, 'blog.example.org');
    expect(cname.answer.map((r) => `${r.name} ${r.type} ${r.data}`)).toEqual(['blog.example.org. CNAME www.example.org.', 'www.example.org. A 192.0.2.1']);
    const mx = await dig(port, 'example.org', 'MX');
    expect(mx.additional).toEqual([expect.objectContaining({ name: 'mail.example.org.', type: 'A', data: '192.0.2.25' })]);
  });

  it('refers below a delegation with AA=0 and glue', async () => {
    const r = await dig(port, 'host.sub.example.org');
    expect(r.flags).not.toContain('aa');
    expect(r.answer).toEqual([]);
    expect(r.authority).toEqual([expect.objectContaining({ name: 'sub.example.org.', type: 'NS', data: 'ns1.sub.example.org.' })]);
    expect(r.additional).toEqual([expect.objectContaining({ name: 'ns1.sub.example.org.', type: 'A', data: '192.0.2.53' })]);
  });

  it('REFUSED, without AA, outside our zones', async () => {
    const r = await dig(port, 'www.example.com');
    expect(r.status).toBe('REFUSED');
    expect(r.flags).not.toContain('aa');
  });

  it('ANY gets a small RFC 8482 answer over UDP and TCP', async () => {
    for (const opts of [[], ['+tcp']]) {
      const r = await dig(port, 'example.org', 'ANY', opts);
      expect(r.status).toBe('NOERROR');
      expect(r.answer).toEqual([{ name: 'example.org.', ttl: 3600, type: 'HINFO', data: '"RFC8482" ""' }]);
      expect(Number(/MSG SIZE\s+rcvd: (\d+)/.exec(r.raw)![1])).toBeLessThan(512);
    }
  });

  it('TXT over 255 octets arrives as several character-strings', async () => {
    const r = await dig(port, 'long.big.example', 'TXT');
    expect(r.answer[0]!.data).toBe(`"${'a'.repeat(255)}" "${'b'.repeat(255)}" "ccc"`);
  });
});

describe('EDNS (RFC 6891)', () => {
  it('exactly one OPT when the query had one, advertising 1232; none otherwise', async () => {
    const withOpt = await dig(port, 'www.example.org');
    expect(withOpt.edns).toMatchObject({ version: 0, udp: 1232 });
    expect(withOpt.raw.match(/OPT PSEUDOSECTION/g)).toHaveLength(1);
    const without = await dig(port, 'www.example.org', 'A', ['+noedns']);
    expect(without.edns).toBeUndefined();
  });

  it('BADVERS for version 1, with an OPT of version 0 and no answer', async () => {
    const r = await dig(port, 'www.example.org', 'A', ['+edns=1', '+noednsnegotiation']);
    expect(r.status).toBe('BADVERS');
    expect(r.edns?.version).toBe(0);
    expect(r.answer).toEqual([]);
    expect(r.flags).not.toContain('aa');
  });

  it('echoes DO; ignores and does not echo unknown options and cookies', async () => {
    const r = await dig(port, 'www.example.org', 'A', ['+dnssec', '+ednsopt=65001:abcd', '+cookie']);
    expect(r.status).toBe('NOERROR');
    expect(r.edns?.flags).toEqual(['do']);
    expect(r.edns?.options).toEqual([]);
    expect(r.answer).toHaveLength(1);
  });
});

describe('truncation and TCP', () => {
  it('over 512 octets without EDNS: TC=1, no partial RRset; TCP gets all 40 records', async () => {
    const udp = await dig(port, 'many.big.example', 'A', ['+noedns', '+ignore']);
    expect(udp.flags).toContain('tc');
    expect(udp.answer).toEqual([]);
    const tcp = await dig(port, 'many.big.example', 'A', ['+noedns', '+tcp']);
    expect(tcp.flags).not.toContain('tc');
    expect(tcp.answer).toHaveLength(40);
  });

  it('a client buffer of 512 with DO: TC=1 and the OPT kept', async () => {
    const r = await dig(port, 'many.big.example', 'A', ['+bufsize=512', '+dnssec', '+ignore']);
    expect(r.flags).toContain('tc');
    expect(r.edns?.flags).toEqual(['do']);
    const fits = await dig(port, 'many.big.example', 'A', ['+bufsize=1232']);
    expect(fits.flags).not.toContain('tc');
    expect(fits.answer).toHaveLength(40);
  });

  it('a client buffer below 512 counts as 512; above 1232 is capped at 1232', async () => {
    const small = await dig(port, 'www.example.org', 'A', ['+bufsize=100']);
    expect(small.answer).toHaveLength(1);
    // 100 A records need ~1.7 KB: more than our 1232 even for a client offering 4096.
    const huge = await dig(port, 'lots.big.example', 'A', ['+bufsize=4096', '+ignore']);
    expect(huge.flags).toContain('tc');
    expect(Number(/MSG SIZE\s+rcvd: (\d+)/.exec(huge.raw)![1])).toBeLessThanOrEqual(1232);
    expect((await dig(port, 'lots.big.example', 'A', ['+tcp'])).answer).toHaveLength(100);
  });
});
