// The zone index: every served zone by apex. A change swaps a zone's entry in one synchronous
// step (rebuilt whole, or patched name by name from a record-level change), so a query sees
// either the old zone or the new one, never a mix.
//
// A change of a domain's settings alone (a head: mask, enabled, bind_node, activation …) is
// applied to the records the index (or the feeder) already holds: the zone is built again once.
// Those rebuilds are bounded per zone (a burst, then so many a minute) and per account (so many
// milliseconds of building a second): past either, the zone keeps answering as it did and its
// latest settings are applied once the budget allows — one account's stream of settings changes
// costs the others nothing (rebuild-budget.ts).
//
// A DNS worker's index holds only the zones changed since its base (`rebase`: the stored state at
// one revision); any other zone is built from the base on first use, kept in a bounded cache.
import { afterRecords, headOver, isProven, type DomainState } from '../../model/domain.ts';
import type { EdgeNode } from '../../model/node.ts';
import type { RecordDelta, Zone } from '../../store/types.ts';
import type { ZoneChange } from './apply.ts';
import { BaseZones, type ZoneStore } from './base-zones.ts';
import { buildZone, type ZoneBuildContext } from './build.ts';
import { keptZone, patchZone } from './patch.ts';
import { namesBefore, withDeltas, type Deferred } from './pending-changes.ts';
import { REBUILD_LIMITS, RebuildBudget, type RebuildLimits } from './rebuild-budget.ts';
import type { NameNode, ZoneData } from './types.ts';

export { REBUILD_LIMITS, type RebuildLimits } from './rebuild-budget.ts';

/** Served by name servers: its name servers activated and, where ownership is proven (issue 26), proven. */
const isServed = (domain: DomainState): boolean => domain.ns_active && isProven(domain);

/** A zone as the feeder holds it (at the revision applied before the batch). */
export type ZoneSource = (zone: string) => Zone | undefined;

export interface StagedIndex {
  /** Builds a zone into the replacement (zones whose name servers are not active are skipped). */
  put(zone: Zone): void;
  size(): number;
  /** Swaps the replacement in: the next query sees it whole. */
  commit(): void;
}

const NO_RECORDS: RecordDelta = { put: [], del: [] };

export class ZoneIndex {
  private zones = new Map<string, ZoneData>();
  /** Zones whose answers use edge node addresses: rebuilt (from the records they keep) on a node change. */
  private readonly nodeDependent = new Set<string>();
  private nodes: EdgeNode[] = [];
  private nodesRevision = 0;
  /** Bumped when the set of served zones changes, so cached REFUSED answers are re-checked. */
  generation = 0;
  /** Settings changes waiting for their zone's or account's rebuild budget, in arrival order. */
  private readonly deferred = new Map<string, Deferred>();
  private readonly budget: RebuildBudget;
  private timer: NodeJS.Timeout | undefined;
  /** Told of every zone installed (or no longer served: undefined), e.g. to NOTIFY secondaries. */
  private readonly watchers = new Set<ZoneWatcher>();
  /** With a base (rebase): `zones` holds the zones changed since it, `removed` its zones no longer served. */
  private base: BaseZones | undefined;
  private readonly removed = new Set<string>();
  private readonly contextNow = () => this.context();

