// The edge's listeners (HTTP and HTTPS, one handler) and the order a request goes through.
// Before any stage:
//   a connection past its client's share → closed at accept (protect/connection-limits.ts)
//   Host / target read once (request-target.ts): malformed → 400; canonical from here on
//   a body past its deadline (below its least pace, or past its maximum) → 408 (protect/body-pace.ts), whichever stage holds the request
// Then the stages, in the one list `EdgeServer.stages` (status page, fronting, ACME, routing, IP
// lists and country, fhttps, body bound, baseprotection, challenge, upgrade, cache, backend
// share, proxy): each answers the request or passes it on.
// One access log line per request; counters for /metrics; per-domain upstream figures.
import { createServer, ServerResponse, type IncomingMessage, type Server } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { backendRefusal, formatBackend, parseBackend } from '../model/backend.ts';
import type { DomainState } from '../model/domain.ts';
import type { Route } from './routing.ts';
import { BackendHealth } from './backend-health.ts';
import { UptimeRecorder } from './uptime-recorder.ts';
import { cacheDecision, storability } from './cache/cache-rules.ts';
import { EdgeCache, type CacheStatus, type EdgeCacheOptions, type FillLock, type Settled } from './cache/edge-cache.ts';
import { AccessLog } from './access-log.ts';
import { EdgeMetrics } from './edge-metrics.ts';
import type { EdgeState } from './edge-state.ts';
import { PAGES } from './pages.ts';
import { closeAfterAnswer } from './close-unread.ts';
import { droppedLogLines } from '../common/log-output.ts';
import { forwardedRequestHeaders, Proxy, type ProxyOptions, type ProxyOutcome, type Sink } from './proxy.ts';
import { canonicalHost, requestTarget } from './request-target.ts';
import { selfSignedCertificate } from './tls/self-signed.ts';
import { randomBytes } from 'node:crypto';
import type { Located } from '../geo/locator.ts';
import { geoTargetById } from '../geo/targets.ts';
import { ClientAddress } from './protect/client-address.ts';
import { geoBlocked } from './protect/geo-filter.ts';
import { IpLists } from './protect/ip-lists.ts';
import { BandwidthLimits, type BandwidthShare } from './protect/bandwidth.ts';
import { Challenges, isNavigation, VERIFY_PATH, type ChallengeOptions } from './protect/challenge.ts';
import { challengePage } from './protect/challenge-page.ts';
import { ClientLimits, type ClientLimitOptions } from './waf/client-limits.ts';
import { bodyHold, inspectRequest, type BodyWatch, type RequestVerdict } from './waf/inspect-request.ts';
import { IpRanges } from './protect/ip-ranges.ts';
import { SniContexts } from './tls/sni-contexts.ts';
import { frontingRefusal } from './tls/fronting.ts';
import { isWebSocketUpgrade, proxyUpgrade } from './upgrade.ts';
import { ConnectionLimits, DEFAULT_CONNECTION_LIMITS, type ConnectionLimitOptions } from './protect/connection-limits.ts';
import { DEFAULT_BODY_PACE, watchBodyPace, type BodyPaceOptions } from './protect/body-pace.ts';
import { BackendShares, DEFAULT_BACKEND_SHARE } from './protect/backend-shares.ts';
import { backendKey, BackendTenants } from './backend-tenants.ts';
import { BodyBufferBudget, DEFAULT_BODY_BUFFER, type BodyBufferOptions } from './protect/body-buffer-budget.ts';

const ACME_PREFIX = '/.well-known/acme-challenge/';
const ACME_PING = `${ACME_PREFIX}ping`;

export interface EdgeServerOptions extends ProxyOptions {
  nodeName: string;
  /** Locates clients for the domains' country rules; undefined: every client is "XX". */
  locate?: (address: string) => Located;
  /** Peers whose X-Forwarded-For is believed (PALISADE_EDGE_TRUSTED_PROXIES). */
  trustedProxies: string[];
  challenge: ChallengeOptions;
  clientLimits: ClientLimitOptions;
  /** Active backend checks, every this many ms. */
  checkIntervalMs: number;
  /** A client silent this long while its request is incomplete gets 408 (and idle connections close). */
  clientTimeoutMs: number;
  cache: EdgeCacheOptions;
  /** Connections per client and in all (defaults: DEFAULT_CONNECTION_LIMITS). */
  connections?: ConnectionLimitOptions;
  /** A request body's deadline: grace, least pace, maximum (defaults: DEFAULT_BODY_PACE). */
  bodyPace?: BodyPaceOptions;
  /** Requests of one client network in flight to one backend address at once (across domains). */
  backendSharePerClient?: number;
  /** Requests of one account's domains in flight to a backend address other accounts name too. */
  backendSharePerAccount?: number;
  /** An upgraded (WebSocket) connection silent both ways this long is closed. */
  upgradeIdleMs?: number;
  /** Bytes of request bodies the WAF holds at once, in this process and per client (defaults: DEFAULT_BODY_BUFFER). */
  bodyBuffer?: BodyBufferOptions;
  /** Active backend checks made here (default true; the edge role's workers leave them to their primary). */
  activeChecks?: boolean;
  /** How the node's processes divide each domain's bandwidth (the edge role's workers). */
  bandwidthShare?: BandwidthShare;
  log: Logger;
}

