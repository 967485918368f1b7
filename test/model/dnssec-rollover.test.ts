// A CSK rollover's phases as pure functions: the start (a new key published only, CDS/CDNSKEY
// listing both keys), the publish phase waiting on the DNSKEY TTL and on the parent holding the
// new DS for its TTL, the switch (the new key signs, the old retires, CDS only the new), the
// retire phase waiting on the zone's TTL and on the old DS gone from the parent for its TTL, the
// end (one key); never a step on a look without a definite answer; what the customer is shown.
import { describe, expect, it } from 'vitest';
import type { ZoneSigning, ZoneSigningKey } from '../../src/model/dnssec.ts';
import { dsText, makeSigningKey } from '../../src/model/dnssec-keys.ts';
import { nextSeen, type ParentDsSeen } from '../../src/model/dnssec-parent.ts';
import { advanceRollover, continueRollover, rolloverPhase, rolloverProgress, rolloverWaits, startRollover } from '../../src/model/dnssec-rollover.ts';
import { dnssecStatus, keysWanted } from '../../src/model/dnssec-status.ts';
import { CDS_TYPE, zoneSigningOf } from '../../src/dns/zone/signing-keys.ts';
import { DOMAIN_DEFAULTS, type DomainState } from '../../src/model/domain.ts';

