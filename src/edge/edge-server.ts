// The edge, wired: its parts built once (stage/parts.ts), the chain in its order (chain.ts), and
// the HTTP/1.1 front (front/http1.ts) that turns each connection and request into a context and
// runs the chain. Nothing here decides anything about a request.
import type { EdgeState } from './edge-state.ts';
import { droppedLogLines } from '../common/log-output.ts';
import { buildParts, type EdgeParts, type EdgeServerOptions } from './stage/parts.ts';
import { ChainRunner } from './stage/run.ts';
import type { Scheme } from './stage/context.ts';
import { edgeChain } from './chain.ts';
import { Http1Front } from './front/http1.ts';
import type { Socket } from 'node:net';

export type { EdgeServerOptions } from './stage/parts.ts';
export type { Scheme } from './stage/context.ts';

export class EdgeServer {
  private readonly parts: EdgeParts;
  readonly chain: ChainRunner;
  private readonly front: Http1Front;

  constructor(
    private readonly state: EdgeState,
    options: EdgeServerOptions,
  ) {
    this.parts = buildParts(state, options);
    this.chain = new ChainRunner(edgeChain(this.parts), options.log);
    this.front = new Http1Front(this.parts, this.chain);
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
    const ports = await this.front.listen(host, httpPort, httpsPort, options.reusePort ?? false);
    this.parts.httpsPort = ports.https;
    return ports;
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
    this.front.https.setTicketKeys(keys);
  }

  /** A connection handed over (serveHandedOver): from here it is as if this process had accepted it. */
  accept(socket: Socket, scheme: Scheme): void {
    this.front.accept(socket, scheme);
  }

  renderMetrics(extra: Record<string, number> = {}): string {
    const { cache, bodyBuffer } = this.parts;
    return this.parts.metrics.render({ palisade_edge_cache_entries: cache.entries, palisade_edge_cache_memory_bytes: cache.memoryBytes, palisade_edge_domains: this.state.routes.size, palisade_edge_body_buffer_bytes: bodyBuffer.reserved, palisade_log_lines_dropped: droppedLogLines(), ...extra });
  }

  async close(): Promise<void> {
    await this.front.close();
    this.parts.proxy.close();
    this.parts.accessLog.flush();
    this.parts.health.stop();
    this.parts.bandwidth.stop();
  }
}
