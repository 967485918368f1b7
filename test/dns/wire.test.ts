// Our query parser and response writer, checked against dns2's codec as an independent reference.
import { describe, expect, it } from 'vitest';
import { answer } from '../../src/dns/engine/answer.ts';
import { fastKey, fastSubnetAddress } from '../../src/dns/chain/fast-key.ts';
import { QTYPE } from '../../src/dns/wire/constants.ts';
import { parseQuery, type Query } from '../../src/dns/wire/query.ts';
import { encodeResponse } from '../../src/dns/wire/response.ts';
import { fixtureZone, indexWith } from '../helpers/dns-fixture.ts';
import { decode, dns2Query, queryWithSubnet } from '../helpers/dns2-packets.ts';


function parsed(packet: Buffer): Query {
  const r = parseQuery(packet);
  if (r.kind !== 'query') throw new Error(`expected a query, got ${JSON.stringify(r)}`);
  return r.query;
}

const index = indexWith([fixtureZone()]);

function respond(name: string, type: number, edns = true): { buf: Buffer; decoded: any } {
  const packet = dns2Query(name, type, { rd: true, edns });
  const query = parsed(packet);
  const a = answer(index, { qname: query.qname, qtype: query.qtype }, {});
  const buf = encodeResponse({
    id: query.id,
    rd: query.rd,
    cd: query.cd,
    aa: a.aa,
    rcode: a.rcode,
    question: { packet, query },
    answer: a.answer,
    authority: a.authority,
    additional: a.additional,
    edns: query.edns && { dnssecOk: false },
  });
  return { buf, decoded: decode(buf) };
}

