// Addresses judged after unmapping every IPv4 embedding: the loopback, private networks and the
// metadata service must be refused however an IPv6 address spells them, and public addresses
// (embedded or not) must stay accepted.
import { describe, expect, it } from 'vitest';
import { backendRefusal, checkBackend, parseBackend } from '../../src/model/backend.ts';
import { embeddedIpv4 } from '../../src/model/ip-embedded.ts';
import { canonicalIp, canonicalIpOrPrefix, ipToBytes, nonPublicReason } from '../../src/model/ip.ts';

const bytes = (address: string) => ipToBytes(canonicalIp(address)!.address);

describe('IPv4 addresses embedded in IPv6', () => {
  it.each([
    ['::ffff:127.0.0.1', [['127.0.0.1', 'IPv4-mapped']]],
    ['::ffff:7f00:1', [['127.0.0.1', 'IPv4-mapped']]],
    ['::7f00:1', [['127.0.0.1', 'IPv4-compatible']]],
    ['::ffff:0:127.0.0.1', [['127.0.0.1', 'SIIT IPv4-translated']]],
    ['64:ff9b::7f00:1', [['127.0.0.1', 'NAT64']]],
    ['2002:7f00:1::', [['127.0.0.1', '6to4']]],
    // RFC 4380's example: server 65.54.227.120, client 192.0.2.45 stored as ~c000:022d = 3fff:fdd2.
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', [['192.0.2.45', 'Teredo client'], ['65.54.227.120', 'Teredo server']]],
    ['2606:4700::1111', []],
    ['2001:db8::1', []],
  ])('%s', (address, expected) => {
    expect(embeddedIpv4(bytes(address)).map((e) => [e.address, e.form])).toEqual(expected);
  });
});

