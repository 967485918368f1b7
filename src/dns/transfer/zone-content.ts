// What a transfer sends of a zone: its SOA, then every other RRset. A served zone's RRsets are
// those our name servers answer with for a client anywhere (the general variant of each
// geo-targeted set: a zone transfer has no client place); sets holding only variants are left out.
// The catalog zone (RFC 9432) is made here too, from the names of the zones served.
import { createHash } from 'node:crypto';
import { QTYPE } from '../wire/constants.ts';
import type { RRset, ZoneData } from '../zone/types.ts';

export interface ZoneContent {
  apex: string;
  soa: RRset;
  serial: number;
  /** Every RRset but the SOA. */
  sets(): Iterable<RRset>;
}

export function servedContent(zone: ZoneData): ZoneContent {
  return {
    apex: zone.apex,
    soa: zone.soa,
    serial: zone.serial,
    *sets() {
      for (const node of zone.nodes.values()) {
        for (const set of node) {
          if (set.type === QTYPE.SOA || set.rdata.length === 0) continue;
          yield set;
        }
      }
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
