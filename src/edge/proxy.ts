// Carries one request to a domain's backend and its answer back, streaming both ways (bodies are
// never held whole, and backpressure holds in both directions), over pooled keep-alive
// connections (undici: the fastest Node client measured for this, ../../docs/edge.md). Hop-by-hop headers stay on their hop;
// the backend learns the client (X-Forwarded-For: the TCP peer, or what a trusted proxy says; a
// client's own value is not trusted), the scheme and host it asked for, and that we passed it on (Via). When the
// backend is down (backend-health.ts) the failover takes the request; when a connect fails and the
// domain has a failover, a request without a body is tried there at once.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { Readable, type Writable } from 'node:stream';
import { createRequire } from 'node:module';
import { Agent, type Dispatcher } from 'undici';
import { backendRefusal, parseBackend, type Backend } from '../model/backend.ts';
import type { DomainState } from '../model/domain.ts';
import type { BackendHealth } from './backend-health.ts';
import { boundedMemo } from '../common/bounded-memo.ts';
import { BackendRelay, type BodyTap } from './backend-relay.ts';

export type { BodyTap } from './backend-relay.ts';

/**
 * undici's option for a request waiting for a connection: a hook given the way to take it out of
 * the queue (an internal symbol; undefined in a version without it, when a gone client's request
 * is aborted as it starts instead).
 */
const QUEUED_ABORT = (createRequire(import.meta.url)('undici/lib/core/symbols.js') as { kQueuedAbort?: symbol }).kQueuedAbort;

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade']);
/** Answered by this hop (Node sends the 100 Continue itself when the body is read). */
const REQUEST_ONLY = new Set(['expect']);
const VIA = '1.1 palisade';
const CLIENT_CLAIMS = new Set(['forwarded', 'x-real-ip', 'x-client-ip', 'true-client-ip', 'cf-connecting-ip', 'x-cluster-client-ip', 'x-original-url', 'x-rewrite-url', 'x-original-host', 'x-host']);

export interface ProxyOutcome {
  status: number;
  /** Response body bytes passed to the client. */
  bytes?: number;
  /** Milliseconds until the backend's response headers arrived (undefined when none did). */
  upstreamMs?: number;
  /** Which backend answered, or why none did. */
  /** `refused`: the address is no public one and the operator allows none (no connection was tried). */
  /** `body-refused`: the rest of the body, watched on its way (`BodyWatch`), was refused: the upload was cut off. */
  via: 'backend' | 'failover' | 'unreachable' | 'timeout' | 'too-large' | 'refused' | 'client-gone' | 'body-refused';
}

/** Watches a streamed body's bytes (the WAF's tail inspection): true stops the upload. */
export interface BodyWatch {
  chunk(bytes: Buffer): boolean;
  end(): boolean;
}

/** Where the body goes instead of straight into the response (the bandwidth limit). */
export type Sink = (res: ServerResponse) => Writable;

/**
 * One request as the proxy needs it: the request context (stage/context.ts) is one. Everything
 * per request comes in this one object; the response phase's filters are its methods.
 */
export interface ProxyRequest {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly domain: DomainState;
  /** The canonical Host the client asked for (X-Forwarded-Host). */
  readonly host: string;
  readonly scheme: 'http' | 'https';
  /** The client's address as the edge determined it (the TCP peer, or from a trusted proxy). */
  readonly client: string;
  /** The request body when it was read already (the WAF inspected it). */
  readonly inspectedBody?: Buffer | undefined;
  /** The rest of a body past the WAF's inspection limit, watched on its way. */
  readonly bodyWatch?: BodyWatch | undefined;
  /** The response phase on the backend's head: headers added in place, the body tapped (the cache). */
  responseHead?(status: number, headers: Record<string, string | string[]>): BodyTap | undefined;
  /** The response phase's sink for the body (the bandwidth limit), if one applies. */
  responseSink?(): Sink | undefined;
}

export interface ProxyOptions {
  connectTimeoutMs: number;
  /** Longest wait for the backend's response headers. */
  responseTimeoutMs: number;
  /** Largest request body passed on; a larger one is cut off with 413. */
  maxBodyBytes: number;
  /**
   * Loopback and private backends allowed (PALISADE_ALLOW_PRIVATE_BACKENDS). Checked again before
   * every connection, not only when the API took the address: a backend stored before a check
   * was tightened (or by another release) must not lead the edge inside.
   */
  allowPrivateBackends: boolean;
}

/** What a `Connection` header names (lower case): its options, and headers that stay on this hop. */
const NAMES_NONE: ReadonlySet<string> = new Set();
const NAMES_CLOSE: ReadonlySet<string> = new Set(['close']);