describe('what is not public', () => {
  it.each([
    // Every embedding of the loopback, the metadata service and a private network.
    ['::ffff:127.0.0.1', /embeds 127\.0\.0\.1 \(IPv4-mapped\), a loopback/],
    ['::ffff:7f00:1', /embeds 127\.0\.0\.1 \(IPv4-mapped\), a loopback/],
    ['::ffff:169.254.169.254', /embeds 169\.254\.169\.254 .*link-local/],
    ['::ffff:10.0.0.1', /embeds 10\.0\.0\.1 .*private/],
    ['::ffff:0:127.0.0.1', /embeds 127\.0\.0\.1 \(SIIT IPv4-translated\)/],
    ['::127.0.0.1', /embeds 127\.0\.0\.1 \(IPv4-compatible\)/],
    ['64:ff9b::7f00:1', /embeds 127\.0\.0\.1 \(NAT64\)/],
    ['64:ff9b::a9fe:a9fe', /embeds 169\.254\.169\.254 \(NAT64\)/],
    ['64:ff9b:1::808:808', /NAT64 local-use/],
    ['2002:7f00:1::', /embeds 127\.0\.0\.1 \(6to4\)/],
    ['2002:c0a8:101::1', /embeds 192\.168\.1\.1 \(6to4\)/],
    // Teredo client 127.0.0.1 (obfuscated 80ff:fffe) behind a public server, and a loopback server.
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', /embeds 127\.0\.0\.1 \(Teredo client\)/],
    ['2001:0:7f00:1:8000:63bf:3fff:fdd2', /embeds 127\.0\.0\.1 \(Teredo server\)/],
    // Deprecated forms are refused even when what they embed is public.
    ['::8.8.8.8', /IPv4-compatible address \(deprecated/],
    ['::ffff:0:8.8.8.8', /SIIT IPv4-translated address \(deprecated/],
    // IPv4 ranges.
    ['0.1.2.3', /unspecified/],
    ['100.64.0.1', /CGNAT/],
    ['127.8.9.10', /loopback/],
    ['169.254.169.254', /link-local/],
    ['172.31.255.255', /private/],
    ['192.0.0.170', /IETF protocol assignment/],
    ['192.168.0.1', /private/],
    ['198.19.255.1', /benchmarking/],
    ['224.0.0.251', /multicast/],
    ['240.0.0.1', /reserved/],
    ['255.255.255.255', /broadcast/],
    // IPv6 ranges.
    ['::', /unspecified/],
    ['::1', /loopback/],
    ['fc00::1', /unique local/],
    ['fd12:3456::1', /unique local/],
    ['fe80::1', /link-local/],
    ['febf::1', /link-local/],
    ['fec0::1', /site-local/],
    ['ff02::1', /multicast/],
    ['100::1', /discard-only/],
    ['2001:2::1', /benchmarking/],
    ['fe80::1%eth0', /not an IP address/],
  ])('%s is refused', (address, reason) => {
    expect(nonPublicReason(address)).toMatch(reason);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '11.0.0.1',
    '100.128.0.1',
    '169.253.1.1',
    '172.32.0.1',
    '192.0.1.1',
    '192.169.0.1',
    '198.20.0.1',
    '223.255.255.255',
    // Documentation ranges reach no network of ours (see ip.ts) and are what the API's examples use.
    '192.0.2.1',
    '198.51.100.7',
    '203.0.113.9',
    '2001:db8::1',
    '3fff::1',
    '2606:4700::1111',
    '2a00:1450:4001::200e',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
    '2001:0:4136:e378:8000:63bf:3fff:fdd2',
    'fbff::1',
    'fe00::1',
  ])('%s is public', (address) => {
    expect(nonPublicReason(address)).toBeUndefined();
  });
});

describe('backends and failovers', () => {
  it.each([
    '[::ffff:127.0.0.1]:8080',
    '[::ffff:7f00:1]',
    '[::ffff:169.254.169.254]',
    '[::ffff:10.0.0.1]',
    '[::ffff:0:127.0.0.1]',
    '[64:ff9b::7f00:1]',
    '[2002:7f00:1::]',
    '::ffff:127.0.0.1',
    '[::127.0.0.1]:22',
    '[2001:0:4136:e378:8000:63bf:80ff:fffe]:6379',
    '198.18.0.1:80',
  ])('refuses %s unless private backends are allowed', (text) => {
    const refused = checkBackend(text, false);
    expect(refused.ok).toBe(false);
    expect(!refused.ok && refused.message).toMatch(/PALISADE_ALLOW_PRIVATE_BACKENDS/);
    expect(backendRefusal(parseBackend(text)!, false)).toBeDefined();
    expect(backendRefusal(parseBackend(text)!, true)).toBeUndefined();
    expect(checkBackend(text, true).ok).toBe(true);
  });

  it('stores an IPv4-mapped backend as the IPv4 address it is', () => {
    expect(checkBackend('[::ffff:8.8.8.8]:8443', false)).toEqual({ ok: true, value: '8.8.8.8:8443' });
    expect(checkBackend('::ffff:808:808', false)).toEqual({ ok: true, value: '8.8.8.8' });
    expect(checkBackend('[::ffff:127.0.0.1]:8080', true)).toEqual({ ok: true, value: '127.0.0.1:8080' });
  });

  it('keeps public IPv6 backends, embedded or not', () => {
    for (const [text, value] of [
      ['[2606:4700::1111]:443', '[2606:4700::1111]:443'],
      ['[64:ff9b::808:808]', '64:ff9b::808:808'],
      ['[2001:db8::1]:8443', '[2001:db8::1]:8443'],
    ]) expect(checkBackend(text!, false), text).toEqual({ ok: true, value });
    expect(backendRefusal(parseBackend('[2606:4700::1111]:443')!, false)).toBeUndefined();
  });

  it('says which address is embedded, and how', () => {
    const refused = checkBackend('[::ffff:169.254.169.254]', false);
    expect(!refused.ok && refused.message).toMatch(/::ffff:169\.254\.169\.254 embeds 169\.254\.169\.254 \(IPv4-mapped\), a link-local address/);
  });
});

describe('IP list entries in IPv4-mapped form', () => {
  it.each([
    ['::ffff:127.0.0.8', '127.0.0.8'],
    ['::FFFF:7f00:8', '127.0.0.8'],
    ['::ffff:127.0.0.8/128', '127.0.0.8'],
    ['::ffff:192.0.2.0/120', '192.0.2.0/24'],
    ['::ffff:0.0.0.0/96', '0.0.0.0/0'],
    // Shorter than /96 it is an IPv6 network, as written; other embeddings are other addresses.
    ['::/64', '::/64'],
    ['64:ff9b::7f00:8', '64:ff9b::7f00:8'],
  ])('%s → %s', (input, value) => expect(canonicalIpOrPrefix(input)).toEqual({ value }));

  it('still refuses bits past the prefix', () => {
    expect(canonicalIpOrPrefix('::ffff:192.0.2.1/120')).toHaveProperty('error');
  });
});
