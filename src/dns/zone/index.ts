// The zone index: every served zone by apex. A change swaps a zone's entry in one synchronous
// step (rebuilt whole, or patched name by name from a record-level change), so a query sees
// either the old zone or the new one, never a mix.
import { isProven } from '../../model/domain.ts';
import type { EdgeNode } from '../../model/node.ts';
import type { RecordDelta, Zone } from '../../store/types.ts';
import { buildZone, type ZoneBuildContext } from './build.ts';
import { keptZone, patchZone } from './patch.ts';
import type { ZoneData } from './types.ts';

/** A zone as the feeder holds it (at the revision applied before the batch). */
export type ZoneSource = (zone: string) => Zone | undefined;

export interface StagedIndex {
  /** Builds a zone into the replacement (zones whose name servers are not active are skipped). */
  put(zone: Zone): void;
  size(): number;
  /** Swaps the replacement in: the next query sees it whole. */
  commit(): void;
}

export class ZoneIndex {
  private zones = new Map<string, ZoneData>();
  /** Zones whose answers use edge node addresses: rebuilt (from the records they keep) on a node change. */
  private readonly nodeDependent = new Set<string>();
  private nodes: EdgeNode[] = [];
  private nodesRevision = 0;
  /** Bumped when the set of served zones changes, so cached REFUSED answers are re-checked. */
  generation = 0;

  constructor(private readonly settings: Pick<ZoneBuildContext, 'nameservers' | 'hostmaster'>) {}

  get size(): number {
    return this.zones.size;
  }

  private context(): ZoneBuildContext {
    return { ...this.settings, nodes: this.nodes, nodesRevision: this.nodesRevision };
  }

  /** Serves the zone if its name servers are active, else stops serving it. */
  putZone(zone: Zone): void {
    const name = zone.domain.domain;
    if (!zone.domain.ns_active || !isProven(zone.domain)) return this.deleteZone(name);
    const built = buildZone(zone, this.context());
    const old = this.zones.get(name);
    if (old) old.stale = true;
    else this.generation++;
    this.zones.set(name, built);
    if (built.usesNodes) this.nodeDependent.add(name);
    else this.nodeDependent.delete(name);
  }

  deleteZone(name: string): void {
    const old = this.zones.get(name);
    if (!old) return;
    old.stale = true;
    this.zones.delete(name);
    this.nodeDependent.delete(name);
    this.generation++;
  }

  /**
   * Applies a record-level change to a served zone, rebuilding only the names it touches. False
   * when the zone is not served here (its changes are none of this index's business).
   * `zones` gives the zone as it was before the change, for a zone that keeps nothing yet (see
   * ZoneData.sources); `needsRecords` says which do.
   */
  patchZone(name: string, delta: RecordDelta, revision: number, zones: ZoneSource): boolean {
    const old = this.zones.get(name);
    if (!old) return false;
    const patched = patchZone(old, delta, revision, this.context(), () => {
      const found = zones(name);
      if (!found) throw new Error(`zone ${name}: nothing to patch from`);
      return found;
    });
    old.stale = true;
    this.zones.set(name, patched);
    if (patched.usesNodes) this.nodeDependent.add(name);
    return true;
  }

  /** Whether a patch of this zone would ask for its records (served, and keeping none). */
  needsRecords(name: string): boolean {
    const zone = this.zones.get(name);
    return zone !== undefined && (zone.sources === undefined || zone.domain === undefined);
  }

  /** Zones a node change rebuilds that keep no records (the feeder supplies theirs to setNodes). */
  nodeDependentWithoutRecords(): string[] {
    return [...this.nodeDependent].filter((name) => this.needsRecords(name));
  }

  /**
   * New edge node list: rebuilds the zones whose answers use node addresses (from what they
   * keep, else from `zones`), in the same synchronous step, so no query sees the new
   * nodes in one zone and the old in another.
   */
  setNodes(nodes: EdgeNode[], revision: number, zones: ZoneSource): void {
    this.nodes = [...nodes].sort((a, b) => a.id - b.id);
    this.nodesRevision = revision;
    for (const name of this.nodeDependent) {
      const zone = this.zones.get(name);
      if (!zone) continue;
      const kept = keptZone(zone) ?? zones(name);
      if (!kept) throw new Error(`zone ${name}: nothing to rebuild from`);
      this.putZone(kept);
    }
  }

  /**
   * Replaces everything (a snapshot load). The loop is synchronous, so no query runs between the
   * old index and the new one.
   */
  replaceAll(zones: Iterable<Zone>, nodes: EdgeNode[], nodesRevision: number): void {
    const staged = this.stage(nodes, nodesRevision);
    for (const zone of zones) staged.put(zone);
    staged.commit();
  }

  /**
   * A replacement built aside while the current zones keep answering (a snapshot arriving over
   * seconds); `commit()` swaps it in at once.
   */
  stage(nodes: EdgeNode[], nodesRevision: number): StagedIndex {
    const zones = new Map<string, ZoneData>();
    const nodeDependent = new Set<string>();
    const sorted = [...nodes].sort((a, b) => a.id - b.id);
    const context: ZoneBuildContext = { ...this.settings, nodes: sorted, nodesRevision };
    return {
      put: (zone) => {
        if (!zone.domain.ns_active || !isProven(zone.domain)) return;
        const built = buildZone(zone, context);
        zones.set(zone.domain.domain, built);
        if (built.usesNodes) nodeDependent.add(zone.domain.domain);
      },
      size: () => zones.size,
      commit: () => {
        const old = this.zones;
        this.zones = zones;
        this.nodeDependent.clear();
        for (const name of nodeDependent) this.nodeDependent.add(name);
        this.nodes = sorted;
        this.nodesRevision = nodesRevision;
        for (const zone of old.values()) zone.stale = true;
        this.generation++;
      },
    };
  }

  get(apex: string): ZoneData | undefined {
    return this.zones.get(apex);
  }

  /** The closest enclosing served zone of a lower-case name. */
  findZone(qname: string): ZoneData | undefined {
    let name = qname;
    for (;;) {
      const zone = this.zones.get(name);
      if (zone) return zone;
      const dot = name.indexOf('.');
      if (dot === -1) return undefined;
      name = name.slice(dot + 1);
    }
  }

  zoneNames(): IterableIterator<string> {
    return this.zones.keys();
  }
}
