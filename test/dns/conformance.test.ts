// The last protocol gaps, each as an engine test and a dig test: an OPT in every reply to a query
// that had one (FORMERR, NOTIMP and REFUSED included), a CNAME into a delegated part followed by
// the referral, referrals with every in-zone address of the delegated name servers, null MX,
// negative caching from 30 s, and TXT values as several character-strings.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answer } from '../../src/dns/engine/answer.ts';
import { QTYPE, RCODE } from '../../src/dns/wire/constants.ts';
import { canonicalRecordValue } from '../../src/model/record-values.ts';
import { checkRecordInZone } from '../../src/model/record.ts';
import { parseQuotedTxt } from '../../src/model/txt-strings.ts';
import { dig } from '../helpers/dig.ts';
import { addressOf, indexWith, makeZone } from '../helpers/dns-fixture.ts';
import { startDns, type TestDns } from '../helpers/dns-server.ts';

const zone = makeZone({ domain: 'conf.example', enabled: false }, [
  { name: 'sub', type: 5, value: 'ns1.sub.conf.example' },
  { name: 'sub', type: 5, value: 'ns.beside.conf.example' },
  { name: 'sub', type: 5, value: 'ns.elsewhere.example.net' },
  { name: 'ns1.sub', type: 1, value: '192.0.2.53' },
  { name: 'ns.beside', type: 1, value: '192.0.2.54' },
  { name: 'ns.beside', type: 2, value: '2001:db8::54' },
  { name: 'alias', type: 3, value: 'host.sub.conf.example' },
  { name: 'nomail', type: 4, value: '.', priority: 0 },
  { name: 'spf', type: 6, value: '"v=spf1 ip4:192.0.2.0/24" "include:_spf.example.net -all"' },
  { name: 'esc', type: 6, value: '"say \\"hi\\"" "back\\\\slash" "\\065\\066"' },
  { name: '@', type: 7, value: 'hostmaster.conf.example 7200 1800 1209600 60' },
]);
const index = indexWith([zone]);
let dns: TestDns;

beforeAll(async () => {
  dns = await startDns([zone]);
});
afterAll(() => dns.close());

describe('OPT in every reply to a query with one (RFC 6891 §6.1.1)', () => {
  it.each([
    ['NOTIMP (opcode STATUS)', ['+opcode=status'], 'NOTIMP'],
    ['FORMERR (no question: +header-only)', ['+header-only'], 'FORMERR'],
    ['REFUSED (outside our zones)', [], 'REFUSED'],
    ['REFUSED (class CH)', ['CH'], 'REFUSED'],
  ])('%s', async (_label, options, status) => {
    const name = status === 'REFUSED' && options.length === 0 ? 'elsewhere.example.org' : 'conf.example';
    const r = await dig(dns.port, name, 'SOA', options);
    expect(r.status).toBe(status);
    expect(r.raw.match(/OPT PSEUDOSECTION/g), r.raw).toHaveLength(1);
    // And none when the query had none.
    const plain = await dig(dns.port, name, 'SOA', [...options, '+noedns']);
    expect(plain.raw).not.toContain('OPT PSEUDOSECTION');
  });
});

