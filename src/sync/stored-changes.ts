// What a name server does around applying a page (name-server-view.ts, with a local state), apart so that view stays small:
// which zones it must fetch whole first, and what it stores of the page (local-state.ts).
//
// A name server keeps every zone it has been given, served or not (a zone's name servers may be
// activated later: its settings then come alone, and the zone is built from the records kept
// here). A zone to serve that is kept nowhere here (not active when the snapshot was taken, and
// not given since) is fetched whole, once.
import type { DomainState } from '../model/domain.ts';
import { afterRecords, isProven } from '../model/domain.ts';
import type { IndexBatch } from '../dns/zone/apply.ts';
import type { ZoneIndex } from '../dns/zone/index.ts';
import type { Zone } from '../store/types.ts';
import type { LocalState, StoredChange } from './local-state.ts';

const NO_RECORDS = { put: [], del: [] };

type Held = Pick<LocalState, 'holds' | 'storedDomain'>;

/**
 * Makes whole, with `fetchZone` (undefined: gone), every zone the batch starts to serve from
 * records this name server does not hold.
 */
export async function fetchZonesNotHeld(batch: IndexBatch, index: ZoneIndex, state: Held, fetchZone: (name: string) => Promise<Zone | undefined>): Promise<void> {
  // Looked at again after each fetch: a deferred settings change the index built meanwhile (on
  // its timer) no longer answers for a zone's records.
  for (let again = true; again; ) {
    again = false;
    for (const [i, change] of batch.zones.entries()) {
      if (!('head' in change) || !change.head.ns_active || !isProven(change.head) || index.get(change.name) || !index.wantsRecords(change) || state.holds(change.name)) continue;
      batch.zones[i] = { name: change.name, zone: await fetchZone(change.name) };
      again = true;
    }
  }
}

/** What to store of an applied batch, each change at its own size (after the index applied it). */
export function storedChangesOf(batch: IndexBatch, index: ZoneIndex, state: Held): StoredChange[] {
  // Each zone as this batch leaves it stored so far (undefined: removed).
  const known = new Map<string, DomainState | undefined>();
  const storedAs = (name: string) => (known.has(name) ? known.get(name) : state.storedDomain(name));
  return batch.zones.flatMap((change): StoredChange[] => {
    if ('zone' in change) {
      known.set(change.name, change.zone?.domain);
      return [change];
    }
    if ('head' in change) {
      // Settings over the records held here; a zone not held is none of this name server's business.
      const held = known.has(change.name) ? known.get(change.name) !== undefined : state.holds(change.name);
      if (!held) return [];
      known.set(change.name, change.head);
      return [{ name: change.name, domain: change.head, delta: NO_RECORDS }];
    }
    // A difference of a zone held here (served or not) keeps its records current.
    const before = storedAs(change.name);
    const domain = index.domainOf(change.name) ?? (before && afterRecords(before, change.revision));
    if (!domain) return [];
    known.set(change.name, domain);
    return [{ name: change.name, domain, delta: change.delta }];
  });
}
