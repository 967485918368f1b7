// The transfer responder and TSIG on hostile and edge input, in-process: every check that stands
// between a stranger and a zone's contents, and malformed TSIG records.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { TransferResponder } from '../../../src/dns/transfer/responder.ts';
import { Secondaries } from '../../../src/dns/transfer/secondaries.ts';
import { findTsig, nameWire, parseTsigKey, sign, TSIG_ERROR, verifyRequest, verifyResponse, type TsigKey } from '../../../src/dns/transfer/tsig.ts';
import { skipName } from '../../../src/dns/wire/query.ts';
import { decode, dns2Query } from '../../helpers/dns2-packets.ts';
import { fixtureZone, indexWith, makeZone } from '../../helpers/dns-fixture.ts';

const secret = randomBytes(32).toString('base64');
const key = parseTsigKey(`hmac-sha256:xfr:${secret}`) as TsigKey;
const otherKey = parseTsigKey(`hmac-sha256:xfr:${randomBytes(32).toString('base64')}`) as TsigKey;
const NOW = 1_800_000_000;
const zone = fixtureZone();
const apex = zone.domain.domain;
const index = indexWith([zone]);
const secondaries = Secondaries.of([{ name: 'knot', addresses: ['127.0.0.1', '2001:db8::53'], port: 53, tsigKey: `hmac-sha256:xfr:${secret}`, zones: [], catalog: true }]);
const responder = new TransferResponder({ secondaries, index, catalog: 'catalog.test', catalogSerial: () => 7, now: () => NOW });
const plain = () => Buffer.from('plain');

const AXFR = 252;
const IXFR = 251;
const rcode = (m: Buffer) => m[3]! & 0xf;
const answer = (packet: Buffer, transport: 'udp' | 'tcp' = 'tcp', client = '127.0.0.1') => {
  expect(responder.wants(packet)).toBe(true);
  return responder.answer(packet, transport, client, plain)!;
};
const signed = (packet: Buffer, k: TsigKey = key, now = NOW) => sign(packet, k, now).message;
const tsigError = (m: Buffer) => findTsig(m)!.error;

