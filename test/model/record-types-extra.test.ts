// CAA, PTR, TLSA, SSHFP, NAPTR and DS: the values the API takes, canonical, and the errors that
// name what is expected; the DS placement rules; reverse zones as domains.
import { describe, expect, it } from 'vitest';
import { canonicalRecordValue } from '../../src/model/record-values.ts';
import { TYPE, typeName, recordTypeNumber } from '../../src/model/record-types.ts';
import { buildRecord, checkRecordInZone, type RecordState } from '../../src/model/record.ts';
import { registrationProblem } from '../../src/model/registrable.ts';
import { normaliseOwnerName, normaliseTargetName } from '../../src/model/names.ts';
import type { FieldError } from '../../src/errors.ts';

const zone = 'example.org';
const canon = (type: keyof typeof TYPE, v: string) => {
  const r = canonicalRecordValue(TYPE[type], v, zone);
  return r.ok ? r.value : `ERR ${r.message}`;
};
const h = (n: number, c = 'ab') => c.repeat(n / 2);

describe('the new types by IANA code and mnemonic', () => {
  it('numbers are the DNS TYPE codes; the first eight keep theirs', () => {
    expect([TYPE.CAA, TYPE.PTR, TYPE.TLSA, TYPE.SSHFP, TYPE.NAPTR, TYPE.DS]).toEqual([257, 12, 52, 44, 35, 43]);
    expect(typeName(257)).toBe('CAA');
    expect(recordTypeNumber('naptr')).toBe(35);
    expect(TYPE.SOA).toBe(7);
  });
});