function connectionNames(value: string | string[] | undefined): ReadonlySet<string> {
  if (value === undefined) return NAMES_NONE;
  // The common values, without splitting: keep-alive is hop-by-hop already.
  if (value === 'keep-alive' || value === 'Keep-Alive') return NAMES_NONE;
  if (value === 'close' || value === 'Close') return NAMES_CLOSE;
  return new Set(
    String(value)
      .toLowerCase()
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );
}

/** The headers for the next hop: hop-by-hop ones (and those `Connection` names) removed. */
export function forwardable(headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const named = connectionNames(headers.connection);
  const out: Record<string, string | string[]> = {};
  // for…in, not Object.entries: no array per header on every request and every response.
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || HOP_BY_HOP.has(name) || REQUEST_ONLY.has(name) || named.has(name)) continue;
    out[name] = value;
  }
  return out;
}

/**
 * What the backend receives of a request's headers: hop-by-hop ones removed, the Host as the edge
 * read it (edge-server.ts puts the canonical one on the request), and the forwarding headers set
 * by us — a client's own X-Forwarded-* are replaced, never passed on.
 */
export function forwardedRequestHeaders(req: IncomingMessage, client: string, scheme: 'http' | 'https', host: string): Record<string, string | string[]> {
  const headers = req.headers;
  const named = connectionNames(headers.connection);
  const out: Record<string, string | string[]> = {};
  // One pass, no deletes (a deleted property turns the object into a slow dictionary, read again
  // by the client that sends it): every header a backend framework may read as the client, the
  // host, the scheme or the path the proxy saw (RFC 7239 Forwarded, X-Forwarded-*, X-Real-IP,
  // X-Original-URL …) is left out with the hop-by-hop ones; only ours go on.
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || HOP_BY_HOP.has(name) || REQUEST_ONLY.has(name) || named.has(name) || CLIENT_CLAIMS.has(name) || name.startsWith('x-forwarded-')) continue;
    out[name] = value;
  }
  out['x-forwarded-for'] = client;
  out['x-forwarded-proto'] = scheme;
  out['x-forwarded-host'] = host;
  out.via = headers.via ? `${String(headers.via)}, ${VIA}` : VIA;
  return out;
}

export class Proxy {
  private readonly dispatcher: Agent;

  constructor(
    private readonly options: ProxyOptions,
    private readonly health: BackendHealth,
  ) {
    this.dispatcher = new Agent({
      connect: { timeout: options.connectTimeoutMs },
      headersTimeout: options.responseTimeoutMs,
      // Silence in the middle of a body is bounded like the wait for headers.
      bodyTimeout: options.responseTimeoutMs,
      keepAliveTimeout: 4000,
      connections: 256,
    });
  }

  /** Backends as parsed, by their text (parsed once, not per request). */
  private readonly backendOf = boundedMemo(parseBackend, 10_000);

  /** Carries the request to the backend, or the failover while it is down (and, a bodiless one whose connect failed, there at once). */
  async forward(x: ProxyRequest): Promise<ProxyOutcome> {
    const { req, domain } = x;
    const backend = this.backendOf(domain.backend);
    const failover = domain.failover ? this.backendOf(domain.failover) : undefined;
    if (!backend) return { status: 502, via: 'unreachable' };
    const body = x.inspectedBody;
    const bodyless = body !== undefined || ((req.method === 'GET' || req.method === 'HEAD') && !req.headers['content-length'] && !req.headers['transfer-encoding']);
    const sink = x.responseSink?.();
    if (failover && this.health.serving(backend, failover) === failover) {
      const outcome = await this.attempt(x, failover, sink, x.bodyWatch);
      return outcome.via === 'backend' ? { ...outcome, via: 'failover' } : outcome;
    }
    const first = await this.attempt(x, backend, sink, x.bodyWatch);
    if ((first.via !== 'unreachable' && first.via !== 'refused') || !failover || !bodyless) return first;
    const second = await this.attempt(x, failover, sink, undefined);
    return second.via === 'backend' ? { ...second, via: 'failover' } : second;
  }

