// A key rollover of a zone's combined signing key (CSK), double-DS (RFC 7583 §3.3, with the one
// key standing for both KSK and ZSK), the algorithm kept. Pure: the phases, what each waits for,
// and the next key set; the monitor (../ownership/dnssec-parent.ts) looks at the parent and
// moves a rollover on, the operator starts one (`palisade admin domain dnssec-rollover`).
//
//   start    a new key is made and published: in the DNSKEY set, signing nothing (`incoming`);
//            CDS/CDNSKEY list it beside the active key, so the parent may add its DS.
//   publish  waits: the DNSKEY TTL since the new key's publication (a resolver holding the DNSKEY
//            set without it would fail answers signed by it), AND the parent seen holding the new
//            key's DS for that DS set's TTL (a resolver holding the DS set without it would too).
//   switch   the new key signs; the old one stays published, signing nothing (`retiring`), and
//            CDS/CDNSKEY list only the new key (the parent may drop the old DS).
//   retire   waits: the zone's largest TTL since the switch (answers signed by the old key alone
//            leave caches), AND the parent seen without the old key's DS for its TTL.
//   done     the old key is removed: one key again, the parent holding its DS (`secure`).
//
// Each wait is on what a resolver can have cached, so a validating resolver sees no failure at
// any moment. Nothing moves on a look that got no definite answer from the parent.
import type { DnssecAlgorithm, ZoneSigning, ZoneSigningKey } from './dnssec.ts';
import { dsKey, dsMatchesKey, MAX_DS_TTL, type ParentDsSeen } from './dnssec-parent.ts';

/** `publish`: the new key published, waiting for its DS at the parent; `retire`: the new key signs, the old one waits to go. */
export type RolloverPhase = 'publish' | 'retire';
/** A key's role as the customer sees it. */
export type KeyRole = 'published' | 'active' | 'retiring';

export const keyRole = (key: Pick<ZoneSigningKey, 'active' | 'rollover'>): KeyRole =>
  key.rollover === 'incoming' ? 'published' : key.rollover === 'retiring' ? 'retiring' : 'active';

export function rolloverPhase(signing: ZoneSigning | undefined): RolloverPhase | undefined {
  if (signing?.keys.some((k) => k.rollover === 'incoming')) return 'publish';
  if (signing?.keys.some((k) => k.rollover === 'retiring')) return 'retire';
  return undefined;
}

/** The waits a rollover counts on our side (seconds), already bounded by how long resolvers keep anything. */
export interface RolloverWaits {
  /** The DNSKEY set's TTL. */
  dnskeyTtl: number;
  /** The zone's largest TTL (any RRset a resolver may hold signed by the old key alone). */
  zoneTtl: number;
}

export interface RolloverProgress {
  phase: RolloverPhase;
  /** When our side's wait ends (ms). */
  timeReadyAt: number;
  /** The parent is seen as the phase needs it (the new DS there, or the old one gone), each for its TTL. */
  parentReady: boolean;
  /** What is still waited for, in words; empty: the phase may end. */
  waiting: string[];
  /** In `publish`: whether the parent was seen holding the DS of the key that signs (undefined: nothing definite seen). */
  activeDsHeld?: boolean;
}

type Fields = { dnssec?: boolean; signing?: ZoneSigning };

/**
 * The domain's signing with a rollover started: a new key of the active key's algorithm,
 * published only; `make` makes a key (its private key sealed as stored). Refused (in words) for a
 * domain that does not sign, is turning DNSSEC off, or is already rolling its key.
 */
export function startRollover(domain: Fields, make: (algorithm: DnssecAlgorithm) => ZoneSigningKey, now: string): { signing: ZoneSigning } | { refuse: string } {
  const signing = domain.signing;
  if (domain.dnssec !== true || !signing) return { refuse: 'DNSSEC is off for this domain: there is no key to roll' };
  if (signing.unsigning) return { refuse: 'DNSSEC is being turned off for this domain: no rollover while its DS is being removed' };
  const phase = rolloverPhase(signing);
  if (phase) return { refuse: `a key rollover is already under way (phase ${phase}): GET /domains/{domain}/dnssec says what it waits for` };
  const active = signing.keys.filter((k) => k.active);
  if (active.length !== 1) return { refuse: `the zone has ${active.length} active keys, not one: nothing to roll from` };
  // Another key tag, so the DS of each key stays apart at the parent (a collision is 1 in 65,536).
  let key = make(active[0]!.algorithm);
  while (signing.keys.some((k) => k.key_tag === key.key_tag)) key = make(active[0]!.algorithm);
  return { signing: { ...signing, keys: [...signing.keys, { ...key, active: false, rollover: 'incoming', since: now }] } };
}

/** Where a rollover stands: the phase, our side's wait, the parent's. Undefined outside a rollover. */
export function rolloverProgress(zone: string, signing: ZoneSigning | undefined, seen: ParentDsSeen | undefined, nowMs: number, waits: RolloverWaits): RolloverProgress | undefined {
  const phase = rolloverPhase(signing);
  if (!phase || !signing) return undefined;
  const key = signing.keys.find((k) => k.rollover === (phase === 'publish' ? 'incoming' : 'retiring'))!;
  const since = Date.parse(key.since ?? '') || 0;
  const timeReadyAt = since + (phase === 'publish' ? waits.dnskeyTtl : waits.zoneTtl) * 1000;
  const waiting: string[] = [];
  if (nowMs < timeReadyAt) {
    const left = Math.ceil((timeReadyAt - nowMs) / 1000);
    waiting.push(phase === 'publish' ? `the DNSKEY set's TTL since the new key was published (${left} s more)` : `the zone's largest TTL since the new key began signing (${left} s more)`);
  }
  const parent = phase === 'publish' ? newDsHeld(zone, key, seen, nowMs) : oldDsGone(zone, key, seen, nowMs);
  if (parent !== true) waiting.push(parent);
  const progress: RolloverProgress = { phase, timeReadyAt, parentReady: parent === true, waiting };
  // The current key's DS taken away too soon (before the new key signs) fails the domain: said in the next step.
  if (phase === 'publish' && seen?.ds !== undefined) progress.activeDsHeld = seen.ds.some((ds) => signing.keys.some((k) => k.active && dsMatchesKey(zone, k, ds)));
  return progress;
}

