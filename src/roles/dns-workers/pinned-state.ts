// A DNS worker's view of the zones with PALISADE_DNS_WORKER_ZONES=stored: the local state the
// primary keeps (its LMDB, opened a second time in this process: readers never block the
// writer), pinned at one revision (a read
// transaction: ../../sync/stored-zones.ts) and made the base of the worker's index, which then
// holds only the zones the primary's batches change after it; every other zone is read and built
// on its first question, in a bounded cache (../../dns/zone/base-zones.ts). Nothing is read
// through at start: a worker answers as soon as it has pinned and caught up.
//
// A pin is taken aside and becomes the base only with the batches after it (`use`, in one
// synchronous step), so the index never goes back a revision. It is taken again now and then
// (`due`): the zones changed since the base are held whole, and a pinned transaction keeps LMDB
// from reusing the pages written since.
import type { ZoneIndex, ZoneSource } from '../../dns/zone/index.ts';
import type { ZoneStore } from '../../dns/zone/base-zones.ts';
import type { Zone } from '../../store/types.ts';
import { StoredZones } from '../../sync/stored-zones.ts';

/** The base is pinned again once this many zones changed since it… */
const REPIN_ZONES = 2000;
/** …or this long after it was pinned, when anything changed since. */
const REPIN_MS = 300_000;
/** A re-pin the primary could not catch up is tried again after this. */
const REPIN_RETRY_MS = 60_000;

export class PinnedState {
  private readonly root: ReturnType<typeof StoredZones.openState>;
  private current: StoredZones | undefined;
  private pending: StoredZones | undefined;
  private pinnedAt = 0;
  private notBefore = 0;

  constructor(dir: string) {
    this.root = StoredZones.openState(dir);
  }

  /** Pins the stored state as it is now, aside (until `use`); the revision it holds. */
  pin(): number {
    this.pending?.release();
    this.pending = StoredZones.pin(this.root);
    return this.pending.revision;
  }

  /** Lets go of the pin aside (a catch-up for it is no longer awaited). */
  drop(): void {
    this.pending?.release();
    this.pending = undefined;
  }

  get pinned(): boolean {
    return this.pending !== undefined;
  }

  /** Zones kept in the pin aside (else in the base). */
  get zones(): number {
    return (this.pending ?? this.current)?.count ?? 0;
  }

  /** The pin taken aside becomes the index's base (one synchronous step); the revision it holds. */
  use(index: ZoneIndex): number {
    const pin = this.pending;
    if (!pin) throw new Error('stored state: nothing pinned');
    const store: ZoneStore = { zone: (name) => pin.zone(name), names: () => pin.names(), count: pin.count };
    index.rebase(store, pin.nodes, pin.nodesRevision);
    this.current?.release();
    this.current = pin;
    this.pending = undefined;
    this.pinnedAt = Date.now();
    return pin.revision;
  }

  /** A re-pin the primary could not catch up: let go of it, and not again for a while. */
  postpone(): void {
    this.drop();
    this.notBefore = Date.now() + REPIN_RETRY_MS;
  }

  /** Whether the base should be pinned again (see the top of this file). */
  due(index: ZoneIndex): boolean {
    if (this.pending || !this.current || Date.now() < this.notBefore) return false;
    const changed = index.changedSinceBase;
    return changed >= REPIN_ZONES || (changed > 0 && Date.now() - this.pinnedAt >= REPIN_MS);
  }

  /** The revision of the base (0: none yet). */
  get baseRevision(): number {
    return this.current?.revision ?? 0;
  }

  /** Zones for a batch's patches: what the primary read, else as the base keeps them (unchanged since, or the index would hold them). */
  source(read: Map<string, Zone | undefined>): ZoneSource {
    return (name) => (read.has(name) ? read.get(name) : this.current?.zone(name));
  }

  async close(): Promise<void> {
    this.pending?.release();
    this.current?.release();
    this.pending = this.current = undefined;
    await StoredZones.closeState(this.root);
  }
}