describe('query parser', () => {
  it('reads what dns2 writes: id, flags, name (lower-cased), type, EDNS and ECS', () => {
    const q = parsed(dns2Query('WwW.Example.ORG', QTYPE.MX, { id: 99, rd: true, ecs: '192.0.2.0/24' }));
    expect(q).toMatchObject({ id: 99, rd: true, qname: 'www.example.org', qtype: QTYPE.MX, qclass: 1 });
    expect(q.qnameWire.toString('latin1')).toContain('WwW');
    expect(q.edns).toMatchObject({ udpSize: 4096, version: 0, dnssecOk: false });
    expect(q.edns!.clientSubnet).toMatchObject({ family: 1, sourcePrefix: 24, scopePrefix: 0 });
    expect([...q.edns!.clientSubnet!.address]).toEqual([192, 0, 2]);
  });

  const header = (flags: number, qd: number, an = 0, ns = 0, ar = 0) => {
    const b = Buffer.alloc(12);
    b.writeUInt16BE(1, 0);
    b.writeUInt16BE(flags, 2);
    b.writeUInt16BE(qd, 4);
    b.writeUInt16BE(an, 6);
    b.writeUInt16BE(ns, 8);
    b.writeUInt16BE(ar, 10);
    return b;
  };
  const question = Buffer.from('03777777076578616d706c65036f726700 0001 0001'.replace(/ /g, ''), 'hex');
  const opt = (ttl: number, rdata = Buffer.alloc(0), name = Buffer.from([0])) => {
    const b = Buffer.alloc(10);
    b.writeUInt16BE(41, 0);
    b.writeUInt16BE(1232, 2);
    b.writeUInt32BE(ttl, 4);
    b.writeUInt16BE(rdata.length, 8);
    return Buffer.concat([name, b, rdata]);
  };
  const ecs = (family: number, source: number, address: number[]) => {
    const b = Buffer.alloc(8 + address.length);
    b.writeUInt16BE(8, 0);
    b.writeUInt16BE(4 + address.length, 2);
    b.writeUInt16BE(family, 4);
    b[6] = source;
    b[7] = 0;
    Buffer.from(address).copy(b, 8);
    return b;
  };

  const rdlenTooLong = () => {
    const b = opt(0);
    b.writeUInt16BE(50, 9);
    return b;
  };
  const cases: Array<[string, Buffer, string]> = [
    ['shorter than a header', Buffer.alloc(5), 'drop'],
    ['a response', Buffer.concat([header(0x8000, 1), question]), 'drop'],
    ['no question', header(0, 0), 'error:1'],
    ['two questions', Buffer.concat([header(0, 2), question, question]), 'error:1'],
    ['an unknown opcode', Buffer.concat([header(2 << 11, 1), question]), 'error:4'],
    ['a truncated question', Buffer.concat([header(0, 1), question.subarray(0, 10)]), 'error:1'],
    ['a label over 63', Buffer.concat([header(0, 1), Buffer.from([64]), Buffer.alloc(64, 0x61), Buffer.from([0, 0, 1, 0, 1])]), 'error:1'],
    ['a name over 255', Buffer.concat([header(0, 1), ...Array.from({ length: 5 }, () => Buffer.concat([Buffer.from([60]), Buffer.alloc(60, 0x61)])), Buffer.from([0, 0, 1, 0, 1])]), 'error:1'],
    ['a pointer in the question', Buffer.concat([header(0, 1), Buffer.from([0xc0, 12, 0, 1, 0, 1])]), 'error:1'],
    ['a pointer loop in an additional record', Buffer.concat([header(0, 1, 0, 0, 1), question, Buffer.from([0xc0, 33]), Buffer.alloc(10)]), 'error:1'],
    ['two OPT records', Buffer.concat([header(0, 1, 0, 0, 2), question, opt(0), opt(0)]), 'error:1'],
    ['an OPT not owned by the root', Buffer.concat([header(0, 1, 0, 0, 1), question, opt(0, Buffer.alloc(0), Buffer.from([1, 0x61, 0]))]), 'error:1'],
    ['an OPT whose option overruns it', Buffer.concat([header(0, 1, 0, 0, 1), question, opt(0, Buffer.from([0, 10, 0, 9, 1]))]), 'error:1'],
    ['RDATA past the end', Buffer.concat([header(0, 1, 0, 0, 1), question, rdlenTooLong()]), 'error:1'],
    ['ECS with an unknown family', Buffer.concat([header(0, 1, 0, 0, 1), question, opt(0, ecs(3, 8, [1]))]), 'error:1'],
    ['ECS with too many address octets', Buffer.concat([header(0, 1, 0, 0, 1), question, opt(0, ecs(1, 8, [192, 0]))]), 'error:1'],
    ['ECS with bits past the prefix', Buffer.concat([header(0, 1, 0, 0, 1), question, opt(0, ecs(1, 23, [192, 0, 3]))]), 'error:1'],
    ['ECS with an IPv4 prefix over 32', Buffer.concat([header(0, 1, 0, 0, 1), question, opt(0, ecs(1, 33, [1, 2, 3, 4, 5]))]), 'error:1'],
    ['a plain query', Buffer.concat([header(0x0100, 1), question]), 'query'],
    ['EDNS version 1 (answered BADVERS later)', Buffer.concat([header(0, 1, 0, 0, 1), question, opt(0x00010000)]), 'query'],
    ['ECS with source prefix 0', Buffer.concat([header(0, 1, 0, 0, 1), question, opt(0, ecs(1, 0, []))]), 'query'],
    ['an IPv6 /56 ECS', Buffer.concat([header(0, 1, 0, 0, 1), question, opt(0, ecs(2, 56, [0x20, 1, 0xd, 0xb8, 0, 0, 0]))]), 'query'],
  ];
  for (const [what, packet, expected] of cases) {
    it(`${what} → ${expected}`, () => {
      const r = parseQuery(packet);
      expect(r.kind === 'error' ? `error:${r.rcode}` : r.kind).toBe(expected);
    });
  }

  it('keeps an IPv6 /56 ECS exactly (7 address octets)', () => {
    const q = parsed(Buffer.concat([header(0, 1, 0, 0, 1), question, opt(0, ecs(2, 56, [0x20, 1, 0xd, 0xb8, 0, 0, 0x12]))]));
    expect(q.edns!.clientSubnet).toMatchObject({ family: 2, sourcePrefix: 56 });
    expect([...q.edns!.clientSubnet!.address]).toEqual([0x20, 1, 0xd, 0xb8, 0, 0, 0x12]);
  });
});

