// Encoded answers by question, so a repeated question costs a map lookup and a copy. An entry
// remembers the zones it was read from and the zone-set generation; it is stale once one of those
// zones is replaced or a zone is added or removed (which can change which zone answers a name).
// With `weakZones` the zones are held weakly: a DNS worker that answers from the stored state
// builds zones on demand and drops them from a bounded cache, and 200,000 answers holding on to
// the zones they came from would keep them all alive; a zone collected is a zone dropped, so its
// answers are stale. Without it (an index that holds every zone anyway) they are held as they are:
// no WeakRef to make per answer nor to follow per hit.
import type { ZoneData } from '../zone/types.ts';

/** The zones an answer was read from: themselves, or weak references to them (`weakZones`). */
export type HeldZones = readonly ZoneData[] | ReadonlyArray<WeakRef<ZoneData>>;

export interface CachedAnswer {
  /** The whole response as encoded for the first asker; ID, RD/CD and question case get patched. */
  full: Buffer;
  /** The TC=1 form, for answers over 512 octets. */
  truncated?: Buffer;
  zones: HeldZones;
  generation: number;
  /** A signed answer: not served past this (ms since the epoch), when its signatures' window ends. */
  expires?: number;
}

/**
 * Stored under a question whose answer depends on where the client is: the answers themselves are
 * stored per location (see `locationKey`).
 */
export interface ByLocation {
  byLocation: true;
  zones: HeldZones;
  generation: number;
}

export type CacheEntry = CachedAnswer | ByLocation;

export { locationKey } from '../chain/context.ts';

export class AnswerCache {
  private readonly entries = new Map<string, CacheEntry>();

  constructor(
    readonly maxEntries = 200_000,
    private readonly weakZones = false,
  ) {}

  /** The zones as an entry holds them. */
  hold(zones: readonly ZoneData[]): HeldZones {
    return this.weakZones ? zones.map((zone) => new WeakRef(zone)) : zones;
  }

  /** Whether one of the zones an entry holds was replaced (or, held weakly, dropped). */
  private anyStale(zones: HeldZones): boolean {
    let stale = false;
    if (this.weakZones) for (let i = 0; !stale && i < zones.length; i++) stale = (zones[i] as WeakRef<ZoneData>).deref()?.stale ?? true;
    else for (let i = 0; !stale && i < zones.length; i++) stale = (zones[i] as ZoneData).stale;
    return stale;
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string, generation: number): CacheEntry | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    let stale = entry.generation !== generation || this.anyStale(entry.zones);
    if (!stale && 'expires' in entry && entry.expires !== undefined) stale = Date.now() >= entry.expires;
    if (stale) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  set(key: string, entry: CacheEntry): void {
    if (this.entries.size >= this.maxEntries) {
      // Oldest first out: cheap, and hot questions come straight back.
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(key, entry);
  }
}
