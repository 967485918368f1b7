// What the edge role's primary and its workers say to each other over the IPC channel (advanced
// serialization: Maps, Buffers and Dates go as they are). In order on one channel: a worker hears
// `init` and the whole state before any change, and every change before the revision it makes.
import type { MetricsSnapshot } from '../../common/metrics/family.ts';
import type { EdgeBatch, EdgeState } from '../../edge/edge-state.ts';
import type { Minutes } from '../../edge/uptime-recorder.ts';

export type Scheme = 'http' | 'https';
export type EdgeItems = Parameters<EdgeState['replace']>[0];

/** Primary → worker. */
export type ToWorker =
  /**
   * Who the worker is and what the node shares: the challenge key, the TLS ticket keys, where HTTPS redirects point,
   * the backends down, the clients banned; `listen`: balanced by the kernel, the ports to listen
   * on (SO_REUSEPORT) — otherwise connections come from the primary.
   */
  | { t: 'init'; index: number; workers: number; secret: Buffer; ticketKeys: Buffer; httpsPort: number; down: string[]; bans: Array<[string, number]>; listen?: { host: string; http: number; https: number } }
  | { t: 'replace'; items: EdgeItems }
  | { t: 'apply'; batch: EdgeBatch }
  /** The revision the state sent so far makes (acknowledged with `applied`). */
  | { t: 'revision'; revision: number }
  /** A client connection (the socket goes with the message). */
  | { t: 'connection'; scheme: Scheme }
  | { t: 'health'; backend: string; up: boolean }
  | { t: 'ban'; client: string; until: number }
  /** How many workers send for the domain now (each has that part of its rate). */
  | { t: 'bandwidth'; domain: string; senders: number }
  /** The answer to a `lock` request. */
  | { t: 'lock'; id: number; hash: string; granted: boolean };

/** Worker → primary. */
export type FromWorker =
  /** Up and listening for messages: send `init` and the state. */
  | { t: 'hello' }
  /** State applied, serving (the first time: ready for connections). */
  | { t: 'applied'; revision: number }
  | { t: 'health'; backend: string; up: boolean }
  | { t: 'ban'; client: string; until: number }
  | { t: 'bandwidth'; domain: string; sending: boolean }
  | { t: 'lock'; id: number; hash: string; wait: boolean }
  | { t: 'unlock'; hash: string }
  /** Every half second: the worker's figures (as data) and the request measures gathered since the last. */
  | { t: 'stats'; metrics: MetricsSnapshot; requests: Map<string, Minutes> };

/** Messages come from our own processes, but a malformed one is dropped, never a crash. */
export function isMessage<T extends { t: string }>(value: unknown): value is T {
  return typeof value === 'object' && value !== null && typeof (value as { t?: unknown }).t === 'string';
}
