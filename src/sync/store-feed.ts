// Keeps a zone index in step with a store in the same process: a snapshot at start, then the
// change feed after every local commit (within milliseconds) and by polling (for commits made by
// other processes, such as the operator CLI). Each batch of changes is fetched first and applied
// in one synchronous step, so a query sees all of it or none.
import type { Logger } from 'pino';
import type { ZoneIndex } from '../dns/zone/index.ts';
import type { Store, Zone } from '../store/types.ts';
import { applyBatch } from '../dns/zone/apply.ts';
import { coalesced } from './coalesce.ts';
import { followStore } from './follow-store.ts';

const BATCH = 10_000;

export class StoreFeed {
  private applied = 0;
  private unfollow: (() => void) | undefined;

  constructor(
    private readonly store: Store,
    private readonly index: ZoneIndex,
    private readonly log: Logger,
    private readonly pollMs = 1000,
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
    this.index.replaceAll(snap.zones, snap.nodes, snap.nodesRevision);
    this.applied = snap.revision;
    this.log.info({ revision: snap.revision, zones: this.index.size, ms: Math.round(performance.now() - started) }, 'zone index loaded');
  }

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
    const feed = await this.store.changesSince(this.applied, BATCH);
    if ('gone' in feed) {
      this.log.warn({ applied: this.applied, oldest: feed.oldest }, 'change feed no longer holds our revision; reloading the snapshot');
      await this.loadSnapshot();
      return false;
    }
    if (feed.changes.length === 0) return false;
    const zoneNames = new Set<string>();
    let nodeRevision = 0;
    for (const change of feed.changes) {
      if (change.kind === 'zone') zoneNames.add(change.key);
      else if (change.kind === 'node') nodeRevision = change.revision;
    }
    // Read everything first; apply below without awaiting, so the batch lands as one step.
    const zones = new Map(await Promise.all([...zoneNames].map(async (name) => [name, await this.store.getZone(name)] as [string, Zone | undefined])));
    const nodes = nodeRevision > 0 ? { list: await this.store.listNodes(), revision: nodeRevision } : undefined;
    const dependent = nodes ? await Promise.all(this.index.nodeDependentZones().filter((n) => !zoneNames.has(n)).map((n) => this.store.getZone(n))) : [];
    applyBatch(this.index, { zones, nodes, dependent });
    this.applied = feed.changes[feed.changes.length - 1]!.revision;
    return feed.changes.length === BATCH;
  }
}
