// A domain's DNSSEC from the customer's side: when its settings call for a new signing key, what
// turning it off does (unsigning: signing goes on until the parent's DS is gone), and what
// GET /domains/{domain}/dnssec shows (the state, what to do next, and per key its DNSKEY and DS,
// never the private key).
import { Type, type Static } from 'typebox';
import type { DnssecAlgorithm, ZoneSigning } from './dnssec.ts';
import { dnskeyText, dsText } from './dnssec-keys.ts';
import { parentHoldsOurDs, type ParentDsSeen } from './dnssec-parent.ts';
import { keyRole, registrarChanges, rolloverPhase, rolloverProgress, type RolloverProgress, type RolloverWaits } from './dnssec-rollover.ts';
import { rolloverStep, RolloverView } from './dnssec-rollover-view.ts';

export const DEFAULT_DNSSEC_ALGORITHM: DnssecAlgorithm = 13;

/** The DNSSEC side of a domain's state. */
export interface DnssecFields {
  dnssec?: boolean;
  dnssec_algorithm?: DnssecAlgorithm;
  signing?: ZoneSigning;
}

/**
 * What a change of a domain's settings (`before` → `after`, before keys are seen to) asks of its
 * keys: nothing (off, or a key of the wanted algorithm is there — one kept from an earlier
 * turning on included), a new key (replacing any kept of another algorithm), or a refusal: a
 * signed zone's algorithm cannot change (an algorithm rollover is not offered).
 */
export function keysWanted(before: DnssecFields | undefined, after: DnssecFields): { make: DnssecAlgorithm } | { refuse: string; field?: string } | undefined {
  if (after.dnssec !== true) {
    // Turning off mid-rollover would leave the parent and resolvers with a key set in between.
    const phase = before?.dnssec === true ? rolloverPhase(after.signing) : undefined;
    return phase
      ? { refuse: `a key rollover is under way (phase ${phase}): DNSSEC can be turned off once it is over (GET /domains/{domain}/dnssec says what it waits for)`, field: 'dnssec' }
      : undefined;
  }
  const algorithm = after.dnssec_algorithm ?? DEFAULT_DNSSEC_ALGORITHM;
  const keys = after.signing?.keys ?? [];
  if (keys.some((k) => k.active && k.algorithm === algorithm)) return undefined;
  if (before?.dnssec === true && keys.length > 0) {
    return {
      refuse: `the zone is signed with algorithm ${keys[0]!.algorithm}; changing the algorithm of a signed zone (an algorithm rollover) is not offered: turn dnssec off (after removing the DS at the registrar), then turn it on with the new dnssec_algorithm (a new key, a new DS)`,
    };
  }
  if (after.signing?.unsigning === true && keys.length > 0) {
    return {
      refuse: `the zone is still signed with algorithm ${keys[0]!.algorithm} while DNSSEC is being turned off (its DS may still be at the parent): turn it on with that algorithm (the same key and DS), or wait until GET /domains/{domain}/dnssec says "off" to change the algorithm`,
    };
  }
  return { make: algorithm };
}

/**
 * `after` (the domain as a change leaves it) with its signing marked as it should be: turning
 * `dnssec` off while keys sign marks them `unsigning` (the name servers keep signing and publish
 * the delete signal until the parent's DS is gone); turning it on again while unsigning takes the
 * same keys back (no new DS). Whether a new key is needed is `keysWanted`'s.
 */
export function withUnsigning<T extends DnssecFields>(before: DnssecFields | undefined, after: T): T {
  const signing = after.signing;
  if (!signing) return after;
  if (after.dnssec === true && signing.unsigning) {
    const { unsigning: _gone, ...kept } = signing;
    return { ...after, signing: kept };
  }
  if (after.dnssec !== true && before?.dnssec === true && !signing.unsigning && signing.keys.some((k) => k.active)) return { ...after, signing: { ...signing, unsigning: true } };
  return after;
}

/** The states of a domain's DNSSEC (see DnssecStatus's description). */
export type DnssecState = 'off' | 'signing' | 'waiting_for_ds' | 'secure' | 'unsigning' | 'rolling_over';