describe('zone transfer responder', () => {
  it('transfers a zone to the listed secondary: SOA first and last, every message signed in a chain', () => {
    const messages = answer(signed(dns2Query(apex, AXFR)));
    expect(messages.length).toBeGreaterThanOrEqual(1);
    for (const m of messages) {
      expect(rcode(m)).toBe(0);
      expect(findTsig(m)!.mac.length).toBe(32);
    }
    expect(findTsig(messages[0]!)!.error).toBe(0);
  });

  it('IXFR from an old serial: the whole zone; from the current one: the SOA alone', () => {
    const full = answer(signed(ixfrQuery(apex, (index.get(apex)!.serial - 1) >>> 0)));
    const up = answer(signed(ixfrQuery(apex, index.get(apex)!.serial)));
    expect(full[0]!.readUInt16BE(6)).toBeGreaterThan(3);
    expect(up[0]!.readUInt16BE(6)).toBe(1);
  });

  it('refuses a transfer without TSIG, over UDP, from an address not listed, of a zone not served', () => {
    expect(rcode(answer(dns2Query(apex, AXFR))[0]!)).toBe(5);
    expect(rcode(answer(signed(dns2Query(apex, AXFR)), 'udp')[0]!)).toBe(5);
    expect(rcode(answer(signed(dns2Query(apex, AXFR)), 'tcp', '127.0.0.2')[0]!)).toBe(5);
    expect(rcode(answer(signed(dns2Query(apex, AXFR)), 'tcp', '::ffff:127.0.0.1')[0]!)).toBe(0);
    expect(rcode(answer(signed(dns2Query('not-served.example', AXFR)))[0]!)).toBe(9);
  });

  it('answers TSIG failures per RFC 8945: BADSIG and BADKEY unsigned, BADTIME signed with our time', () => {
    const badSig = answer(signed(dns2Query(apex, AXFR), otherKey))[0]!;
    expect(rcode(badSig)).toBe(9);
    expect(tsigError(badSig)).toBe(TSIG_ERROR.BADSIG);
    expect(findTsig(badSig)!.mac.length).toBe(0);
    const unknown = answer(signed(dns2Query(apex, AXFR), { ...key, name: 'nobody' }))[0]!;
    expect(tsigError(unknown)).toBe(TSIG_ERROR.BADKEY);
    const late = answer(signed(dns2Query(apex, AXFR), key, NOW - 1000))[0]!;
    expect(tsigError(late)).toBe(TSIG_ERROR.BADTIME);
    expect(findTsig(late)!.other.length).toBe(6);
    expect(verifyRequest(signed(dns2Query(apex, AXFR)), findTsig(signed(dns2Query(apex, AXFR)))!, key, NOW)).toEqual({ ok: true });
  });

  it('a truncated or misplaced TSIG is FORMERR, never a transfer', () => {
    const good = signed(dns2Query(apex, AXFR));
    for (const cut of [3, 10, 30]) {
      const truncated = good.subarray(0, good.length - cut);
      expect(responder.wants(truncated)).toBe(true);
      const out = responder.answer(truncated, 'tcp', '127.0.0.1', plain);
      expect(out && rcode(out[0]!)).not.toBe(0);
    }
    // A TSIG followed by another record.
    const tsigThenOpt = Buffer.concat([good, Buffer.from([0, 0, 41, 4, 208, 0, 0, 0, 0, 0, 0])]);
    tsigThenOpt.writeUInt16BE(good.readUInt16BE(10) + 1, 10);
    expect(rcode(responder.answer(tsigThenOpt, 'tcp', '127.0.0.1', plain)![0]!)).toBe(1);
  });

  it('a signed ordinary query is answered as usual and signed; the catalog SOA is ours to give', () => {
    const out = responder.answer(signed(dns2Query(apex, 6)), 'udp', '127.0.0.1', () => dns2Query(apex, 6).fill(0x80, 2, 3));
    expect(findTsig(out![0]!)).toBeDefined();
    const catalog = answer(signed(dns2Query('catalog.test', 6)), 'udp');
    expect(rcode(catalog[0]!)).toBe(0);
    expect(catalog[0]!.readUInt16BE(6)).toBe(1);
    const catalogXfr = answer(signed(dns2Query('catalog.test', AXFR)));
    expect(rcode(catalogXfr[0]!)).toBe(0);
  });

  it('every refusal and TSIG failure carries an OPT when the request had one (RFC 6891 §7), before the TSIG', () => {
    const ednsAxfr = () => withEdns(dns2Query(apex, AXFR));
    const cases: Array<[string, Buffer[], number]> = [
      ['unsigned', answer(ednsAxfr()), 5],
      ['over UDP, signed', answer(signed(ednsAxfr()), 'udp'), 5],
      ['from elsewhere, signed', answer(signed(ednsAxfr()), 'tcp', '127.0.0.2'), 5],
      ['not served, signed', answer(signed(withEdns(dns2Query('not-served.example', AXFR)))), 9],
      ['BADSIG', answer(signed(ednsAxfr(), otherKey)), 9],
      ['BADKEY', answer(signed(ednsAxfr(), { ...key, name: 'nobody' })), 9],
      ['BADTIME', answer(signed(ednsAxfr(), key, NOW - 1000)), 9],
      ['IXFR without an SOA', answer(signed(withEdns(dns2Query(apex, IXFR)))), 1],
      ['a truncated TSIG', answer(signed(ednsAxfr()).subarray(0, -3)), 1],
    ];
    for (const [what, messages, want] of cases) {
      expect(messages.length, what).toBe(1);
      expect(rcode(messages[0]!), what).toBe(want);
      expect(additionalTypes(messages[0]!)[0], what).toBe(41);
      expect(additionalTypes(messages[0]!)).toEqual(findTsig(messages[0]!) ? [41, 250] : [41]);
    }
    // Signed refusals still verify with the OPT inside what the MAC covers.
    const request = signed(ednsAxfr());
    const refused = answer(request, 'udp')[0]!;
    expect(verifyResponse(refused, key, findTsig(request)!.mac, NOW)).toBe(true);
    // Without an OPT in the request, none in the answer.
    expect(additionalTypes(answer(dns2Query(apex, AXFR))[0]!)).toEqual([]);
  });

  it('two secondaries given one key name (by hand) are told apart by the secret: neither takes the other\'s zones', () => {
    const keyA = parseTsigKey(`shared:${randomBytes(32).toString('base64')}`) as TsigKey;
    const keyB = parseTsigKey(`shared:${randomBytes(32).toString('base64')}`) as TsigKey;
    const shared = Secondaries.of([
      { name: 'a', addresses: ['127.0.0.1'], port: 53, tsigKey: `shared:${keyA.secret.toString('base64')}`, zones: [apex], catalog: true },
      { name: 'b', addresses: ['127.0.0.1'], port: 53, tsigKey: `shared:${keyB.secret.toString('base64')}`, zones: ['b.example'], catalog: false },
    ]);
    const r = new TransferResponder({ secondaries: shared, index, catalog: 'catalog.test', catalogSerial: () => 7, now: () => NOW });
    const ask = (packet: Buffer, k: TsigKey) => r.answer(sign(packet, k, NOW).message, 'tcp', '127.0.0.1', plain)!;
    expect(rcode(ask(dns2Query(apex, AXFR), keyA)[0]!)).toBe(0);
    expect(rcode(ask(dns2Query(apex, AXFR), keyB)[0]!)).toBe(5);
    expect(rcode(ask(dns2Query('catalog.test', AXFR), keyB)[0]!)).toBe(5);
    expect(rcode(ask(dns2Query('catalog.test', AXFR), keyA)[0]!)).toBe(0);
    // A late message signed with B's key is BADTIME signed with B's key (the one whose MAC matched).
    const late = r.answer(sign(dns2Query(apex, AXFR), keyB, NOW - 1000).message, 'tcp', '127.0.0.1', plain)![0]!;
    expect(tsigError(late)).toBe(TSIG_ERROR.BADTIME);
    expect(findTsig(late)!.mac.length).toBe(32);
  });

  it('the catalog lists only the zones the asking secondary may transfer', () => {
    const two = indexWith([zone, makeZone({ domain: 'other.example' }, [])]);
    const limited = Secondaries.of([{ name: 'a', addresses: ['127.0.0.1'], port: 53, tsigKey: `hmac-sha256:xfr:${secret}`, zones: ['other.example'], catalog: true }]);
    const everything = Secondaries.of([{ name: 'a', addresses: ['127.0.0.1'], port: 53, tsigKey: `hmac-sha256:xfr:${secret}`, zones: [], catalog: true }]);
    const ptrTargets = (s: Secondaries) => {
      const r = new TransferResponder({ secondaries: s, index: two, catalog: 'catalog.test', catalogSerial: () => 7, now: () => NOW });
      const messages = r.answer(signed(dns2Query('catalog.test', AXFR)), 'tcp', '127.0.0.1', plain)!;
      return messages.flatMap((m) => (decode(m).answers as Array<{ type: number; domain: string }>).filter((a) => a.type === 12).map((a) => a.domain)).sort();
    };
    expect(ptrTargets(limited)).toEqual(['other.example']);
    expect(ptrTargets(everything)).toEqual([apex, 'other.example'].sort());
  });

  it('a signed NOTIFY for the catalog is answered as for any zone (not as a query)', () => {
    const notify = (name: string) => signed(dns2Query(name, 6, { opcode: 4 }));
    const seen: Buffer[] = [];
    const asPlain = (bare: Buffer) => {
      seen.push(bare);
      return dns2Query(apex, 6).fill(0x80, 2, 3);
    };
    responder.answer(notify('catalog.test'), 'udp', '127.0.0.1', asPlain);
    responder.answer(notify(apex), 'udp', '127.0.0.1', asPlain);
    expect(seen).toHaveLength(2);
    expect(seen.map((bare) => (bare[2]! >> 3) & 0xf)).toEqual([4, 4]);
  });

  it('wants only transfer questions and messages ending in a TSIG', () => {
    expect(responder.wants(dns2Query(apex, 1))).toBe(false);
    expect(responder.wants(Buffer.alloc(5))).toBe(false);
    expect(responder.wants(signed(dns2Query(apex, 1)))).toBe(true);
  });

  it('refuses keys that are not keys', () => {
    expect(parseTsigKey('hmac-md5:k:' + secret)).toMatch(/not supported/);
    expect(parseTsigKey('k:c2hvcnQ=')).toMatch(/at least 16/);
    expect(parseTsigKey('k')).toMatch(/NAME:BASE64/);
    expect(parseTsigKey('bad name:' + secret)).toMatch(/not a key name/);
  });
});

