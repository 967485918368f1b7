// What the parent zone holds for a domain's DNSSEC (its DS set), as the monitor last saw it, and
// what follows from it: whether a DS there matches one of our keys (the zone is secure), and when
// a domain turning DNSSEC off may stop signing (no DS at the parent any more, and the last DS
// seen there has had its TTL to leave resolvers' caches), and, for a key rollover, since when each
// DS has been there or gone (model/dnssec-rollover.ts). Pure.
import { createHash } from 'node:crypto';
import type { ZoneSigningKey } from './dnssec.ts';
import { canonicalNameWire, dnskeyRdata } from './dnssec-keys.ts';

/** What the monitor last saw of the parent's DS set (kept beside the domain, not in it: a look changes no serial). */
export interface ParentDsSeen {
  /** When it was looked at. */
  at: string;
  /** The DS RDATA the parent holds, presentation form (`<tag> <alg> <digest type> <HEX>`); absent: no definite answer. */
  ds?: string[];
  /** Where it was read: the parent zone's servers, the resolver, or the parent zone served here. */
  from?: 'parent' | 'resolver' | 'store';
  /** Why nothing definite was seen (no resolver, no answer). */
  note?: string;
  /** Since when the parent is seen with no DS at all (a domain turning off waits `lastTtl` from then). */
  goneSince?: string;
  /** The TTL of the DS set when it was last seen there (seconds). */
  lastTtl?: number;
  /** Since when each DS now at the parent (by `dsKey`) has been seen there: a rollover waits its TTL from then. */
  dsSince?: Record<string, string>;
  /**
   * DS records seen gone from the parent whose TTL may not be over yet (by `dsKey`): when first
   * seen gone and the set's TTL before. A rollover removes the old key only once its DS is neither
   * at the parent nor here.
   */
  dsLeft?: Record<string, { at: string; ttl: number }>;
}

/** A DS RDATA in one spelling (fields by single spaces, digest upper case): what `dsSince` and `dsLeft` are keyed by. */
export const dsKey = (ds: string): string => {
  const [tag, algorithm, type, ...hex] = ds.trim().split(/\s+/);
  return `${tag} ${algorithm} ${type} ${hex.join('').toUpperCase()}`;
};

/** Longest wait for a DS set's TTL once it is gone (a parent's DS TTL is a day or two at most in practice). */
export const MAX_DS_TTL = 2 * 86_400;

const DIGESTS: Record<number, string> = { 1: 'sha1', 2: 'sha256', 4: 'sha384' };

/** Whether a DS RDATA (presentation form) is the digest of `key` as `zone`'s DNSKEY (RFC 4034 §5.1.4). */
export function dsMatchesKey(zone: string, key: Pick<ZoneSigningKey, 'flags' | 'algorithm' | 'public_key' | 'key_tag'>, ds: string): boolean {
  const [tag, algorithm, digestType, ...hex] = ds.trim().split(/\s+/);
  const hash = DIGESTS[Number(digestType)];
  if (!hash || Number(tag) !== key.key_tag || Number(algorithm) !== key.algorithm) return false;
  const digest = createHash(hash).update(canonicalNameWire(zone)).update(dnskeyRdata(key)).digest('hex');
  return digest === hex.join('').toLowerCase();
}

/** Whether the parent was seen holding a DS of one of `keys`. */
export const parentHoldsOurDs = (zone: string, keys: readonly ZoneSigningKey[], seen: ParentDsSeen | undefined): boolean =>
  (seen?.ds ?? []).some((ds) => keys.some((k) => k.active && dsMatchesKey(zone, k, ds)));

/** When a domain turning off may stop signing (ms), or undefined while a DS may still be at the parent. */
export function unsignedFrom(seen: ParentDsSeen | undefined): number | undefined {
  if (!seen?.goneSince || seen.ds === undefined || seen.ds.length > 0) return undefined;
  return Date.parse(seen.goneSince) + Math.min(seen.lastTtl ?? 0, MAX_DS_TTL) * 1000;
}

/** The next record of a look: the DS set seen (`found`: undefined when nothing definite was answered). */
export function nextSeen(previous: ParentDsSeen | undefined, found: { ds: string[]; ttl: number } | undefined, at: string, from: ParentDsSeen['from'], note?: string): ParentDsSeen {
  if (!found) {
    // Nothing definite: what was known stays (a DS seen gone stays gone; the wait goes on).
    return { ...previous, at, ds: undefined, ...(from && { from }), note: note ?? 'no definite answer' };
  }
  const history = dsHistory(previous, found.ds, at);
  if (found.ds.length > 0) return { at, ds: found.ds, from, lastTtl: Math.min(found.ttl, MAX_DS_TTL), ...history };
  return { at, ds: [], from, goneSince: previous?.goneSince ?? at, ...(previous?.lastTtl !== undefined && { lastTtl: previous.lastTtl }), ...history };
}

/** Each DS's first sighting in its present stay at the parent, and those gone whose TTL is not over. */
function dsHistory(previous: ParentDsSeen | undefined, ds: string[], at: string): Pick<ParentDsSeen, 'dsSince' | 'dsLeft'> {
  const now = dsKeys(ds);
  const dsSince: Record<string, string> = {};
  for (const key of now) dsSince[key] = previous?.dsSince?.[key] ?? at;
  const dsLeft: Record<string, { at: string; ttl: number }> = {};
  const atMs = Date.parse(at);
  for (const [key, left] of Object.entries(previous?.dsLeft ?? {})) {
    if (!now.has(key) && Date.parse(left.at) + left.ttl * 1000 > atMs) dsLeft[key] = left;
  }
  const ttl = Math.min(previous?.lastTtl ?? 0, MAX_DS_TTL);
  // What the last definite look saw (a look without a definite answer keeps it).
  for (const key of Object.keys(previous?.dsSince ?? {})) if (!now.has(key)) dsLeft[key] = { at, ttl };
  return { ...(now.size > 0 && { dsSince }), ...(Object.keys(dsLeft).length > 0 && { dsLeft }) };
}

const dsKeys = (ds: readonly string[]): Set<string> => new Set(ds.map(dsKey));
