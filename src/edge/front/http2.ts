// The HTTP/2 front: each TLS connection that chose `h2` (tls.ts) becomes an nghttp2 session, and
// each of its streams a request context that runs the same chain as an HTTP/1.1 request. The
// stream itself is the request and the response, through small adapters (h2-exchange.ts) rather
// than Node's compatibility objects, whose cost per request was a third of a cache hit's; what
// differs is said here once: the headers are the HTTP/1.1 view of the stream's (h2-request.ts, or
// 400), the connection's TLS socket is the one the handshake named (fronting), and per-connection
// floods end the session (h2-flood.ts). Backends are spoken to in HTTP/1.1. No WebSockets over h2
// (RFC 8441's extended CONNECT is not offered): browsers then open an HTTP/1.1 connection for
// them, which upgrades as before. Knows no stage.
import { constants, createServer, type Http2Server, type Http2Session, type IncomingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { EdgeParts } from '../stage/parts.ts';
import type { ChainRunner } from '../stage/run.ts';
import { RequestContext } from '../stage/context.ts';
import { page } from '../stage/answer.ts';
import { PAGES } from '../pages.ts';
import { h2RequestView } from './h2-request.ts';
import { H2Request, H2Response } from './h2-exchange.ts';
import { FloodCoolOff, FrameRates, RefusedStreams } from './h2-flood.ts';
import { HTTP2_FLOOD_COOL_OFF_MS, HTTP2_OPTIONS, HTTP2_RATES } from './http2-limits.ts';

type Kind = keyof typeof HTTP2_RATES;

/** A stream's errors end that stream (its 'close' follows); none is the process's to throw. */
const IGNORE = (): void => undefined;

/** What the front keeps of one session: its rates, and its streams that never became requests. */
interface Watched {
  flood: (kind: Kind, n?: number) => void;
  refused: RefusedStreams;
  /** The socket's bytes read at the last look: a session that read nothing since is not looked at. */
  bytesRead: number;
}

/** How often the sessions' refused streams are counted (the resets' window is a second too). */
const REFUSED_LOOK_MS = 1000;

export class Http2Front {
  readonly server: Http2Server;
  private readonly sessions = new Map<Http2Session, Watched>();
  private readonly look: NodeJS.Timeout;
  private readonly coolOff = new FloodCoolOff(HTTP2_FLOOD_COOL_OFF_MS);

  constructor(
    private readonly parts: EdgeParts,
    private readonly chain: ChainRunner,
  ) {
    // No 'request' listener: Node's compatibility layer stays out; the sessions' streams are ours (watch).
    this.server = createServer(HTTP2_OPTIONS);
    this.server.on('session', (session: Http2Session) => this.watch(session));
    this.server.on('sessionError', () => undefined);
    // One timer for every session, not one each.
    this.look = setInterval(() => this.countRefused(), REFUSED_LOOK_MS).unref();
  }

  /** The session's peer refused new connections for a while (never a trusted proxy: its connections carry everyone). */
  private cutOff(session: Http2Session): void {
    const peer = session.socket?.remoteAddress;
    if (peer && !this.parts.clients.trustsPeer(peer)) this.coolOff.strike(peer, performance.now());
  }

  /** Whether a new connection on the TLS port comes from a peer cut off for a flood moments ago. */
  refuses(socket: Socket): boolean {
    return socket.remoteAddress !== undefined && this.coolOff.refuses(socket.remoteAddress, performance.now());
  }

  /** A TLS connection that negotiated h2: from here an HTTP/2 session. */
  serve(socket: TLSSocket): void {
    this.server.emit('connection', socket);
  }

  /** Bounds on the session: silence, and the per-second rates of frames that cost us work. */
  private watch(session: Http2Session): void {
    // nghttp2 ending the session itself (its own flood counts, a protocol violation: ERR_HTTP2_ERROR,
    // not a socket's error) cuts the peer off as our counts do.
    session.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ERR_HTTP2_ERROR') this.cutOff(session);
    });
    // A connection with no frame either way for this long is closed (GOAWAY, then the socket).
    session.setTimeout(this.parts.options.clientTimeoutMs, () => session.close());
    const rates = new FrameRates<Kind>(HTTP2_RATES);
    const flood = (kind: Kind, n = 1): void => {
      if (!rates.count(kind, performance.now(), n) || session.destroyed) return;
      this.parts.metrics.blocked(`h2-${kind}-flood`);
      this.parts.log.warn({ client: session.socket?.remoteAddress, kind }, 'edge: HTTP/2 flood, connection ended');
      this.cutOff(session);
      session.destroy(new Error(`HTTP/2 ${kind} flood`), constants.NGHTTP2_ENHANCE_YOUR_CALM);
    };
    const refused = new RefusedStreams();
    this.sessions.set(session, { flood, refused, bytesRead: 0 });
    session.once('close', () => this.sessions.delete(session));
    session.on('ping', () => flood('pings'));
    session.on('remoteSettings', () => flood('settings'));
    session.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
      refused.request();
      stream.on('error', IGNORE);
      let response: H2Response | undefined;
      try {
        response = this.handle(stream, headers);
      } finally {
        // The stream's one 'close' listener, there even when the request failed. A stream reset with
        // an error, by either side: work begun and thrown away. (A stream that ended well closes
        // with NO_ERROR, also when the server answered before the body's end.) Then the
        // response's own 'finish' and 'close'.
        stream.once('close', () => {
          if (stream.rstCode !== undefined && stream.rstCode !== constants.NGHTTP2_NO_ERROR) flood('resets');
          response?.closed();
        });
      }
    });
  }

  /**
   * Streams reset before they became requests (a header list past its bounds: an HPACK bomb, a
   * thousand fields) reach no event of ours: counted among the resets from the session's last
   * stream id, once a second, for the sessions that read anything since.
   */
  private countRefused(): void {
    for (const [session, watched] of this.sessions) {
      const bytesRead = session.socket?.bytesRead ?? 0;
      if (session.destroyed || bytesRead === watched.bytesRead) continue;
      watched.bytesRead = bytesRead;
      const refused = watched.refused.since(session.state.lastProcStreamID ?? 0);
      if (refused > 0) watched.flood('resets', refused);
    }
  }

  /**
   * One stream: answered here as Node's compatibility layer did (CONNECT → 405, an expectation
   * other than 100-continue → 417), or its HTTP/1.1 view (or 400), its context, the chain.
   * Returns the response the stream's close is to end.
   */
  private handle(stream: ServerHttp2Stream, headers: IncomingHttpHeaders): H2Response | undefined {
    const session = stream.session;
    if (!session) return undefined;
    // A stream already gone still becomes a request (logged, counted), as with Node's own layer; only
    // what is written straight on the stream here waits for one that is still open.
    const open = !stream.destroyed && !stream.closed;
    const method = headers[':method'] as string | undefined;
    if (method === 'CONNECT') return void (open && stream.respond({ ':status': 405 }, { endStream: true }));
    if (headers.expect !== undefined) {
      if (headers.expect !== '100-continue') return void (open && stream.respond({ ':status': 417 }, { endStream: true }));
      if (open) stream.additionalHeaders({ ':status': 100 });
    }
    // The connection's TLS socket (session.socket forwards to it): what the handshake named.
    const connection = session.socket as Socket;
    const view = h2RequestView(headers, !stream.endAfterHeaders);
    const h2req = new H2Request(stream, view.ok ? view.headers : {}, view.ok ? view.rawHeaders : [], method, headers[':path'] as string | undefined);
    if (!stream.endAfterHeaders) h2req.countBody();
    const h2res = new H2Response(stream, h2req);
    // The adapters have what the stages use of IncomingMessage/ServerResponse (h2-exchange.ts).
    const req = h2req as unknown as IncomingMessage;
    const res = h2res as unknown as ServerResponse;
    // The client as the connection says it (a trusted proxy's X-Forwarded-For read from the view).
    const client = this.parts.clients.of({ socket: connection, headers: h2req.headers } as unknown as IncomingMessage);
    const ctx = new RequestContext(req, res, 'https', client, undefined, this.chain, connection, 'h2');
    // The connection's bytes are every stream's: a body's pace is counted on its own stream.
    ctx.bodyBytesRead = () => h2req.bodyBytesRead;
    if (!view.ok) {
      this.parts.metrics.blocked('h2-malformed');
      page(res, 400, PAGES.badRequest());
      h2res.on('close', () => this.chain.ended(ctx));
      this.chain.answeredByFront(ctx, { status: 400, via: view.reason });
      return h2res;
    }
    const disarm = this.chain.arm(ctx);
    h2res.on('close', () => {
      disarm();
      this.chain.ended(ctx);
    });
    this.chain.run(ctx);
    return h2res;
  }

  async close(): Promise<void> {
    clearInterval(this.look);
    for (const session of this.sessions.keys()) session.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
