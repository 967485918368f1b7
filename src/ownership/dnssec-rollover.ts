// A key rollover as the store sees it (the phases are ../model/dnssec-rollover.ts's): started by
// the operator, moved on by the monitor's look at the parent (dnssec-parent.ts) once a phase's
// waits are over, or past the parent by the operator when the service cannot look at it. Each
// step is one change of the domain's `signing`: it reaches the name servers through the feed as
// turning DNSSEC on does (the keys travel to name servers only).
import { DNSKEY_TTL, type DnssecAlgorithm, type ZoneSigningKey } from '../model/dnssec.ts';
import type { ParentDsSeen } from '../model/dnssec-parent.ts';
import { advanceRollover, continueRollover, rolloverPhase, rolloverProgress, rolloverWaits, startRollover, type RolloverPhase, type RolloverProgress, type RolloverWaits } from '../model/dnssec-rollover.ts';
import { APEX_NS_TTL, SOA_DEFAULTS } from '../model/record-values.ts';
import type { Store } from '../store/types.ts';

export class RolloverRefused extends Error {}

/** Our side's waits for a zone: the DNSKEY TTL and the zone's largest TTL, bounded by how long resolvers keep anything. */
export async function zoneRolloverWaits(store: Store, name: string, owner: number, cacheMaxSeconds: number): Promise<RolloverWaits> {
  const zone = await store.getZone(name, owner);
  // The apex NS and SOA (the SOA's TTL also bounds negative answers), and every record of the customer's.
  return rolloverWaits(DNSKEY_TTL, (zone?.records ?? []).map((r) => r.ttl), [APEX_NS_TTL, SOA_DEFAULTS.ttl], cacheMaxSeconds);
}

/** Starts a rollover: a new key (made by `make`, its private key sealed) published beside the active one. */
export async function startZoneRollover(store: Store, name: string, owner: number, make: (algorithm: DnssecAlgorithm) => ZoneSigningKey): Promise<ZoneSigningKey> {
  let refusal: string | undefined;
  let added: ZoneSigningKey | undefined;
  // A store may run the mutation again: the same keys, in the same order, each time.
  const made: ZoneSigningKey[] = [];
  let calls = 0;
  const once = (algorithm: DnssecAlgorithm) => (made[calls++] ??= make(algorithm));
  const now = new Date().toISOString();
  await store.updateZone(name, owner, (head) => {
    calls = 0;
    const started = startRollover(head.domain, once, now);
    if ('refuse' in started) {
      refusal = started.refuse;
      return undefined;
    }
    refusal = undefined;
    added = started.signing.keys.at(-1);
    return { domain: { ...head.domain, signing: started.signing } };
  });
  if (refusal || !added) throw new RolloverRefused(refusal ?? 'no rollover started');
  return added;
}

/**
 * Moves a rollover on from `phase` when the domain is still there (a concurrent change may have
 * moved it already); `force`: the operator's step past the parent. Resolves to the phase it ended,
 * or undefined when nothing moved.
 */
export async function advanceZoneRollover(store: Store, name: string, owner: number, phase: RolloverPhase): Promise<RolloverPhase | undefined> {
  let moved: RolloverPhase | undefined;
  const now = new Date().toISOString();
  await store.updateZone(name, owner, (head) => {
    const signing = head.domain.signing;
    moved = head.domain.dnssec === true && signing && rolloverPhase(signing) === phase ? phase : undefined;
    return moved && signing ? { domain: { ...head.domain, signing: advanceRollover(signing, now) } } : undefined;
  });
  return moved;
}

/** The operator's `--continue`: the phase ends once our own wait is over, whatever the parent looked like. */
export async function continueZoneRollover(store: Store, name: string, owner: number, seen: ParentDsSeen | undefined, cacheMaxSeconds: number): Promise<{ ended: RolloverPhase; progress: RolloverProgress }> {
  const head = await store.getZoneHead(name, owner);
  const waits = await zoneRolloverWaits(store, name, owner, cacheMaxSeconds);
  const progress = head && rolloverProgress(name, head.domain.signing, seen, Date.now(), waits);
  const next = continueRollover(progress, head?.domain.signing, Date.now());
  if ('refuse' in next || !progress) throw new RolloverRefused('refuse' in next ? next.refuse : 'no key rollover is under way');
  const ended = await advanceZoneRollover(store, name, owner, progress.phase);
  if (!ended) throw new RolloverRefused('the rollover moved meanwhile: look again');
  return { ended, progress };
}
