// The signer's parts in-process: the NSEC bitmap (RFC 4034's example), the signature cache's
// bounds, a signed answer never served from the answer cache past its signatures' window, DO=1
// and DO=0 kept apart, signatures that verify with the published DNSKEY, the keys following the
// domain's settings (a change turning signing on, a record change keeping the DNSKEY set), and
// signed zones refused to secondaries and left out of their catalog.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { prometheusText } from '../../src/common/metrics/prometheus-text.ts';
import { AnswerCache } from '../../src/dns/cache/answer-cache.ts';
import { typeBitmap } from '../../src/dns/signer/nsec.ts';
import { SignatureCache } from '../../src/dns/signer/signature-cache.ts';
import { TransferResponder } from '../../src/dns/transfer/responder.ts';
import { Secondaries } from '../../src/dns/transfer/secondaries.ts';
import { parseTsigKey, sign, type TsigKey } from '../../src/dns/transfer/tsig.ts';
import type { DomainState } from '../../src/model/domain.ts';
import { buildRecord } from '../../src/model/record.ts';
import { dig } from '../helpers/dig.ts';
import { makeSigningKey } from '../helpers/dnssec-keys.ts';
import { dns2Query } from '../helpers/dns2-packets.ts';
import { indexWith, makeZone } from '../helpers/dns-fixture.ts';
import { startDns } from '../helpers/dns-server.ts';

const key = makeSigningKey(13);
const signedDomain = (extra: object = { dnssec: true, signing: { keys: [key] } }) => ({ domain: 'signed.example', ...extra }) as Partial<DomainState> & { domain: string };
const RECORDS = [{ name: 'www', type: 1, value: '192.0.2.10' }];

describe('NSEC type bitmap', () => {
  it('encodes RFC 4034 §4.3\'s example (A MX RRSIG NSEC TYPE1234)', () => {
    const expected = Buffer.from('0006400100000003041b000000000000000000000000000000000000000000000000000020', 'hex');
    expect(typeBitmap([1, 15, 46, 47, 1234]).toString('hex')).toBe(expected.toString('hex'));
  });
});

describe('signature cache', () => {
  it('keeps within its entries and bytes, least recently used out first', () => {
    const cache = new SignatureCache({ entries: 3, bytes: 10_000 });
    for (const k of ['a', 'b', 'c']) cache.set(k, Buffer.alloc(64));
    cache.get('a');
    cache.set('d', Buffer.alloc(64));
    expect(cache.size).toBe(3);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBeDefined();
    const small = new SignatureCache({ entries: 1000, bytes: 1000 });
    for (let i = 0; i < 100; i++) small.set(`key${i}`, Buffer.alloc(64));
    expect(small.bytes).toBeLessThanOrEqual(1000);
    expect(small.evicted).toBeGreaterThan(0);
    // Larger than the whole budget: not kept at all.
    small.set('x'.repeat(2000), Buffer.alloc(64));
    expect(small.bytes).toBeLessThanOrEqual(1000);
  });
});

describe('answer cache and signed answers', () => {
  it('an answer past its signatures\' window is not served', () => {
    const cache = new AnswerCache(10);
    cache.set('k', { full: Buffer.alloc(20), zones: [], generation: 1, expires: Date.now() - 1 });
    expect(cache.get('k', 1)).toBeUndefined();
    cache.set('k', { full: Buffer.alloc(20), zones: [], generation: 1, expires: Date.now() + 60_000 });
    expect(cache.get('k', 1)).toBeDefined();
  });

  it('DO=1 and DO=0 are cached apart, and the RRSIG verifies with the DNSKEY', async () => {
    const dns = await startDns([makeZone(signedDomain(), RECORDS)]);
    try {
      for (let round = 0; round < 2; round++) {
        const plain = await dig(dns.port, 'www.signed.example', 'A');
        expect(plain.answer.map((a) => a.type)).toEqual(['A']);
        const signed = await dig(dns.port, 'www.signed.example', 'A', ['+dnssec']);
        expect(signed.answer.map((a) => a.type)).toEqual(['A', 'RRSIG']);
      }
      expect(prometheusText(dns.server.metrics.snapshot())).toMatch(/palisade_dns_signature_cache_entries [1-9]/);
      // ECDSA P-256 in the DNSSEC form: r|s, 64 octets (RFC 6605 §4).
      const rrsig = (await dig(dns.port, 'www.signed.example', 'A', ['+dnssec'])).answer.find((a) => a.type === 'RRSIG')!;
      expect(Buffer.from(rrsig.data.split(' ').slice(8).join(''), 'base64').length).toBe(64);
    } finally {
      await dns.close();
    }
  });
});

