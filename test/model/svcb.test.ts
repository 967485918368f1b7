// SVCB and HTTPS values (RFC 9460): every spelling of the same data stored as the one form NSD
// and BIND print, and hostile or broken values refused with words that say what is wrong.
import { describe, expect, it } from 'vitest';
import { canonicalRecordValue } from '../../src/model/record-values.ts';
import { TYPE } from '../../src/model/record-types.ts';

const zone = 'example.org';
const canon = (v: string, type: 'SVCB' | 'HTTPS' = 'HTTPS') => {
  const r = canonicalRecordValue(TYPE[type], v, zone);
  return r.ok ? r.value : `ERR ${r.message}`;
};

describe('SVCB/HTTPS canonical form, as NSD prints it', () => {
  // Left: as written in a zone file or sent to the API; right: `nsd-checkzone -p` of that line.
  const cases: Array<[string, string]> = [
    ['1 . alpn=h2,h3 ipv4hint=192.0.2.1', '1 . alpn="h2,h3" ipv4hint=192.0.2.1'],
    ['0 foo.example.', '0 foo.example.'],
    ['0 Foo.Example', '0 foo.example.'],
    ['1 . alpn="h2,http/1.1" port=8443 no-default-alpn mandatory=port,alpn', '1 . mandatory=alpn,port alpn="h2,http/1.1" no-default-alpn port=8443'],
    [
      '2 svc.example.org. ech=AEn+DQBFKwAgACABWIHUGj4u+PIggYXcR5JF0gYk3dCRioBW8uJq9H4mKAAIAAEAAQABAANAEnB1YmxpYy50bHMtZWNoLmRldgAA ipv6hint=2001:db8::1,2001:0db8::53:1',
      '2 svc.example.org. ech=AEn+DQBFKwAgACABWIHUGj4u+PIggYXcR5JF0gYk3dCRioBW8uJq9H4mKAAIAAEAAQABAANAEnB1YmxpYy50bHMtZWNoLmRldgAA ipv6hint=2001:db8::1,2001:db8::53:1',
    ],
    ['1 . key667=hello key65000="a\\,b" dohpath=/dns-query{?dns}', '1 . dohpath="/dns-query{?dns}" key667="hello" key65000="a,b"'],
    ['1 . alpn=h2\\,x,h3 key23="\\001\\255"', '1 . alpn="h2,x,h3" key23="\\001\\255"'],
    // RFC 9460 Appendix D.2, figure 11: two levels of escaping, one alpn id "f\oo,bar".
    ['1 . alpn="f\\\\\\\\oo\\\\,bar,h2"', '1 . alpn="f\\\\\\\\oo\\\\,bar,h2"'],
    ['1 . alpn=f\\\\\\092oo\\092,bar,h2', '1 . alpn="f\\\\\\\\oo\\\\,bar,h2"'],
    ['1 . key3=8443 key1=h2', '1 . alpn="h2" port=8443'],
    ['16 @ port=53', '16 example.org. port=53'],
    ['1 . alpn="h2" ipv4hint=192.0.2.2,192.0.2.1', '1 . alpn="h2" ipv4hint=192.0.2.2,192.0.2.1'],
  ];
  it.each(cases)('%s', (input, stored) => {
    expect(canon(input)).toBe(stored);
    // The stored form reads back as itself.
    expect(canon(stored)).toBe(stored);
  });

  it('SVCB takes the same forms as HTTPS', () => {
    expect(canon('1 dns.example.org alpn=dot port=853', 'SVCB')).toBe('1 dns.example.org. alpn="dot" port=853');
  });
});

describe('SVCB/HTTPS refusals', () => {
  const refused: Array<[string, RegExp]> = [
    ['', /SvcPriority TargetName/],
    ['1', /SvcPriority TargetName/],
    ['x .', /SvcPriority must be an integer/],
    ['65536 .', /SvcPriority must be an integer/],
    ['0 . alpn=h2', /AliasMode.*no SvcParams/],
    ['1 . alpn=h2 alpn=h3', /alpn is given twice/],
    ['1 . key1=h2 alpn=h3', /alpn is given twice/],
    ['1 . mandatory=mandatory,alpn alpn=h2', /may not list itself/],
    ['1 . mandatory=port', /lists port, which the record does not have/],
    ['1 . mandatory=alpn,alpn alpn=h2', /lists alpn twice/],
    ['1 . mandatory=frob alpn=h2', /no SvcParamKey/],
    ['1 . port=65536', /port must be an integer from 0 to 65535/],
    ['1 . port=-1', /port must be an integer/],
    ['1 . port=', /port must be an integer/],
    ['1 . port', /port needs a value/],
    ['1 . ipv4hint=192.0.2.300', /ipv4hint: "192.0.2.300" is not an IPv4 address/],
    ['1 . ipv4hint=2001:db8::1', /is not an IPv4 address/],
    ['1 . ipv6hint=192.0.2.1', /is not an IPv6 address/],
    ['1 . ipv6hint=2001:db8::1,', /is not an IPv6 address/],
    ['1 . ech=not*base64', /ech must be an ECHConfigList in base64/],
    ['1 . ech=AEn', /ech must be an ECHConfigList in base64/],
    ['1 . alpn=', /empty protocol identifier/],
    ['1 . alpn=h2,,h3', /empty protocol identifier/],
    [`1 . alpn=${'x'.repeat(256)}`, /longer than 255 octets/],
    ['1 . no-default-alpn', /no-default-alpn needs alpn/],
    ['1 . no-default-alpn=x alpn=h2', /takes no value/],
    ['1 . dohpath=/dns-query', /dohpath must be a relative URI template/],
    ['1 . frobnicate=1', /"frobnicate" is not a SvcParamKey/],
    ['1 . key65535=x', /is not a SvcParamKey/],
    ['1 . key65536=x', /is not a SvcParamKey/],
    ['1 . alpn="h2', /not closed/],
    ['1 . alpn=h"2"', /quote inside the value/],
    ['1 . key9=\\', /ends in a backslash/],
    ['1 . key9=\\256', /not an octet/],
    ['1 bad_name!.example alpn=h2', /TargetName/],
  ];
  it.each(refused)('%s', (input, message) => {
    expect(canon(input)).toMatch(/^ERR /);
    expect(canon(input)).toMatch(message);
  });

  it('a huge param list or value is refused at a bounded cost', () => {
    const many = `1 . ${Array.from({ length: 200 }, (_, i) => `key${i + 100}=x`).join(' ')}`;
    const started = process.hrtime.bigint();
    expect(canon(many)).toMatch(/SvcParams; at most 64/);
    expect(canon(`1 . ipv6hint=${Array.from({ length: 3000 }, () => '2001:db8::1').join(',')}`)).toMatch(/^ERR .*(characters|octets)/);
    expect(canon(`1 . key9="${'\\255'.repeat(1500)}"`)).toMatch(/^ERR .*4096/);
    expect(canon(`1 . key9=${'a'.repeat(1_000_000)}`)).toMatch(/^ERR /);
    // Generous: the bug this guards against (quadratic work on a long list) takes seconds.
    expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(2000);
  });
});
