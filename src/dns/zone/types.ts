// The in-memory shape of a served zone, built for lookups (see build.ts).
import type { DomainState } from '../../model/domain.ts';
import type { RecordState } from '../../model/record.ts';
import type { KeyObject } from 'node:crypto';

/** SVCB and HTTPS RDATA (RFC 9460 §2.2): the SvcParams kept in wire form, keys increasing. */
export interface SvcbRData {
  type: 64 | 65;
  priority: number;
  /** Absolute, lower case, no final dot; "" is the root. */
  target: string;
  /** The SvcParams as sent. */
  params: Buffer;
}

export type RData =
  | SvcbRData // SVCB 64, HTTPS 65 (svcb.ts)
  | { type: 1; address: number } // A: the 4 octets as one int32 (no Buffer per record: millions are held)
  | { type: 28; address: Buffer } // AAAA: 16 octets
  | { type: 5; target: string } // CNAME
  | { type: 2; target: string } // NS
  | { type: 15; preference: number; exchange: string } // MX
  | { type: 16; strings: Buffer[] } // TXT: character-strings of ≤ 255 octets
  | { type: 33; priority: number; weight: number; port: number; target: string } // SRV
  | { type: 6; mname: string; rname: string; serial: number; refresh: number; retry: number; expire: number; minimum: number } // SOA
  | { type: 13; cpu: string; os: string } // HINFO (RFC 8482 answers to ANY)
  | { type: 0; data: Buffer }; // a type of ../../model/values (CAA, DS…): its RDATA as encoded there, the TYPE in its RRset

/** Records of one owner, type and geo variant: served together with one TTL (RFC 2181 §5.2). */
export interface RRset {
  /** Absolute, lower-case, without the final dot. */
  name: string;
  type: number;
  ttl: number;
  rdata: RData[];
}

/**
 * The records of one owner and type as held: the general set (its rdata is empty when the name
 * has only geo variants of this type) and, by GeoNames ID (country or continent), the variants.
 */
export interface TypeSet extends RRset {
  byTarget?: Map<number, RRset>;
}

/** What an owner name holds: one TypeSet per type, a short array scanned by type. */
export type NameNode = TypeSet[];

export function typeSet(node: NameNode, type: number): TypeSet | undefined {
  for (const set of node) if (set.type === type) return set;
  return undefined;
}

/** One of a zone's DNSSEC keys as the signer uses it (signing-keys.ts). */
export interface SigningKey {
  algorithm: 13 | 15;
  keyTag: number;
  /** Made once per key, when the zone is built (never per signature). */
  privateKey: KeyObject;
  /** A short identity for the signature cache (algorithm, tag and the start of the public key). */
  id: string;
}

/** What a zone signs with: its active keys and the DNSKEY RRset (also at the apex node). */
export interface ZoneSigning {
  keys: SigningKey[];
  dnskey: RRset;
  /** What the keys put at the apex node: DNSKEY, CDS and CDNSKEY (signing-keys.ts). */
  apexSets: RRset[];
}

export interface ZoneData {
  apex: string;
  /** The zone signs DNSSEC-OK answers with these (the domain's `signing` with an active key). */
  signing?: ZoneSigning;
  /**
   * The domain says `dnssec` but this name server holds no active key for it: every answer from
   * the zone is SERVFAIL rather than an unsigned answer a validator would take for a downgrade.
   */
  keyless?: boolean;
  /** The domain's settings as built, kept with `sources` (what a patch rebuilds names from). */
  domain?: DomainState;
  /**
   * The customer's records by owner name (absolute), kept once a zone has been patched: a
   * difference rebuilds only the names it touches from these (patch.ts). Absent after a whole
   * build (most zones never change after a load; keeping them all would double the memory).
   */
  sources?: Map<string, RecordState[]>;
  /**
   * How many existing names (holding data, or empty non-terminals) lie directly below each name
   * under the apex; counted when a change first adds or removes a name (patch.ts), then kept.
   */
  children?: Map<string, number>;
  /** Owner names that hold data (absolute) → their sets. */
  nodes: Map<string, NameNode>;
  /** Names that exist only because something exists below them (RFC 8020 empty non-terminals). */
  ents: ReadonlySet<string>;
  /** Delegation points below the apex (owners of NS records). */
  cuts: ReadonlySet<string>;
  soa: RRset;
  ns: RRset;
  /** TTL of negative answers: min(SOA TTL, SOA MINIMUM) (RFC 2308 §3). */
  negativeTtl: number;
  serial: number;
  /** Whether any answer depends on the client's location. */
  hasGeo: boolean;
  /** Protected names resolve to edge node addresses, so node changes rebuild this zone. */
  usesNodes: boolean;
  /**
   * The mask the protected names were judged by: a settings change rebuilds those names as well
   * as the new mask's (the domain it was built from is not kept, and a feeder's copy may be newer).
   */
  mask: string;
  /** Set when a newer build replaces this one: cached answers built from it are then stale. */
  stale: boolean;
}

/** A zone this name server signs (or must sign and cannot, lacking keys): not offered to secondaries in this slice. */
export const isSignedZone = (zone: ZoneData | undefined): boolean => zone !== undefined && (zone.signing !== undefined || zone.keyless === true);
