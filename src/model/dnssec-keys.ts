// A zone's DNSSEC signing key as the API makes it and shows it: the key pair (node:crypto), the
// DNSKEY RDATA (RFC 4034 §2.1), its key tag (RFC 4034 Appendix B) and the DS a parent publishes
// for it (RFC 4034 §5.1.4, SHA-256: RFC 4509). Pure: nothing here stores or sends a key.
import { createHash, generateKeyPairSync } from 'node:crypto';
import type { DnssecAlgorithm, ZoneSigningKey } from './dnssec.ts';

/** DNSKEY flags of a combined signing key: Zone Key (bit 7) and Secure Entry Point (bit 15). */
export const CSK_FLAGS = 257;
/** DNSKEY protocol: always 3 (RFC 4034 §2.1.2). */
const PROTOCOL = 3;
/** DS digest type SHA-256 (RFC 4509). */
export const DIGEST_SHA256 = 2;

/**
 * A new combined signing key of `algorithm`, its private key in the clear (PKCS#8 DER, base64):
 * the caller seals it before it is stored.
 */
export function makeSigningKey(algorithm: DnssecAlgorithm): ZoneSigningKey {
  const { publicKey, privateKey } = algorithm === 13 ? generateKeyPairSync('ec', { namedCurve: 'prime256v1' }) : generateKeyPairSync('ed25519');
  const jwk = publicKey.export({ format: 'jwk' });
  // RFC 6605 §4: the P-256 public key is x then y, 32 octets each; RFC 8080 §3: Ed25519's is its 32 octets.
  const raw = algorithm === 13 ? Buffer.concat([Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]) : Buffer.from(jwk.x!, 'base64url');
  const key = { algorithm, flags: CSK_FLAGS, public_key: raw.toString('base64') };
  return {
    ...key,
    private_key: privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'),
    key_tag: keyTag(dnskeyRdata(key)),
    active: true,
  };
}

/** The DNSKEY RDATA: flags, protocol, algorithm, public key. */
export function dnskeyRdata(key: Pick<ZoneSigningKey, 'flags' | 'algorithm' | 'public_key'>): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt16BE(key.flags, 0);
  head[2] = PROTOCOL;
  head[3] = key.algorithm;
  return Buffer.concat([head, Buffer.from(key.public_key, 'base64')]);
}

/** RFC 4034 Appendix B: the key tag of a DNSKEY RDATA (algorithm 1 excepted: not offered). */
export function keyTag(rdata: Uint8Array): number {
  let sum = 0;
  for (let i = 0; i < rdata.length; i++) sum += i & 1 ? rdata[i]! : rdata[i]! << 8;
  sum += (sum >>> 16) & 0xffff;
  return sum & 0xffff;
}

/** A name in canonical wire form (RFC 4034 §6.2): lower case, each label length-prefixed, the root's zero. */
export function canonicalNameWire(name: string): Buffer {
  const labels = name.replace(/\.$/, '').toLowerCase().split('.').filter((l) => l !== '');
  const parts: Buffer[] = [];
  for (const label of labels) {
    const bytes = Buffer.from(label, 'ascii');
    if (bytes.length > 63) throw new Error(`a label of ${name} is longer than 63 octets`);
    parts.push(Buffer.from([bytes.length]), bytes);
  }
  parts.push(Buffer.from([0]));
  return Buffer.concat(parts);
}

/** The SHA-256 DS digest of `zone`'s DNSKEY (RFC 4034 §5.1.4): over the owner name, then the RDATA. */
export function dsDigest(zone: string, key: Pick<ZoneSigningKey, 'flags' | 'algorithm' | 'public_key'>): Buffer {
  return createHash('sha256').update(canonicalNameWire(zone)).update(dnskeyRdata(key)).digest();
}

/** The DNSKEY RDATA in presentation form: `257 3 13 <base64>`. */
export const dnskeyText = (key: Pick<ZoneSigningKey, 'flags' | 'algorithm' | 'public_key'>): string => `${key.flags} ${PROTOCOL} ${key.algorithm} ${key.public_key}`;

/** The DS RDATA in presentation form, as a registrar takes it: `<tag> <algorithm> 2 <HEX>`. */
export const dsText = (zone: string, key: Pick<ZoneSigningKey, 'flags' | 'algorithm' | 'public_key' | 'key_tag'>): string =>
  `${key.key_tag} ${key.algorithm} ${DIGEST_SHA256} ${dsDigest(zone, key).toString('hex').toUpperCase()}`;
