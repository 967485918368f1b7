// The HTTP/2 front: each TLS connection that chose `h2` (tls.ts) becomes an nghttp2 session, and
// each of its streams a request context that runs the same chain as an HTTP/1.1 request. Node's
// compatibility objects (Http2ServerRequest/Response) carry what the stages use of a request and
// a response; what differs is said here once: the headers are the HTTP/1.1 view of the stream's
// (h2-request.ts, or 400), the connection's TLS socket is the one the handshake named (fronting),
// and per-connection floods end the session (h2-flood.ts). Backends are spoken to in HTTP/1.1.
// No WebSockets over h2 (RFC 8441's extended CONNECT is not offered): browsers then open an
// HTTP/1.1 connection for them, which upgrades as before. Knows no stage.
import { constants, createServer, Http2ServerRequest, Http2ServerResponse, type Http2Server, type Http2Session, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http2';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { EdgeParts } from '../stage/parts.ts';
import type { ChainRunner } from '../stage/run.ts';
import { RequestContext } from '../stage/context.ts';
import { page } from '../stage/answer.ts';
import { PAGES } from '../pages.ts';
import { h2RequestView } from './h2-request.ts';
import { FloodCoolOff, FrameRates, RefusedStreams } from './h2-flood.ts';
import { HTTP2_FLOOD_COOL_OFF_MS, HTTP2_OPTIONS, HTTP2_RATES } from './http2-limits.ts';

type Kind = keyof typeof HTTP2_RATES;

/**
 * A stream's request as the stages read one: its headers are the HTTP/1.1 view (h2-request.ts),
 * set by the front; the pseudo-headers stay behind, where `method` and `url` read them.
 */
class EdgeH2Request extends Http2ServerRequest {
  view: IncomingHttpHeaders | undefined;
  viewRaw: string[] | undefined;
  /** This stream's body bytes handed to the request so far: its own pace, not the connection's (body-pace.ts). */
  bodyBytesRead = 0;

  // Node's compatibility layer hands each DATA chunk of the stream to `push`: counted on the way, the stream untouched.
  override push(chunk: unknown, encoding?: BufferEncoding): boolean {
    if (chunk !== null && typeof chunk === 'object' && 'length' in chunk) this.bodyBytesRead += (chunk as Buffer).length;
    return super.push(chunk, encoding);
  }
}

/** A stream's response as the stages write one: `destroyed` as a response has it, and no HTTP/1.1 `connection` header. */
class EdgeH2Response extends Http2ServerResponse {
  /** A stage asking for the connection's end (`connection: close`): a header h2 forbids, dropped here rather than warned about per response. */
  override writeHead(status: number, headers?: OutgoingHttpHeaders | readonly string[]): this;
  override writeHead(status: number, message: string, headers?: OutgoingHttpHeaders | readonly string[]): this;
  override writeHead(status: number, second?: string | OutgoingHttpHeaders | readonly string[], third?: OutgoingHttpHeaders | readonly string[]): this {
    const headers = typeof second === 'string' ? third : second;
    if (headers && !Array.isArray(headers) && 'connection' in headers) {
      const { connection: _, ...rest } = headers as OutgoingHttpHeaders;
      return super.writeHead(status, rest);
    }
    return super.writeHead(status, headers as OutgoingHttpHeaders);
  }
}

// Accessors over what Node's classes declare as plain properties (the typings), on the prototypes: nothing per request.
const h2Headers = Object.getOwnPropertyDescriptor(Http2ServerRequest.prototype, 'headers')!;
const h2RawHeaders = Object.getOwnPropertyDescriptor(Http2ServerRequest.prototype, 'rawHeaders')!;
Object.defineProperties(EdgeH2Request.prototype, {
  headers: {
    get(this: EdgeH2Request) {
      return this.view ?? h2Headers.get!.call(this);
    },
    set(this: EdgeH2Request, headers: IncomingHttpHeaders) {
      this.view = headers;
    },
  },
  rawHeaders: {
    get(this: EdgeH2Request) {
      return this.viewRaw ?? h2RawHeaders.get!.call(this);
    },
  },
});
// The stages ask whether the client is gone; Node's h2 response has no `destroyed`.
Object.defineProperty(EdgeH2Response.prototype, 'destroyed', {
  get(this: EdgeH2Response) {
    return this.stream.destroyed;
  },
});

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
    this.server = createServer({ ...HTTP2_OPTIONS, Http2ServerRequest: EdgeH2Request, Http2ServerResponse: EdgeH2Response as typeof Http2ServerResponse });
    this.server.on('session', (session: Http2Session) => this.watch(session));
    this.server.on('request', (req: Http2ServerRequest, res: Http2ServerResponse) => this.handle(req as EdgeH2Request, res));
    // Node answers CONNECT (no listener: 405) and 100-continue itself; a stream's own errors end that stream.
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
    session.on('stream', (stream) => {
      refused.request();
      // A stream reset with an error, by either side: work begun and thrown away. (A stream that
      // ended well closes with NO_ERROR, also when the server answered before the body's end.)
      stream.once('close', () => {
        if (stream.rstCode !== undefined && stream.rstCode !== constants.NGHTTP2_NO_ERROR) flood('resets');
      });
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

  /** One stream: its HTTP/1.1 view (or 400), its context, the chain. */
  private handle(h2req: EdgeH2Request, h2res: Http2ServerResponse): void {
    const session = h2req.stream.session;
    if (!session) return;
    // The connection's TLS socket (session.socket forwards to it): what the handshake named.
    const connection = session.socket as Socket;
    const view = h2RequestView(h2req.headers, !h2req.stream.endAfterHeaders);
    h2req.view = view.ok ? view.headers : {};
    h2req.viewRaw = view.ok ? view.rawHeaders : [];
    // The compatibility objects have what the stages use of IncomingMessage/ServerResponse.
    const req = h2req as unknown as IncomingMessage;
    const res = h2res as unknown as ServerResponse;
    const ctx = new RequestContext(req, res, 'https', this.parts.clients.of(req), undefined, this.chain, connection, 'h2');
    // The connection's bytes are every stream's: a body's pace is counted on its own stream.
    ctx.bodyBytesRead = () => h2req.bodyBytesRead;
    if (!view.ok) {
      this.parts.metrics.blocked('h2-malformed');
      page(res, 400, PAGES.badRequest());
      res.on('close', () => this.chain.ended(ctx));
      this.chain.answeredByFront(ctx, { status: 400, via: view.reason });
      return;
    }
    const disarm = this.chain.arm(ctx);
    res.on('close', () => {
      disarm();
      this.chain.ended(ctx);
    });
    this.chain.run(ctx);
  }

  async close(): Promise<void> {
    clearInterval(this.look);
    for (const session of this.sessions.keys()) session.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