/** A WebSocket upgrade on its way through the stages: the client's socket and its first bytes. */
interface UpgradeContext {
  socket: Duplex;
  head: Buffer;
}

export type Scheme = 'http' | 'https';

interface Outcome {
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
type StageResult = Outcome | undefined | Promise<Outcome | undefined>;

/** One request on its way through the stages, and what earlier stages learnt of it for later ones. */
class Exchange {
  readonly url: string;
  /** An ACME path: only the IP lists apply, and it is never passed to the backend. */
  readonly acme: boolean;
  route: Route = UNKNOWN;
  private served: DomainState | undefined;
  /** The body baseprotection read whole (a body read in part was handed back to the request). */
  inspectedBody: Buffer | undefined;
  /** The rest of a body past the WAF's inspection limit, watched on its way to the backend. */
  bodyWatch: BodyWatch | undefined;
  cacheStatus: CacheStatus = 'BYPASS';
  cacheKey = '';
  /** The cache's fill lock when this request is to fetch and store. */
  lock: FillLock | undefined;
  /** Gives back the client's share of the backend. */
  release: (() => void) | undefined;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly scheme: Scheme,
    /** The canonical Host ('' when the request named none: the node's status page). */
    readonly host: string,
    /** The target's path, without the query (request-target.ts read it). */
    readonly path: string,
    readonly client: string,
    readonly upgrade: UpgradeContext | undefined,
  ) {
    this.url = req.url ?? '/';
    this.acme = this.path.startsWith(ACME_PREFIX);
  }

  /** The domain served (set once routing found one; later stages rely on it). */
  get domain(): DomainState {
    if (!this.served) throw new Error('edge: a stage that needs the domain ran before routing');
    return this.served;
  }

  set domain(domain: DomainState) {
    this.served = domain;
  }
}

const UNKNOWN: Route = { kind: 'unknown' };

/** The response in progress on a connection (for the 408 on a silent client): a field of the socket, not a map beside it. */
const RESPONDING = Symbol('palisade.responding');
type Responding = Socket & { [RESPONDING]?: ServerResponse };

export class EdgeServer {
  private readonly http: Server;
  private readonly https: HttpsServer;
  private readonly proxy: Proxy;
  readonly health: BackendHealth;
  /** What is measured of the backends until it is reported (see uptime-reporter.ts). */
  readonly uptime: UptimeRecorder;
  readonly cache: EdgeCache;
  readonly sni: SniContexts;
  readonly metrics = new EdgeMetrics();
  readonly ipLists: IpLists;
  readonly bandwidth: BandwidthLimits;
  private readonly challenges: Challenges;
  readonly clientLimits: ClientLimits;
  private readonly clients: ClientAddress;
  /** The port HTTPS redirects point to (set by listen). */
  private httpsPort = 443;
  /** Upgraded sockets leave the HTTP server's books: kept here so that close() ends them too. */
  private readonly upgraded = new Set<Duplex>();
  private readonly connections: ConnectionLimits;
  private readonly backendShares: BackendShares;
  private readonly backendTenants: BackendTenants;
  readonly bodyBuffer: BodyBufferBudget;
  private readonly accessLog: AccessLog;

