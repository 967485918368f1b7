// PALISADE_DNS_WORKER_ZONES=index (the default): a DNS worker's copy of the zones, every one of
// them, read from the local state the primary keeps (its LMDB, opened a second time in this
// process: LMDB readers never block the writer) and built into the worker's index, then kept
// current by the batches the primary forwards. A zone's first record difference is patched from
// the zone as stored, which the primary sends along when it read it too, else this reads it here.
// A snapshot loaded by the primary (or a gap in the batches) makes it read the whole state again,
// answering from the index it has meanwhile.
import type { ZoneIndex, ZoneSource } from '../../dns/zone/index.ts';
import type { Zone } from '../../store/types.ts';
import { LocalState } from '../../sync/local-state.ts';
import type { WorkerZones, WorkerZonesContext } from './worker-zones.ts';

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

export class IndexedZones implements WorkerZones {
  private state: LocalState | undefined;
  /** A reload asked for while one runs: done after it. */
  private readAgain = false;
  private loadedMs = 0;

  constructor(
    private readonly dir: string,
    private readonly ctx: WorkerZonesContext,
  ) {}

  prepare(): void {
    const started = Date.now();
    this.ctx.status.applied = this.loadNow(this.ctx.index);
    this.loadedMs = Date.now() - started;
  }

  announce(): void {
    const { status, index } = this.ctx;
    status.mode = 'waiting';
    if (this.readAgain) void this.reload('the primary loaded a snapshot');
    else this.ctx.send({ type: 'loaded', revision: status.applied, port: status.port, ms: this.loadedMs, zones: index.size });
  }

  reloadAsked(): void {
    void this.reload('the primary loaded a snapshot');
  }

  again(why: string): void {
    void this.reload(why);
  }

  caughtUp(): number | undefined {
    return this.ctx.status.mode === 'waiting' ? this.ctx.status.applied : undefined;
  }

  afterBatches(): void {}

  private async reload(why: string): Promise<void> {
    const { status, index, log } = this.ctx;
    if (status.mode === 'loading') {
      this.readAgain = true;
      return;
    }
    status.mode = 'loading';
    const begun = Date.now();
    log.info({ revision: status.applied, why }, 'dns worker: reading the local state again');
    do {
      this.readAgain = false;
      status.applied = await this.load(index, turn);
    } while (this.readAgain);
    status.mode = 'waiting';
    this.ctx.send({ type: 'loaded', revision: status.applied, port: status.port, ms: Date.now() - begun, zones: index.size });
  }

  /**
   * Builds the stored zones into a staged index and swaps it in; the revision it holds. With
   * `pause` (the worker is serving), the event loop gets a turn every few hundred zones.
   */
  private async load(index: ZoneIndex, pause?: () => Promise<void>): Promise<number> {
    await this.close();
    const loading = this.loading(index);
    for (let step = loading.next(); ; step = loading.next()) {
      if (step.done) return step.value;
      if (pause) await pause();
    }
  }

  /** The same, in one synchronous step (before the worker serves). */
  private loadNow(index: ZoneIndex): number {
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

  source(read: Map<string, Zone | undefined>): ZoneSource {
    return (name) => (read.has(name) ? read.get(name) : this.state?.zone(name));
  }

  async close(): Promise<void> {
    await this.state?.close();
    this.state = undefined;
  }
}
