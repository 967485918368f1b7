// TCP listener (RFC 7766): dns2's TCP server supplies the socket server; the connection handling
// is ours, because dns2's idle timeout only half-closes (a client that never sends FIN keeps the
// socket), it has no connection limits and it drops a connection on the first undecodable
// message instead of answering FORMERR.
//
// Per connection: 2-octet framing with split and pipelined messages, answers in order, idle
// timeout that destroys the socket, a lifetime cap against clients that trickle bytes.
// Time: queries are not answered in the socket's read callback but by a scheduler, in slices of
// a few milliseconds between which the event loop takes in new connections and queries. Light
// connections (a few queries waiting, a modest rate of answer bytes: what a resolver's connection
// looks like) are served first, one query each in turn. Heavy ones (many pipelined queries, or
// large answers back to back) take turns within a shared rate of answer bytes: a client that
// never reads has the kernel take megabytes of answers per connection (its send and receive
// buffers) before its socket pushes back, and they cost as much to make as answers that are read;
// so 2,048 such connections cost a few per cent of a core, not seconds of everyone's time.
// Memory: a connection's unread queries are bounded (a client more than `MAX_UNREAD_BYTES` of
// queries ahead of their answers is closed), and so are its unsent answers (past
// `maxOutputBytes` its queries wait unread, so TCP's own flow control pushes back); all
// connections together share a budget (`outputBudgetBytes`); a connection over either waits for
// its client to read. Once the budget is spent, a light connection takes the room of the
// connection stalled longest (its answers not drained) rather than waiting; heavy ones wait.
// Room: each client network (/24, /56 by default) holds at most `maxConnectionsPerClient`; when
// every slot is taken, a new client takes the slot of a connection stalled for a second or more
// (the longest first), else of a heavy one waiting for its turn, else of the one that has gone
// longest without a completed query (as Knot and NSD shed idle connections), so clients that do
// not read, pipeline floods, trickle bytes or sit idle cannot lock others out. The listen backlog is large, so a burst of connections does not have
// the kernel drop new clients' SYNs.
// Zone transfers (a secondary's AXFR/IXFR, already authenticated) are streams of messages made one
// at a time: each gets turns in the slices after light queries (a few messages a turn), waits for
// its client to read like any answer, and holds its connection's later queries until it ends, so
// answers stay in order. A transfer built whole held the event loop 36–53 ms per 20,000 records.
import type { Socket } from 'node:net';
import dns2 from 'dns2';
import type { Logger } from 'pino';
import { clientNetwork } from '../../model/client-network.ts';
import type { QueryHandler } from './handler.ts';
import type { MessageStream } from '../chain/context.ts';
import type { DnsMetrics } from '../metrics/dns-metrics.ts';
import { HEAVY_BURST_BYTES, HEAVY_BYTES_PER_S, HEAVY_TURN_BYTES, HEAVY_TURN_QUERIES, LIGHT_BURST_BYTES, LIGHT_BYTES_PER_S } from './tcp-limits.ts';
import { LIGHT_QUEUED, MAX_UNREAD_BYTES, SLICE_MS, STALLED_MS, TRANSFER_TURN_BYTES, type Connection, type TcpLimits } from './tcp-limits.ts';

export class TcpListener extends dns2.TCPServer {
  private handler!: QueryHandler;
  private metrics!: DnsMetrics;
  private limits!: TcpLimits;
  private log!: Logger;
  /** Open connections, least recently answered first (re-inserted on every completed query). */
  private readonly open = new Map<Socket, Connection>();
  private readonly perNetwork = new Map<string, number>();
  private buffered = 0;
  /** Connections holding unsent answers (their kernel buffers are full), longest first. */
  private readonly stalled = new Set<Connection>();
  /** Connections waiting for the global budget to free up. */
  private readonly waiting = new Set<Connection>();
  /** Connections with a query to answer, in turn: light ones are served first. */
  private readonly lightQueue = new Set<Connection>();
  private readonly heavyQueue = new Set<Connection>();
  /** Connections sending a zone transfer, in turn. */
  private readonly transferQueue = new Set<Connection>();
  private sliceScheduled = false;
  private heavyTimer: NodeJS.Timeout | undefined;
  /** What heavy connections may still take (bytes), as of `heavyCreditAt` (ms). */
  private heavyCredit = HEAVY_BURST_BYTES;
  private heavyCreditAt = 0;

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

