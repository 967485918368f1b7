import { describe, expect, it } from 'vitest';
import { canonicalRecordValue, parseSoaValue } from '../../src/model/record-values.ts';
import { TYPE } from '../../src/model/record-types.ts';

const zone = 'example.org';
const canon = (type: keyof typeof TYPE, v: string) => {
  const r = canonicalRecordValue(TYPE[type], v, zone);
  return r.ok ? r.value : `ERR ${r.message}`;
};

describe('record values, one rule per type', () => {
  it('A / AAAA', () => {
    expect(canon('A', '192.0.2.1')).toBe('192.0.2.1');
    expect(canon('A', '::1')).toMatch(/^ERR/);
    expect(canon('AAAA', '2001:0DB8::0001')).toBe('2001:db8::1');
    expect(canon('AAAA', '192.0.2.1')).toMatch(/^ERR/);
  });
  it('CNAME / MX / NS are absolute host names', () => {
    expect(canon('CNAME', 'Target.Example.NET.')).toBe('target.example.net');
    expect(canon('MX', '@')).toBe('example.org');
    expect(canon('NS', 'ns 1.example.net')).toMatch(/^ERR/);
  });
  it('TXT is kept verbatim up to 4000 bytes', () => {
    expect(canon('TXT', 'v=spf1 -all')).toBe('v=spf1 -all');
    expect(canon('TXT', 'x'.repeat(4000))).toHaveLength(4000);
    expect(canon('TXT', 'x'.repeat(4001))).toMatch(/^ERR/);
  });
  it('SOA: rname and four timers, mailbox spelling accepted', () => {
    expect(canon('SOA', 'dns@example.org 7200 900 1209600 300')).toBe('dns.example.org 7200 900 1209600 300');
    expect(parseSoaValue('dns.example.org 7200 900 1209600 300')).toEqual({ rname: 'dns.example.org', refresh: 7200, retry: 900, expire: 1209600, minimum: 300 });
    expect(canon('SOA', 'dns.example.org 7200 900 1209600 100000')).toMatch(/minimum/);
    expect(canon('SOA', 'ns1.example.org dns.example.org 1 7200 900 1209600 300')).toMatch(/^ERR/);
  });
  it('SRV: weight port target', () => {
    expect(canon('SRV', '10 443 Svc.Example.ORG.')).toBe('10 443 svc.example.org');
    expect(canon('SRV', '0 0 .')).toBe('0 0 .');
    expect(canon('SRV', '10 443')).toMatch(/^ERR/);
    expect(canon('SRV', '65536 443 a.example.org')).toMatch(/weight/);
  });
});