export function dnssecState(zone: string, domain: DnssecFields, seen: ParentDsSeen | undefined): DnssecState {
  if (domain.dnssec !== true) return domain.signing?.unsigning ? 'unsigning' : 'off';
  if (rolloverPhase(domain.signing)) return 'rolling_over';
  const keys = domain.signing?.keys ?? [];
  if (parentHoldsOurDs(zone, keys, seen)) return 'secure';
  // `signing` until the parent has been seen answering (just turned on, or nothing to ask it with).
  return seen?.ds === undefined ? 'signing' : 'waiting_for_ds';
}

/** What the customer does next, in one sentence or two. */
export function nextStep(state: DnssecState, seen: ParentDsSeen | undefined, canLook: boolean, progress?: RolloverProgress): string {
  const foreign = (seen?.ds ?? []).length > 0;
  switch (state) {
    case 'off':
      return 'Nothing: answers are not signed. Turn DNSSEC on with PATCH /domains/{domain} {"dnssec": true}; no DS must be at the registrar for this domain meanwhile.';
    case 'signing':
      return canLook
        ? 'Publish the DS below at your registrar (some registrars take the DNSKEY instead; parents that scan take it from our CDS/CDNSKEY records). The parent zone is being looked at: this says "secure" once it holds the DS.'
        : 'Publish the DS below at your registrar. This service cannot look at parent zones (no resolver configured), so it cannot tell when the DS is there: check with your registrar.';
    case 'waiting_for_ds':
      return foreign
        ? 'The parent zone holds a DS that matches none of this zone\'s keys: validating resolvers fail the domain. Replace it at your registrar with the DS below.'
        : 'Publish the DS below at your registrar (the parent zone holds none yet); this says "secure" once it does.';
    case 'secure':
      return 'Nothing: the parent holds the DS of the key below, and validating resolvers check every answer. To turn DNSSEC off, PATCH {"dnssec": false}: the zone stays signed until the DS is gone.';
    case 'rolling_over':
      return rolloverStep(progress, canLook);
    case 'unsigning':
      return !canLook
        ? 'Remove the DS for this domain at your registrar. This service cannot look at parent zones (no resolver configured): answers stay signed until its operator ends the turning off.'
        : foreign
          ? 'Remove the DS for this domain at your registrar (parents that scan take the delete signal from our CDS/CDNSKEY records). Answers stay signed until the parent holds no DS, and a while after (its TTL), so resolution never breaks; this then says "off".'
          : 'The parent holds no DS any more: answers stay signed until the last DS seen there has left resolvers\' caches (its TTL), then this says "off".';
  }
}

export const DnssecKeyView = Type.Object({
  key_tag: Type.Integer({ description: 'RFC 4034 Appendix B key tag' }),
  flags: Type.Integer({ description: '257: a combined signing key (zone key and secure entry point)' }),
  algorithm: Type.Integer({ description: '13 ECDSA P-256/SHA-256, 15 Ed25519' }),
  dnskey: Type.String({ description: 'The DNSKEY RDATA in presentation form: `257 3 13 <base64>`' }),
  role: Type.Union([Type.Literal('published'), Type.Literal('active'), Type.Literal('retiring')], {
    description: '`active`: signs the answers. In a key rollover: `published`, the new key, in the DNSKEY set but signing nothing until the parent holds its DS; `retiring`, the old key, still in the DNSKEY set but signing nothing, until its DS is gone from the parent',
  }),
  ds: Type.String({ description: 'The DS RDATA (SHA-256 digest) in presentation form, to paste at the registrar: `<key tag> <algorithm> 2 <hex>`' }),
});

export const ParentView = Type.Object({
  checked_at: Type.String({ format: 'date-time', description: 'When the parent zone was last looked at' }),
  ds: Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'The DS records the parent zone holds for this domain (presentation form); null when its last look got no definite answer' }),
  note: Type.Union([Type.String(), Type.Null()], { description: 'Why nothing definite was seen, when so' }),
});

