// One batch of changes into the index, in one synchronous step (no query runs in between):
// new edge nodes first (rebuilding the zones whose answers use them), then the zones' changes in
// revision order — whole zones, removals, settings changes and record-level differences.
import type { DomainState } from '../../model/domain.ts';
import type { EdgeNode } from '../../model/node.ts';
import type { RecordDelta, Zone } from '../../store/types.ts';
import type { ZoneSource, ZoneIndex } from './index.ts';

export type ZoneChange =
  /** The zone as it now is (served if its name servers are active), or undefined: no longer served. */
  | { name: string; zone: Zone | undefined }
  /** The zone's settings as they now are, its records as they were (ZoneIndex.applyHead). */
  | { name: string; head: DomainState }
  /** Records changed at `revision` (ignored for a zone not served here). */
  | { name: string; delta: RecordDelta; revision: number };

export interface IndexBatch {
  zones: ZoneChange[];
  /** The whole node list and its revision, when nodes changed. */
  nodes?: { list: EdgeNode[]; revision: number };
}

/** `zones`: zones as the feeder holds them, for zones the index keeps nothing of. */
export function applyBatch(index: ZoneIndex, batch: IndexBatch, zones: ZoneSource): void {
  if (batch.nodes) index.setNodes(batch.nodes.list, batch.nodes.revision, zones);
  // A zone that came whole earlier in this batch is patched from that, not from the feeder's copy.
  const whole = new Map<string, Zone>();
  const source: ZoneSource = (name) => whole.get(name) ?? zones(name);
  for (const change of batch.zones) {
    if ('delta' in change) index.patchZone(change.name, change.delta, change.revision, source);
    else if ('head' in change) index.applyHead(change.head, source);
    else if (change.zone) {
      index.putZone(change.zone);
      whole.set(change.name, change.zone);
    } else {
      index.deleteZone(change.name);
      whole.delete(change.name);
    }
  }
}
