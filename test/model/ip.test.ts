import { describe, expect, it } from 'vitest';
import { canonicalIp, canonicalIpOrPrefix, ipToBytes, nonPublicReason } from '../../src/model/ip.ts';

describe('IP addresses', () => {
  it('canonicalises IPv6 per RFC 5952 and leaves IPv4 as is', () => {
    expect(canonicalIp('2001:DB8:0:0:1:0:0:1')?.address).toBe('2001:db8::1:0:0:1');
    expect(canonicalIp('::FFFF:192.0.2.1')?.address).toBe('::ffff:192.0.2.1');
    expect(canonicalIp('192.0.2.1')).toEqual({ address: '192.0.2.1', family: 4 });
  });

  it.each(['192.0.2', '192.0.2.256', '01.2.3.4', ' 192.0.2.1', 'fe80::1%eth0', '2001:db8::g', ''])('rejects %j', (input) =>
    expect(canonicalIp(input)).toBeUndefined(),
  );

  it('turns addresses into bytes', () => {
    expect([...ipToBytes('192.0.2.1')]).toEqual([192, 0, 2, 1]);
    expect([...ipToBytes('2001:db8::1')]).toEqual([0x20, 0x01, 0x0d, 0xb8, ...new Array(11).fill(0), 1]);
    expect([...ipToBytes('::ffff:192.0.2.1')].slice(10)).toEqual([0xff, 0xff, 192, 0, 2, 1]);
  });

  it('names special-purpose addresses', () => {
    expect(nonPublicReason('127.0.0.1')).toMatch(/loopback/);
    expect(nonPublicReason('0.0.0.0')).toMatch(/unspecified/);
    expect(nonPublicReason('224.0.0.1')).toMatch(/multicast/);
    expect(nonPublicReason('::1')).toMatch(/loopback/);
    expect(nonPublicReason('fe80::1')).toMatch(/link-local/);
    expect(nonPublicReason('198.51.100.1')).toBeUndefined();
    expect(nonPublicReason('2001:db8::1')).toBeUndefined();
  });
});

describe('IP list entries', () => {
  it.each([
    ['192.0.2.0/24', '192.0.2.0/24'],
    ['192.0.2.1/32', '192.0.2.1'],
    ['2001:DB8::/32', '2001:db8::/32'],
    ['0.0.0.0/0', '0.0.0.0/0'],
    ['2001:db8::1/128', '2001:db8::1'],
  ])('%s → %s', (input, expected) => expect(canonicalIpOrPrefix(input)).toEqual({ value: expected }));

  it.each(['192.0.2.1/24', '192.0.2.0/33', '2001:db8::1/64', '192.0.2.0/', '192.0.2.0/-1', 'x/8'])('rejects %j', (input) =>
    expect(canonicalIpOrPrefix(input)).toHaveProperty('error'),
  );
});