export const DnssecStatus = Type.Object(
  {
    state: Type.Union([Type.Literal('off'), Type.Literal('signing'), Type.Literal('waiting_for_ds'), Type.Literal('secure'), Type.Literal('unsigning'), Type.Literal('rolling_over')], {
      description:
        '`off`: answers are not signed. `signing`: both name servers sign every answer with the keys below, and the parent zone has not been seen yet (just turned on, or this service cannot look at parents). `waiting_for_ds`: signing, and the parent was seen holding no DS of these keys: publish one at the registrar. `secure`: the parent holds the DS of a key below. `unsigning`: turned off while the parent may hold a DS: answers stay signed, and the zone publishes the delete signal (CDS/CDNSKEY, RFC 8078), until the DS is gone from the parent and its TTL over; then `off`. `rolling_over`: a key rollover is under way (see `rollover`); then `secure` with the new key.',
    }),
    next_step: Type.String({ description: 'What to do next, in words' }),
    algorithm: Type.Integer({ description: 'The signing algorithm: the key\'s while signing, else the one the next turning on uses (`dnssec_algorithm`)' }),
    keys: Type.Array(DnssecKeyView, { description: 'The zone\'s keys, each with its role (none while off: a DS published for a zone that is not signed makes it fail validation; while unsigning, the DS to remove)' }),
    rollover: Type.Union([RolloverView, Type.Null()], { description: 'The key rollover under way; null when none' }),
    parent: Type.Union([ParentView, Type.Null()], { description: 'What the parent zone was last seen holding; null before any look' }),
  },
  { examples: [{ state: 'waiting_for_ds', next_step: 'Publish the DS below at your registrar (the parent zone holds none yet); this says "secure" once it does.', algorithm: 13, parent: { checked_at: '2026-11-23T09:05:00.000Z', ds: [], note: null }, keys: [{ key_tag: 55648, flags: 257, algorithm: 13, dnskey: '257 3 13 GojIhhXUN/u4v54ZQqGSnyhWJwaubCvTmeexv7bR6edbkrSqQpF64cYbcB7wNcP+e+MAnLr+Wi9xMWyQLc8NAA==', role: 'active', ds: '55648 13 2 B4C8C1FE2E7477127B27115656AD6256F424625BF5C1E2770CE6D6E37DF61D17' }], rollover: null }] },
);
export type DnssecStatus = Static<typeof DnssecStatus>;

/**
 * The domain's DNSSEC as its owner sees it; `seen`: the parent's DS set as last looked at;
 * `canLook`: the service can look at parents; `waits`: a rollover's waits on our side (its TTLs).
 */
export function dnssecStatus(zone: string, domain: DnssecFields, seen?: ParentDsSeen, canLook = true, waits?: RolloverWaits, nowMs = Date.now()): DnssecStatus {
  const state = dnssecState(zone, domain, seen);
  const parent = seen ? { checked_at: seen.at, ds: seen.ds ?? null, note: seen.note ?? null } : null;
  const progress = waits && rolloverProgress(zone, domain.signing, seen, nowMs, waits);
  const step = nextStep(state, seen, canLook, progress);
  if (state === 'off') return { state, next_step: step, algorithm: domain.dnssec_algorithm ?? DEFAULT_DNSSEC_ALGORITHM, keys: [], parent, rollover: null };
  // Every key while a rollover runs (the new one published, the old one retiring); else the signing ones.
  const keys = (domain.signing?.keys ?? []).filter((k) => k.active || k.rollover !== undefined);
  const signing = domain.signing;
  const changes = registrarChanges(signing, (k) => dsText(zone, k));
  const started = signing?.keys.find((k) => k.rollover === 'incoming' || k.rollover === 'retiring');
  return {
    state,
    next_step: step,
    algorithm: keys[0]?.algorithm ?? domain.dnssec_algorithm ?? DEFAULT_DNSSEC_ALGORITHM,
    keys: keys.map((k) => ({ key_tag: k.key_tag, flags: k.flags, algorithm: k.algorithm, dnskey: dnskeyText(k), role: keyRole(k), ds: dsText(zone, k) })),
    parent,
    rollover:
      progress && started
        ? { phase: progress.phase, phase_since: started.since ?? null, waiting_for: progress.waiting, ds_to_add: changes.add, ds_to_remove: changes.remove }
        : null,
  };
}