  /** Records what a connection holds unsent now; wakes the connections waiting when there is room again. */
  private account(conn: Connection): void {
    // A connection closed or evicted no longer counts (forget() took its bytes off).
    if (this.open.has(conn.socket)) {
      const now = conn.socket.destroyed ? 0 : conn.socket.writableLength;
      this.buffered += now - conn.buffered;
      conn.buffered = now;
      if (now === 0) {
        this.stalled.delete(conn);
        conn.stalledSince = 0;
      } else if (!this.stalled.has(conn)) {
        this.stalled.add(conn);
        conn.stalledSince = Date.now();
      }
      this.recheck(conn);
    }
    if (this.buffered < this.limits.outputBudgetBytes && this.waiting.size > 0) {
      const wake = [...this.waiting];
      this.waiting.clear();
      for (const other of wake) this.recheck(other);
    }
  }

  /** A blocked connection goes on once it may; else it waits for its drain, or for the budget. */
  private recheck(conn: Connection): void {
    if (!conn.blocked) return;
    if (!this.full(conn)) this.unblock(conn);
    else if (conn.socket.writableLength < this.limits.maxOutputBytes) this.waiting.add(conn);
  }

  /** Whether the connection must wait for its client (or others) to read before more answers. */
  private full(conn: Connection): boolean {
    return conn.socket.writableLength >= this.limits.maxOutputBytes || this.buffered >= this.limits.outputBudgetBytes;
  }

  /**
   * The budget is spent and a light connection asks: close the connections stalled longest
   * (their answers not drained) until there is room, never `asking` itself. True when there is.
   */
  private shedForBudget(asking: Connection): boolean {
    while (this.buffered >= this.limits.outputBudgetBytes) {
      let victim: Connection | undefined;
      for (const conn of this.stalled) {
        if (conn === asking) continue;
        victim = conn;
        break;
      }
      if (!victim) return false;
      this.metrics.tcpEvicted++;
      this.drop(victim);
    }
    return true;
  }

  /**
   * Makes room for a new connection: one stalled for a while goes first (the longest), else a
   * heavy one (the longest waiting for its turn), else the least recently answered.
   */
  private evictOne(): void {
    const stalled = this.stalled.values().next().value;
    const victim = (stalled && Date.now() - stalled.stalledSince >= STALLED_MS ? stalled : undefined) ?? this.heavyQueue.values().next().value ?? this.open.values().next().value;
    if (!victim) return;
    this.metrics.tcpEvicted++;
    this.drop(victim);
  }

  private drop(conn: Connection): void {
    this.forget(conn);
    conn.socket.destroy();
  }

  private forget(conn: Connection): void {
    this.lightQueue.delete(conn);
    this.heavyQueue.delete(conn);
    this.transferQueue.delete(conn);
    // A transfer cut short frees its secondary's slot.
    conn.stream?.close();
    conn.stream = undefined;
    this.waiting.delete(conn);
    this.stalled.delete(conn);
    if (!this.open.delete(conn.socket)) return;
    const left = (this.perNetwork.get(conn.network) ?? 1) - 1;
    if (left === 0) this.perNetwork.delete(conn.network);
    else this.perNetwork.set(conn.network, left);
    this.buffered -= conn.buffered;
    conn.buffered = 0;
    this.account(conn);
  }

  private isLight(conn: Connection): boolean {
    if (conn.probe > 0) return true;
    if (conn.queued > LIGHT_QUEUED) return false;
    const now = performance.now();
    conn.credit = Math.min(LIGHT_BURST_BYTES, conn.credit + ((now - conn.creditAt) * LIGHT_BYTES_PER_S) / 1000);
    conn.creditAt = now;
    return conn.credit > 0;
  }

  /** Heavy connections' shared credit now (bytes; negative: time to wait). */
  private heavyCreditNow(): number {
    const now = performance.now();
    this.heavyCredit = Math.min(HEAVY_BURST_BYTES, this.heavyCredit + ((now - this.heavyCreditAt) * HEAVY_BYTES_PER_S) / 1000);
    this.heavyCreditAt = now;
    return this.heavyCredit;
  }

