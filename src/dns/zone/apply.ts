// One batch of changes into the index, in one synchronous step (no query runs in between):
// new edge nodes first (rebuilding the zones whose answers use them), then zone puts and removals.
import type { EdgeNode } from '../../model/node.ts';
import type { Zone } from '../../store/types.ts';
import type { ZoneIndex } from './index.ts';

export interface IndexBatch {
  /** Changed zones by name: the document to serve, or undefined to stop serving the name. */
  zones: Map<string, Zone | undefined>;
  /** The whole node list and its revision, when nodes changed. */
  nodes?: { list: EdgeNode[]; revision: number };
  /** Current documents of the index's node-dependent zones not in `zones` (needed with `nodes`). */
  dependent: readonly (Zone | undefined)[];
}

export function applyBatch(index: ZoneIndex, batch: IndexBatch): void {
  if (batch.nodes) {
    index.setNodes(batch.nodes.list, batch.nodes.revision, batch.dependent.filter((z): z is Zone => z !== undefined));
  }
  for (const [name, zone] of batch.zones) {
    if (zone) index.putZone(zone);
    else index.deleteZone(name);
  }
}
