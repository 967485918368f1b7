// The answer engine's input and output: plain data, no sockets, no wire format.
import type { RRset, ZoneData } from '../zone/types.ts';

export interface Question {
  /** Lower-case, no final dot. */
  qname: string;
  qtype: number;
}

/** Where the client is, as GeoNames IDs; absent when unknown. */
export interface ClientLocation {
  country?: number;
  continent?: number;
  /** How far the location holds: the length of the database network it came from. */
  prefix?: number;
}

export interface Answer {
  rcode: number;
  /** Authoritative answer: false for referrals and REFUSED. */
  aa: boolean;
  answer: RRset[];
  authority: RRset[];
  additional: RRset[];
  /** The zones this answer was read from; a cached copy is stale once any of them is replaced. */
  zones: ZoneData[];
  /** True when the client's location chose among variants (ECS SCOPE must then be non-zero). */
  geoUsed: boolean;
}