/** True once the parent has held the new key's DS for its TTL; else what is waited for. */
function newDsHeld(zone: string, key: ZoneSigningKey, seen: ParentDsSeen | undefined, nowMs: number): true | string {
  if (seen?.ds === undefined) return 'a definite answer from the parent zone (its DS set)';
  const held = seen.ds.find((ds) => dsMatchesKey(zone, key, ds));
  if (!held) return 'the new key\'s DS at the parent';
  const from = Date.parse(seen.dsSince?.[dsKey(held)] ?? seen.at) + Math.min(seen.lastTtl ?? 0, MAX_DS_TTL) * 1000;
  return nowMs >= from ? true : `the parent's DS set's TTL since the new DS was seen there (${Math.ceil((from - nowMs) / 1000)} s more)`;
}

/** True once the parent has been without the old key's DS for its TTL; else what is waited for. */
function oldDsGone(zone: string, key: ZoneSigningKey, seen: ParentDsSeen | undefined, nowMs: number): true | string {
  if (seen?.ds === undefined) return 'a definite answer from the parent zone (its DS set)';
  if (seen.ds.some((ds) => dsMatchesKey(zone, key, ds))) return 'the old key\'s DS gone from the parent';
  let until = 0;
  for (const [ds, left] of Object.entries(seen.dsLeft ?? {})) if (dsMatchesKey(zone, key, ds)) until = Math.max(until, Date.parse(left.at) + left.ttl * 1000);
  return nowMs >= until ? true : `the parent's DS set's TTL since the old DS was seen gone (${Math.ceil((until - nowMs) / 1000)} s more)`;
}

/**
 * The next key set once a phase's waits are over: `publish` → the new key signs, the old one
 * retires (published, signing nothing, out of CDS/CDNSKEY); `retire` → the old key goes.
 */
export function advanceRollover(signing: ZoneSigning, now: string): ZoneSigning {
  const phase = rolloverPhase(signing);
  if (phase === 'publish') {
    return {
      ...signing,
      keys: signing.keys.map((k) => {
        const { rollover, since: _since, ...rest } = k;
        if (rollover === 'incoming') return { ...rest, active: true };
        return k.active ? { ...rest, active: false, rollover: 'retiring', since: now } : k;
      }),
    };
  }
  if (phase === 'retire') return { ...signing, keys: signing.keys.filter((k) => k.rollover !== 'retiring') };
  return signing;
}

/**
 * The operator's step past the parent (`dnssec-rollover --continue`), where the service cannot
 * look at it: the operator has checked the parent's DS as the phase needs it. Our own wait (the
 * DNSKEY or the zone's TTL) is never skipped.
 */
export function continueRollover(progress: RolloverProgress | undefined, signing: ZoneSigning | undefined, nowMs: number): { signing: ZoneSigning } | { refuse: string } {
  if (!progress || !signing) return { refuse: 'no key rollover is under way' };
  if (nowMs < progress.timeReadyAt) {
    return { refuse: `not yet: resolvers may still hold ${progress.phase === 'publish' ? 'a DNSKEY set without the new key' : 'answers signed by the old key alone'} for ${Math.ceil((progress.timeReadyAt - nowMs) / 1000)} s more` };
  }
  return { signing: advanceRollover(signing, new Date(nowMs).toISOString()) };
}

/** The DS the customer adds at the registrar (the incoming key's) and removes (the retiring key's), presentation form. */
export function registrarChanges(signing: ZoneSigning | undefined, dsOf: (key: ZoneSigningKey) => string): { add: string[]; remove: string[] } {
  const keys = signing?.keys ?? [];
  return { add: keys.filter((k) => k.rollover === 'incoming').map(dsOf), remove: keys.filter((k) => k.rollover === 'retiring').map(dsOf) };
}

/**
 * The longest the feed is allowed to take to bring a key change to every name server: our waits
 * count from the store's change, but a resolver may fetch the old set from a name server until the
 * change reaches it (at once on notify, within a poll — 2 s — otherwise). Added to each of our
 * waits: 30 s, or a quarter of a wait shorter than two minutes (a test lab's).
 */
export const FEED_ALLOWANCE_SECONDS = 30;

/** The waits our side counts: the TTLs, each bounded by how long a resolver keeps anything (`cacheMaxSeconds`), plus the feed's allowance. */
export function rolloverWaits(dnskeyTtl: number, recordTtls: Iterable<number>, fixedTtls: readonly number[], cacheMaxSeconds: number): RolloverWaits {
  let zoneTtl = Math.max(dnskeyTtl, ...fixedTtls);
  for (const ttl of recordTtls) zoneTtl = Math.max(zoneTtl, ttl);
  const wait = (ttl: number) => {
    const capped = Math.min(ttl, cacheMaxSeconds);
    return capped + Math.min(FEED_ALLOWANCE_SECONDS, Math.ceil(capped / 4));
  };
  return { dnskeyTtl: wait(dnskeyTtl), zoneTtl: wait(zoneTtl) };
}
