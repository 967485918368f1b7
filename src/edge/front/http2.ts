// The HTTP/2 front: each TLS connection that chose `h2` (tls.ts) becomes an nghttp2 session, and
// each of its streams a request context that runs the same chain as an HTTP/1.1 request. Node's
// compatibility objects (Http2ServerRequest/Response) carry what the stages use of a request and
// a response; what differs is said here once: the headers are the HTTP/1.1 view of the stream's
// (h2-request.ts, or 400), the connection's TLS socket is the one the handshake named (fronting),
// and per-connection floods end the session (h2-flood.ts). Backends are spoken to in HTTP/1.1.
// No WebSockets over h2 (RFC 8441's extended CONNECT is not offered): browsers then open an
// HTTP/1.1 connection for them, which upgrades as before. Knows no stage.
import { constants, createServer, type Http2Server, type Http2ServerRequest, type Http2ServerResponse, type Http2Session, type OutgoingHttpHeaders } from 'node:http2';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { EdgeParts } from '../stage/parts.ts';
import type { ChainRunner } from '../stage/run.ts';
import { RequestContext } from '../stage/context.ts';
import { page } from '../stage/answer.ts';
import { PAGES } from '../pages.ts';
import { h2RequestView } from './h2-request.ts';
import { FrameRates } from './h2-flood.ts';
import { HTTP2_OPTIONS, HTTP2_RATES } from './http2-limits.ts';

type Kind = keyof typeof HTTP2_RATES;

export class Http2Front {
  readonly server: Http2Server;
  private readonly sessions = new Set<Http2Session>();

  constructor(
    private readonly parts: EdgeParts,
    private readonly chain: ChainRunner,
  ) {
    this.server = createServer(HTTP2_OPTIONS);
    this.server.on('session', (session: Http2Session) => this.watch(session));
    this.server.on('request', (req: Http2ServerRequest, res: Http2ServerResponse) => this.handle(req, res));
    // Node answers CONNECT (no listener: 405) and 100-continue itself; a stream's own errors end that stream.
    this.server.on('sessionError', () => undefined);
  }

  /** A TLS connection that negotiated h2: from here an HTTP/2 session. */
  serve(socket: TLSSocket): void {
    this.server.emit('connection', socket);
  }

  /** Bounds on the session: silence, and the per-second rates of frames that cost us work. */
  private watch(session: Http2Session): void {
    this.sessions.add(session);
    session.once('close', () => this.sessions.delete(session));
    session.on('error', () => undefined);
    // A connection with no frame either way for this long is closed (GOAWAY, then the socket).
    session.setTimeout(this.parts.options.clientTimeoutMs, () => session.close());
    const rates = new FrameRates<Kind>(HTTP2_RATES);
    const flood = (kind: Kind): void => {
      if (!rates.count(kind, performance.now()) || session.destroyed) return;
      this.parts.metrics.blocked(`h2-${kind}-flood`);
      this.parts.log.warn({ client: session.socket?.remoteAddress, kind }, 'edge: HTTP/2 flood, connection ended');
      session.destroy(undefined, constants.NGHTTP2_ENHANCE_YOUR_CALM);
    };
    session.on('ping', () => flood('pings'));
    session.on('remoteSettings', () => flood('settings'));
    session.on('stream', (stream) => {
      // A stream reset before its response was finished, by either side: work begun and thrown away.
      stream.once('close', () => {
        if (stream.rstCode !== constants.NGHTTP2_NO_ERROR && !stream.writableFinished) flood('resets');
      });
    });
  }

  /** One stream: its HTTP/1.1 view (or 400), its context, the chain. */
  private handle(h2req: Http2ServerRequest, h2res: Http2ServerResponse): void {
    const session = h2req.stream.session;
    if (!session) return;
    // The connection's TLS socket (session.socket forwards to it): what the handshake named.
    const connection = session.socket as Socket;
    const view = h2RequestView(h2req.headers, !h2req.stream.endAfterHeaders);
    // The stages read a request's HTTP/1.1 headers: the view replaces the h2 header block on this
    // request object (the compatibility object reads its pseudo-headers from its own copy).
    Object.defineProperty(h2req, 'headers', { value: view.ok ? view.headers : {}, writable: true });
    Object.defineProperty(h2req, 'rawHeaders', { value: view.ok ? view.rawHeaders : [] });
    withoutConnectionHeaders(h2res);
    // The compatibility objects have what the stages use of IncomingMessage/ServerResponse.
    const req = h2req as unknown as IncomingMessage;
    const res = h2res as unknown as ServerResponse;
    const ctx = new RequestContext(req, res, 'https', this.parts.clients.of(req), undefined, this.chain, connection, 'h2');
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
    for (const session of this.sessions) session.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** HTTP/1.1's `connection` (a stage asking for the connection's end) has no place in an h2 response: dropped here, not warned about by Node per response. */
function withoutConnectionHeaders(res: Http2ServerResponse): void {
  const writeHead = res.writeHead.bind(res) as (status: number, headers?: OutgoingHttpHeaders | readonly string[]) => Http2ServerResponse;
  Object.defineProperty(res, 'writeHead', {
    value(status: number, headers?: OutgoingHttpHeaders | readonly string[]) {
      if (headers && !Array.isArray(headers) && 'connection' in headers) {
        const { connection: _, ...rest } = headers as OutgoingHttpHeaders;
        return writeHead(status, rest);
      }
      return writeHead(status, headers);
    },
  });
}
