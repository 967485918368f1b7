// A DNS worker's copy of the zones: read from the local state the primary keeps (its LMDB,
// opened a second time in this process: LMDB readers never block the writer), then kept current
// by the batches the primary forwards. A zone's first record difference is patched from the
// zone as stored, which the primary sends along when it read it too, else this reads it here.
import type { ZoneIndex, ZoneSource } from '../../dns/zone/index.ts';
import type { IndexBatch } from '../../dns/zone/apply.ts';
import type { Zone } from '../../store/types.ts';
import { LocalState } from '../../sync/local-state.ts';

/** What the primary forwards of one applied batch. */
export interface BatchBody {
  batch: IndexBatch;
  /** The stored zones the primary's index read for it, as they were before it. */
  read: Map<string, Zone | undefined>;
}

export class StoredState {
  private state: LocalState | undefined;

  constructor(private readonly dir: string) {}

  /**
   * Builds the stored zones into a staged index and swaps it in; the revision it holds. With
   * `pause` (the worker is serving), the event loop gets a turn every few hundred zones.
   */
  async load(index: ZoneIndex, pause?: () => Promise<void>): Promise<number> {
    await this.close();
    const loading = this.loading(index);
    for (let step = loading.next(); ; step = loading.next()) {
      if (step.done) return step.value;
      if (pause) await pause();
    }
  }

  /** The same, in one synchronous step (before the worker serves). */
  loadNow(index: ZoneIndex): number {
    if (this.state) throw new Error('loadNow: already loaded');
    const loading = this.loading(index);
    for (;;) {
      const step = loading.next();
      if (step.done) return step.value;
    }
  }

  private *loading(index: ZoneIndex): Generator<void, number> {
    // A new snapshot is written to the other side of the state: opened afresh to see it.
    this.state = new LocalState(this.dir);
    const header = this.state.header();
    const staged = index.stage(header.nodes, header.nodesRevision);
    let count = 0;
    for (const zone of this.state.zones()) {
      staged.put(zone);
      if (++count % 256 === 0) yield;
    }
    staged.commit();
    return header.revision;
  }

  /** Zones for a batch's patches: what the primary read, else as stored here now. */
  source(read: Map<string, Zone | undefined>): ZoneSource {
    return (name) => (read.has(name) ? read.get(name) : this.state?.zone(name));
  }

  async close(): Promise<void> {
    await this.state?.close();
    this.state = undefined;
  }
}
