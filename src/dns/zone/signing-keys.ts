// A domain's DNSSEC keys (`signing`, as the name servers' feed carries them) turned into what the
// signer needs: a private KeyObject made once per key per build, and the sets published at the
// apex: DNSKEY (every key, active or only published), and CDS/CDNSKEY (RFC 7344: the active key
// and a rollover's incoming one, for parents that scan to take the DS from) — or, while the domain is turning DNSSEC off
// (`unsigning`), the delete signal instead (RFC 8078 §4: `CDS 0 0 0 00`, `CDNSKEY 0 3 0 AA==`).
// Malformed keys are left out: a zone whose domain says `dnssec` and that keeps no usable active
// key is marked keyless (answered SERVFAIL).
import { createPrivateKey } from 'node:crypto';
import type { DomainState } from '../../model/domain.ts';
import { DNSKEY_TTL, type ZoneSigning as ModelSigning } from '../../model/dnssec.ts';
import { DIGEST_SHA256, dsDigest } from '../../model/dnssec-keys.ts';
import type { RData, RRset, SigningKey, ZoneSigning } from './types.ts';

/** DNSKEY (RFC 4034 §2). */
export const DNSKEY_TYPE = 48;
/** CDS and CDNSKEY (RFC 7344 §3.1, §3.2). */
export const CDS_TYPE = 59;
export const CDNSKEY_TYPE = 60;
export { DNSKEY_TTL };
/** The types the keys publish at the apex (a rebuild of the apex replaces them). */
export const KEY_APEX_TYPES: ReadonlySet<number> = new Set([DNSKEY_TYPE, CDS_TYPE, CDNSKEY_TYPE]);

/** RFC 8078 §4: the delete signal, `CDS 0 0 0 00` (key tag 0, algorithm 0, digest type 0, one zero octet). */
const CDS_DELETE = Buffer.from([0, 0, 0, 0, 0]);
/** RFC 8078 §4: `CDNSKEY 0 3 0 AA==` (flags 0, protocol 3, algorithm 0, one zero octet). */
const CDNSKEY_DELETE = Buffer.from([0, 0, 3, 0, 0]);

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
  const cds: RData[] = [];
  const cdnskey: RData[] = [];
  for (const key of signing?.keys ?? []) {
    if (key.algorithm !== 13 && key.algorithm !== 15) continue;
    const publicKey = Buffer.from(key.public_key, 'base64');
    if (publicKey.length !== (key.algorithm === 13 ? 64 : 32)) continue;
    published.push({ type: 0, data: dnskeyRdata(key.flags, key.algorithm, publicKey) });
    // The DS a parent should hold (SHA-256, RFC 4509), and the DNSKEY itself for parents that make
    // their own digest: the active key's, and in a rollover the incoming key's beside it (the
    // parent adds it before the old one goes); a retiring key's no longer (the parent may drop it).
    if (key.active || key.rollover === 'incoming') {
      const head = Buffer.from([key.key_tag >> 8, key.key_tag & 0xff, key.algorithm, DIGEST_SHA256]);
      cds.push({ type: 0, data: Buffer.concat([head, dsDigest(domain.domain, key)]) });
      cdnskey.push(published[published.length - 1]!);
    }
    if (!key.active) continue;
    try {
      const privateKey = createPrivateKey({ key: Buffer.from(key.private_key, 'base64'), format: 'der', type: 'pkcs8' });
      keys.push({ algorithm: key.algorithm, keyTag: key.key_tag, privateKey, id: `${key.algorithm}/${key.key_tag}/${key.public_key.slice(0, 16)}` });
    } catch {
      // An unreadable private key signs nothing; with no other active key the zone is keyless.
    }
  }
  if (keys.length === 0) return { keyless: true };
  const set = (type: number, rdata: RData[]): RRset => ({ name: domain.domain, type, ttl: DNSKEY_TTL, rdata });
  const dnskey = set(DNSKEY_TYPE, published);
  // Turning off (the feed still carries the keys, `dnssec` no longer says so): ask the parent to remove the DS.
  const deleting = dnssec !== true || signing?.unsigning === true;
  const apexSets = deleting
    ? [dnskey, set(CDS_TYPE, [{ type: 0, data: CDS_DELETE }]), set(CDNSKEY_TYPE, [{ type: 0, data: CDNSKEY_DELETE }])]
    : [dnskey, set(CDS_TYPE, cds), set(CDNSKEY_TYPE, cdnskey)];
  return { signing: { keys, dnskey, apexSets } };
}
