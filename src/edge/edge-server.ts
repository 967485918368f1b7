// The edge's HTTP listener: the ACME ping before anything else, then routing by Host (unknown,
// unbound and "DNS only" names get a small 421 page), then the proxy to the domain's backend. The
// node's own address opened in a browser gets a status page that names no customer. One access
// log line per request.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import type { Logger } from 'pino';
import type { Duplex } from 'node:stream';
import { parseBackend } from '../model/backend.ts';
import { BackendHealth } from './backend-health.ts';
import { proxyUpgrade } from './upgrade.ts';
import { PAGES } from './pages.ts';
import { Proxy, type ProxyOptions } from './proxy.ts';
import { hostName, type RoutingTable } from './routing.ts';

const ACME_PING = '/.well-known/acme-challenge/ping';

export interface EdgeServerOptions extends ProxyOptions {
  nodeName: string;
  /** Active backend checks, every this many ms. */
  checkIntervalMs: number;
  log: Logger;
}

export class EdgeServer {
  private readonly server: Server;
  private readonly proxy: Proxy;
  private readonly health: BackendHealth;
  /** Upgraded sockets leave the HTTP server's books: kept here so that close() ends them too. */
  private readonly upgraded = new Set<Duplex>();
  /** Requests by status class, for /metrics. */
  readonly counts = new Map<string, number>();

  constructor(
    private readonly table: RoutingTable,
    private readonly options: EdgeServerOptions,
  ) {
    this.health = new BackendHealth(options.log);
    this.health.start(() => table.backends(), options.checkIntervalMs);
    this.proxy = new Proxy(options, this.health);
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => void this.upgrade(req, socket, head));
    this.server.keepAliveTimeout = 5000;
    this.server.headersTimeout = 10_000;
  }

  private reply(res: ServerResponse, status: number, type: string, body: string): void {
    res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
    res.end(body);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    const raw = req.headers.host;
    const host = hostName(raw);
    const path = (req.url ?? '/').split('?')[0]!;
    let outcome: { status: number; upstreamMs?: number; via?: string };
    if (!host || isIP(host) !== 0) {
      this.reply(res, 200, 'text/html; charset=utf-8', PAGES.status(this.options.nodeName));
      outcome = { status: 200, via: 'status' };
    } else {
      const route = this.table.route(host);
      if (path === ACME_PING && route.kind !== 'unknown') {
        this.reply(res, 200, 'text/plain', 'pong');
        outcome = { status: 200, via: 'ping' };
      } else if (route.kind === 'unknown') {
        this.reply(res, 421, 'text/html; charset=utf-8', PAGES.unknown(host));
        outcome = { status: 421 };
      } else if (route.kind === 'disabled') {
        this.reply(res, 421, 'text/html; charset=utf-8', PAGES.disabled(host));
        outcome = { status: 421 };
      } else if (route.kind === 'not-bound') {
        this.reply(res, 421, 'text/html; charset=utf-8', PAGES.notBound(host));
        outcome = { status: 421 };
      } else {
        outcome = await this.proxy.forward(req, res, route.domain, host, 'http');
        if (outcome.via === 'unreachable') this.reply(res, 502, 'text/html; charset=utf-8', PAGES.badGateway(host));
        else if (outcome.via === 'timeout' && !res.headersSent) this.reply(res, 504, 'text/html; charset=utf-8', PAGES.gatewayTimeout(host));
      }
    }
    const klass = `${Math.floor(outcome.status / 100)}xx`;
    this.counts.set(klass, (this.counts.get(klass) ?? 0) + 1);
    res.once('finish', () => {
      this.options.log.info(
        {
          host: host ?? raw,
          method: req.method,
          path,
          status: outcome.status,
          bytes: res.getHeader('content-length') ?? undefined,
          upstreamMs: outcome.upstreamMs === undefined ? undefined : Math.round(outcome.upstreamMs * 100) / 100,
          via: outcome.via,
          ms: Math.round((performance.now() - started) * 100) / 100,
          client: req.socket.remoteAddress,
        },
        'edge request',
      );
    });
  }

  /** WebSocket and other upgrades: routed like requests, then joined to the backend. */
  private async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const host = hostName(req.headers.host);
    const route = host ? this.table.route(host) : { kind: 'unknown' as const };
    let status = 421;
    this.upgraded.add(socket);
    socket.once('close', () => this.upgraded.delete(socket));
    if (route.kind !== 'domain' || !host) {
      socket.end('HTTP/1.1 421 Misdirected Request\r\ncontent-type: text/plain\r\ncontent-length: 24\r\nconnection: close\r\n\r\nthis edge serves no such');
    } else {
      const backend = parseBackend(route.domain.backend);
      const failover = route.domain.failover ? parseBackend(route.domain.failover) : undefined;
      const target = backend && this.health.isDown(backend) && failover && !this.health.isDown(failover) ? failover : backend;
      if (target) status = await proxyUpgrade(req, socket, head, target, host, this.options.connectTimeoutMs);
    }
    this.options.log.info({ host, method: req.method, path: req.url, status, upgrade: req.headers.upgrade, client: req.socket.remoteAddress }, 'edge upgrade');
  }

  listen(port: number, host: string): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => resolve((this.server.address() as { port: number }).port));
    });
  }

  metrics(): string {
    const lines = ['# HELP palisade_edge_requests_total Edge requests by status class.', '# TYPE palisade_edge_requests_total counter'];
    for (const [klass, count] of this.counts) lines.push(`palisade_edge_requests_total{class="${klass}"} ${count}`);
    return `${lines.join('\n')}\n`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    for (const socket of this.upgraded) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.proxy.close();
    this.health.stop();
  }
}
