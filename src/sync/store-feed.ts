// Keeps a zone index in step with a store in the same process: a snapshot at start, then the
// change feed after every local commit (within milliseconds) and by polling (for commits made by
// other processes, such as the operator CLI). Each batch of changes is fetched first and applied
// in one synchronous step, so a query sees all of it or none.
import type { Logger } from 'pino';
import type { ZoneIndex } from '../dns/zone/index.ts';
import type { EdgeNode } from '../model/node.ts';
import type { Store, Zone } from '../store/types.ts';
import { indexBatchOf, readChangePage } from './change-page.ts';
import { applyBatch } from '../dns/zone/apply.ts';
import { coalesced } from '../common/coalesce.ts';
import { followStore } from './follow-store.ts';
import type { DomainState } from '../model/domain.ts';

const BATCH = 10_000;

export class StoreFeed {
  private applied = 0;
  private nodes: EdgeNode[] = [];
  private unfollow: (() => void) | undefined;

  constructor(
    private readonly store: Store,
    private readonly index: ZoneIndex,
    private readonly log: Logger,
    private readonly pollMs = 1000,
    /** A domain as this name server holds it (signing keys opened: name-server-domain.ts). */
    private readonly domainView: (domain: DomainState) => DomainState = (domain) => domain,
  ) {}

  get revision(): number {
    return this.applied;
  }

  async start(): Promise<void> {
    await this.loadSnapshot();
    this.unfollow = followStore(this.store, this.pollMs, this.catchUp);
  }

  stop(): void {
    this.unfollow?.();
  }

  private async loadSnapshot(): Promise<void> {
    const started = performance.now();
    const snap = await this.store.snapshot();
    this.index.replaceAll(snap.zones.map(this.zoneView), snap.nodes, snap.nodesRevision);
    this.nodes = snap.nodes;
    this.applied = snap.revision;
    this.log.info({ revision: snap.revision, zones: this.index.size, ms: Math.round(performance.now() - started) }, 'zone index loaded');
  }

  private readonly zoneView = (zone: Zone): Zone => (zone.domain.signing === undefined ? zone : { ...zone, domain: this.domainView(zone.domain) });

  /** Applies what changed since the last applied revision; concurrent calls coalesce. */
  readonly catchUp = coalesced(async () => {
    try {
      while (await this.applyBatch());
    } catch (error) {
      this.log.error({ err: error }, 'applying store changes failed; retrying at the next poll');
    }
  });

  /** One batch; true when more may be waiting. */
  private async applyBatch(): Promise<boolean> {
    const page = await readChangePage(this.store, this.applied, BATCH, { heads: true, domainView: this.domainView });
    if ('gone' in page) {
      this.log.warn({ applied: this.applied, oldest: page.oldest }, 'change feed no longer holds our revision; reloading the snapshot');
      await this.loadSnapshot();
      return false;
    }
    if (page.revision <= this.applied) return false;
    // Read first (above, and the records of zones the index keeps none of that the page
    // patches, serves with new settings or, on a node change, rebuilds); applied without awaiting, so the batch lands as
    // one step. Records read now may be newer than the page: differences apply by id, so the
    // zone converges on the store's as the feed catches up.
    const batch = indexBatchOf(page.changes, this.nodes);
    const zones = new Map<string, Zone | undefined>();
    // Asked again after reading: a deferred settings change the index built meanwhile (on its
    // timer) no longer answers for a zone's records.
    for (;;) {
      const wanted = new Set(batch.zones.flatMap((c) => (this.index.wantsRecords(c) ? [c.name] : [])));
      if (batch.nodes) for (const name of this.index.nodeDependentWithoutRecords()) wanted.add(name);
      const missing = [...wanted].filter((name) => !zones.has(name));
      if (missing.length === 0) break;
      for (const [name, zone] of await Promise.all(missing.map(async (name) => [name, await this.store.getZone(name).then((z) => z && this.zoneView(z))] as const))) zones.set(name, zone);
    }
    applyBatch(this.index, batch, (name) => zones.get(name));
    this.nodes = batch.nodeList;
    this.applied = page.revision;
    return page.revision < page.current;
  }
}
