// A domain's DNSSEC keys (`signing`, as the name servers' feed carries them) turned into what the
// signer needs: a private KeyObject made once per key per build, and the DNSKEY RRset published
// at the apex (every key, active or only published). Malformed keys are left out: a zone whose
// domain says `dnssec` and that keeps no usable active key is marked keyless (answered SERVFAIL).
import { createPrivateKey } from 'node:crypto';
import type { DomainState } from '../../model/domain.ts';
import type { ZoneSigning as ModelSigning } from '../../model/dnssec.ts';
import type { RData, RRset, SigningKey, ZoneSigning } from './types.ts';

/** DNSKEY (RFC 4034 §2). */
export const DNSKEY_TYPE = 48;
/** TTL of the DNSKEY RRset: an hour, as the SOA's default. */
export const DNSKEY_TTL = 3600;

/** The domain state's DNSSEC fields, as the name servers' feed carries them. */
export type SignedDomainState = DomainState & { dnssec?: boolean; signing?: ModelSigning };

export interface ZoneSigningState {
  signing?: ZoneSigning;
  keyless?: boolean;
}

const NOT_SIGNED: ZoneSigningState = {};

export function dnskeyRdata(flags: number, algorithm: number, publicKey: Buffer): Buffer {
  const out = Buffer.allocUnsafe(4 + publicKey.length);
  out.writeUInt16BE(flags, 0);
  out[2] = 3; // protocol (RFC 4034 §2.1.2)
  out[3] = algorithm;
  publicKey.copy(out, 4);
  return out;
}

export function zoneSigningOf(domain: DomainState): ZoneSigningState {
  const { dnssec, signing } = domain as SignedDomainState;
  const wanted = dnssec === true || (signing?.keys.some((k) => k.active) ?? false);
  if (!wanted) return NOT_SIGNED;
  const keys: SigningKey[] = [];
  const published: RData[] = [];
  for (const key of signing?.keys ?? []) {
    if (key.algorithm !== 13 && key.algorithm !== 15) continue;
    const publicKey = Buffer.from(key.public_key, 'base64');
    if (publicKey.length !== (key.algorithm === 13 ? 64 : 32)) continue;
    published.push({ type: 0, data: dnskeyRdata(key.flags, key.algorithm, publicKey) });
    if (!key.active) continue;
    try {
      const privateKey = createPrivateKey({ key: Buffer.from(key.private_key, 'base64'), format: 'der', type: 'pkcs8' });
      keys.push({ algorithm: key.algorithm, keyTag: key.key_tag, privateKey, id: `${key.algorithm}/${key.key_tag}/${key.public_key.slice(0, 16)}` });
    } catch {
      // An unreadable private key signs nothing; with no other active key the zone is keyless.
    }
  }
  if (keys.length === 0) return { keyless: true };
  const dnskey: RRset = { name: domain.domain, type: DNSKEY_TYPE, ttl: DNSKEY_TTL, rdata: published };
  return { signing: { keys, dnskey } };
}
