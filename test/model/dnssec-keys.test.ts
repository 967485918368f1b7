// The keys the API makes for a signed zone: the DNSKEY's public key field, its key tag and the DS
// digest, each checked against BIND's own dnssec-dsfromkey reading the same DNSKEY (a registrar's
// tools compute the DS the same way), for both algorithms offered.
import { spawnSync } from 'node:child_process';
import { createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { canonicalNameWire, dnskeyRdata, dnskeyText, dsText, keyTag, makeSigningKey } from '../../src/model/dnssec-keys.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';

afterAll(removeTempDirs);

/** What dnssec-dsfromkey (bind9-utils) makes of a DNSKEY: `<tag> <alg> 2 <HEX>`. */
function bindDs(zone: string, dnskey: string): string {
  const file = join(tempDir(), 'dnskey.db');
  writeFileSync(file, `${zone}. 3600 IN DNSKEY ${dnskey}\n`);
  const run = spawnSync('dnssec-dsfromkey', ['-2', '-f', file, zone], { encoding: 'utf8' });
  if (run.error) throw new Error('dnssec-dsfromkey is required for this test (Debian: apt-get install bind9-utils)');
  if (run.status !== 0) throw new Error(`dnssec-dsfromkey failed: ${run.stderr}`);
  const match = /\sDS\s+(\d+ \d+ 2 [0-9A-F]+)\s*$/.exec(run.stdout.trim());
  if (!match) throw new Error(`dnssec-dsfromkey said: ${run.stdout}`);
  return match[1]!;
}

describe('DNSSEC signing keys', () => {
  for (const algorithm of [13, 15] as const) {
    it(`algorithm ${algorithm}: key tag and DS agree with dnssec-dsfromkey`, () => {
      for (const zone of ['example.org', 'Sub.Example-Zone.test', 'xn--bcher-kva.example']) {
        const key = makeSigningKey(algorithm);
        expect(Buffer.from(key.public_key, 'base64')).toHaveLength(algorithm === 13 ? 64 : 32);
        expect(key).toMatchObject({ algorithm, flags: 257, active: true });
        expect(dsText(zone, key)).toBe(bindDs(zone, dnskeyText(key)));
        expect(dsText(zone, key).startsWith(`${key.key_tag} ${algorithm} 2 `)).toBe(true);
      }
    });

    it(`algorithm ${algorithm}: the private key signs what the DNSKEY's public key verifies`, () => {
      const key = makeSigningKey(algorithm);
      const privateKey = createPrivateKey({ key: Buffer.from(key.private_key, 'base64'), format: 'der', type: 'pkcs8' });
      const raw = Buffer.from(key.public_key, 'base64');
      // The public key rebuilt from the DNSKEY field alone, as a validator does.
      const publicKey =
        algorithm === 13
          ? createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: raw.subarray(0, 32).toString('base64url'), y: raw.subarray(32).toString('base64url') }, format: 'jwk' })
          : createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' });
      const data = Buffer.from('rrsig rdata and rrset');
      const hash = algorithm === 13 ? 'sha256' : null;
      const signature = sign(hash, data, algorithm === 13 ? { key: privateKey, dsaEncoding: 'ieee-p1363' } : privateKey);
      expect(verify(hash, data, algorithm === 13 ? { key: publicKey, dsaEncoding: 'ieee-p1363' } : publicKey, signature)).toBe(true);
    });
  }

  it('key tag: the RFC 4034 Appendix B sum, for an RSA key\'s longer field as well (BIND agrees: tag 2136)', () => {
    const key = {
      flags: 257,
      algorithm: 8 as 13,
      public_key:
        'AQOeiiR0GOMYkDshWoSKz9XzfwJr1AYtsmx3TGkJaNXVbfi/2pHm822aJ5iI9BMzNXxeYCmZDRD99WYwYqUSdjMmmAphXdvxegXd/M5+X7OrzKBaMbCVdFLUUh6DhweJBjEVv5f2wwjM9XzcnOf+EPbtG9DMBmADjFDc2w/rkrRaqG+QaLsbuQ==',
    };
    expect(keyTag(dnskeyRdata(key))).toBe(2136);
    expect(bindDs('example.com', dnskeyText(key)).split(' ')[0]).toBe('2136');
  });

  it('RFC 6605 §6.1: the example P-256 DNSKEY of example.net has the DS the RFC gives', () => {
    const key = { flags: 257, algorithm: 13 as const, public_key: 'GojIhhXUN/u4v54ZQqGSnyhWJwaubCvTmeexv7bR6edbkrSqQpF64cYbcB7wNcP+e+MAnLr+Wi9xMWyQLc8NAA==' };
    expect(dsText('example.net', { ...key, key_tag: keyTag(dnskeyRdata(key)) })).toBe('55648 13 2 B4C8C1FE2E7477127B27115656AD6256F424625BF5C1E2770CE6D6E37DF61D17');
  });

  it('owner names go into the digest in canonical wire form', () => {
    expect([...canonicalNameWire('Ab.C.')]).toEqual([2, 0x61, 0x62, 1, 0x63, 0]);
    expect([...canonicalNameWire('.')]).toEqual([0]);
  });
});
