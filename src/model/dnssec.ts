// A zone's DNSSEC signing keys as name servers hold them. The API makes them (and keeps them
// sealed at rest, as certificate keys are); the name servers' feed carries them in the clear to
// name servers only, on the domain's state as `signing`. They never appear in an API answer, an
// edge's feed, /metrics or a log line. A name server signs a zone's answers when `signing` has an
// active key, and answers SERVFAIL for a zone whose domain says `dnssec` but whose keys it lacks.

/** DNSSEC algorithm numbers offered: 13 ECDSA P-256 with SHA-256 (default), 15 Ed25519. */
export type DnssecAlgorithm = 13 | 15;

export interface ZoneSigningKey {
  algorithm: DnssecAlgorithm;
  /** DNSKEY flags: 257 for a combined signing key (zone key + secure entry point). */
  flags: number;
  /** The DNSKEY public key field, base64 (RFC 6605 §4: x then y for P-256; RFC 8080 for Ed25519). */
  public_key: string;
  /** The private key, PKCS#8 DER, base64. */
  private_key: string;
  /** RFC 4034 Appendix B key tag of the DNSKEY. */
  key_tag: number;
  /** Signs answers; a key only published (a rollover's next key) is in the DNSKEY set but signs nothing. */
  active: boolean;
  /**
   * The key's part in a key rollover (model/dnssec-rollover.ts), absent outside one: `incoming`,
   * published (in the DNSKEY set, signing nothing) while the parent takes its DS (CDS/CDNSKEY list
   * it beside the active key's); `retiring`, the key replaced, still published (signing nothing)
   * until no cached answer needs it and the parent has dropped its DS (CDS/CDNSKEY no longer list it).
   */
  rollover?: 'incoming' | 'retiring';
  /** When the key took its `rollover` part (ISO time): the phase's waits count from then. */
  since?: string;
}

/**
 * TTL of the DNSKEY RRset (and of CDS/CDNSKEY) name servers publish: an hour, as the SOA's
 * default. A rollover's first phase waits it out (resolvers may hold a DNSKEY set without the new key).
 */
export const DNSKEY_TTL = 3600;

export interface ZoneSigning {
  keys: ZoneSigningKey[];
  /**
   * `dnssec` was turned off while the parent zone may still hold a DS for these keys: name
   * servers keep signing with them and publish the delete signal (RFC 8078: `CDS 0 0 0 00`,
   * `CDNSKEY 0 3 0 AA==`) until the parent's DS is seen gone (and its TTL over); then this goes,
   * and with it the keys from the name servers. Absent otherwise.
   */
  unsigning?: boolean;
}