/** An IXFR query with the client's SOA (serial) in the authority section. */
function ixfrQuery(name: string, serial: number): Buffer {
  const q = dns2Query(name, IXFR);
  const question = q.subarray(0, 12 + nameWire(name).length + 4);
  const soaRdata = Buffer.concat([nameWire('ns1.example.net'), nameWire('h.example.net'), Buffer.alloc(20)]);
  soaRdata.writeUInt32BE(serial, soaRdata.length - 20);
  const rr = Buffer.concat([nameWire(name), Buffer.from([0, 6, 0, 1, 0, 0, 0, 0, soaRdata.length >> 8, soaRdata.length & 0xff]), soaRdata]);
  const out = Buffer.concat([question, rr]);
  out.writeUInt16BE(0, 6);
  out.writeUInt16BE(1, 8);
  out.writeUInt16BE(0, 10);
  return out;
}

/** The query with an OPT record (payload 1232, version 0) added to its additional section. */
function withEdns(query: Buffer): Buffer {
  const out = Buffer.concat([query, Buffer.from([0, 0, 41, 4, 208, 0, 0, 0, 0, 0, 0])]);
  out.writeUInt16BE(query.readUInt16BE(10) + 1, 10);
  return out;
}

/** The types of a message's additional records, in order. */
function additionalTypes(message: Buffer): number[] {
  let at = 12;
  for (let i = 0; i < message.readUInt16BE(4); i++) at = skipName(message, at) + 4;
  const types: number[] = [];
  const before = message.readUInt16BE(6) + message.readUInt16BE(8);
  for (let i = 0; i < before + message.readUInt16BE(10); i++) {
    at = skipName(message, at);
    if (i >= before) types.push(message.readUInt16BE(at));
    at += 10 + message.readUInt16BE(at + 8);
  }
  return types;
}
