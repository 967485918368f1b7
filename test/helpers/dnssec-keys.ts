// DNSSEC signing keys for tests, made here as the API would: a CSK (flags 257) of algorithm 13
// (ECDSA P-256/SHA-256) or 15 (Ed25519), with its DNSKEY public field, PKCS#8 private key and key
// tag, and the DNSKEY in presentation form for a validator's trust anchor.
import { generateKeyPairSync } from 'node:crypto';
import type { DnssecAlgorithm, ZoneSigningKey } from '../../src/model/dnssec.ts';

/** RFC 4034 Appendix B. */
export function keyTag(rdata: Buffer): number {
  let ac = 0;
  for (let i = 0; i < rdata.length; i++) ac += i & 1 ? rdata[i]! : rdata[i]! << 8;
  ac += (ac >> 16) & 0xffff;
  return ac & 0xffff;
}

export function makeSigningKey(algorithm: DnssecAlgorithm = 13, active = true): ZoneSigningKey {
  const pair = algorithm === 13 ? generateKeyPairSync('ec', { namedCurve: 'P-256' }) : generateKeyPairSync('ed25519');
  const jwk = pair.publicKey.export({ format: 'jwk' });
  const publicKey = algorithm === 13 ? Buffer.concat([Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]) : Buffer.from(jwk.x!, 'base64url');
  const rdata = Buffer.concat([Buffer.from([1, 1, 3, algorithm]), publicKey]);
  return {
    algorithm,
    flags: 257,
    public_key: publicKey.toString('base64'),
    private_key: pair.privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'),
    key_tag: keyTag(rdata),
    active,
  };
}

/** "zone. DNSKEY 257 3 13 <base64>" (an Unbound trust-anchor line). */
export const dnskeyText = (zone: string, key: ZoneSigningKey): string => `${zone}. DNSKEY ${key.flags} 3 ${key.algorithm} ${key.public_key}`;