  /** Calls `watcher` after each zone is swapped in or stops being served; returns the unsubscribe. */
  watch(watcher: ZoneWatcher): () => void {
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  private told(name: string, zone: ZoneData | undefined, before?: ReadonlyMap<string, NameNode | undefined>, adopted?: boolean): void {
    for (const watcher of this.watchers) watcher(name, zone, before, adopted);
  }

  constructor(
    private readonly settings: Pick<ZoneBuildContext, 'nameservers' | 'hostmaster'>,
    limits: RebuildLimits = REBUILD_LIMITS,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.budget = new RebuildBudget(limits, now);
  }

  /** Zones held (with a base: the zones it keeps, served or not, and those added since). */
  get size(): number {
    if (!this.base) return this.zones.size;
    let added = 0;
    for (const name of this.zones.keys()) if (this.base.store.zone(name) === undefined) added++;
    return this.base.store.count + added - this.removed.size;
  }

  /** Zones held that changed since the base (the rest are built from it on demand); 0 without a base. */
  get changedSinceBase(): number {
    return this.base ? this.zones.size + this.removed.size : 0;
  }

  /** Answers from `store` from now on, in one step: its zones built on first use, those held until now stale. */
  rebase(store: ZoneStore, nodes: EdgeNode[], nodesRevision: number, cacheZones?: number): void {
    for (const zone of this.zones.values()) zone.stale = true;
    this.base?.clear();
    this.zones = new Map();
    this.removed.clear();
    this.nodeDependent.clear();
    this.deferred.clear();
    this.schedule();
    this.nodes = [...nodes].sort((a, b) => a.id - b.id);
    this.nodesRevision = nodesRevision;
    this.base = new BaseZones(store, isServed, cacheZones);
    this.generation++;
  }

  /** The zone held, else the base's, adopted: from now on the index holds it (and changes it). */
  private held(name: string): ZoneData | undefined {
    const zone = this.zones.get(name);
    if (zone || !this.base || this.removed.has(name)) return zone;
    const adopted = this.base.take(name, this.contextNow);
    if (!adopted) return undefined;
    this.zones.set(name, adopted);
    if (adopted.usesNodes) this.nodeDependent.add(name);
    // Served all along: watchers learn where its changes start (the IXFR journal's first step).
    if (this.watchers.size > 0) this.told(name, adopted, undefined, true);
    return adopted;
  }

  /** Settings changes not applied yet (waiting for their zone's or account's budget). */
  get deferredRebuilds(): number {
    return this.deferred.size;
  }

  private context(): ZoneBuildContext {
    return { ...this.settings, nodes: this.nodes, nodesRevision: this.nodesRevision };
  }

  /** Swaps a built zone in (the old one goes stale). */
  private install(name: string, built: ZoneData): void {
    const old = this.held(name);
    this.removed.delete(name);
    if (old) old.stale = true;
    else this.generation++;
    this.zones.set(name, built);
    if (built.usesNodes) this.nodeDependent.add(name);
    else this.nodeDependent.delete(name);
    if (this.watchers.size > 0) this.told(name, built);
  }

  /** Serves the zone if its name servers are active, else stops serving it. */
  putZone(zone: Zone): void {
    const name = zone.domain.domain;
    this.forget(name);
    if (!isServed(zone.domain)) return this.deleteZone(name);
    const started = this.now();
    this.install(name, buildZone(zone, this.context()));
    this.charge(name, zone.domain.ownerId, started, true);
  }

  deleteZone(name: string): void {
    this.forget(name);
    this.unserve(name);
  }

  private unserve(name: string): void {
    const old = this.held(name);
    if (!old) return;
    old.stale = true;
    this.zones.delete(name);
    if (this.base) this.removed.add(name);
    this.nodeDependent.delete(name);
    this.generation++;
    if (this.watchers.size > 0) this.told(name, undefined);
  }

  /**
   * A change of the zone's settings alone (`domain` as it now is): its records are those the
   * index keeps, else the feeder's (`zones`). Not active: no longer served. Built at once when
   * the zone's and its account's budgets allow, else deferred (the latest settings win).
   * False when there is nothing to build from (a zone the feeder does not hold either).
   */
  applyHead(domain: DomainState, zones: ZoneSource): boolean {
    const name = domain.domain;
    const waiting = this.deferred.get(name);
    if (waiting) {
      // Its turn comes (in order), with the latest settings. Deactivated meanwhile: no longer
      // served at once, its records kept while it waits (activated again, it needs no new read).
      if (!isServed(domain)) {
        const served = this.held(name);
        const kept = served && keptZone(served);
        if (kept && !waiting.held) waiting.held = { domain: kept.domain, records: new Map(kept.records.map((r) => [r.id, r])) };
        this.unserve(name);
      }
      waiting.domain = domain;
      return true;
    }
    if (!isServed(domain)) {
      this.deleteZone(name);
      return true;
    }
    if (this.mayBuild(name, domain.ownerId)) return this.rebuild(name, domain, zones, []);
    this.defer(name, { domain, source: zones, deltas: [] });
    return true;
  }

  /**
   * Applies `domain`'s settings: to a zone served that keeps its records, only its protected
   * names and apex are built again (patch.ts); otherwise the zone is built whole from the records
   * `zones` gives, with `deltas` over them. Counts the time (reading included). False when there
   * is nothing to build from.
   */
  private rebuild(name: string, domain: DomainState, zones: ZoneSource, deltas: Deferred['deltas']): boolean {
    const started = this.now();
    const served = this.held(name);
    const whole = this.buildsWhole(name);
    if (served) {
      const base = served.sources && served.domain ? undefined : zones(name);
      if (whole && !base) return false;
      this.install(name, patchZone(served, NO_RECORDS, 0, this.context(), () => base!, domain));
    } else {
      const read = zones(name);
      if (!read) return false;
      const base = deltas.length === 0 ? read : withDeltas(read, deltas);
      this.install(name, buildZone({ domain: headOver(domain, base.domain), records: base.records }, this.context(), true));
    }
    this.charge(name, domain.ownerId, started, whole);
    return true;
  }

  /**
   * Whether applying settings to `name` costs what the zone holds (it is not served, or keeps no
   * records yet: they are read and the zone built whole): only those count against its budget.
   */
  private buildsWhole(name: string): boolean {
    const served = this.held(name);
    return !served?.sources || !served.domain;
  }

  /** Whether a settings change of `name` may be applied now (budgets, and this step's share). */
  private mayBuild(name: string, owner: number): boolean {
    return this.budget.stepOpen() && this.waitMs(name, owner) === 0;
  }

  /** How long until the budgets allow a settings change of `name` (0: now). */
  private waitMs(name: string, owner: number): number {
    return this.budget.waitMs(name, owner, this.buildsWhole(name));
  }

  /** Counts one build of `name` (begun at `started`; `whole`: it cost what the zone holds). */
  private charge(name: string, owner: number, started: number, whole: boolean): void {
    this.budget.charge(name, owner, started, whole);
  }

  private defer(name: string, deferred: Deferred): void {
    this.deferred.set(name, deferred);
    this.schedule();
  }

  /** A zone replaced, removed or reloaded: its deferred settings change is moot. */
  private forget(name: string): void {
    if (this.deferred.delete(name) && this.deferred.size === 0) this.schedule();
  }

  /** Wakes up when the first deferred rebuild may run. */
  private schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.deferred.size === 0) return;
    let wait = Infinity;
    for (const [name, { domain }] of this.deferred) wait = Math.min(wait, isServed(domain) ? this.waitMs(name, domain.ownerId) : 0);
    this.timer = setTimeout(this.runDeferred, Math.max(1, Math.ceil(wait)));
    this.timer.unref();
  }

  /** Builds the deferred zones whose budgets allow, oldest first, while the step's share lasts. */
  private readonly runDeferred = (): void => {
    this.timer = undefined;
    for (const [name, waiting] of this.deferred) {
      if (!this.budget.stepOpen()) break;
      if (isServed(waiting.domain) && !this.mayBuild(name, waiting.domain.ownerId)) continue;
      this.deferred.delete(name);
      // Deactivated while it waited: already not served.
      if (!isServed(waiting.domain)) continue;
      const { held } = waiting;
      if (held) this.rebuild(name, waiting.domain, () => ({ domain: held.domain, records: [...held.records.values()] }), []);
      else this.rebuild(name, waiting.domain, waiting.source, waiting.deltas);
    }
    this.schedule();
  };

  /** The domain as this index will serve it (a deferred settings change included), if it keeps it. */
  domainOf(name: string): DomainState | undefined {
    const waiting = this.deferred.get(name);
    const served = this.held(name)?.domain;
    if (!waiting) return served;
    return headOver(waiting.domain, waiting.held?.domain ?? served ?? waiting.deltas.reduce((d, { revision }) => afterRecords(d, revision), waiting.domain));
  }

  /**
   * Whether applying `change` asks the feeder for the zone's records: a feeder that reads them
   * asynchronously fetches them first.
   */
  wantsRecords(change: ZoneChange): boolean {
    if ('delta' in change) return this.needsRecords(change.name);
    if (!('head' in change) || !isServed(change.head)) return false;
    if (this.held(change.name) !== undefined) return this.needsRecords(change.name);
    // A deferred change already knows where its records come from.
    return !this.deferred.has(change.name);
  }

  /**
   * Applies a record-level change to a served zone, rebuilding only the names it touches. False
   * when the zone is not served here (its changes are none of this index's business).
   * `zones` gives the zone as it was before the change, for a zone that keeps nothing yet (see
   * ZoneData.sources); `needsRecords` says which do.
   */
  patchZone(name: string, delta: RecordDelta, revision: number, zones: ZoneSource): boolean {
    const old = this.held(name);
    if (!old) {
      // A zone to be served once its budget allows: its records follow.
      const waiting = this.deferred.get(name);
      if (waiting?.held) {
        for (const { id } of delta.del) waiting.held.records.delete(id);
        for (const record of delta.put) waiting.held.records.set(record.id, record);
        waiting.held.domain = afterRecords(waiting.held.domain, revision);
      } else waiting?.deltas.push({ delta, revision });
      return false;
    }
    // For watchers (IXFR): the names a patch may rebuild, as they were (a patch replaces a name's
    // sets, never changes them, so these stay as they were).
    const before = this.watchers.size > 0 ? namesBefore(old, delta) : undefined;
    const patched = patchZone(old, delta, revision, this.context(), () => {
      const found = zones(name);
      if (!found) throw new Error(`zone ${name}: nothing to patch from`);
      return found;
    });
    old.stale = true;
    this.zones.set(name, patched);
    if (patched.usesNodes) this.nodeDependent.add(name);
    if (this.watchers.size > 0) this.told(name, patched, before);
    return true;
  }

  /** Whether a patch of this zone would ask for its records (served, and keeping none). */
  needsRecords(name: string): boolean {
    const zone = this.held(name);
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
    // Zones built from the base with the old nodes go: built again with these on first use.
    this.base?.clear();
    for (const name of [...this.nodeDependent]) {
      const zone = this.zones.get(name);
      if (!zone) continue;
      const kept = keptZone(zone);
      const from = kept ?? zones(name);
      if (!from) throw new Error(`zone ${name}: nothing to rebuild from`);
      // Records kept stay kept (a later difference or settings change builds from them).
      this.install(name, buildZone(from, this.context(), kept !== undefined));
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
        if (!isServed(zone.domain)) return;
        const built = buildZone(zone, context);
        zones.set(zone.domain.domain, built);
        if (built.usesNodes) nodeDependent.add(zone.domain.domain);
      },
      size: () => zones.size,
      commit: () => {
        const old = this.zones;
        this.zones = zones;
        this.base?.clear();
        this.base = undefined;
        this.removed.clear();
        this.deferred.clear();
        this.schedule();
        this.nodeDependent.clear();
        for (const name of nodeDependent) this.nodeDependent.add(name);
        this.nodes = sorted;
        this.nodesRevision = nodesRevision;
        for (const zone of old.values()) zone.stale = true;
        this.generation++;
        if (this.watchers.size === 0) return;
        // Watchers hear of the zones whose serial the swap changed, and of those it removed.
        for (const [name, zone] of zones) if (old.get(name)?.serial !== zone.serial) this.told(name, zone);
        for (const name of old.keys()) if (!zones.has(name)) this.told(name, undefined);
      },
    };
  }

  get(apex: string): ZoneData | undefined {
    const zone = this.zones.get(apex);
    if (zone || !this.base || this.removed.has(apex)) return zone;
    return this.base.get(apex, this.contextNow);
  }

  /** The closest enclosing served zone of a lower-case name. */
  findZone(qname: string): ZoneData | undefined {
    let name = qname;
    for (;;) {
      const zone = this.get(name);
      if (zone) return zone;
      const dot = name.indexOf('.');
      if (dot === -1) return undefined;
      name = name.slice(dot + 1);
    }
  }

  /** Every zone served (with a base: each built from it to know, so a walk through them all costs a build each). */
  *zoneNames(): Generator<string> {
    yield* this.zones.keys();
    if (!this.base) return;
    for (const name of this.base.store.names()) if (!this.zones.has(name) && this.get(name)) yield name;
  }
}

/**
 * Told of a zone swapped in (`zone`) or no longer served (undefined). `before`: for a record
 * difference patched in, every owner name it may have changed, as it was (undefined: no data).
 * `adopted`: a zone served from a worker's base all along, now held because it is about to change.
 */
export type ZoneWatcher = (name: string, zone: ZoneData | undefined, before?: ReadonlyMap<string, NameNode | undefined>, adopted?: boolean) => void;
