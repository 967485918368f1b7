// The edge's parts, built once and shared by the stages: what each stage holds between requests
// (the cache, the health of backends, the IP lists, the limits' books). Nothing per request.
import type { Logger } from 'pino';
import { BackendHealth } from '../backend-health.ts';
import { UptimeRecorder } from '../uptime-recorder.ts';
import { EdgeCache, type EdgeCacheOptions } from '../cache/edge-cache.ts';
import { AccessLog } from '../access-log.ts';
import { EdgeMetrics } from '../edge-metrics.ts';
import type { EdgeState } from '../edge-state.ts';
import { Proxy, type ProxyOptions } from '../proxy.ts';
import { selfSignedCertificate } from '../tls/self-signed.ts';
import type { Located } from '../../geo/locator.ts';
import { ClientAddress } from '../protect/client-address.ts';
import { IpLists } from '../protect/ip-lists.ts';
import { BandwidthLimits, type BandwidthShare } from '../protect/bandwidth.ts';
import { Challenges, type ChallengeOptions } from '../protect/challenge.ts';
import { ClientLimits, type ClientLimitOptions } from '../waf/client-limits.ts';
import { IpRanges } from '../protect/ip-ranges.ts';
import { SniContexts } from '../tls/sni-contexts.ts';
import { ConnectionLimits, DEFAULT_CONNECTION_LIMITS, type ConnectionLimitOptions } from '../protect/connection-limits.ts';
import type { BodyPaceOptions } from '../protect/body-pace.ts';
import { BackendShares, DEFAULT_BACKEND_SHARE } from '../protect/backend-shares.ts';
import { BackendTenants } from '../backend-tenants.ts';
import { BodyBufferBudget, DEFAULT_BODY_BUFFER, type BodyBufferOptions } from '../protect/body-buffer-budget.ts';

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

export interface EdgeParts {
  readonly state: EdgeState;
  readonly options: EdgeServerOptions;
  readonly log: Logger;
  readonly metrics: EdgeMetrics;
  readonly accessLog: AccessLog;
  readonly health: BackendHealth;
  /** What is measured of the backends until it is reported (see uptime-reporter.ts). */
  readonly uptime: UptimeRecorder;
  readonly proxy: Proxy;
  readonly cache: EdgeCache;
  readonly sni: SniContexts;
  /** The node's default certificate (a handshake naming no domain of ours). */
  readonly fallbackCertificate: { cert: string; key: string };
  readonly ipLists: IpLists;
  readonly bandwidth: BandwidthLimits;
  readonly challenges: Challenges;
  readonly clientLimits: ClientLimits;
  readonly clients: ClientAddress;
  readonly connections: ConnectionLimits;
  readonly backendShares: BackendShares;
  readonly backendTenants: BackendTenants;
  readonly bodyBuffer: BodyBufferBudget;
  /** The port HTTPS redirects point to (set once the listeners have theirs). */
  httpsPort: number;
}

export function buildParts(state: EdgeState, options: EdgeServerOptions): EdgeParts {
  const health = new BackendHealth(options.log, undefined, options.allowPrivateBackends);
  const uptime = new UptimeRecorder(state.routes, health);
  health.observer = uptime;
  if (options.activeChecks !== false) health.start(() => state.routes.backends(), options.checkIntervalMs);
  const cache = new EdgeCache(options.cache);
  state.onDomainChange((name) => cache.dropDomain(name));
  const trusted = IpRanges.compile(options.trustedProxies);
  const backendTenants = BackendTenants.following(state);
  const shareOptions = { ...DEFAULT_BACKEND_SHARE, perClient: options.backendSharePerClient ?? DEFAULT_BACKEND_SHARE.perClient, perAccount: options.backendSharePerAccount ?? DEFAULT_BACKEND_SHARE.perAccount };
  const fallbackCertificate = selfSignedCertificate(`palisade edge ${options.nodeName}`);
  return {
    state,
    options,
    log: options.log,
    metrics: new EdgeMetrics(),
    accessLog: new AccessLog(options.log),
    health,
    uptime,
    proxy: new Proxy(options, health),
    cache,
    sni: new SniContexts(state, fallbackCertificate),
    fallbackCertificate,
    ipLists: new IpLists(state, options.log),
    bandwidth: new BandwidthLimits(options.bandwidthShare),
    challenges: new Challenges(options.challenge),
    clientLimits: new ClientLimits(options.clientLimits),
    clients: new ClientAddress(trusted),
    connections: new ConnectionLimits(options.connections ?? DEFAULT_CONNECTION_LIMITS, trusted),
    backendShares: new BackendShares(shareOptions, (backend) => backendTenants.accounts(backend) > 1),
    backendTenants,
    bodyBuffer: new BodyBufferBudget(options.bodyBuffer ?? DEFAULT_BODY_BUFFER),
    httpsPort: 443,
  };
}
