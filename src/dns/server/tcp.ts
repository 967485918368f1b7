// TCP listener (RFC 7766): dns2's TCP server supplies the socket server; the connection handling
// is ours, because dns2's idle timeout only half-closes (a client that never sends FIN keeps the
// socket), it has no connection limits and it drops a connection on the first undecodable
// message instead of answering FORMERR.
//
// Per connection: 2-octet framing with split and pipelined messages, answers in order, idle
// timeout that destroys the socket, a lifetime cap against clients that trickle bytes, and
// backpressure (a client that does not read its answers is paused, not buffered without bound).
import type { Socket } from 'node:net';
import dns2 from 'dns2';
import type { Logger } from 'pino';
import type { QueryHandler } from './handler.ts';
import type { DnsMetrics } from './metrics.ts';

export interface TcpLimits {
  idleTimeoutMs: number;
  maxLifetimeMs: number;
  maxConnections: number;
  maxConnectionsPerClient: number;
}

export const DEFAULT_TCP_LIMITS: TcpLimits = {
  idleTimeoutMs: 10_000,
  maxLifetimeMs: 120_000,
  maxConnections: 1024,
  maxConnectionsPerClient: 64,
};

export class TcpListener extends dns2.TCPServer {
  private handler!: QueryHandler;
  private metrics!: DnsMetrics;
  private limits!: TcpLimits;
  private log!: Logger;
  private readonly open = new Set<Socket>();
  private readonly perClient = new Map<string, number>();

  static create(handler: QueryHandler, metrics: DnsMetrics, limits: TcpLimits, log: Logger): TcpListener {
    const listener = new TcpListener();
    Object.assign(listener, { handler, metrics, limits, log });
    listener.on('error', (error: Error) => log.error({ err: error }, 'dns/tcp: server error'));
    return listener;
  }

  get openConnections(): number {
    return this.open.size;
  }

  /** Replaces dns2's connection handler. */
  handle(socket: Socket): void {
    const client = socket.remoteAddress ?? '?';
    const fromClient = this.perClient.get(client) ?? 0;
    if (this.open.size >= this.limits.maxConnections || fromClient >= this.limits.maxConnectionsPerClient) {
      this.metrics.tcpRejected++;
      socket.destroy();
      return;
    }
    this.metrics.tcpConnections++;
    this.open.add(socket);
    this.perClient.set(client, fromClient + 1);
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
      this.open.delete(socket);
      const left = (this.perClient.get(client) ?? 1) - 1;
      if (left === 0) this.perClient.delete(client);
      else this.perClient.set(client, left);
    });

    let pending: Buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      while (pending.length >= 2) {
        const length = pending.readUInt16BE(0);
        if (pending.length < 2 + length) break;
        const message = pending.subarray(2, 2 + length);
        pending = pending.subarray(2 + length);
        const response = this.handler.handle(message, 'tcp', { address: client });
        if (!response) continue;
        const frame = Buffer.allocUnsafe(2 + response.length);
        frame.writeUInt16BE(response.length, 0);
        response.copy(frame, 2);
        if (!socket.write(frame)) {
          socket.pause();
          socket.once('drain', () => socket.resume());
        }
      }
      // Keep the unread tail small: copy it out of the (possibly large) chunk it points into.
      if (pending.length > 0 && pending.byteOffset > 0) pending = Buffer.from(pending);
    });
    // The client sent FIN: everything it sent has been answered above, so close our side too.
    socket.on('end', () => socket.end());
  }

  /** Stops accepting and closes every open connection. */
  async shutdown(): Promise<void> {
    for (const socket of this.open) socket.destroy();
    await new Promise<void>((resolve) => this.close(() => resolve()));
  }
}
