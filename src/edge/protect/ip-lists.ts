// The IP lists in force on this edge, compiled per customer: a customer's lists (those the feed
// delivers are the ones on this node) apply to all of that customer's domains. A changed list
// recompiles its owner's set in slices off the request path, then swaps it in whole; until then
// the previous set stays in force.
import type { Logger } from 'pino';
import type { IpListState } from '../../model/iplist.ts';
import type { EdgeState } from '../edge-state.ts';
import { IpRanges } from './ip-ranges.ts';

export class IpLists {
  private readonly byOwner = new Map<number, IpRanges>();
  /** Owners whose set is being rebuilt, and whether another rebuild is due after it. */
  private readonly building = new Map<number, boolean>();

  constructor(
    private readonly state: EdgeState,
    private readonly log: Logger,
  ) {
    state.onIpListChange((ownerId) => void this.rebuild(ownerId));
    for (const owner of new Set([...state.ipLists.values()].map((l) => l.ownerId))) void this.rebuild(owner);
  }

  /** Whether `address` is on one of the owner's lists. */
  blocks(ownerId: number, address: string): boolean {
    return this.byOwner.get(ownerId)?.has(address) ?? false;
  }

  private async rebuild(ownerId: number): Promise<void> {
    if (this.building.has(ownerId)) {
      this.building.set(ownerId, true);
      return;
    }
    this.building.set(ownerId, false);
    try {
      do {
        this.building.set(ownerId, false);
        const lists: IpListState[] = [...this.state.ipLists.values()].filter((l) => l.ownerId === ownerId);
        const started = performance.now();
        const entries = lists.flatMap((l) => l.ips);
        const ranges = await IpRanges.compileInSlices(entries);
        if (ranges.size === 0) this.byOwner.delete(ownerId);
        else this.byOwner.set(ownerId, ranges);
        this.log.debug({ owner: ownerId, lists: lists.length, entries: entries.length, ranges: ranges.size, ms: Math.round(performance.now() - started) }, 'edge: IP lists compiled');
      } while (this.building.get(ownerId));
    } catch (error) {
      this.log.error({ err: error, owner: ownerId }, 'edge: compiling IP lists failed; the previous set stays in force');
    } finally {
      this.building.delete(ownerId);
    }
  }
}
