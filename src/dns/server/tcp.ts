// TCP listener (RFC 7766): dns2's TCP server supplies the socket server; the connection handling
// is ours, because dns2's idle timeout only half-closes (a client that never sends FIN keeps the
// socket), it has no connection limits and it drops a connection on the first undecodable
// message instead of answering FORMERR.
//
// Per connection: 2-octet framing with split and pipelined messages, answers in order, idle
// timeout that destroys the socket, a lifetime cap against clients that trickle bytes.
// Memory: a connection's unsent answers are bounded (past `maxOutputBytes` its queries wait
// unread, so TCP's own flow control pushes back on the client), and all connections together
// share a budget (`outputBudgetBytes`); a connection over either waits for its client to read.
// Once the budget is spent, the connection holding the most unsent answers (the slowest reader)
// is closed rather than making every client wait.
// Room: each client network (/24, /56 by default) holds at most `maxConnectionsPerClient`; when
// every slot is taken, a new client takes the slot of the connection that has gone longest
// without a completed query (as Knot and NSD shed idle connections), so clients that trickle
// bytes or sit idle cannot lock others out.
import type { Socket } from 'node:net';
import dns2 from 'dns2';
import type { Logger } from 'pino';
import { clientNetwork } from '../../model/client-network.ts';
import type { QueryHandler } from './handler.ts';
import type { DnsMetrics } from './metrics.ts';

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

interface Connection {
  socket: Socket;
  network: string;
  /** Bytes written and not yet known to be flushed (socket.writableLength when last seen). */
  buffered: number;
}

export class TcpListener extends dns2.TCPServer {
  private handler!: QueryHandler;
  private metrics!: DnsMetrics;
  private limits!: TcpLimits;
  private log!: Logger;
  /** Open connections, least recently answered first (re-inserted on every completed query). */
  private readonly open = new Map<Socket, Connection>();
  private readonly perNetwork = new Map<string, number>();
  private buffered = 0;
  /** Connections waiting for the global budget to free up. */
  private readonly waiting = new Set<() => void>();

  static create(handler: QueryHandler, metrics: DnsMetrics, limits: TcpLimits, log: Logger): TcpListener {
    const listener = new TcpListener();
    Object.assign(listener, { handler, metrics, limits, log });
    metrics.tcpOpen = () => listener.open.size;
    metrics.tcpBufferedBytes = () => listener.buffered;
    listener.on('error', (error: Error) => log.error({ err: error }, 'dns/tcp: server error'));
    return listener;
  }

  get openConnections(): number {
    return this.open.size;
  }

  /** Records what a connection holds unsent now; wakes waiting connections when the budget frees. */
  private account(conn: Connection): void {
    const now = conn.socket.destroyed ? 0 : conn.socket.writableLength;
    this.buffered += now - conn.buffered;
    conn.buffered = now;
    if (this.buffered < this.limits.outputBudgetBytes && this.waiting.size > 0) {
      const wake = [...this.waiting];
      this.waiting.clear();
      for (const resume of wake) resume();
    }
  }

  /**
   * The budget is spent: close the connection holding the most unsent answers (the slowest
   * reader), unless that is `asking` itself. O(open connections), once per shed connection.
   * True when `asking` may go on writing.
   */
  private shedForBudget(asking: Connection): boolean {
    while (this.buffered >= this.limits.outputBudgetBytes) {
      let slowest: Connection | undefined;
      for (const conn of this.open.values()) if (!slowest || conn.buffered > slowest.buffered) slowest = conn;
      if (!slowest || slowest === asking || slowest.buffered <= asking.buffered) return false;
      this.metrics.tcpEvicted++;
      this.forget(slowest);
      slowest.socket.destroy();
    }
    return true;
  }

  /** Makes room for a new connection: the least recently answered one goes. */
  private evictOne(): void {
    const oldest = this.open.values().next().value;
    if (!oldest) return;
    this.metrics.tcpEvicted++;
    this.forget(oldest);
    oldest.socket.destroy();
  }

  private forget(conn: Connection): void {
    if (!this.open.delete(conn.socket)) return;
    const left = (this.perNetwork.get(conn.network) ?? 1) - 1;
    if (left === 0) this.perNetwork.delete(conn.network);
    else this.perNetwork.set(conn.network, left);
    this.buffered -= conn.buffered;
    conn.buffered = 0;
    this.account(conn);
  }

  /** Replaces dns2's connection handler. */
  handle(socket: Socket): void {
    const client = socket.remoteAddress ?? '?';
    const network = clientNetwork(client, this.limits.prefixV4, this.limits.prefixV6);
    if ((this.perNetwork.get(network) ?? 0) >= this.limits.maxConnectionsPerClient) {
      this.metrics.tcpRejected++;
      socket.destroy();
      return;
    }
    if (this.open.size >= this.limits.maxConnections) this.evictOne();
    this.metrics.tcpConnections++;
    const conn: Connection = { socket, network, buffered: 0 };
    this.open.set(socket, conn);
    this.perNetwork.set(network, (this.perNetwork.get(network) ?? 0) + 1);
    socket.on('error', () => socket.destroy());
    socket.setNoDelay(true);
    socket.setTimeout(this.limits.idleTimeoutMs, () => {
      this.metrics.tcpTimeouts++;
      socket.destroy();
    });
    const lifetime = setTimeout(() => socket.destroy(), this.limits.maxLifetimeMs);
    lifetime.unref();
    socket.once('close', () => {
      clearTimeout(lifetime);
      this.waiting.delete(resume);
      this.forget(conn);
    });

    let pending: Buffer = Buffer.alloc(0);
    let paused = false;
    let ended = false;
    const full = () =>
      socket.writableLength >= this.limits.maxOutputBytes || (this.buffered >= this.limits.outputBudgetBytes && !this.shedForBudget(conn));
    const work = () => {
      while (pending.length >= 2 && !socket.destroyed) {
        if (full()) {
          // Read nothing more until the client has read its answers (or others theirs).
          if (!paused) {
            paused = true;
            socket.pause();
          }
          if (socket.writableLength > 0) socket.once('drain', resume);
          else this.waiting.add(resume);
          break;
        }
        const length = pending.readUInt16BE(0);
        if (pending.length < 2 + length) break;
        const message = pending.subarray(2, 2 + length);
        pending = pending.subarray(2 + length);
        const response = this.handler.handle(message, 'tcp', { address: client });
        if (!response) continue;
        const frame = Buffer.allocUnsafe(2 + response.length);
        frame.writeUInt16BE(response.length, 0);
        response.copy(frame, 2);
        socket.write(frame, () => this.account(conn));
        this.account(conn);
        // Completed a query: most recently active now.
        this.open.delete(socket);
        this.open.set(socket, conn);
      }
      // Keep the unread tail small: copy it out of the (possibly large) chunk it points into.
      if (pending.length > 0 && pending.byteOffset > 0) pending = Buffer.from(pending);
      if (full()) return;
      if (paused) {
        paused = false;
        socket.resume();
      }
      // The client sent FIN: once everything it sent is answered, close our side too.
      if (ended && !socket.destroyed) socket.end();
    };
    const resume = () => {
      this.account(conn);
      work();
    };
    socket.on('data', (chunk: Buffer) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      work();
    });
    socket.on('drain', () => this.account(conn));
    socket.on('end', () => {
      ended = true;
      work();
    });
  }

  /** Stops accepting and closes every open connection. */
  async shutdown(): Promise<void> {
    for (const socket of this.open.keys()) socket.destroy();
    await new Promise<void>((resolve) => this.close(() => resolve()));
  }
}