describe('CNAME into a delegated part, and referral addresses', () => {
  it('engine: the CNAME, then the referral with every in-zone address of the delegated name servers', () => {
    const result = answer(index, { qname: 'alias.conf.example', qtype: QTYPE.A }, {});
    expect(result.rcode).toBe(RCODE.NOERROR);
    expect(result.aa).toBe(true);
    expect(result.answer.map((s) => [s.name, s.type])).toEqual([['alias.conf.example', QTYPE.CNAME]]);
    expect(result.authority.map((s) => [s.name, s.type])).toEqual([['sub.conf.example', QTYPE.NS]]);
    expect(result.additional.flatMap((s) => s.rdata.map((r) => `${s.name} ${addressOf(r)}`)).sort()).toEqual(
      ['ns.beside.conf.example 192.0.2.54', 'ns.beside.conf.example 32,1,13,184,0,0,0,0,0,0,0,0,0,0,0,84', 'ns1.sub.conf.example 192.0.2.53'].sort(),
    );
    const referral = answer(index, { qname: 'www.sub.conf.example', qtype: QTYPE.A }, {});
    expect(referral.aa).toBe(false);
    expect(referral.additional.map((s) => s.name).sort()).toEqual(['ns.beside.conf.example', 'ns.beside.conf.example', 'ns1.sub.conf.example']);
  });

  it('dig: the same on the wire', async () => {
    const r = await dig(dns.port, 'alias.conf.example', 'A');
    expect(r.flags).toContain('aa');
    expect(r.answer.map((a) => `${a.type} ${a.data}`)).toEqual(['CNAME host.sub.conf.example.']);
    expect(r.authority.map((a) => `${a.name} ${a.type}`)).toEqual(['sub.conf.example. NS', 'sub.conf.example. NS', 'sub.conf.example. NS']);
    expect(r.additional.map((a) => `${a.name} ${a.data}`).sort()).toEqual(['ns.beside.conf.example. 192.0.2.54', 'ns.beside.conf.example. 2001:db8::54', 'ns1.sub.conf.example. 192.0.2.53']);
  });
});

describe('record values', () => {
  it('null MX (RFC 7505) is accepted, served as "0 .", and must be the only MX at its name', async () => {
    expect(canonicalRecordValue(4, '.', 'conf.example')).toEqual({ ok: true, value: '.' });
    const r = await dig(dns.port, 'nomail.conf.example', 'MX');
    expect(r.answer.map((a) => a.data)).toEqual(['0 .']);
    const nullMx = zone.records.find((x) => x.name === 'nomail')!;
    expect(checkRecordInZone({ ...nullMx, id: 99, value: 'mx.example.net', priority: 10 }, [nullMx])).toEqual([expect.objectContaining({ field: 'value' })]);
  });

  it('SOA minimum from 30 s: NXDOMAIN carries the SOA at min(TTL, MINIMUM) = 60', async () => {
    expect(canonicalRecordValue(7, 'h.conf.example 7200 1800 1209600 30', 'conf.example').ok).toBe(true);
    expect(canonicalRecordValue(7, 'h.conf.example 7200 1800 1209600 29', 'conf.example').ok).toBe(false);
    const r = await dig(dns.port, 'nothing.conf.example', 'A');
    expect(r.status).toBe('NXDOMAIN');
    expect(r.authority[0]).toMatchObject({ type: 'SOA', ttl: 60 });
  });

  it('TXT in zone-file form is served as exactly its character-strings; escapes \\" \\\\ \\DDD', async () => {
    expect((await dig(dns.port, 'spf.conf.example', 'TXT')).answer[0]!.data).toBe('"v=spf1 ip4:192.0.2.0/24" "include:_spf.example.net -all"');
    expect((await dig(dns.port, 'esc.conf.example', 'TXT')).answer[0]!.data).toBe('"say \\"hi\\"" "back\\\\slash" "AB"');
    const parsed = parseQuotedTxt('"a\\"b"   "\\255x" "ü"');
    expect(parsed.ok && parsed.strings.map((s) => [...s])).toEqual([[97, 34, 98], [255, 120], [0xc3, 0xbc]]);
    expect(parsed.ok && parsed.canonical).toBe('"a\\"b" "\\255x" "ü"');
    expect(parseQuotedTxt(`"${'x'.repeat(256)}"`)).toMatchObject({ ok: false, message: expect.stringContaining('at most 255') });
    expect(parseQuotedTxt('"open')).toMatchObject({ ok: false });
    expect(parseQuotedTxt('"a"b')).toMatchObject({ ok: false });
    expect(parseQuotedTxt('"\\256"')).toMatchObject({ ok: false });
    // Plain values keep their meaning: split every 255 octets.
    const plain = 'p'.repeat(300);
    const r = await dig(dns.port, 'conf.example', 'TXT');
    expect(r.status).toBe('NOERROR');
    expect(canonicalRecordValue(6, plain, 'conf.example')).toEqual({ ok: true, value: plain });
  });
});