  constructor(
    private readonly state: EdgeState,
    private readonly options: EdgeServerOptions,
  ) {
    this.accessLog = new AccessLog(options.log);
    this.health = new BackendHealth(options.log, undefined, options.allowPrivateBackends);
    this.uptime = new UptimeRecorder(state.routes, this.health);
    this.health.observer = this.uptime;
    if (options.activeChecks !== false) this.health.start(() => state.routes.backends(), options.checkIntervalMs);
    this.bandwidth = new BandwidthLimits(options.bandwidthShare);
    this.proxy = new Proxy(options, this.health);
    this.cache = new EdgeCache(options.cache);
    this.ipLists = new IpLists(state, options.log);
    this.challenges = new Challenges(options.challenge);
    this.clientLimits = new ClientLimits(options.clientLimits);
    const trusted = IpRanges.compile(options.trustedProxies);
    this.clients = new ClientAddress(trusted);
    this.connections = new ConnectionLimits(options.connections ?? DEFAULT_CONNECTION_LIMITS, trusted);
    this.bodyBuffer = new BodyBufferBudget(options.bodyBuffer ?? DEFAULT_BODY_BUFFER);
    this.backendTenants = BackendTenants.following(state);
    const shareOptions = { ...DEFAULT_BACKEND_SHARE, perClient: options.backendSharePerClient ?? DEFAULT_BACKEND_SHARE.perClient, perAccount: options.backendSharePerAccount ?? DEFAULT_BACKEND_SHARE.perAccount };
    this.backendShares = new BackendShares(shareOptions, (backend) => this.backendTenants.accounts(backend) > 1);
    state.onDomainChange((name) => this.cache.dropDomain(name));
    const fallback = selfSignedCertificate(`palisade edge ${options.nodeName}`);
    this.sni = new SniContexts(state, fallback);
    // Only a WebSocket handshake is an upgrade; any other request naming `Upgrade` is an ordinary
    // request (the header is hop-by-hop and stops here), so nothing walks around the stages below.
    const shouldUpgradeCallback = isWebSocketUpgrade;
    this.http = createServer({ shouldUpgradeCallback }, (req, res) => this.handle(req, res, 'http'));
    this.https = createHttpsServer({ SNICallback: this.sni.callback, shouldUpgradeCallback, ...fallback }, (req, res) => this.handle(req, res, 'https'));
    for (const server of [this.http, this.https]) {
      server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => void this.upgrade(req, socket, head, server === this.https ? 'https' : 'http'));
      server.keepAliveTimeout = 5000;
      server.headersTimeout = 10_000;
      // Whole-request deadlines would cut large uploads on slow links: silence is what is bounded.
      server.requestTimeout = 0;
      server.timeout = options.clientTimeoutMs;
      server.on('timeout', (socket: Socket) => this.silent(socket));
      server.on('connection', (socket: Socket) => {
        const admitted = this.connections.admit(socket);
        if (!admitted.ok) {
          this.metrics.blocked(admitted.reason);
          socket.destroy();
          return;
        }
        this.metrics.activeConnections++;
        socket.once('close', () => this.metrics.activeConnections--);
      });
    }
    this.https.on('tlsClientError', () => undefined);
  }

  /**
   * A connection silent past the bound: a request still arriving gets 408; one waiting for its
   * backend is left alone (the response timeout bounds that); anything else is closed.
   */
  private silent(socket: Socket): void {
    const current = (socket as Responding)[RESPONDING];
    if (current && !current.req.complete && !current.headersSent) {
      this.page(current, 408, PAGES.requestTimeout());
      current.once('finish', () => socket.destroy());
      setTimeout(() => socket.destroy(), 1000).unref();
    } else if (!current || current.writableFinished) socket.destroy();
  }

  private reply(res: ServerResponse, status: number, type: string, body: string, extra: Record<string, string> = {}): void {
    res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store', ...extra });
    res.end(body);
  }

  private page(res: ServerResponse, status: number, html: string, extra: Record<string, string> = {}): void {
    this.reply(res, status, 'text/html; charset=utf-8', html, extra);
  }

  private handle(req: IncomingMessage, res: ServerResponse, scheme: Scheme, upgrade?: UpgradeContext): void {
    const started = performance.now();
    // Kept now: a request's socket is gone from it once the connection has closed.
    const socket = req.socket;
    const client = this.clients.of(req);
    (socket as Responding)[RESPONDING] = res;
    // One reading of what the request names, put back on the request so that every later stage,
    // the cache key and the backend see the same (canonical Host, origin-form target).
    const rawHost = req.headers.host;
    const target = requestTarget(req.url, rawHost);
    const host = target.kind === 'name' ? target.host : undefined;
    if (target.kind !== 'invalid') req.url = target.url;
    // An ordinary request that named Upgrade (no WebSocket handshake): what a client pipelined
    // behind it cannot be trusted to follow, so the connection ends with the answer.
    if (!upgrade && req.headers.upgrade !== undefined) res.shouldKeepAlive = false;
    if (target.kind === 'name') req.headers.host = canonicalHost(target.host, target.port);
    // The log line is written when the response is over (or the client gone): listened for now,
    // because a proxied response may be over before route() returns.
    let outcome: Outcome | undefined;
    let closed = false;
    let logged = false;
    const log = (): void => {
      if (!closed || !outcome || logged) return;
      logged = true;
      const o = outcome;
      this.accessLog.write({
        domain: o.domain,
        host: host ?? rawHost,
        method: req.method,
        path: target.kind === 'invalid' ? (req.url ?? '/').split('?')[0]! : target.path,
        scheme,
        status: o.status,
        bytes: o.bytes ?? (Number(res.getHeader('content-length')) || 0),
        cache: o.cache,
        blocked: o.blocked,
        ref: o.ref,
        upstreamMs: o.upstreamMs === undefined ? undefined : Math.round(o.upstreamMs * 100) / 100,
        via: o.via,
        ms: Math.round((performance.now() - started) * 100) / 100,
        client,
        complete: res.writableFinished,
        upgrade: upgrade ? true : undefined,
      });
    };
    // A body that stops coming at a useful pace, or outlasts its maximum, ends the request (slow POSTs held backend pools).
    const stopPace = watchBodyPace(req, this.options.bodyPace ?? DEFAULT_BODY_PACE, (why) => {
      this.metrics.blocked(why === 'slow' ? 'slow-body' : 'body-deadline');
      if (res.headersSent) return void socket.destroy();
      this.page(res, 408, PAGES.requestTimeout(), { connection: 'close' });
      res.once('finish', () => socket.destroy());
      setTimeout(() => socket.destroy(), 1000).unref();
    });
    // An upgraded connection's response is detached from its socket on 101: its end is the socket's.
    // (`on`, not `once`: a response closes once, and `once` wraps the listener per request.)
    (upgrade?.socket ?? res).on('close', () => {
      if ((socket as Responding)[RESPONDING] === res) (socket as Responding)[RESPONDING] = undefined;
      closed = true;
      stopPace();
      log();
    });
    const failed = (error: unknown): Outcome => {
      this.options.log.error({ err: error, host }, 'edge: request failed');
      if (!res.headersSent) this.page(res, 502, PAGES.badGateway(host ?? ''));
      else res.destroy();
      return { status: 502 };
    };
    const finish = (answered: Outcome): void => {
      outcome = answered;
      this.metrics.request(answered.status, answered.cache ?? 'NONE');
      log();
    };
    let routed: Outcome | Promise<Outcome>;
    try {
      if (target.kind === 'invalid') {
        this.page(res, 400, PAGES.badRequest(), { connection: 'close' });
        routed = { status: 400, via: target.reason };
      } else routed = this.route(req, res, scheme, host, target.path, client, upgrade);
    } catch (error) {
      routed = failed(error);
    }
    // A request answered at once is finished at once; one that waited, when it is answered.
    if (routed instanceof Promise) routed.then(finish, (error: unknown) => finish(failed(error)));
    else finish(routed);
  }

  /**
   * The JS challenge: the verification URL, or a 503 (page for navigations, JSON otherwise) for a
   * request without a valid clearance; undefined lets a cleared request through.
   */
  private challenge(x: Exchange): StageResult {
    // robots.txt exactly: with a query string it is whatever the backend makes of it.
    if (!x.domain.sjschallenge || x.url === '/robots.txt') return undefined;
    const { req, res, host, url, path, client, scheme } = x;
    const domain = x.domain.domain;
    if (path === VERIFY_PATH) {
      const query = new URLSearchParams(url.slice(url.indexOf('?') + 1));
      const verdict = this.challenges.verify(query.get('challenge') ?? '', query.get('nonce') ?? '', query.get('return') ?? '/', domain, client, scheme === 'https');
      if (!verdict.ok) {
        const refused = this.refuse(res, domain, 'challenge-rejected', (ref) => PAGES.challengeRejected(host, verdict.reason, ref));
        return { ...refused, via: verdict.reason };
      }
      this.metrics.blocked('challenge-passed');
      res.writeHead(302, { location: verdict.returnTo, 'set-cookie': verdict.cookie, 'cache-control': 'no-store', 'content-length': 0 });
      res.end();
      return { status: 302, domain, via: 'challenge-passed' };
    }
    if (this.challenges.cleared(req.headers.cookie, domain, client)) return undefined;
    this.metrics.blocked('challenge');
    if (isNavigation(req.method, req.headers)) {
      this.page(res, 503, challengePage(host, this.challenges.issue(domain, client), this.challenges.difficulty, VERIFY_PATH, url));
    } else {
      this.reply(res, 503, 'application/json', `${JSON.stringify({ error: 'challenge_required', detail: `open ${host} in a browser with JavaScript to pass its check` })}\n`);
    }
    return { status: 503, domain, blocked: 'challenge' };
  }

  /** Which protection refuses the client, if one does: IP lists, then (not on ACME paths) the country rule. */
  private refusal(domain: DomainState, host: string, client: string, acme: boolean): { reason: string; html: (ref: string) => string } | undefined {
    if (this.ipLists.blocks(domain.ownerId, client)) return { reason: 'ip-list', html: (ref) => PAGES.blockedAddress(host, client, ref) };
    if (acme || domain.geomode === 0) return undefined;
    const located = this.options.locate?.(client).country;
    const country = (located === undefined ? undefined : geoTargetById(located)?.code) ?? 'XX';
    if (geoBlocked(domain.geomode, domain.geolist, country)) return { reason: 'geo', html: (ref) => PAGES.blockedCountry(host, country, ref) };
    return undefined;
  }

  /** A protection refused the request: 403 page with a reference id that the log line carries too. */
  private refuse(res: ServerResponse, domain: string, reason: string, html: (ref: string) => string, status = 403, extra: Record<string, string> = {}): Outcome {
    const ref = randomBytes(8).toString('hex');
    this.metrics.blocked(reason);
    this.page(res, status, html(ref), extra);
    return { status, domain, blocked: reason, ref };
  }

  /**
   * baseprotection: the client's rate and ban, then the domain's WAF verdict (waf/inspect-request.ts:
   * protocol checks, the body read up to the domain's limit, the rules). Returns the refusal, or the
   * body it read whole (a body read in part was handed back to the request stream).
   */
  private baseProtection(x: Exchange): StageResult {
    return x.domain.baseprotection ? this.protect(x) : undefined;
  }

  /**
   * The client's rate and ban, then the WAF's verdict: at once for a request without a body, else
   * one promise (the WAF's own, not wrapped in further async steps). Passes on with the body read
   * whole, or refuses.
   */
  private protect(x: Exchange): StageResult {
    const { req, res, client, host } = x;
    const domain = x.domain.domain;
    const limited = this.clientLimits.check(client);
    if (limited) {
      const html = (ref: string) => (limited.reason === 'banned' ? PAGES.banned(host, limited.retryAfter, ref) : PAGES.rateLimited(host, ref));
      return this.refuse(res, domain, limited.reason, html, limited.status, { 'retry-after': String(limited.retryAfter) });
    }
    // The body's bytes are taken from the buffer budget before the WAF reads any of them, and given
    // back when the exchange ends, however it ends (answered, refused, failed, client gone).
    const hold = bodyHold(req.headers, x.domain);
    if (hold > 0) {
      const taken = this.bodyBuffer.reserve(client, hold);
      if (!taken.ok) return this.bodyBufferRefusal(x, taken.reason);
      res.once('close', taken.release);
    }
    const verdict = inspectRequest(req, req.method ?? 'GET', x.url, req.headers, req.rawHeaders.length / 2, x.domain);
    return verdict instanceof Promise ? verdict.then((v) => this.wafVerdict(x, v)) : this.wafVerdict(x, verdict);
  }

  /** A body the buffer budget has no room for: 429 past the client's share, 503 past the node's; its bytes never read. */
  private bodyBufferRefusal(x: Exchange, spent: 'client' | 'node'): Outcome {
    const html = spent === 'client' ? (ref: string) => PAGES.bodiesBusy(x.host, ref) : (ref: string) => PAGES.edgeBusy(x.host, ref);
    // The body is still arriving, and is not to be read: the connection ends after the answer (close-unread.ts).
    closeAfterAnswer(x.res);
    return this.refuse(x.res, x.domain.domain, `body-buffer-${spent}`, html, spent === 'client' ? 429 : 503, { 'retry-after': '1' });
  }

  /** Acts on the WAF's verdict: a refusal, a finding only logged, or passed on with the body it read whole. */
  private wafVerdict(x: Exchange, verdict: RequestVerdict): Outcome | undefined {
    const { res, client, host } = x;
    const domain = x.domain.domain;
    if (verdict.cut) {
      if (!res.headersSent) this.page(res, 400, PAGES.badRequest());
      return { status: 400, domain, via: 'body cut short' };
    }
    const { finding, body } = verdict;
    x.inspectedBody = body;
    if (!finding) {
      x.bodyWatch = verdict.tail;
      return undefined;
    }
    if (verdict.logOnly) {
      this.options.log.warn({ domain, client, rule: finding.rule, class: finding.class, where: finding.where }, 'waf: would refuse (log only)');
      return undefined;
    }
    this.clientLimits.refused(client);
    const reason = finding.class === 'protocol' ? 'protocol' : finding.class === 'scanner' ? 'scanner' : 'waf';
    // A body refused for its size, type or charset is told so; an attack gets the protection page.
    const page = bodyRefusal(finding) ? (ref: string) => PAGES.bodyRefused(host, finding.where, ref) : (ref: string) => PAGES.wafBlocked(host, ref);
    const refused = this.refuse(res, domain, reason, page, finding.status);
    return { ...refused, via: `rule ${finding.rule} (${finding.class}) in ${finding.where}` };
  }

  /**
   * The order every request goes through, first to last, in one place: each stage either answers
   * the request (its outcome ends the walk) or passes it on (undefined). Only the stages that may
   * wait return a promise, so a request that is answered at once is not deferred stage by stage.
   */
  private readonly stages: ReadonlyArray<readonly [name: string, stage: (x: Exchange) => StageResult]> = [
    ['status page (the node address, no Host)', (x) => this.statusPage(x)],
    ['domain fronting (Host of another domain than the SNI) → 421', (x) => this.fronting(x)],
    ['ACME ping → pong, for every configured name', (x) => this.acmePing(x)],
    ['unknown, disabled, unbound → 421', (x) => this.unserved(x)],
    ['IP lists, country rule → 403', (x) => this.addressRules(x)],
    ['ACME token → the token or 404, never the backend', (x) => this.acmeToken(x)],
    ['fhttps on plain HTTP → 301/308', (x) => this.forceHttps(x)],
    ['announced body past the bound → 413', (x) => this.bodyBound(x)],
    ['baseprotection: client rate and ban, WAF → 403/429', (x) => this.baseProtection(x)],
    ['JS challenge → 503', (x) => this.challenge(x)],
    ['WebSocket handshake → upgrade.ts', (x) => (x.upgrade ? this.carryUpgrade(x, x.upgrade) : undefined)],
    ['cache → HIT, or a fill for the proxy', (x) => this.cached(x)],
    ["client's share of the backend → 429", (x) => this.backendShare(x)],
    ['proxy → backend or failover; 502/504', (x) => this.proxied(x)],
  ];

  /**
   * Walks the stages; synchronous as long as they are (a fresh hit of a domain without
   * baseprotection never waits), and from the first that waits on, one promise per wait.
   */
  private route(req: IncomingMessage, res: ServerResponse, scheme: Scheme, host: string | undefined, path: string, client: string, upgrade?: UpgradeContext): Outcome | Promise<Outcome> {
    return this.walk(new Exchange(req, res, scheme, host ?? '', path, client, upgrade), 0);
  }

  private walk(x: Exchange, from: number): Outcome | Promise<Outcome> {
    const stages = this.stages;
    for (let i = from; i < stages.length; i++) {
      const outcome = stages[i]![1](x);
      if (outcome instanceof Promise) return outcome.then((answered) => answered ?? this.walk(x, i + 1));
      if (outcome) return outcome;
    }
    throw new Error('edge: no stage answered the request');
  }

  private statusPage(x: Exchange): StageResult {
    if (x.host !== '') return undefined;
    this.page(x.res, 200, PAGES.status(this.options.nodeName, this.state.node?.status ?? 'active'));
    return { status: 200, via: 'status' };
  }

  private fronting(x: Exchange): StageResult {
    x.route = this.state.routes.route(x.host);
    // Domain fronting: over TLS, Host must name the domain the handshake (SNI) was for (tls/fronting.ts).
    const fronted = frontingRefusal(this.state.routes, x.req.socket, x.route);
    if (!fronted) return undefined;
    this.reply(x.res, 421, 'text/plain; charset=utf-8', fronted);
    return { status: 421, via: 'sni-mismatch' };
  }

  private acmePing(x: Exchange): StageResult {
    if (x.path !== ACME_PING || x.route.kind === 'unknown') return undefined;
    this.reply(x.res, 200, 'text/plain', 'pong');
    return { status: 200, via: 'ping' };
  }

  private unserved(x: Exchange): StageResult {
    const route = x.route;
    if (route.kind === 'domain') {
      x.domain = route.domain;
      return undefined;
    }
    const html = route.kind === 'disabled' ? PAGES.disabled(x.host) : route.kind === 'not-bound' ? PAGES.notBound(x.host) : PAGES.unknown(x.host);
    this.page(x.res, 421, html);
    return { status: 421 };
  }

  /** IP lists first, for every path; ACME paths skip every other protection (validation comes from the CA's many vantage points). */
  private addressRules(x: Exchange): StageResult {
    const refusal = this.refusal(x.domain, x.host, x.client, x.acme);
    return refusal && this.refuse(x.res, x.domain.domain, refusal.reason, refusal.html);
  }

  /** Reserved for certificate issuance (HTTP-01 tokens); never passed to the backend. */
  private acmeToken(x: Exchange): StageResult {
    if (!x.acme) return undefined;
    const answer = this.state.challengeAnswer(x.domain.domain, x.path.slice(ACME_PREFIX.length));
    if (answer !== undefined) {
      this.reply(x.res, 200, 'text/plain', answer);
      return { status: 200, domain: x.domain.domain, via: 'acme' };
    }
    this.reply(x.res, 404, 'text/plain', 'no such challenge token');
    return { status: 404, domain: x.domain.domain, via: 'acme' };
  }

  private forceHttps(x: Exchange): StageResult {
    if (x.scheme !== 'http' || !x.domain.fhttps || !this.sni.certificateFor(x.host)) return undefined;
    const status = x.req.method === 'GET' || x.req.method === 'HEAD' ? 301 : 308;
    const port = this.httpsPort === 443 ? '' : `:${this.httpsPort}`;
    this.page(x.res, status, PAGES.moved(), { location: `https://${x.host}${port}${x.url}` });
    return { status, domain: x.domain.domain, via: 'fhttps' };
  }

  /** A body announced past the node's bound is refused before anything reads it. */
  private bodyBound(x: Exchange): StageResult {
    const length = Number(x.req.headers['content-length'] ?? 0);
    if (length <= this.options.maxBodyBytes) return undefined;
    this.page(x.res, 413, PAGES.tooLarge(this.options.maxBodyBytes), { connection: 'close' });
    return { status: 413, domain: x.domain.domain };
  }

  /**
   * The cache (cachelevel): a fresh hit is served here; otherwise what the proxy is to fill, if
   * anything. A fresh entry in memory is answered at once; only disk and fill locks are waited for.
   */
  private cached(x: Exchange): StageResult {
    const { req, domain } = x;
    // Keyed by the Host the backend receives (the port included): an answer built from it is only
    // ever served to requests that send the same.
    const decision = cacheDecision(domain.cachelevel, req.method ?? 'GET', x.scheme, String(req.headers.host ?? x.host), x.url, req.headers);
    if (!decision.cache) return undefined;
    x.cacheKey = decision.key;
    const found: Settled = this.cache.lookup(domain.domain, x.cacheKey, req.headers);
    if (found.fresh) return this.cacheFound(x, found);
    // A Range or HEAD on a miss passes through (the whole object is stored when asked for whole).
    const fills = req.method === 'GET' && req.headers.range === undefined;
    return this.cache.settle(domain.domain, x.cacheKey, req.headers, found, fills).then((settled) => this.cacheFound(x, settled));
  }

  /** A fresh entry served (HIT), or what the proxy is to know: EXPIRED or MISS, and the fill lock. */
  private cacheFound(x: Exchange, found: Settled): Outcome | undefined {
    const { req, res, domain } = x;
    if (found.entry && found.fresh) {
      // A small hit the bucket can pay for at once goes out directly.
      const sink = this.sink(domain);
      const direct = sink && found.entry.body !== undefined && this.bandwidth.tryTake(domain.domain, domain.bwlimit, found.entry.size);
      const status = this.cache.serve(found.entry, 'HIT', req, res, direct ? undefined : sink);
      return { status, cache: 'HIT', domain: domain.domain, bytes: found.entry.size };
    }
    x.cacheStatus = found.entry ? 'EXPIRED' : 'MISS';
    x.lock = found.lock;
    return undefined;
  }

  /** `bwlimit`: the domain's shared bucket paces what is written to the client. */
  private sink(domain: DomainState): Sink | undefined {
    return domain.bwlimit > 0 ? (target: ServerResponse) => this.bandwidth.throttle(domain.domain, domain.bwlimit, target) : undefined;
  }

  /**
   * The client's (and, on an address other accounts name too, the account's) share of the backend
   * address the request goes to (the pool is everyone's); a cache hit needs none.
   */
  private backendShare(x: Exchange): StageResult {
    const taken = this.backendShares.take(this.servedBackend(x.domain), x.domain.ownerId, x.client);
    if (taken.refused) {
      x.lock?.release();
      return this.refuseShare(x.res, x.domain.domain, x.host, taken.refused);
    }
    x.res.once('close', taken.release);
    x.release = taken.release;
    return undefined;
  }

  /** The backend address a domain's requests go to now (the failover while the backend is down and it is not), by its key. */
  private servedBackend(domain: DomainState): string {
    const failover = domain.failover;
    if (failover && this.health.isDownText(domain.backend) && !this.health.isDownText(failover)) return backendKey(failover);
    return backendKey(domain.backend);
  }

  private refuseShare(res: ServerResponse, domain: string, host: string, full: 'client' | 'account'): Outcome {
    return this.refuse(res, domain, full === 'client' ? 'backend-share' : 'backend-share-account', (ref) => PAGES.rateLimited(host, ref), 429, { 'retry-after': '1' });
  }

  /** The backend (or the failover while it is down); the cache filled on the way when the answer may be stored. */
  private async proxied(x: Exchange): Promise<Outcome> {
    const { req, res, domain, host, lock } = x;
    const request = { method: req.method ?? 'GET', url: x.url, headers: req.headers };
    let filling = false;
    const result: ProxyOutcome = await this.proxy.forward(req, res, domain, host, x.scheme, x.client, (status, headers) => {
      headers['x-cache'] = x.cacheStatus;
      if (!lock) return undefined;
      const verdict = storability(request, status, headers);
      if (!verdict.store) return undefined;
      filling = true;
      return this.cache.beginFill(domain.domain, x.cacheKey, req.headers, lock, { status, headers, ttlMs: verdict.ttlMs, vary: verdict.vary }, domain.cachelargefiles);
    }, this.sink(domain), x.inspectedBody, x.bodyWatch);
    x.release?.();
    if (!filling) lock?.release();
    const unreachable = result.via === 'unreachable' || result.via === 'refused';
    const upstream = result.via === 'timeout' ? 'timeout' : unreachable ? 'unreachable' : result.status >= 500 && result.status !== 501 && result.status !== 505 ? 'error-status' : 'ok';
    // A client that left (or was ended: 408) says nothing of the backend's health.
    if (result.via !== 'client-gone') {
      this.metrics.upstream(domain.domain, upstream, result.upstreamMs);
      this.uptime.requested(domain.domain, upstream, result.upstreamMs);
    }
    if (result.via === 'client-gone') return { status: res.headersSent ? res.statusCode : 499, cache: x.cacheStatus, via: result.via, domain: domain.domain };
    const tail = x.bodyWatch?.finding;
    if (tail) {
      // The rest of a body past the inspection limit matched (or would have, logging only).
      if (result.via !== 'body-refused') this.options.log.warn({ domain: domain.domain, client: x.client, rule: tail.rule, class: tail.class, where: tail.where }, 'waf: would refuse (log only)');
      else if (!res.headersSent) {
        this.clientLimits.refused(x.client);
        const refused = this.refuse(res, domain.domain, 'waf', (ref) => (bodyRefusal(tail) ? PAGES.bodyRefused(host, tail.where, ref) : PAGES.wafBlocked(host, ref)), tail.status);
        return { ...refused, via: `rule ${tail.rule} (${tail.class}) in ${tail.where}` };
      } else res.destroy();
    }
    if (unreachable && !res.headersSent) this.page(res, 502, PAGES.badGateway(host));
    else if (result.via === 'timeout' && !res.headersSent) this.page(res, 504, PAGES.gatewayTimeout(host));
    else if (result.via === 'too-large' && !res.headersSent) this.page(res, 413, PAGES.tooLarge(this.options.maxBodyBytes), { connection: 'close' });
    return { status: unreachable ? 502 : result.status, cache: x.cacheStatus, upstreamMs: result.upstreamMs, bytes: result.bytes, via: result.via, domain: domain.domain };
  }

  /**
   * A WebSocket handshake: a response bound to the raw socket lets it go through the same stages
   * as any request (a refusal is an ordinary page, then the connection closes); route() hands it
   * to carryUpgrade() where another request would reach the cache and the proxy.
   */
  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, scheme: Scheme): void {
    // A handshake pipelined behind a response still being sent: that response owns the socket,
    // and a second one cannot be bound to it. A client that pipelines an upgrade is closed.
    if ((socket as { _httpMessage?: unknown })._httpMessage) return void socket.destroy();
    try {
      this.upgradeOn(req, socket, head, scheme);
    } catch (error) {
      // Thrown from an event handler this would end the process; it ends the connection instead.
      this.options.log.error({ err: error }, 'edge: upgrade failed');
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
    (socket as Socket).setTimeout?.(this.options.clientTimeoutMs, () => socket.destroy());
    // Node before 24.9 has no shouldUpgradeCallback and hands over every Upgrade request: what is
    // no WebSocket handshake (its body unread) is refused rather than carried.
    if (!isWebSocketUpgrade(req)) {
      this.page(res, 400, PAGES.badRequest(), { connection: 'close' });
      return;
    }
    this.handle(req, res, scheme, { socket, head });
  }

  /** The last stage of an upgrade: the backend (or the failover while it is down), joined on 101. */
  private async carryUpgrade(x: Exchange, upgrade: UpgradeContext): Promise<Outcome> {
    const { req, res, domain, host, scheme, client } = x;
    const backend = parseBackend(domain.backend);
    const failover = domain.failover ? parseBackend(domain.failover) : undefined;
    const target = backend && this.health.serving(backend, failover);
    if (!target || backendRefusal(target, this.options.allowPrivateBackends)) {
      this.page(res, 502, PAGES.badGateway(host));
      return { status: 502, domain: domain.domain, via: target ? 'backend refused: not a public address' : 'unreachable' };
    }
    const taken = this.backendShares.take(backendKey(formatBackend(target)), domain.ownerId, client);
    if (taken.refused) return this.refuseShare(res, domain.domain, host, taken.refused);
    const release = taken.release;
    // An open WebSocket holds a backend connection: it counts in the client's share until it closes.
    upgrade.socket.once('close', release);
    const headers = forwardedRequestHeaders(req, client, scheme, host);
    const idleMs = this.options.upgradeIdleMs ?? 100_000;
    // From here the backend's answer is bounded by the response timeout (proxyUpgrade), not the client's silence.
    (upgrade.socket as Socket).setTimeout?.(0);
    let result: ProxyOutcome;
    try {
      result = await proxyUpgrade(req, res, upgrade.socket, upgrade.head, target, headers, { connectTimeoutMs: this.options.connectTimeoutMs, responseTimeoutMs: this.options.responseTimeoutMs, idleMs });
    } finally {
      if (upgrade.socket.destroyed) release();
    }
    if (result.status !== 101) release();
    if (!res.headersSent && result.via === 'unreachable' && result.status === 502) this.page(res, 502, PAGES.badGateway(host));
    else if (!res.headersSent && result.via === 'timeout') this.page(res, 504, PAGES.gatewayTimeout(host));
    return { status: result.status, domain: domain.domain, upstreamMs: result.upstreamMs, via: target === failover ? 'failover' : result.via };
  }

  private listenOne(server: Server | HttpsServer, port: number, host: string, reusePort: boolean): Promise<number> {
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen({ port, host, reusePort }, () => {
        server.off('error', reject);
        resolve((server.address() as { port: number }).port);
      });
    });
  }

  /** Starts both listeners; resolves with the ports they got. `reusePort`: SO_REUSEPORT (the edge role's workers each listen). */
  async listen(host: string, httpPort: number, httpsPort: number, options: { reusePort?: boolean } = {}): Promise<{ http: number; https: number }> {
    const reusePort = options.reusePort ?? false;
    const http = await this.listenOne(this.http, httpPort, host, reusePort).catch((error: NodeJS.ErrnoException) => {
      throw Object.assign(new Error(`cannot listen on ${host}:${httpPort} for HTTP (${error.code ?? error.message})`), { code: error.code });
    });
    const https = await this.listenOne(this.https, httpsPort, host, reusePort).catch((error: NodeJS.ErrnoException) => {
      throw Object.assign(new Error(`cannot listen on ${host}:${httpsPort} for HTTPS (${error.code ?? error.message})`), { code: error.code });
    });
    this.httpsPort = https;
    return { http, https };
  }

  /**
   * Serves connections accepted by another process (the edge role's primary) instead of
   * listening: `httpsPort` is where HTTPS redirects point.
   */
  serveHandedOver(httpsPort: number): void {
    this.httpsPort = httpsPort;
    // A server that never listened does not track its connections (the header timeout's checks,
    // closeAllConnections): that starts on 'listening'.
    for (const server of [this.http, this.https]) server.emit('listening');
  }

  /** TLS session ticket keys (48 bytes) shared by the node's processes: a session resumes in any of them. */
  setTicketKeys(keys: Buffer): void {
    this.https.setTicketKeys(keys);
  }

  /** A connection handed over (serveHandedOver): from here it is as if this process had accepted it. */
  accept(socket: Socket, scheme: Scheme): void {
    (scheme === 'https' ? this.https : this.http).emit('connection', socket);
  }

  renderMetrics(extra: Record<string, number> = {}): string {
    return this.metrics.render({ palisade_edge_cache_entries: this.cache.entries, palisade_edge_cache_memory_bytes: this.cache.memoryBytes, palisade_edge_domains: this.state.routes.size, palisade_edge_body_buffer_bytes: this.bodyBuffer.reserved, palisade_log_lines_dropped: droppedLogLines(), ...extra });
  }

  async close(): Promise<void> {
    for (const server of [this.http, this.https]) server.closeAllConnections();
    for (const socket of this.upgraded) socket.destroy();
    // Also a server that never listened (serveHandedOver): close() stops its connection checks.
    await Promise.all([this.http, this.https].map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
    this.proxy.close();
    this.accessLog.flush();
    this.health.stop();
    this.bandwidth.stop();
  }
}

/** A protocol finding about the body itself (413 too large, 415 type or charset), not an attack in it. */
function bodyRefusal(finding: { status: number; class: string }): boolean {
  return finding.class === 'protocol' && (finding.status === 413 || finding.status === 415);
}
