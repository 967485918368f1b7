// The answer engine, without sockets: RFC 1034 lookup, negative answers, CNAMEs, wildcards,
// delegations, additional data, ANY, REFUSED.
import { describe, expect, it } from 'vitest';
import { answer } from '../../../src/dns/engine/answer.ts';
import type { Answer } from '../../../src/dns/engine/types.ts';
import { QTYPE, RCODE } from '../../../src/dns/wire/constants.ts';
import type { RRset } from '../../../src/dns/zone/types.ts';
import { addressOf, fixtureZone, indexWith, makeZone } from '../../helpers/dns-fixture.ts';

const index = indexWith([
  fixtureZone(),
  makeZone({ domain: 'example.net', enabled: false, backend: '198.51.100.7' }, [
    { name: 'alias', type: 3, value: 'www.example.org' },
    { name: 'dangling', type: 3, value: 'nothing.example.org' },
    { name: 'out', type: 3, value: 'elsewhere.example.com' },
    { name: 'loop1', type: 3, value: 'loop2.example.net' },
    { name: 'loop2', type: 3, value: 'loop1.example.net' },
    { name: 'hop1', type: 3, value: 'hop2.example.net' },
    { name: 'hop2', type: 3, value: 'mail.example.org' },
    { name: 'long', type: 6, value: 'x'.repeat(600) },
  ]),
]);

const ask = (qname: string, qtype: number): Answer => answer(index, { qname, qtype }, {});
const show = (sets: RRset[]) =>
  sets.flatMap((s) => s.rdata.map((r) => `${s.name} ${s.ttl} ${s.type} ${r.type === 1 || r.type === 28 ? JSON.stringify({ type: r.type, address: addressOf(r) }) : JSON.stringify(r)}`));
const names = (sets: RRset[]) => sets.map((s) => `${s.name}/${s.type}`);

describe('positive answers', () => {
  it('answers an owner and type, authoritatively', () => {
    const a = ask('www.example.org', QTYPE.A);
    expect(a.rcode).toBe(RCODE.NOERROR);
    expect(a.aa).toBe(true);
    expect(names(a.answer)).toEqual(['www.example.org/1']);
    expect(a.answer[0]!.rdata).toHaveLength(1);
  });

  it('adds in-zone addresses of MX exchanges and SRV targets', () => {
    const mx = ask('example.org', QTYPE.MX);
    expect(names(mx.answer)).toEqual(['example.org/15']);
    expect(names(mx.additional)).toEqual(['mail.example.org/1']);
    const srv = ask('_sip._tcp.example.org', QTYPE.SRV);
    expect(names(srv.additional)).toEqual(['sip.example.org/1']);
  });

  it('serves the apex NS and SOA the service adds', () => {
    const ns = ask('example.org', QTYPE.NS);
    expect(ns.answer[0]!.rdata.map((r) => (r as { target: string }).target)).toEqual(['ns1.example.net', 'ns2.example.net']);
    const soa = ask('example.org', QTYPE.SOA).answer[0]!;
    expect(soa.ttl).toBe(3600);
    expect(soa.rdata[0]).toMatchObject({ mname: 'ns1.example.net', rname: 'hostmaster.example.org', refresh: 7200, retry: 900, expire: 1209600, minimum: 300 });
  });
});

describe('negative answers (RFC 2308, RFC 8020)', () => {
  it('NXDOMAIN with the SOA at TTL min(SOA TTL, MINIMUM)', () => {
    const a = ask('nx.example.org', QTYPE.A);
    expect(a.rcode).toBe(RCODE.NXDOMAIN);
    expect(a.aa).toBe(true);
    expect(a.answer).toEqual([]);
    expect(names(a.authority)).toEqual(['example.org/6']);
    expect(a.authority[0]!.ttl).toBe(300);
  });

  it('NODATA for a type the name lacks, and for unknown types', () => {
    for (const qtype of [QTYPE.MX, 65535, 1000]) {
      const a = ask('www.example.org', qtype);
      expect(a.rcode).toBe(RCODE.NOERROR);
      expect(a.answer).toEqual([]);
      expect(names(a.authority)).toEqual(['example.org/6']);
    }
  });

  it('an empty non-terminal is NODATA, a name below a terminal is NXDOMAIN', () => {
    expect(ask('b.example.org', QTYPE.A)).toMatchObject({ rcode: RCODE.NOERROR, answer: [] });
    expect(ask('x.y.www.example.org', QTYPE.A).rcode).toBe(RCODE.NXDOMAIN);
  });
});

