// What the name server's primary process and its DNS workers say to each other over the IPC
// channel (structured clone: 'advanced' serialization).
//
// primary → worker: `init` once; `port` (when the primary has bound it, if `init` had none); `reload` (the stored state was replaced, or the
// batches since the worker's pin are no longer kept: pin it again);
// `catchup` (the batches after the revision the worker loaded; from then on it is live);
// `batch` (live, in order); `metrics` (a request, answered with the worker's figures as data).
// worker → primary: `loaded` (it pinned the stored state at that revision; awaits `catchup`);
// `applied` (after each batch); `metrics`.
import type { MetricsSnapshot } from '../../common/metrics/family.ts';
import type { DnsWorkerZones } from '../../config/dns.ts';
import type { RateLimitOptions } from '../../dns/rate-limit/rate-limit.ts';
import type { TcpLimits } from '../../dns/server/tcp-limits.ts';

export interface WorkerInit {
  type: 'init';
  /** 1 … N-1 (the primary is worker 0). */
  worker: number;
  /** Absent while the primary has not bound the port yet (a `port` message follows). */
  port?: number;
  cookieSecret: Buffer;
  rateLimit: RateLimitOptions;
  tcp: TcpLimits;
  /** The primary's local state directory (LMDB), read by the worker. */
  stateDir: string;
  /** PALISADE_DNS_WORKER_ZONES: every zone built into the worker's index, or from the pinned stored state on demand. */
  zones: DnsWorkerZones;
}

/** One applied batch, serialized once (v8.serialize of `BatchBody`) for every worker. */
export interface BatchEntry {
  since: number;
  revision: number;
  body: Uint8Array;
}

export type ToWorker =
  | WorkerInit
  | { type: 'port'; port: number }
  /** `pinned`: the answer to a worker's pin at that revision, whose batches since are no longer kept (it stays live if it was). */
  | { type: 'reload'; pinned?: number }
  | { type: 'catchup'; entries: BatchEntry[] }
  | { type: 'batch'; entry: BatchEntry }
  | { type: 'metrics'; id: number };

export type FromWorker =
  | { type: 'loaded'; revision: number; port: number; ms: number; zones: number }
  | { type: 'applied'; revision: number }
  /** The worker's figures as data, merged by the primary (each family by its own rule). */
  | { type: 'metrics'; id: number; snapshot: MetricsSnapshot };
