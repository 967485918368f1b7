// The HTTP/1.1 front: Node's HTTP and HTTPS servers, their connections and upgrades. It turns each
// request (or WebSocket handshake) into a request context and hands it to the chain; it knows no
// stage. What belongs here is what HTTP/1.1 itself brings: connection timeouts, the 408 for a
// silent client, a handshake's response bound to its raw socket, pipelining after an Upgrade.
// Its HTTPS server listens on nothing: the TLS port's server (tls.ts) hands it the connections
// that chose HTTP/1.1; an h2 stream goes to front/http2.ts instead.
import { createServer, ServerResponse, type IncomingMessage, type Server } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Duplex } from 'node:stream';
import type { EdgeParts } from '../stage/parts.ts';
import type { ChainRunner } from '../stage/run.ts';
import { RequestContext, type Scheme, type UpgradeContext } from '../stage/context.ts';
import { page } from '../stage/answer.ts';
import { PAGES } from '../pages.ts';
import { isWebSocketUpgrade } from '../upgrade.ts';
import { listenOn } from './listen.ts';
import { refusePriorKnowledge } from './h2c-refusal.ts';

/** The response in progress on a connection (for the 408 on a silent client): a field of the socket, not a map beside it. */
const RESPONDING = Symbol('palisade.responding');
type Responding = Socket & { [RESPONDING]?: ServerResponse };

export class Http1Front {
  readonly http: Server;
  readonly https: HttpsServer;
  /** Upgraded sockets leave the HTTP server's books: kept here so that close() ends them too. */
  private readonly upgraded = new Set<Duplex>();

  constructor(
    private readonly parts: EdgeParts,
    private readonly chain: ChainRunner,
  ) {
    // Only a WebSocket handshake is an upgrade; any other request naming `Upgrade` is an ordinary
    // request (the header is hop-by-hop and stops here), so nothing walks around the stages.
    const shouldUpgradeCallback = isWebSocketUpgrade;
    this.http = createServer({ shouldUpgradeCallback }, (req, res) => this.handle(req, res, 'http'));
    this.https = createHttpsServer({ SNICallback: parts.sni.callback, shouldUpgradeCallback, ...parts.fallbackCertificate }, (req, res) => this.handle(req, res, 'https'));
    for (const server of [this.http, this.https]) {
      server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => void this.upgrade(req, socket, head, server === this.https ? 'https' : 'http'));
      server.keepAliveTimeout = 5000;
      server.headersTimeout = 10_000;
      // Whole-request deadlines would cut large uploads on slow links: silence is what is bounded.
      server.requestTimeout = 0;
      server.timeout = parts.options.clientTimeoutMs;
      server.on('timeout', (socket: Socket) => this.silent(socket));
    }
    // The HTTPS server's connections arrive after their handshake (tls.ts ran the connection stages).
    this.http.on('connection', (socket: Socket) => void chain.accept(socket));
    this.http.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => refusePriorKnowledge(error, socket));
  }

  /** A TLS connection that chose HTTP/1.1 (or no protocol) in its handshake. */
  serveTls(socket: TLSSocket): void {
    this.https.emit('secureConnection', socket);
  }

  /** One request: its context built, its watches armed, the log line bound to its end, the chain run. */
  private handle(req: IncomingMessage, res: ServerResponse, scheme: Scheme, upgrade?: UpgradeContext): void {
    const socket = req.socket;
    const ctx = new RequestContext(req, res, scheme, this.parts.clients.of(req), upgrade, this.chain, socket, 'http/1.1');
    (socket as Responding)[RESPONDING] = res;
    // An ordinary request that named Upgrade (no WebSocket handshake): what a client pipelined
    // behind it cannot be trusted to follow, so the connection ends with the answer.
    if (!upgrade && req.headers.upgrade !== undefined) res.shouldKeepAlive = false;
    const disarm = this.chain.arm(ctx);
    // An upgraded connection's response is detached from its socket on 101: its end is the socket's.
    // (`on`, not `once`: a response closes once, and `once` wraps the listener per request.)
    (upgrade?.socket ?? res).on('close', () => {
      if ((socket as Responding)[RESPONDING] === res) (socket as Responding)[RESPONDING] = undefined;
      disarm();
      this.chain.ended(ctx);
    });
    this.chain.run(ctx);
  }

  /**
   * A connection silent past the bound: a request still arriving gets 408; one waiting for its
   * backend is left alone (the response timeout bounds that); anything else is closed.
   */
  private silent(socket: Socket): void {
    const current = (socket as Responding)[RESPONDING];
    if (current && !current.req.complete && !current.headersSent) {
      page(current, 408, PAGES.requestTimeout());
      current.once('finish', () => socket.destroy());
      setTimeout(() => socket.destroy(), 1000).unref();
    } else if (!current || current.writableFinished) socket.destroy();
  }

  /**
   * A WebSocket handshake: a response bound to the raw socket lets it go through the same stages
   * as any request (a refusal is an ordinary page, then the connection closes); the chain's
   * upgrade stage carries it where another request would reach the proxy.
   */
  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, scheme: Scheme): void {
    // A handshake pipelined behind a response still being sent: that response owns the socket,
    // and a second one cannot be bound to it. A client that pipelines an upgrade is closed.
    if ((socket as { _httpMessage?: unknown })._httpMessage) return void socket.destroy();
    try {
      this.upgradeOn(req, socket, head, scheme);
    } catch (error) {
      // Thrown from an event handler this would end the process; it ends the connection instead.
      this.parts.log.error({ err: error }, 'edge: upgrade failed');
      socket.destroy();
    }
  }

  private upgradeOn(req: IncomingMessage, socket: Duplex, head: Buffer, scheme: Scheme): void {
    this.upgraded.add(socket);
    socket.once('close', () => this.upgraded.delete(socket));
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket as Socket);
    res.once('finish', () => (socket as Socket).destroySoon());
    socket.on('error', () => socket.destroy());
    // Until the backend switches protocols, the same silence bound as any request.
    (socket as Socket).setTimeout?.(this.parts.options.clientTimeoutMs, () => socket.destroy());
    // Node before 24.9 has no shouldUpgradeCallback and hands over every Upgrade request: what is
    // no WebSocket handshake (its body unread) is refused rather than carried.
    if (!isWebSocketUpgrade(req)) {
      page(res, 400, PAGES.badRequest(), { connection: 'close' });
      return;
    }
    this.handle(req, res, scheme, { socket, head });
  }

  /** Starts the plain HTTP listener; resolves with the port it got. The HTTPS server only tracks the connections it is handed. */
  async listen(host: string, httpPort: number, reusePort: boolean): Promise<number> {
    const port = await listenOn(this.http, host, httpPort, reusePort, 'HTTP');
    this.https.emit('listening');
    return port;
  }

  /** Connections accepted by another process will be handed over (accept): the servers start as if listening. */
  serveHandedOver(): void {
    // A server that never listened does not track its connections (the header timeout's checks,
    // closeAllConnections): that starts on 'listening'.
    for (const server of [this.http, this.https]) server.emit('listening');
  }

  /** A plain HTTP connection handed over: from here it is as if this process had accepted it. */
  accept(socket: Socket): void {
    this.http.emit('connection', socket);
  }

  async close(): Promise<void> {
    for (const server of [this.http, this.https]) server.closeAllConnections();
    for (const socket of this.upgraded) socket.destroy();
    // Also a server that never listened (serveHandedOver): close() stops its connection checks.
    await Promise.all([this.http, this.https].map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  }
}
