// How a DNS worker gets its zones and tells the primary which revision it holds, one way per
// PALISADE_DNS_WORKER_ZONES: `index` (indexed-zones.ts: every zone read and built into the
// worker's index) or `stored` (pinned-zones.ts: the stored state pinned at one revision, zones
// built on first question). The worker (worker.ts) applies the batches and binds the port; these
// decide when it reads the state, and which revision a catch-up starts from.
import type { IndexBatch } from '../../dns/zone/apply.ts';
import type { ZoneIndex, ZoneSource } from '../../dns/zone/index.ts';
import type { Logger } from 'pino';
import type { Zone } from '../../store/types.ts';
import type { FromWorker } from './messages.ts';

/** What the primary forwards of one applied batch. */
export interface BatchBody {
  batch: IndexBatch;
  /** The stored zones the primary's index read for it, as they were before it. */
  read: Map<string, Zone | undefined>;
}

/**
 * What the worker and its zones share. `mode`: loading (reading the state) → waiting (for the
 * catch-up after what was read) → live; batches are applied only when live.
 */
export interface WorkerStatus {
  applied: number;
  mode: 'loading' | 'waiting' | 'live';
  /** The port, once known (0 before). */
  port: number;
}

export interface WorkerZonesContext {
  index: ZoneIndex;
  status: WorkerStatus;
  log: Logger;
  send: (message: FromWorker) => void;
}

export interface WorkerZones {
  /** Before the port is known (at start, before the worker serves). */
  prepare(): void;
  /** The port is known: tell the primary which revision is ready (`loaded`). */
  announce(): void;
  /** The primary's `reload` (`pinned`: its answer to a `loaded` it cannot catch up). */
  reloadAsked(pinned: number | undefined): void;
  /** A batch that does not follow, or failed to apply: read the state again. */
  again(why: string): void;
  /** The primary's `catchup`: the revision its entries follow (now held), or undefined when none was awaited. */
  caughtUp(): number | undefined;
  /** After batches were applied. */
  afterBatches(): void;
  /** Zones for a batch's patches: what the primary read, else as stored here. */
  source(read: Map<string, Zone | undefined>): ZoneSource;
  close(): Promise<void>;
}