  /** One try at one backend; resolves once the response has been passed on (or has failed). */
  private attempt(x: ProxyRequest, backend: Backend, sink: Sink | undefined, watch: BodyWatch | undefined): Promise<ProxyOutcome> {
    const { req, res, host, scheme, client } = x;
    const read = x.inspectedBody;
    const started = performance.now();
    if (backendRefusal(backend, this.options.allowPrivateBackends)) return Promise.resolve({ status: 502, via: 'refused' });
    // The client left while an earlier stage waited (the WAF reading the body, a fill lock): its
    // 'close' has passed, nothing would abort the request, and nobody would read the answer.
    if (res.destroyed) return Promise.resolve({ status: 499, via: 'client-gone' });
    const headers = forwardedRequestHeaders(req, client, scheme, host);
    // A request without a body (or one tried again on the failover, its body long consumed: only
    // bodyless ones are) sends none; others stream through, counted: past the bound, cut off.
    const hasBody = read === undefined && !req.readableEnded && (req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined);
    const url = req.url ?? '/';
    const path = url.startsWith('/') ? url : originForm(url);
    const origin = `http://${backend.family === 6 ? `[${backend.address}]` : backend.address}:${backend.port}`;
    return new Promise((resolve) => {
      let outcome: ProxyOutcome | undefined;
      let stopped: 'too-large' | 'body-refused' | undefined;
      const relay = new BackendRelay(
        (statusCode, answer) => {
          const out = forwardable(answer);
          out.via = answer.via ? `${String(answer.via)}, ${VIA}` : VIA;
          const tap = x.responseHead?.(statusCode, out);
          try {
            res.writeHead(statusCode, out);
          } catch (error) {
            // A head Node refuses to write (a character no header may carry): no response, no fill.
            tap?.end(false);
            throw error;
          }
          outcome = { status: statusCode, upstreamMs: performance.now() - started, via: 'backend' };
          // 5xx (but 501/505, which say nothing of its health) counts against the backend, as connect errors and timeouts do.
          if (statusCode >= 500 && statusCode !== 501 && statusCode !== 505) this.health.failed(backend);
          else this.health.passed(backend);
          return { target: sink ? sink(res) : res, tap };
        },
        (error) => {
          res.off('close', gone);
          // A body the request never got to send (it failed while waiting for a connection) is not left reading the client.
          if (error && body instanceof Readable && !body.destroyed) body.destroy();
          if (outcome) {
            outcome.bytes = relay.bytes;
            // The response had begun: nothing to say to the client but to end the connection.
            if (error) res.destroy();
            return resolve(outcome);
          }
          if (stopped === 'too-large') return resolve({ status: 413, via: 'too-large' });
          if (stopped === 'body-refused') return resolve({ status: 403, via: 'body-refused' });
          // The client left first (or was ended, as by the 408 of a trickling body): not the backend's fault.
          if (res.destroyed) return resolve({ status: 499, via: 'client-gone' });
          this.health.failed(backend);
          const code = (error as { code?: string } | undefined)?.code;
          resolve(code === 'UND_ERR_HEADERS_TIMEOUT' ? { status: 504, via: 'timeout' } : { status: 502, via: 'unreachable' });
        },
      );
      // A client that goes away takes its upstream request with it — also one whose response is
      // over while its body is not (the 408 for a silent upload): the body would never end (the
      // request stream neither ends nor errors then), and undici waits for it with no timeout,
      // holding the backend connection for good.
      const gone = (): void => {
        if (!res.writableFinished || !req.complete) relay.abort(new Error('the client went away'));
      };
      res.once('close', gone);
      let body: Readable | Buffer | undefined = read;
      if (hasBody) {
        const stop = (why: 'too-large' | 'body-refused') => () => {
          stopped = why;
          relay.abort(new Error(why));
        };
        body = Readable.from(counted(req, this.options.maxBodyBytes, stop('too-large'), watch, stop('body-refused')));
        // The client's side failing (a reset mid-upload) ends the exchange; undici sees it too.
        body.on('error', (error: Error) => relay.abort(error));
      }
      // (The queue hook under undici's own key: how its signal-taking methods pass it.)
      this.dispatcher.dispatch({ origin, path, method: (req.method ?? 'GET') as 'GET', headers, body, ...(QUEUED_ABORT ? { [QUEUED_ABORT]: relay.queued } : {}) } as Dispatcher.DispatchOptions, relay);
    });
  }

  close(): void {
    void this.dispatcher.destroy();
  }
}

/**
 * The request body as it arrives, ended (and `cutOff` called) once it passes `max` bytes. With a
 * `watch`, each chunk is shown to it before it is sent, and the last is held back until the end
 * is: a refusal (`refuse` called) leaves the backend an unfinished request.
 */
async function* counted(req: IncomingMessage, max: number, cutOff: () => void, watch?: BodyWatch, refuse?: () => void): AsyncGenerator<Buffer> {
  let received = 0;
  let held: Buffer | undefined;
  let refused = false;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    received += chunk.length;
    if (received > max) return cutOff();
    // Refused: the rest is read and dropped (the client is answered, not reset mid-upload).
    if (refused) continue;
    if (!watch) {
      yield chunk;
      continue;
    }
    if (watch.chunk(chunk)) {
      refused = true;
      refuse?.();
      continue;
    }
    if (held) yield held;
    held = chunk;
  }
  if (refused) return;
  if (watch?.end()) return refuse?.();
  if (held) yield held;
}

/** The path and query of an absolute-form target (a client talking to us as to a forward proxy). */
function originForm(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.pathname}${parsed.search}`;
  } catch {
    return '/';
  }
}
