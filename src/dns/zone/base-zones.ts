// Zones an index does not hold, built on demand from a store of zones that does not change under
// it (a DNS worker's pinned view of the name server's stored state: ../../sync/stored-zones.ts),
// and kept in a bounded cache, least recently asked first out. A zone kept and not served is
// cached too (as none: not parsed again per question). A name the store does not keep is not:
// names are the asker's to choose, and a flood of made-up ones would push the zones out; it
// costs two B-tree lookups, and the answer cache keeps the REFUSED answer. A zone evicted is
// marked stale: answers cached from it are made again from the next copy.
import type { DomainState } from '../../model/domain.ts';
import type { Zone } from '../../store/types.ts';
import { buildZone, type ZoneBuildContext } from './build.ts';
import type { ZoneData } from './types.ts';

/** A store of zones at one revision. */
export interface ZoneStore {
  /** The zone as stored (served or not), undefined when not kept. */
  zone(name: string): Zone | undefined;
  /** Every zone name kept (served or not). */
  names(): Iterable<string>;
  /** How many zones are kept. */
  readonly count: number;
}

/** Zones built from the base kept at most (≈8.6 KiB each with 20 records; a zone not served, a few bytes). */
export const BASE_CACHE_ZONES = 4096;

export class BaseZones {
  private readonly cache = new Map<string, ZoneData | null>();

  constructor(
    readonly store: ZoneStore,
    private readonly served: (domain: DomainState) => boolean,
    private readonly limit = BASE_CACHE_ZONES,
  ) {}

  /** The zone as served from the base (built and cached on first use), undefined when not served. */
  get(name: string, context: () => ZoneBuildContext): ZoneData | undefined {
    const cached = this.cache.get(name);
    if (cached !== undefined) {
      // Most recently asked last.
      this.cache.delete(name);
      this.cache.set(name, cached);
      return cached ?? undefined;
    }
    const zone = this.store.zone(name);
    if (!zone) return undefined;
    const built = this.served(zone.domain) ? buildZone(zone, context()) : null;
    this.cache.set(name, built);
    if (this.cache.size > this.limit) this.evict();
    return built ?? undefined;
  }

  /** The zone as served from the base, leaving the cache (the index holds it from now on; not marked stale). */
  take(name: string, context: () => ZoneBuildContext): ZoneData | undefined {
    const built = this.get(name, context);
    this.cache.delete(name);
    return built;
  }

  private evict(): void {
    for (const [name, zone] of this.cache) {
      if (this.cache.size <= this.limit) break;
      this.cache.delete(name);
      if (zone) zone.stale = true;
    }
  }

  /** Everything built goes (the edge nodes changed, or the base is replaced): marked stale. */
  clear(): void {
    for (const zone of this.cache.values()) if (zone) zone.stale = true;
    this.cache.clear();
  }

  get cached(): number {
    return this.cache.size;
  }
}
