// Keeps an edge's routing table in step with a store in the same process (the all-in-one role):
// every zone at start, then the change feed after every commit and by polling (commits made by
// other processes). A remote edge will take the same data from the API's change feed.
import type { Logger } from 'pino';
import type { Store } from '../store/types.ts';
import { coalesced } from '../sync/coalesce.ts';
import { followStore } from '../sync/follow-store.ts';
import type { RoutingTable } from './routing.ts';

export class StoreRoutes {
  private applied = 0;
  private unfollow: (() => void) | undefined;

  constructor(
    private readonly store: Store,
    private readonly table: RoutingTable,
    private readonly log: Logger,
    private readonly pollMs = 1000,
  ) {}

  async start(): Promise<void> {
    await this.loadAll();
    this.unfollow = followStore(this.store, this.pollMs, this.catchUp);
  }

  stop(): void {
    this.unfollow?.();
  }

  private async loadAll(): Promise<void> {
    this.applied = await this.store.currentRevision();
    let cursor: string | undefined;
    do {
      const page = await this.store.listAllZones({ limit: 1000, cursor });
      for (const zone of page.items) this.table.put(zone.domain);
      cursor = page.next;
    } while (cursor);
    this.log.info({ revision: this.applied, domains: this.table.size }, 'edge: routing table loaded');
  }

  private readonly catchUp = coalesced(async () => {
    try {
      for (;;) {
        const feed = await this.store.changesSince(this.applied, 1000);
        if ('gone' in feed) {
          await this.loadAll();
          return;
        }
        if (feed.changes.length === 0) return;
        const names = new Set(feed.changes.filter((c) => c.kind === 'zone').map((c) => c.key));
        const zones = await Promise.all([...names].map(async (name) => [name, await this.store.getZone(name)] as const));
        for (const [name, zone] of zones) {
          if (zone) this.table.put(zone.domain);
          else this.table.remove(name);
        }
        this.applied = feed.changes[feed.changes.length - 1]!.revision;
      }
    } catch (error) {
      this.log.error({ err: error }, 'edge: applying store changes failed; retrying at the next poll');
    }
  });
}