const ZONE = 'example.test';
const T0 = Date.parse('2026-11-29T12:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();
const WAITS = { dnskeyTtl: 60, zoneTtl: 300 };
const DS_TTL = 120;
const old: ZoneSigningKey = makeSigningKey(13);
const fresh: ZoneSigningKey = makeSigningKey(13);
const oldDs = dsText(ZONE, old);
const newDs = dsText(ZONE, fresh);
const secure = { dnssec: true, signing: { keys: [old] } };

/** The monitor's record after looks at the given times, each seeing the given DS set (undefined: no definite answer). */
function looks(...seen: Array<[number, string[] | undefined]>): ParentDsSeen {
  let record: ParentDsSeen | undefined;
  for (const [at, ds] of seen) record = nextSeen(record, ds && { ds, ttl: DS_TTL }, iso(at), 'parent');
  return record!;
}

function started(): ZoneSigning {
  const result = startRollover(secure, () => fresh, iso(T0));
  if ('refuse' in result) throw new Error(result.refuse);
  return result.signing;
}

/** The CDS RDATA the name servers publish for this signing, as key tags. */
function cdsTags(signing: ZoneSigning): number[] {
  const state = zoneSigningOf({ ...DOMAIN_DEFAULTS, domain: ZONE, dnssec: true, signing } as unknown as DomainState);
  const cds = state.signing!.apexSets.find((s) => s.type === CDS_TYPE)!;
  return cds.rdata.map((r) => ((r as { data: Buffer }).data.readUInt16BE(0)));
}

describe('the start', () => {
  it('publishes a new key of the same algorithm that signs nothing; CDS/CDNSKEY list both keys', () => {
    const signing = started();
    expect(rolloverPhase(signing)).toBe('publish');
    expect(signing.keys).toHaveLength(2);
    expect(signing.keys[0]).toEqual(old);
    expect(signing.keys[1]).toMatchObject({ key_tag: fresh.key_tag, active: false, rollover: 'incoming', since: iso(T0) });
    expect(cdsTags(signing).sort()).toEqual([old.key_tag, fresh.key_tag].sort());
    const state = zoneSigningOf({ ...DOMAIN_DEFAULTS, domain: ZONE, dnssec: true, signing } as unknown as DomainState);
    // Both in the DNSKEY set; only the old key signs.
    expect(state.signing!.dnskey.rdata).toHaveLength(2);
    expect(state.signing!.keys.map((k) => k.keyTag)).toEqual([old.key_tag]);
  });

  it('is refused while off, while unsigning, during another rollover; a colliding key tag is made again', () => {
    expect(startRollover({ dnssec: false, signing: { keys: [old] } }, () => fresh, iso(T0))).toMatchObject({ refuse: expect.stringContaining('off') });
    expect(startRollover({ dnssec: true, signing: { keys: [old], unsigning: true } }, () => fresh, iso(T0))).toMatchObject({ refuse: expect.stringContaining('turned off') });
    expect(startRollover({ dnssec: true, signing: started() }, () => fresh, iso(T0))).toMatchObject({ refuse: expect.stringContaining('already under way') });
    const made = [{ ...fresh, key_tag: old.key_tag }, fresh];
    const result = startRollover(secure, () => made.shift()!, iso(T0));
    expect('signing' in result && result.signing.keys[1]!.key_tag).toBe(fresh.key_tag);
  });

  it('the algorithm and turning off stay refused during it', () => {
    const signing = started();
    expect(keysWanted({ dnssec: true, signing }, { dnssec: false, signing })).toMatchObject({ refuse: expect.stringContaining('rollover is under way'), field: 'dnssec' });
    expect(keysWanted({ dnssec: true, signing }, { dnssec: true, dnssec_algorithm: 15, signing })).toMatchObject({ refuse: expect.stringContaining('algorithm rollover') });
  });
});

describe('the publish phase', () => {
  const signing = started();

  it('waits for the new DS at the parent, and for its TTL from its first sighting', () => {
    const none = looks([T0 + 1000, [oldDs]]);
    expect(rolloverProgress(ZONE, signing, none, T0 + 3_600_000, WAITS)).toMatchObject({ parentReady: false, waiting: ['the new key\'s DS at the parent'] });
    const seen = looks([T0 + 1000, [oldDs]], [T0 + 10_000, [oldDs, newDs]], [T0 + 100_000, [oldDs, newDs]]);
    expect(seen.dsSince?.[newDs]).toBe(iso(T0 + 10_000));
    expect(rolloverProgress(ZONE, signing, seen, T0 + 10_000 + DS_TTL * 1000 - 1, WAITS)!.parentReady).toBe(false);
    expect(rolloverProgress(ZONE, signing, seen, T0 + 10_000 + DS_TTL * 1000, WAITS)).toMatchObject({ parentReady: true, waiting: [] });
  });

  it('waits for the DNSKEY TTL from the publication, even with the DS there', () => {
    const seen = looks([T0 - 500_000, [oldDs, newDs]]);
    expect(rolloverProgress(ZONE, signing, seen, T0 + 59_000, WAITS)).toMatchObject({ parentReady: true, timeReadyAt: T0 + 60_000 });
    expect(rolloverProgress(ZONE, signing, seen, T0 + 59_000, WAITS)!.waiting[0]).toContain('DNSKEY');
    expect(rolloverProgress(ZONE, signing, seen, T0 + 60_000, WAITS)!.waiting).toEqual([]);
  });

  it('a look without a definite answer moves nothing', () => {
    const seen = looks([T0, [oldDs, newDs]], [T0 + 500_000, undefined]);
    expect(rolloverProgress(ZONE, signing, seen, T0 + 600_000, WAITS)).toMatchObject({ parentReady: false });
  });

  it('the operator\'s --continue goes past the parent, never past the DNSKEY TTL', () => {
    const progress = rolloverProgress(ZONE, signing, undefined, T0 + 1000, WAITS);
    expect(continueRollover(progress, signing, T0 + 1000)).toMatchObject({ refuse: expect.stringContaining('59 s more') });
    const later = rolloverProgress(ZONE, signing, undefined, T0 + 61_000, WAITS);
    expect(continueRollover(later, signing, T0 + 61_000)).toMatchObject({ signing: { keys: [{ rollover: 'retiring' }, { active: true }] } });
  });
});

describe('the switch and the retire phase', () => {
  const switched = advanceRollover(started(), iso(T0 + 200_000));

  it('the new key signs, the old one retires (published, signing nothing, out of CDS)', () => {
    expect(rolloverPhase(switched)).toBe('retire');
    expect(switched.keys[0]).toMatchObject({ key_tag: old.key_tag, active: false, rollover: 'retiring', since: iso(T0 + 200_000) });
    expect(switched.keys[1]).toEqual(fresh);
    expect(cdsTags(switched)).toEqual([fresh.key_tag]);
    const state = zoneSigningOf({ ...DOMAIN_DEFAULTS, domain: ZONE, dnssec: true, signing: switched } as unknown as DomainState);
    expect(state.signing!.dnskey.rdata).toHaveLength(2);
    expect(state.signing!.keys.map((k) => k.keyTag)).toEqual([fresh.key_tag]);
  });

  it('waits for the old DS gone from the parent, its TTL since, and the zone\'s TTL since the switch', () => {
    const held = looks([T0 + 100_000, [oldDs, newDs]], [T0 + 900_000, [oldDs, newDs]]);
    expect(rolloverProgress(ZONE, switched, held, T0 + 900_000, WAITS)).toMatchObject({ parentReady: false, waiting: ['the old key\'s DS gone from the parent'] });
    const gone = looks([T0 + 100_000, [oldDs, newDs]], [T0 + 400_000, [newDs]]);
    expect(gone.dsLeft?.[oldDs]).toEqual({ at: iso(T0 + 400_000), ttl: DS_TTL });
    expect(rolloverProgress(ZONE, switched, gone, T0 + 400_000 + DS_TTL * 1000 - 1, WAITS)!.parentReady).toBe(false);
    expect(rolloverProgress(ZONE, switched, gone, T0 + 400_000 + DS_TTL * 1000, WAITS)).toMatchObject({ parentReady: true, waiting: [] });
    // The zone's TTL (300 s) from the switch, even with the DS long gone.
    const early = looks([T0, [oldDs, newDs]], [T0 + 1000, [newDs]]);
    expect(rolloverProgress(ZONE, switched, early, T0 + 200_000 + 299_000, WAITS)!.waiting).toEqual([expect.stringContaining('zone\'s largest TTL')]);
    expect(rolloverProgress(ZONE, switched, early, T0 + 200_000 + 300_000, WAITS)!.waiting).toEqual([]);
  });

  it('the old DS seen gone is kept until its TTL is over, across looks without an answer and with it back', () => {
    const seen = looks([T0, [oldDs, newDs]], [T0 + 1000, [newDs]], [T0 + 2000, undefined], [T0 + 3000, [newDs]]);
    expect(seen.dsLeft?.[oldDs]?.at).toBe(iso(T0 + 1000));
    const back = looks([T0, [oldDs, newDs]], [T0 + 1000, [newDs]], [T0 + 2000, [oldDs, newDs]]);
    expect(back.dsLeft).toBeUndefined();
    expect(back.dsSince?.[oldDs]).toBe(iso(T0 + 2000));
    const over = looks([T0, [oldDs, newDs]], [T0 + 1000, [newDs]], [T0 + 1000 + DS_TTL * 1000, [newDs]]);
    expect(over.dsLeft).toBeUndefined();
  });

  it('the end: one key, secure with it', () => {
    const done = advanceRollover(switched, iso(T0 + 900_000));
    expect(rolloverPhase(done)).toBeUndefined();
    expect(done.keys).toEqual([fresh]);
    const status = dnssecStatus(ZONE, { dnssec: true, signing: done }, looks([T0, [newDs]]), true, WAITS, T0 + 1_000_000);
    expect(status).toMatchObject({ state: 'secure', rollover: null, keys: [{ key_tag: fresh.key_tag, role: 'active', ds: newDs }] });
  });
});

describe('what the customer is shown', () => {
  it('each key\'s role, the DS to add then to remove, and the next step', () => {
    const publishing = dnssecStatus(ZONE, { dnssec: true, signing: started() }, looks([T0, [oldDs]]), true, WAITS, T0 + 1000);
    expect(publishing).toMatchObject({ state: 'rolling_over', rollover: { phase: 'publish', ds_to_add: [newDs], ds_to_remove: [] } });
    expect(publishing.keys.map((k) => k.role)).toEqual(['active', 'published']);
    expect(publishing.next_step).toContain('add the new key\'s DS');
    expect(dnssecStatus(ZONE, { dnssec: true, signing: started() }, undefined, false, WAITS, T0 + 1000).next_step).toContain('--continue');
    // The current DS removed before the new key signs: said at once (validating resolvers fail the domain).
    expect(dnssecStatus(ZONE, { dnssec: true, signing: started() }, looks([T0, [newDs]]), true, WAITS, T0 + 1000).next_step).toContain('Put the current key\'s DS back');
    expect(dnssecStatus(ZONE, { dnssec: true, signing: started() }, looks([T0, [oldDs, newDs]]), true, WAITS, T0 + 1000).next_step).not.toContain('back');
    const retiring = dnssecStatus(ZONE, { dnssec: true, signing: advanceRollover(started(), iso(T0)) }, looks([T0, [oldDs, newDs]]), true, WAITS, T0 + 1000);
    expect(retiring).toMatchObject({ state: 'rolling_over', rollover: { phase: 'retire', ds_to_add: [], ds_to_remove: [oldDs] } });
    expect(retiring.keys.map((k) => k.role)).toEqual(['retiring', 'active']);
    expect(retiring.next_step).toContain('Remove the old key\'s DS');
  });

  it('our waits: the TTLs, each at most what resolvers keep, and the feed\'s allowance', () => {
    expect(rolloverWaits(3600, [300, 86_400], [3600], 604_800)).toEqual({ dnskeyTtl: 3630, zoneTtl: 86_430 });
    expect(rolloverWaits(60, [30], [120], 604_800)).toEqual({ dnskeyTtl: 75, zoneTtl: 150 });
    expect(rolloverWaits(3600, [300, 86_400], [3600], 8)).toEqual({ dnskeyTtl: 10, zoneTtl: 10 });
  });
});