describe('CNAME', () => {
  it('chases a chain within our zones, across zones', () => {
    const a = ask('hop1.example.net', QTYPE.A);
    expect(names(a.answer)).toEqual(['hop1.example.net/5', 'hop2.example.net/5', 'mail.example.org/1']);
    expect(a.rcode).toBe(RCODE.NOERROR);
  });

  it('stops at an external target', () => {
    const a = ask('out.example.net', QTYPE.A);
    expect(names(a.answer)).toEqual(['out.example.net/5']);
    expect(a.authority).toEqual([]);
  });

  it('keeps NXDOMAIN when the chain ends nowhere (RFC 6604)', () => {
    const a = ask('dangling.example.net', QTYPE.A);
    expect(a.rcode).toBe(RCODE.NXDOMAIN);
    expect(names(a.answer)).toEqual(['dangling.example.net/5']);
    expect(names(a.authority)).toEqual(['example.org/6']);
  });

  it('terminates loops', () => {
    const a = ask('loop1.example.net', QTYPE.A);
    expect(names(a.answer)).toEqual(['loop1.example.net/5', 'loop2.example.net/5']);
  });

  it('answers the CNAME itself for qtype CNAME, without chasing', () => {
    expect(names(ask('alias.example.net', QTYPE.CNAME).answer)).toEqual(['alias.example.net/5']);
  });
});

describe('wildcards (RFC 4592)', () => {
  it('synthesise with the query name as owner', () => {
    const a = ask('anything.dev.example.org', QTYPE.A);
    expect(names(a.answer)).toEqual(['anything.dev.example.org/1']);
    expect(ask('deep.er.dev.example.org', QTYPE.A).answer).toHaveLength(1);
  });

  it('give NODATA for a type the wildcard lacks', () => {
    expect(ask('anything.dev.example.org', QTYPE.MX)).toMatchObject({ rcode: RCODE.NOERROR, answer: [] });
  });

  it('do not apply to the wildcard’s own parent (an ENT) or to other branches', () => {
    expect(ask('dev.example.org', QTYPE.A)).toMatchObject({ rcode: RCODE.NOERROR, answer: [] });
    expect(ask('x.other.example.org', QTYPE.A).rcode).toBe(RCODE.NXDOMAIN);
  });
});

describe('delegation (NS below the apex)', () => {
  it('refers with AA=0, NS in AUTHORITY and glue in ADDITIONAL, at and below the cut', () => {
    for (const qname of ['sub.example.org', 'www.sub.example.org', 'ns1.sub.example.org']) {
      const a = ask(qname, QTYPE.A);
      expect(a.aa).toBe(false);
      expect(a.rcode).toBe(RCODE.NOERROR);
      expect(a.answer).toEqual([]);
      expect(names(a.authority)).toEqual(['sub.example.org/2']);
      expect(show(a.additional)).toEqual(['ns1.sub.example.org 300 1 {"type":1,"address":"192.0.2.53"}']);
    }
  });

  it('answers DS at the cut from the parent side', () => {
    const a = ask('sub.example.org', QTYPE.DS);
    expect(a.aa).toBe(true);
    expect(names(a.authority)).toEqual(['example.org/6']);
  });
});

describe('ANY, REFUSED, long TXT', () => {
  it('ANY gets one synthesised HINFO (RFC 8482)', () => {
    const a = ask('www.example.org', QTYPE.ANY);
    expect(show(a.answer)).toEqual(['www.example.org 3600 13 {"type":13,"cpu":"RFC8482","os":""}']);
    expect(ask('nx.example.org', QTYPE.ANY).rcode).toBe(RCODE.NXDOMAIN);
  });

  it('names outside every served zone are REFUSED without AA', () => {
    const a = ask('www.example.com', QTYPE.A);
    expect(a).toMatchObject({ rcode: RCODE.REFUSED, aa: false, answer: [], authority: [] });
  });

  it('TXT over 255 octets is split into character-strings', () => {
    const txt = ask('long.example.net', QTYPE.TXT).answer[0]!.rdata[0] as { strings: Buffer[] };
    expect(txt.strings.map((s) => s.length)).toEqual([255, 255, 90]);
  });
});