describe('values', () => {
  it('CAA: flags, lower-case tag, quoted value', () => {
    expect(canon('CAA', '0 issue "letsencrypt.org"')).toBe('0 issue "letsencrypt.org"');
    expect(canon('CAA', '0 ISSUE letsencrypt.org')).toBe('0 issue "letsencrypt.org"');
    expect(canon('CAA', '128 iodef "mailto:sec@example.org"')).toBe('128 iodef "mailto:sec@example.org"');
    expect(canon('CAA', '0 issuewild ";"')).toBe('0 issuewild ";"');
    expect(canon('CAA', '256 issue "a.example"')).toMatch(/^ERR flags must be an integer from 0 to 255/);
    expect(canon('CAA', '0 is-sue "a.example"')).toMatch(/^ERR tag/);
    expect(canon('CAA', '0 issue')).toMatch(/^ERR must be "flags tag value"/);
    expect(canon('CAA', '0 issue "bad domain!"')).toMatch(/^ERR issue value/);
  });
  it('PTR: an absolute host name', () => {
    expect(canon('PTR', 'Host.Example.NET.')).toBe('host.example.net');
    expect(canon('PTR', 'not a name')).toMatch(/^ERR must be a host name/);
  });
  it('TLSA: usage selector matching-type and data, digest lengths by matching type', () => {
    expect(canon('TLSA', `3 1 1 ${h(64, 'AB')}`)).toBe(`3 1 1 ${h(64)}`);
    expect(canon('TLSA', `2 0 2 ${h(64)} ${h(64)}`)).toBe(`2 0 2 ${h(128)}`);
    expect(canon('TLSA', `3 1 0 ${h(20)}`)).toBe(`3 1 0 ${h(20)}`);
    expect(canon('TLSA', `3 1 1 ${h(40)}`)).toMatch(/^ERR .*SHA-256.*64 hex digits/);
    expect(canon('TLSA', `3 1 2 ${h(64)}`)).toMatch(/^ERR .*SHA-512.*128 hex digits/);
    expect(canon('TLSA', `4 1 1 ${h(64)}`)).toMatch(/^ERR usage must be/);
    expect(canon('TLSA', `3 2 1 ${h(64)}`)).toMatch(/^ERR selector must be/);
    expect(canon('TLSA', `3 1 1 ${h(62)}zz`)).toMatch(/^ERR .*hex/);
  });
  it('SSHFP: algorithm, fingerprint type, digest lengths', () => {
    expect(canon('SSHFP', `4 2 ${h(64, 'CD')}`)).toBe(`4 2 ${h(64, 'cd')}`);
    expect(canon('SSHFP', `1 1 ${h(40)}`)).toBe(`1 1 ${h(40)}`);
    expect(canon('SSHFP', `1 1 ${h(64)}`)).toMatch(/^ERR .*SHA-1.*40 hex digits/);
    expect(canon('SSHFP', `4 2 ${h(40)}`)).toMatch(/^ERR .*SHA-256.*64 hex digits/);
    expect(canon('SSHFP', `9 2 ${h(64)}`)).toMatch(/^ERR algorithm must be/);
    expect(canon('SSHFP', `4 3 ${h(64)}`)).toMatch(/^ERR fingerprint type must be/);
  });
  it('NAPTR: order preference flags service regexp replacement', () => {
    expect(canon('NAPTR', '100 10 "S" "SIP+D2U" "" _sip._udp.example.org.')).toBe('100 10 "S" "SIP+D2U" "" _sip._udp.example.org');
    expect(canon('NAPTR', '100 20 "U" "E2U+sip" "!^.*$!sip:info@example.org!" .')).toBe('100 20 "U" "E2U+sip" "!^.*$!sip:info@example.org!" .');
    expect(canon('NAPTR', '100 20 "U" "E2U+sip" "!^.*$!sip:x!" host.example.org')).toMatch(/^ERR .*regexp.*replacement.*"\."/);
    expect(canon('NAPTR', '100 20 "S" "SIP+D2U" "" .')).toMatch(/^ERR .*regexp or a replacement/);
    expect(canon('NAPTR', '70000 20 "S" "x" "" a.example.org')).toMatch(/^ERR order must be/);
    expect(canon('NAPTR', '1 2 "S!" "x" "" a.example.org')).toMatch(/^ERR flags/);
    expect(canon('NAPTR', '1 2 "S"')).toMatch(/^ERR must be "order preference/);
  });
  it('DS: key tag, algorithm, digest type and its length', () => {
    expect(canon('DS', `12345 13 2 ${h(64, 'EF')}`)).toBe(`12345 13 2 ${h(64, 'ef')}`);
    expect(canon('DS', `1 8 1 ${h(40)}`)).toBe(`1 8 1 ${h(40)}`);
    expect(canon('DS', `1 15 4 ${h(96)}`)).toBe(`1 15 4 ${h(96)}`);
    expect(canon('DS', `1 13 2 ${h(40)}`)).toMatch(/^ERR .*digest type 2.*64 hex digits/);
    expect(canon('DS', `1 13 4 ${h(64)}`)).toMatch(/^ERR .*digest type 4.*96 hex digits/);
    expect(canon('DS', `1 13 3 ${h(64)}`)).toMatch(/^ERR digest type must be/);
    expect(canon('DS', `70000 13 2 ${h(64)}`)).toMatch(/^ERR key tag must be/);
    expect(canon('DS', `1 0 2 ${h(64)}`)).toMatch(/^ERR algorithm must be/);
  });
});

describe('DS placement', () => {
  const record = (id: number, name: string, type: number, value: string): RecordState => ({ id, name, type: type as RecordState['type'], value, ttl: 300, priority: null, target: [] });
  const ds = `12345 13 2 ${h(64)}`;
  it('only at a delegation: beside an NS set of the same name', () => {
    expect(checkRecordInZone(record(1, 'sub', TYPE.DS, ds), [record(2, 'sub', TYPE.NS, 'ns.other.example')])).toEqual([]);
    const lone = checkRecordInZone(record(1, 'sub', TYPE.DS, ds), []);
    expect(lone.map((e) => `${e.field}: ${e.message}`).join()).toMatch(/name: .*DS.*delegat.*NS/);
  });
  it('never geo-targeted: the delegation it belongs to is the same everywhere', () => {
    const geo = { ...record(1, 'sub', TYPE.DS, ds), target: [2921044] };
    expect(checkRecordInZone(geo, [record(2, 'sub', TYPE.NS, 'ns.other.example')]).map((e) => e.field)).toEqual(['target']);
  });
  it('never at the apex', () => {
    const apex = checkRecordInZone(record(1, '@', TYPE.DS, ds), []);
    expect(apex.map((e) => `${e.field}: ${e.message}`).join()).toMatch(/name: .*apex.*parent/);
  });
  it('field errors name the field and what is expected', () => {
    const errors: FieldError[] = [];
    buildRecord({ name: 'sub', type: 'DS', value: '1 13 2 abc' }, 1, zone, errors);
    expect(errors).toEqual([{ field: 'value', message: expect.stringMatching(/^DS value .*hex/) }]);
  });
});

describe('reverse zones as domains', () => {
  const policy = { reserved: [], mayUseReserved: false };
  it('in-addr.arpa by whole octets, ip6.arpa by nibbles', () => {
    for (const name of ['2.0.192.in-addr.arpa', '113.0.203.in-addr.arpa', '8.b.d.0.1.0.0.2.ip6.arpa', '0.8.b.d.0.1.0.0.2.ip6.arpa']) {
      expect(registrationProblem(name, policy), name).toBeUndefined();
    }
  });
  it('numeric owners stay as written (not read as IPv4 addresses: "10" is not 0.0.0.10)', () => {
    expect(normaliseOwnerName('10', '2.0.192.in-addr.arpa')).toEqual({ ok: true, value: '10' });
    expect(normaliseOwnerName('0x10.sub', 'example.org')).toEqual({ ok: true, value: '0x10.sub' });
    expect(normaliseOwnerName('10.2.0.192.in-addr.arpa.', '2.0.192.in-addr.arpa')).toEqual({ ok: true, value: '10' });
    expect(normaliseTargetName('1.2.0.192.in-addr.arpa', 'example.org')).toEqual({ ok: true, value: '1.2.0.192.in-addr.arpa' });
    expect(normaliseOwnerName('Bücher', 'example.org')).toEqual({ ok: true, value: 'xn--bcher-kva' });
  });
  it('refuses the arpa tree itself, malformed labels and private networks', () => {
    for (const name of ['in-addr.arpa', 'ip6.arpa', 'example.arpa', '256.0.192.in-addr.arpa', '02.0.192.in-addr.arpa', '4.3.2.1.0.in-addr.arpa', '10.in-addr.arpa', '168.192.in-addr.arpa', '20.172.in-addr.arpa', '127.in-addr.arpa', 'ab.8.b.d.ip6.arpa', 'd.f.ip6.arpa', '8.e.f.ip6.arpa']) {
      expect(registrationProblem(name, policy)?.code, name).toBe('DOMAIN_NOT_REGISTRABLE');
    }
  });
});