describe('keys follow the domain', () => {
  it('a settings change turning signing on signs; a record change keeps the DNSKEY set; off stops', () => {
    const index = indexWith([makeZone(signedDomain({}), RECORDS)]);
    expect(index.get('signed.example')!.signing).toBeUndefined();
    const zone = makeZone(signedDomain(), RECORDS);
    expect(index.applyHead(zone.domain, () => zone)).toBe(true);
    const on = index.get('signed.example')!;
    expect(on.signing?.keys.length).toBe(1);
    expect(on.nodes.get('signed.example')!.some((set) => set.type === 48)).toBe(true);
    const record = buildRecord({ name: 'new', type: 1, value: '192.0.2.11' }, 99, 'signed.example', []);
    expect(index.patchZone('signed.example', { put: [record], del: [] }, 2, () => zone)).toBe(true);
    const patched = index.get('signed.example')!;
    expect(patched.signing?.keys[0]!.privateKey).toBe(on.signing?.keys[0]!.privateKey);
    expect(patched.nodes.get('signed.example')!.some((set) => set.type === 48)).toBe(true);
    expect(index.applyHead({ ...zone.domain, dnssec: false, signing: undefined } as DomainState, () => zone)).toBe(true);
    const off = index.get('signed.example')!;
    expect(off.signing).toBeUndefined();
    expect(off.nodes.get('signed.example')!.some((set) => set.type === 48)).toBe(false);
  });

  it('an active key with an unreadable private key, and no other: keyless (SERVFAIL)', () => {
    const index = indexWith([makeZone(signedDomain({ dnssec: true, signing: { keys: [{ ...key, private_key: 'AAAA' }] } }), RECORDS)]);
    expect(index.get('signed.example')!.keyless).toBe(true);
  });
});

describe('signed zones and secondaries', () => {
  it('an AXFR of a signed zone is refused; the catalog leaves it out', () => {
    const secret = randomBytes(32).toString('base64');
    const tsig = parseTsigKey(`hmac-sha256:xfr:${secret}`) as TsigKey;
    const index = indexWith([makeZone(signedDomain(), RECORDS), makeZone({ domain: 'plain.example' }, RECORDS)]);
    const secondaries = Secondaries.of([{ name: 'knot', addresses: ['127.0.0.1'], port: 53, tsigKey: `hmac-sha256:xfr:${secret}`, zones: [], catalog: true }]);
    const now = Math.floor(Date.now() / 1000);
    const responder = new TransferResponder({ secondaries, index, catalog: 'catalog.test', catalogSerial: () => 7, now: () => now });
    const ask = (name: string) => responder.answer(sign(dns2Query(name, 252), tsig, now).message, 'tcp', '127.0.0.1', () => Buffer.from('x'))!;
    expect(ask('signed.example')[0]![3]! & 0xf).toBe(5);
    expect(ask('plain.example')[0]![3]! & 0xf).toBe(0);
    const catalog = Buffer.concat(ask('catalog.test')).toString('latin1');
    expect(catalog).toContain('plain');
    expect(catalog).not.toContain('signed');
  });
});
