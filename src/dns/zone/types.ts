// The in-memory shape of a served zone, built for lookups (see build.ts).

export type RData =
  | { type: 1; address: Buffer } // A: 4 octets
  | { type: 28; address: Buffer } // AAAA: 16 octets
  | { type: 5; target: string } // CNAME
  | { type: 2; target: string } // NS
  | { type: 15; preference: number; exchange: string } // MX
  | { type: 16; strings: Buffer[] } // TXT: character-strings of ≤ 255 octets
  | { type: 33; priority: number; weight: number; port: number; target: string } // SRV
  | { type: 6; mname: string; rname: string; serial: number; refresh: number; retry: number; expire: number; minimum: number } // SOA
  | { type: 13; cpu: string; os: string }; // HINFO (RFC 8482 answers to ANY)

/** Records of one owner, type and geo variant: served together with one TTL (RFC 2181 §5.2). */
export interface RRset {
  /** Absolute, lower-case, without the final dot. */
  name: string;
  type: number;
  ttl: number;
  rdata: RData[];
}

/** The variants of one owner and type: the general set and one set per geo target. */
export interface TypeEntry {
  general?: RRset;
  /** GeoNames ID (country or continent) → the records whose `target` holds it. */
  byTarget?: Map<number, RRset>;
}

export interface NameNode {
  name: string;
  types: Map<number, TypeEntry>;
}

export interface ZoneData {
  apex: string;
  /** Owner names that hold data, absolute. */
  nodes: Map<string, NameNode>;
  /** Names that exist only because something exists below them (RFC 8020 empty non-terminals). */
  ents: Set<string>;
  /** Delegation points below the apex (owners of NS records). */
  cuts: Set<string>;
  soa: RRset;
  ns: RRset;
  /** TTL of negative answers: min(SOA TTL, SOA MINIMUM) (RFC 2308 §3). */
  negativeTtl: number;
  serial: number;
  /** Whether any answer depends on the client's location. */
  hasGeo: boolean;
  /** Protected names resolve to edge node addresses, so node changes rebuild this zone. */
  usesNodes: boolean;
  /** Set when a newer build replaces this one: cached answers built from it are then stale. */
  stale: boolean;
}
