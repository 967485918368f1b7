// The edge, wired: its parts built once (stage/parts.ts), the chain in its order (chain.ts), and
// the fronts that turn each connection and request into a context and run the chain: HTTP/1.1
// (front/http1.ts) on the plain port, and on the TLS port (front/tls.ts) HTTP/1.1 or HTTP/2
// (front/http2.ts) as the client's ALPN chooses. Nothing here decides anything about a request.
import type { EdgeState } from './edge-state.ts';
import { droppedLogLines } from '../common/log-output.ts';
import { single, type MetricsSnapshot } from '../common/metrics/family.ts';
import { EDGE_BODY_BUFFER_BYTES, EDGE_CACHE_ENTRIES, EDGE_CACHE_MEMORY_BYTES, EDGE_DOMAINS, LOG_LINES_DROPPED } from './edge-families.ts';
import { buildParts, type EdgeParts, type EdgeServerOptions } from './stage/parts.ts';
import { ChainRunner } from './stage/run.ts';
import type { Scheme } from './stage/context.ts';
import { edgeChain } from './chain.ts';
import { Http1Front } from './front/http1.ts';
import { Http2Front } from './front/http2.ts';
import { TlsFront } from './front/tls.ts';
import { listenOn } from './front/listen.ts';
import type { Socket } from 'node:net';

export type { EdgeServerOptions } from './stage/parts.ts';
export type { Scheme } from './stage/context.ts';

export class EdgeServer {
  private readonly parts: EdgeParts;
  readonly chain: ChainRunner;
  private readonly front: Http1Front;
  private readonly h2: Http2Front;
  private readonly tls: TlsFront;

  constructor(
    private readonly state: EdgeState,
    options: EdgeServerOptions,
  ) {
    this.parts = buildParts(state, options);
    this.chain = new ChainRunner(edgeChain(this.parts), options.log);
    this.front = new Http1Front(this.parts, this.chain);
    this.h2 = new Http2Front(this.parts, this.chain);
    this.tls = new TlsFront(this.parts, this.chain, this.front, this.h2);
  }

  // The parts the roles and the tests reach (feeds, workers' stats, /metrics).
  get health() {
    return this.parts.health;
  }
  get uptime() {
    return this.parts.uptime;
  }
  get cache() {
    return this.parts.cache;
  }
  get sni() {
    return this.parts.sni;
  }
  get metrics() {
    return this.parts.metrics;
  }
  get ipLists() {
    return this.parts.ipLists;
  }
  get bandwidth() {
    return this.parts.bandwidth;
  }
  get clientLimits() {
    return this.parts.clientLimits;
  }
  get bodyBuffer() {
    return this.parts.bodyBuffer;
  }

  /** Starts both listeners; resolves with the ports they got. `reusePort`: SO_REUSEPORT (the edge role's workers each listen). */
  async listen(host: string, httpPort: number, httpsPort: number, options: { reusePort?: boolean } = {}): Promise<{ http: number; https: number }> {
    const http = await this.front.listen(host, httpPort, options.reusePort ?? false);
    const https = await listenOn(this.tls.server, host, httpsPort, options.reusePort ?? false, 'HTTPS');
    this.parts.httpsPort = https;
    return { http, https };
  }

  /**
   * Serves connections accepted by another process (the edge role's primary) instead of
   * listening: `httpsPort` is where HTTPS redirects point.
   */
  serveHandedOver(httpsPort: number): void {
    this.parts.httpsPort = httpsPort;
    this.front.serveHandedOver();
  }

  /** TLS session ticket keys (48 bytes) shared by the node's processes: a session resumes in any of them. */
  setTicketKeys(keys: Buffer): void {
    this.tls.server.setTicketKeys(keys);
  }

  /** A connection handed over (serveHandedOver): from here it is as if this process had accepted it. */
  accept(socket: Socket, scheme: Scheme): void {
    if (scheme === 'https') this.tls.server.emit('connection', socket);
    else this.front.accept(socket);
  }

  /** This process's edge figures, as data; `extra`: what its owner adds (the feed, the uptime reports). */
  metricsSnapshot(extra: MetricsSnapshot = []): MetricsSnapshot {
    const { cache, bodyBuffer } = this.parts;
    return this.parts.metrics.snapshot([
      single(EDGE_CACHE_ENTRIES, cache.entries),
      single(EDGE_CACHE_MEMORY_BYTES, cache.memoryBytes),
      single(EDGE_DOMAINS, this.state.routes.size),
      single(EDGE_BODY_BUFFER_BYTES, bodyBuffer.reserved),
      single(LOG_LINES_DROPPED, droppedLogLines()),
      ...extra,
    ]);
  }

  async close(): Promise<void> {
    await Promise.all([this.front.close(), this.h2.close(), new Promise<void>((resolve) => this.tls.server.close(() => resolve()))]);
    this.parts.proxy.close();
    this.parts.accessLog.flush();
    this.parts.health.stop();
    this.parts.bandwidth.stop();
  }
}
