// The TCP listener's bounds (the PALISADE_DNS_TCP_* settings and their defaults), the scheduler's
// constants and what it holds per connection: apart from tcp.ts so that the settings can be read
// without loading the listener, and so that tcp.ts holds only the handling (see its header for why
// each bound exists).
import type { Socket } from 'node:net';
import type { MessageStream } from '../chain/context.ts';

export interface TcpLimits {
  idleTimeoutMs: number;
  maxLifetimeMs: number;
  maxConnections: number;
  /** Per client network (see the prefix lengths). */
  maxConnectionsPerClient: number;
  prefixV4: number;
  prefixV6: number;
  /** Unsent answer bytes one connection may hold before its further queries wait. */
  maxOutputBytes: number;
  /** Unsent answer bytes all connections together may hold. */
  outputBudgetBytes: number;
}

export const DEFAULT_TCP_LIMITS: TcpLimits = {
  idleTimeoutMs: 10_000,
  maxLifetimeMs: 120_000,
  maxConnections: 1024,
  maxConnectionsPerClient: 64,
  prefixV4: 24,
  prefixV6: 56,
  maxOutputBytes: 128 * 1024,
  outputBudgetBytes: 32 * 1024 * 1024,
};

/**
 * Connections the kernel completes before they are accepted (Node's default is 511, Linux caps it
 * at net.core.somaxconn, 4096 by default): a burst of connections past it has the kernel drop
 * new clients' SYNs, which they repeat only after 1, 3, 7 s.
 */
export const TCP_BACKLOG = 4096;

/** Time the scheduler answers queries for before the event loop takes in new I/O. */
export const SLICE_MS = 4;
/** A connection with more queries than this waiting is heavy (a resolver sends one or a few). */
export const LIGHT_QUEUED = 4;
/** Transfer bytes a connection sends per turn (a message is at most ~16 KB). */
export const TRANSFER_TURN_BYTES = 32 * 1024;
/**
 * Answer bytes a connection may take as a light one: a burst, refilled at a rate (a resolver's
 * connection stays light however long it lives; one fetching large answers back to back does not).
 */
export const LIGHT_BURST_BYTES = 128 * 1024;
export const LIGHT_BYTES_PER_S = 128 * 1024;
/**
 * Answer bytes all heavy connections together get, per second (and as a burst): a client that
 * never reads has the kernel take megabytes of answers per connection (its send and receive
 * buffers) before its socket pushes back, and answering costs the same whether it is read or not.
 */
export const HEAVY_BYTES_PER_S = 4 * 1024 * 1024;
export const HEAVY_BURST_BYTES = 512 * 1024;
/** Queries a heavy connection gets answered per turn (bounded in bytes by the answers' size). */
export const HEAVY_TURN_QUERIES = 8;
export const HEAVY_TURN_BYTES = 16 * 1024;
/**
 * Unread query bytes a connection may hold: a client that sends more queries than this ahead of
 * their answers is closed. (It is not paused instead: a socket not read never learns that its
 * client has gone, and a heavy connection waits long for its turn.)
 */
export const MAX_UNREAD_BYTES = 128 * 1024;
/** Answers not drained for this long: the connection is stalled, and the first to go for a new one. */
export const STALLED_MS = 1000;

export interface Connection {
  socket: Socket;
  network: string;
  client: string;
  /** Bytes written and not yet known to be flushed (socket.writableLength when last seen). */
  buffered: number;
  /** Unread bytes: whole queries waiting, and a partial one. */
  unread: Buffer;
  /** Whole queries at the front of `unread`, and their bytes (counted as they arrive). */
  queued: number;
  counted: number;
  /** What it may still take as a light connection (bytes), as of `creditAt` (ms). */
  credit: number;
  creditAt: number;
  /** Waiting for its client to read (its own bound, or the budget). */
  blocked: boolean;
  /** The socket is paused (blocked). */
  paused: boolean;
  /** The client sent FIN. */
  ended: boolean;
  /** Answers it gets next as a light connection (see the 'end' handler). */
  probe: number;
  /** Since when its answers have not drained (ms), 0 when they have. */
  stalledSince: number;
  /** A zone transfer being sent (its later queries wait), and whether it may go (its slot). */
  stream: MessageStream | undefined;
  streamReady: boolean;
}
