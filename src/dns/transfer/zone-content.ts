// What a transfer sends of a zone: its SOA, then every other RRset. A served zone's RRsets are
// those our name servers answer with for a client anywhere (the general variant of each
// geo-targeted set: a zone transfer has no client place); sets holding only variants are left out.
// A name holding nothing but variants is NODATA on our name servers for the rest of the world; a
// secondary that had no record of it would answer NXDOMAIN (for it and the empty non-terminals
// above it). It gets one record of a private-use type (RFC 6895) in its place, which keeps the
// name existing without answering any question but its own type's: see GEO_ONLY_TYPE.
// The catalog zone (RFC 9432) is made here too, from the names of the zones served.
import { createHash } from 'node:crypto';
import { QTYPE } from '../wire/constants.ts';
import type { NameNode, RData, RRset, ZoneData } from '../zone/types.ts';

/**
 * The type of the record standing for a geo-only name on secondaries: 65280, the first of the
 * private-use range (RFC 6895 §3.1), which no resolver asks for. Its data is one character-string.
 */
export const GEO_ONLY_TYPE = 65280;
/** Written as a TXT's data is (one character-string), under GEO_ONLY_TYPE. */
const GEO_ONLY_RDATA: RData = { type: 16, strings: [Buffer.from('geo-only')] };

/**
 * The RRsets a transfer carries for one owner name (the SOA aside): its general sets, or, for a
 * name holding only geo variants, the one record that keeps it existing.
 */
export function transferredSets(node: NameNode): RRset[] {
  const out: RRset[] = [];
  let variants: RRset | undefined;
  for (const set of node) {
    if (set.type === QTYPE.SOA) continue;
    if (set.rdata.length > 0) out.push(set);
    else if (set.byTarget && set.byTarget.size > 0) variants ??= set;
  }
  if (out.length === 0 && variants) out.push({ name: variants.name, type: GEO_ONLY_TYPE, ttl: variants.ttl, rdata: [GEO_ONLY_RDATA] });
  return out;
}

export interface ZoneContent {
  apex: string;
  soa: RRset;
  serial: number;
  /** Every RRset but the SOA. */
  sets(): Iterable<RRset>;
}

export function servedContent(zone: ZoneData): ZoneContent {
  // The names as they are now: a change patches the zone's name map in place, and a transfer is
  // sent over many turns of the event loop (stream.ts). The names' own sets are never changed.
  const nodes = Array.from(zone.nodes.values());
  return {
    apex: zone.apex,
    soa: zone.soa,
    serial: zone.serial,
    *sets() {
      for (const node of nodes) yield* transferredSets(node);
    },
  };
}

const PTR = 12;
/** Where the catalog's SOA and NS point (RFC 9432 §4.1: the NS is "invalid."). */
const INVALID = 'invalid';
const CATALOG_TTL = 0;

/** A member's unique label (RFC 9432 §4.3.1): stable for the zone's name, as a hash of it. */
export function memberLabel(zone: string): string {
  return createHash('sha1').update(zone).digest('hex');
}

/** The catalog zone listing `zones` (RFC 9432, schema version 2), at `serial`. */
export function catalogContent(apex: string, serial: number, zones: () => Iterable<string>): ZoneContent {
  const soa: RRset = {
    name: apex,
    type: QTYPE.SOA,
    ttl: CATALOG_TTL,
    rdata: [{ type: 6, mname: INVALID, rname: INVALID, serial, refresh: 60, retry: 30, expire: 1_209_600, minimum: 0 }],
  };
  return {
    apex,
    soa,
    serial,
    *sets() {
      yield { name: apex, type: QTYPE.NS, ttl: CATALOG_TTL, rdata: [{ type: 2, target: INVALID }] };
      yield { name: `version.${apex}`, type: QTYPE.TXT, ttl: CATALOG_TTL, rdata: [{ type: 16, strings: [Buffer.from('2')] }] };
      // PTR data is one (compressible) name, as CNAME data is: written by the same encoder.
      for (const zone of zones()) yield { name: `${memberLabel(zone)}.zones.${apex}`, type: PTR, ttl: CATALOG_TTL, rdata: [{ type: 5, target: zone }] };
    },
  };
}