describe('response writer, decoded by dns2', () => {
  it('header: QR, AA, RD copied, RA off; the question echoed with its case', () => {
    const { decoded } = respond('wWw.ExAmPlE.oRg', QTYPE.A);
    expect(decoded.header).toMatchObject({ id: 4242, qr: 1, aa: 1, rd: 1, ra: 0, tc: 0, rcode: 0, qdcount: 1, ancount: 1 });
    expect(decoded.questions[0].name).toBe('wWw.ExAmPlE.oRg');
    expect(decoded.answers[0]).toMatchObject({ type: 1, ttl: 300, address: '192.0.2.1' });
  });

  it('MX with additional data, SRV uncompressed, SOA fields, OPT advertising 1232', () => {
    const mx = respond('example.org', QTYPE.MX).decoded;
    expect(mx.answers[0]).toMatchObject({ type: 15, priority: 10, exchange: 'mail.example.org' });
    expect(mx.additionals.find((r: any) => r.type === 1)).toMatchObject({ name: 'mail.example.org', address: '192.0.2.25' });
    const opt = mx.additionals.find((r: any) => r.type === 41);
    expect(opt).toMatchObject({ class: 1232, version: 0 });

    const srv = respond('_sip._tcp.example.org', QTYPE.SRV);
    expect(srv.decoded.answers[0]).toMatchObject({ priority: 10, weight: 5, port: 5060, target: 'sip.example.org' });
    // RFC 2782: the target is written out in full, never as a pointer.
    expect(srv.buf.includes(Buffer.from('\x03sip\x07example\x03org\x00', 'latin1'))).toBe(true);

    const soa = respond('example.org', QTYPE.SOA).decoded;
    expect(soa.answers[0]).toMatchObject({ primary: 'ns1.example.net', admin: 'hostmaster.example.org', refresh: 7200, retry: 900, expiration: 1209600, minimum: 300 });
  });

  it('NXDOMAIN carries the SOA in AUTHORITY; no OPT without EDNS in the query', () => {
    const { decoded } = respond('nope.example.org', QTYPE.A, false);
    expect(decoded.header.rcode).toBe(3);
    expect(decoded.authorities[0]).toMatchObject({ type: 6, ttl: 300 });
    expect(decoded.additionals).toEqual([]);
  });

  it('a CNAME chain decodes in order', () => {
    const { decoded } = respond('blog.example.org', QTYPE.A);
    expect(decoded.answers.map((r: any) => [r.name, r.type])).toEqual([
      ['blog.example.org', 5],
      ['www.example.org', 1],
    ]);
  });
});

describe('the cache key', () => {
  it('ignores letter case and the ID, and tells EDNS and DO apart', () => {
    const a = fastKey(dns2Query('WWW.example.org', 1, { id: 1 }))!;
    const b = fastKey(dns2Query('www.EXAMPLE.org', 1, { id: 2, rd: true }))!;
    expect(a.key).toBe(b.key);
    expect(fastKey(dns2Query('www.example.org', 1, { edns: true }))!.key).not.toBe(a.key);
    expect(fastKey(dns2Query('www.example.org', 28))!.key).not.toBe(a.key);
  });

  it('takes a well-formed Client Subnet out of the key and says where it is', () => {
    const packet = dns2Query('www.example.org', 1, { ecs: '192.0.2.0/24' });
    const fast = fastKey(packet)!;
    expect(fast.key).toBe(fastKey(dns2Query('www.example.org', 1, { edns: true }))!.key);
    expect(fast.ecs).toEqual({ at: packet.length - 7, length: 7, family: 1, sourcePrefix: 24 });
    expect(fastSubnetAddress(packet, fast.ecs!)).toBe('192.0.2.0');
    const six = queryWithSubnet('www.example.org', 1, 2, 56, [0x20, 0x01, 0x0d, 0xb8, 0x45, 0, 0]);
    expect(fastKey(six)!.ecs).toMatchObject({ family: 2, sourcePrefix: 56, length: 11 });
    expect(fastSubnetAddress(six, fastKey(six)!.ecs!)).toBe('2001:db8:4500::');
    expect(fastKey(queryWithSubnet('www.example.org', 1, 1, 0, []))!.ecs).toMatchObject({ sourcePrefix: 0, length: 4 });
  });

  it('leaves malformed Client Subnet options to the full parser (FORMERR)', () => {
    const base = dns2Query('www.example.org', 1, { ecs: '192.0.2.0/24' });
    const patched = (at: number, value: number) => {
      const copy = Buffer.from(base);
      copy[copy.length + at] = value;
      return copy;
    };
    expect(fastKey(patched(-6, 3))).toBeUndefined(); // family 3
    expect(fastKey(patched(-5, 33))).toBeUndefined(); // prefix longer than IPv4
    expect(fastKey(patched(-5, 16))).toBeUndefined(); // 3 address octets for a /16
    expect(fastKey(patched(-5, 20))).toBeUndefined(); // a bit set past a /20 (192.0.2.0)
    expect(fastKey(queryWithSubnet('www.example.org', 1, 2, 129, new Array(17).fill(0)))).toBeUndefined();
    // Two Client Subnet options.
    const twice = queryWithSubnet('www.example.org', 1, 1, 8, [10]);
    const doubled = Buffer.concat([twice, twice.subarray(twice.length - 9)]);
    doubled.writeUInt16BE(18, twice.length - 11);
    expect(fastKey(doubled)).toBeUndefined();
  });

  it('leaves unusual packets (several records, other opcodes) to the full parser', () => {
    const notify = dns2Query('www.example.org', 1);
    notify[2] = 4 << 3;
    expect(fastKey(notify)).toBeUndefined();
    expect(fastKey(Buffer.alloc(8))).toBeUndefined();
  });
});
