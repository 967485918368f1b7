// The request context: one request on its way through the chain, and everything an earlier stage
// learnt of it for a later one. A front (front/http1.ts) creates it; stages read and set its
// fields; the proxy and the log line read it. Per-request state lives here, never in parameter
// lists or on objects shared between requests.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex, Writable } from 'node:stream';
import type { Backend } from '../../model/backend.ts';
import type { DomainState } from '../../model/domain.ts';
import type { Route } from '../routing.ts';
import type { CacheStatus, FillLock } from '../cache/edge-cache.ts';
import type { BodyWatch } from '../waf/inspect-request.ts';
import type { BodyTap, ProxyOutcome, ProxyRequest } from '../proxy.ts';

export type Scheme = 'http' | 'https';

/** The protocol the client spoke (ALPN's names): the log line's and the metrics' label. */
export type Protocol = 'http/1.1' | 'h2';

export const ACME_PREFIX = '/.well-known/acme-challenge/';

/** A WebSocket upgrade on its way through the stages: the client's socket and its first bytes. */
export interface UpgradeContext {
  socket: Duplex;
  head: Buffer;
}

/** What the chain answered: the log line's and the metrics' figures. */
export interface Outcome {
  status: number;
  /** Why a protection refused the request, and the reference id the page showed. */
  blocked?: string;
  ref?: string;
  cache?: CacheStatus;
  upstreamMs?: number;
  bytes?: number;
  via?: string;
  domain?: string;
}

/** A stage's verdict: the request answered (its outcome), or passed on (undefined). */
export type StageResult = Outcome | undefined | Promise<Outcome | undefined>;

/** The response phase's filters, as the proxy calls them (the chain runs every filter of the phase). */
export interface ResponseFilters {
  /** The backend's head as it arrives: headers added in place, the body tapped (the cache fill). */
  head(ctx: RequestContext, status: number, headers: Record<string, string | string[]>): BodyTap | undefined;
  /** Where the body is written instead of straight into the response (the bandwidth limit). */
  sink(ctx: RequestContext): ((res: ServerResponse) => Writable) | undefined;
}

const UNKNOWN: Route = { kind: 'unknown' };

export class RequestContext implements ProxyRequest {
  // ── set by the front ──
  readonly started = performance.now();
  /**
   * This request's body bytes received so far, where its connection carries other requests' at
   * the same time (an h2 stream); undefined where the connection's bytes are the request's.
   */
  bodyBytesRead: (() => number) | undefined;

  // ── request head ──
  /** The target as the backend will see it (origin-form once request-target read it). */
  url: string;
  /** The canonical Host ('' when the request named none: the node's status page). */
  host = '';
  /** The Host for the log line: the canonical one, else what the client sent. */
  logHost: string | undefined;
  /** The target's path, without the query. */
  path = '/';
  /** An ACME path: only the IP lists apply, and it is never passed to the backend. */
  acme = false;
  route: Route = UNKNOWN;
  private served: DomainState | undefined;

  // ── body ──
  /** baseprotection has a body to read (the head's checks passed and one is announced). */
  wafReadsBody = false;
  /** The body baseprotection read whole (a body read in part was handed back to the request). */
  inspectedBody: Buffer | undefined;
  /** The rest of a body past the WAF's inspection limit, watched on its way to the backend. */
  bodyWatch: BodyWatch | undefined;

  // ── upstream ──
  cacheStatus: CacheStatus = 'BYPASS';
  cacheKey = '';
  /** The cache's fill lock when this request is to fetch and store. */
  lock: FillLock | undefined;
  /** The response is being stored (the fill lock passed to the cache). */
  filling = false;
  /** The backend address (its key) the request goes to: the failover while the backend is down. */
  backendKey = '';
  /** An upgrade's backend, chosen with `backendKey` (a request's is chosen again by the proxy, per try). */
  upgradeTarget: Backend | undefined;
  /** The upgrade goes to the failover (its backend is down). */
  failoverChosen = false;
  /** Gives back the client's share of the backend. */
  releaseShare: (() => void) | undefined;
  /** What the backend's exchange came to (set by the proxy stage, read by the response phase). */
  upstream: ProxyOutcome | undefined;

  // ── logging ──
  outcome: Outcome | undefined;
  /** The response is over (or the client gone). */
  over = false;
  logged = false;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly scheme: Scheme,
    /** The client's address (the TCP peer, or what a trusted proxy says). */
    readonly client: string,
    readonly upgrade: UpgradeContext | undefined,
    private readonly filters: ResponseFilters,
    /** The client's connection: for h2 the session's TLS socket (the request's own `socket` stands for its stream). */
    readonly connection: Socket,
    readonly protocol: Protocol,
  ) {
    this.url = req.url ?? '/';
    this.logHost = req.headers.host;
  }

  /** The domain served (set once routing found one; later stages rely on it). */
  get domain(): DomainState {
    if (!this.served) throw new Error('edge: a stage that needs the domain ran before routing');
    return this.served;
  }

  set domain(domain: DomainState) {
    this.served = domain;
  }

  /** For the proxy: the response phase's head filters. */
  responseHead(status: number, headers: Record<string, string | string[]>): BodyTap | undefined {
    return this.filters.head(this, status, headers);
  }

  /** For the proxy and the cache: the response phase's sink, if one applies. */
  responseSink(): ((res: ServerResponse) => Writable) | undefined {
    return this.filters.sink(this);
  }
}
