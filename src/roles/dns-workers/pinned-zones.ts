// PALISADE_DNS_WORKER_ZONES=stored: a DNS worker answers from the stored state pinned at one
// revision (pinned-state.ts), zones built on their first question. A pin is told to the primary
// (`loaded`) and becomes the base with the catch-up after it. A live worker re-pins now and then
// and stays live meanwhile: batches go on applying to the base it has until the catch-up swaps
// the new one in.
import type { ZoneSource } from '../../dns/zone/index.ts';
import type { Zone } from '../../store/types.ts';
import { PinnedState } from './pinned-state.ts';
import type { WorkerZones, WorkerZonesContext } from './worker-zones.ts';

export class PinnedZones implements WorkerZones {
  private readonly stored: PinnedState;
  private repinTimer: NodeJS.Timeout | undefined;

  constructor(
    dir: string,
    private readonly ctx: WorkerZonesContext,
  ) {
    this.stored = new PinnedState(dir);
  }

  prepare(): void {
    // Nothing is read before serving: the pin is taken once the port is known.
    this.ctx.status.mode = 'waiting';
  }

  announce(): void {
    if (!this.repinTimer) this.pin('', false);
  }

  reloadAsked(pinned: number | undefined): void {
    // A re-pin of a live worker that the primary cannot catch up (the stored state lags, e.g.
    // a full disk): it stays live on the base it has, and tries again later.
    if (pinned !== undefined && this.ctx.status.mode === 'live' && this.stored.pinned) this.stored.postpone();
    else this.again('the primary loaded a snapshot, or no longer keeps the batches after the pin');
  }

  /** Pin again (not at once if it was in answer to a pin of ours: the state did not move on enough yet). */
  again(why: string): void {
    this.ctx.status.mode = 'waiting';
    if (this.repinTimer) return;
    const wait = this.stored.pinned ? 250 : 0;
    this.stored.drop();
    this.repinTimer = setTimeout(() => {
      this.repinTimer = undefined;
      // Before the port is known the first pin is yet to come (announce).
      if (this.ctx.status.port) this.pin(why, false);
    }, wait);
  }

  caughtUp(): number | undefined {
    if (!this.stored.pinned || this.repinTimer) return undefined;
    // The pin becomes the base with the batches after it, in this one synchronous step.
    return this.stored.use(this.ctx.index);
  }

  afterBatches(): void {
    if (this.stored.due(this.ctx.index)) this.pin('re-pin: the zones changed since the base are held whole', true);
  }

  /** Pins the stored state aside and tells the primary its revision (the catch-up makes it the base). */
  private pin(why: string, live: boolean): void {
    const { status, log } = this.ctx;
    const begun = Date.now();
    const revision = this.stored.pin();
    if (!live) status.mode = 'waiting';
    if (why) log.info({ revision: status.applied, pinned: revision, why }, 'dns worker: pinning the local state again');
    this.ctx.send({ type: 'loaded', revision, port: status.port, ms: Date.now() - begun, zones: this.stored.zones });
  }

  source(read: Map<string, Zone | undefined>): ZoneSource {
    return this.stored.source(read);
  }

  close(): Promise<void> {
    clearTimeout(this.repinTimer);
    return this.stored.close();
  }
}