  /** Puts a connection with a query to answer in line (or answers its FIN), and makes sure a slice runs. */
  private enqueue(conn: Connection): void {
    if (conn.blocked || conn.socket.destroyed || !this.open.has(conn.socket)) return;
    this.readMore(conn);
    if (conn.stream) {
      if (conn.streamReady) {
        this.transferQueue.add(conn);
        this.schedule(true);
      }
      return;
    }
    if (conn.queued === 0) {
      // The client sent FIN: once everything it sent is answered, close our side too.
      if (conn.ended) conn.socket.end();
      return;
    }
    const light = this.isLight(conn);
    (light ? this.heavyQueue : this.lightQueue).delete(conn);
    (light ? this.lightQueue : this.heavyQueue).add(conn);
    this.schedule(light);
  }

  /** A slice at the event loop's next turn; heavy work alone waits for the heavy credit. */
  private schedule(light: boolean): void {
    if (this.sliceScheduled) return;
    const credit = light ? 1 : this.heavyCreditNow();
    if (credit > 0) {
      this.sliceScheduled = true;
      if (this.heavyTimer) clearTimeout(this.heavyTimer);
      this.heavyTimer = undefined;
      setImmediate(this.slice);
    } else if (!this.heavyTimer) {
      this.heavyTimer = setTimeout(
        () => {
          this.heavyTimer = undefined;
          this.schedule(false);
        },
        Math.ceil((-credit * 1000) / HEAVY_BYTES_PER_S) + 1,
      );
      this.heavyTimer.unref();
    }
  }

  /**
   * Answers queries in turn for at most SLICE_MS, then lets I/O in: light connections first, one
   * query each; heavy ones a few each, within their shared credit.
   */
  private readonly slice = (): void => {
    this.sliceScheduled = false;
    const started = performance.now();
    let heavyTurns = 0;
    let transferTurns = 0;
    for (;;) {
      const late = performance.now() - started >= SLICE_MS;
      let conn: Connection | undefined = late ? undefined : this.lightQueue.values().next().value;
      const light = conn !== undefined;
      if (light) {
        this.lightQueue.delete(conn!);
        if (conn!.probe > 0) conn!.probe--;
      } else {
        // Transfers once light work is done, and one turn a slice even when light work filled it.
        const transfer: Connection | undefined = late && transferTurns > 0 ? undefined : this.transferQueue.values().next().value;
        if (transfer) {
          this.transferQueue.delete(transfer);
          transferTurns++;
          this.pump(transfer);
          continue;
        }
        // Heavy turns once light work is done, and one a slice even when light work filled it.
        if (late && heavyTurns > 0) break;
        conn = this.heavyQueue.values().next().value;
        if (!conn || this.heavyCreditNow() <= 0) break;
        this.heavyQueue.delete(conn);
        heavyTurns++;
      }
      const sent = this.serve(conn!, light ? 1 : HEAVY_TURN_QUERIES, light ? Number.POSITIVE_INFINITY : HEAVY_TURN_BYTES);
      if (!light) this.heavyCredit -= sent;
      if (!conn!.blocked) this.enqueue(conn!);
    }
    if (this.lightQueue.size > 0 || this.transferQueue.size > 0) this.schedule(true);
    else if (this.heavyQueue.size > 0) this.schedule(false);
  };

  /** A connection's transfer begins: it is sent in turns once its slot is free. */
  private startStream(conn: Connection, stream: MessageStream): void {
    conn.stream = stream;
    conn.streamReady = false;
    stream.start(() => {
      conn.streamReady = true;
      this.enqueue(conn);
    });
  }

  /** One turn of a connection's transfer: a few messages, until its client must read first. */
  private pump(conn: Connection): void {
    const { socket } = conn;
    const stream = conn.stream;
    if (!stream || socket.destroyed) return;
    let bytes = 0;
    let more = true;
    socket.cork();
    while (bytes < TRANSFER_TURN_BYTES) {
      if (this.full(conn)) {
        this.block(conn);
        more = false;
        break;
      }
      const message = stream.next();
      if (!message) {
        conn.stream = undefined;
        conn.streamReady = false;
        more = false;
        break;
      }
      const prefix = Buffer.allocUnsafe(2);
      prefix.writeUInt16BE(message.length, 0);
      socket.write(prefix);
      socket.write(message, () => this.account(conn));
      bytes += message.length;
    }
    socket.uncork();
    this.account(conn);
    // Sending: most recently active.
    this.open.delete(socket);
    this.open.set(socket, conn);
    if (more) this.transferQueue.add(conn);
    // Ended: the queries that came after it.
    else if (!conn.stream) this.enqueue(conn);
  }

  /** Answers up to `queries` of the connection's waiting queries (and up to about `bytes` of answers); the bytes sent. */
  private serve(conn: Connection, queries: number, bytes: number): number {
    const { socket } = conn;
    let sent = 0;
    for (let n = 0; n < queries && sent < bytes && conn.queued > 0 && !socket.destroyed; n++) {
      if (this.full(conn) && !(this.isLight(conn) && socket.writableLength < this.limits.maxOutputBytes && this.shedForBudget(conn))) {
        this.block(conn);
        return sent;
      }
      const length = conn.unread.readUInt16BE(0);
      const message = conn.unread.subarray(2, 2 + length);
      conn.unread = conn.unread.subarray(2 + length);
      conn.queued--;
      conn.counted -= 2 + length;
      const answer = this.handler.handleAll(message, 'tcp', { address: conn.client });
      if (!answer) continue;
      if (!Buffer.isBuffer(answer) && !Array.isArray(answer)) {
        this.startStream(conn, answer);
        return sent;
      }
      // A zone transfer is several messages, each framed.
      let bytes = 0;
      socket.cork();
      for (const response of Array.isArray(answer) ? answer : [answer]) {
        const prefix = Buffer.allocUnsafe(2);
        prefix.writeUInt16BE(response.length, 0);
        // One writev for the length and the answer: no copy of the answer.
        socket.write(prefix);
        socket.write(response, () => this.account(conn));
        bytes += response.length;
      }
      socket.uncork();
      this.account(conn);
      sent += bytes;
      conn.credit -= bytes;
      // Completed a query: most recently active now.
      this.open.delete(socket);
      this.open.set(socket, conn);
    }
    // Keep the unread tail small: copy it out of the (possibly large) chunk it points into.
    if (conn.unread.length > 0 && conn.unread.byteOffset > 0 && conn.queued === 0) conn.unread = Buffer.from(conn.unread);
    return sent;
  }

  /** Reads nothing more until the client has read its answers (or others theirs). */
  private block(conn: Connection): void {
    conn.blocked = true;
    this.pause(conn);
    if (conn.socket.writableLength < this.limits.maxOutputBytes) this.waiting.add(conn);
  }

  private unblock(conn: Connection): void {
    conn.blocked = false;
    this.waiting.delete(conn);
    this.enqueue(conn);
  }

  private pause(conn: Connection): void {
    if (conn.paused) return;
    conn.paused = true;
    conn.socket.pause();
  }

  /** Reads again once it is no longer blocked. */
  private readMore(conn: Connection): void {
    if (!conn.paused || conn.blocked) return;
    conn.paused = false;
    conn.socket.resume();
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
    const conn: Connection = { socket, network, client, buffered: 0, unread: Buffer.alloc(0), queued: 0, counted: 0, credit: LIGHT_BURST_BYTES, creditAt: performance.now(), blocked: false, paused: false, ended: false, probe: 0, stalledSince: 0, stream: undefined, streamReady: false };
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
      this.forget(conn);
    });
    socket.on('data', (chunk: Buffer) => {
      conn.unread = conn.unread.length === 0 ? chunk : Buffer.concat([conn.unread, chunk]);
      // Whole queries are counted from where the last counted one ended.
      while (conn.unread.length - conn.counted >= 2 && conn.unread.length - conn.counted >= 2 + conn.unread.readUInt16BE(conn.counted)) {
        conn.counted += 2 + conn.unread.readUInt16BE(conn.counted);
        conn.queued++;
      }
      if (conn.unread.length > MAX_UNREAD_BYTES) {
        this.metrics.tcpEvicted++;
        this.drop(conn);
        return;
      }
      this.enqueue(conn);
    });
    socket.on('drain', () => this.account(conn));
    socket.on('end', () => {
      conn.ended = true;
      // A client that closed (rather than half-closed) answers our next write with a reset, which
      // the write after it meets: its next two answers go out in turn as a light connection's,
      // whatever its place, so that a gone client is found at once.
      conn.probe = conn.queued > 0 ? 2 : 0;
      this.enqueue(conn);
    });
  }

  /** Stops accepting and closes every open connection. */
  async shutdown(): Promise<void> {
    if (this.heavyTimer) clearTimeout(this.heavyTimer);
    for (const socket of this.open.keys()) socket.destroy();
    await new Promise<void>((resolve) => this.close(() => resolve()));
  }
}
