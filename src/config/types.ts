// The configuration every role is handed: what loadConfig (load.ts) builds from the environment.
import type { TcpLimits } from '../dns/server/tcp-limits.ts';
import type { JournalLimits } from '../dns/transfer/journal.ts';
import type { RedisConnection } from '../store/redis/connection.ts';

export interface CertConfig {
  /** The ACME directory URL; unset = no issuance (tasks fail saying so). */
  directoryUrl?: string;
  email?: string;
  /**
   * The CA's issuer domain as CAA records name it (RFC 8659 §4.2: `0 issue "letsencrypt.org"`):
   * an order CAA forbids it is never placed. Default: the registrable domain of the directory's
   * host (acme-v02.api.letsencrypt.org → letsencrypt.org).
   */
  caaIdentity?: string;
  /** Extra CA certificates (PEM) trusted for the directory's HTTPS. */
  caPem?: string;
  /** PALISADE_SECRET_KEY: seals private keys at rest. */
  secretKey?: Buffer;
  /** DNS server (host:port) asked before ordering whether names reach our edges; unset = the system's. */
  resolver?: string;
  /** Our name servers (address:port) on which a DNS-01 TXT must be seen before the CA is told; empty = the serve role's own, or PALISADE_NS1/NS2 on port 53. */
  checkNameservers: string[];
  /** The port edges answer plain HTTP on as the CA reaches them (HTTP-01 is checked there); unset = 80, or the serve role's own edge. */
  httpPort?: number;
  /** How often certificates are looked at for renewal. */
  renewCheckMs: number;
  /** First retry delay of a failed issuance (doubles, with jitter, up to 6 h). */
  retryBaseMs: number;
  /** Attempts before a task is failed for good. */
  maxAttempts: number;
  /** The CA's validation and the TXT's appearance are waited for at most this long. */
  challengeTimeoutMs: number;
  /** acme-client's polling of pending orders starts at this delay. */
  pollMinMs: number;
  /** ACME orders one account's domains may take per hour (the CA's limits are the service's, shared). */
  ordersPerUserHour: number;
}

export interface NotifyConfig {
  /** First retry delay of a failed webhook delivery (doubles, with jitter). */
  retryBaseMs: number;
  /** Attempts before a delivery is failed for good. */
  maxAttempts: number;
  /** A receiver has this long to answer. */
  timeoutMs: number;
  /** Webhooks may point at loopback or private addresses (tests, a single machine). */
  allowPrivate: boolean;
  /** How often every domain is looked at for the conditions a customer is told of. */
  sweepMs: number;
  /** How often the monitor's short pass runs (unhealthy domains, claims and DNSSEC parents due). */
  watchMs: number;
  /** The resolver (address:port) asked whether a domain's parent delegates to our name servers; unset: not checked. */
  resolver?: string;
  /** A certificate this near its end is told of (certificate.expiring). */
  expiringMs: number;
}

/** Issue 26: a domain is a claim until proven (see ../docs/ownership.md). */
export interface OwnershipConfig {
  /** `required`: unproven claims are not served, routed or certified; `off`: every domain is proven at once (single-tenant), first come first served. */
  proof: 'required' | 'off';
  /** The name servers accounts are given pairs of (all answering on the same servers); at least two. */
  pool: string[];
  /** First re-check of a pending claim after this long; each further one waits twice as long, up to recheckMaxMs. */
  recheckMs: number;
  recheckMaxMs: number;
  /** A proven claim whose delegation or token has been seen gone this long loses its proof. */
  graceMs: number;
  /** Pending claims looked at per pass of the monitor (every 5 s), at most. */
  checksPerPass: number;
  /** The longest a validating resolver is taken to keep a record: bounds a DNSSEC key rollover's waits on our TTLs. */
  resolverCacheMaxSeconds: number;
  /**
   * `parent`: a delegation is asked of the parent zone's servers, found through the resolver (what
   * the registry says); `resolver`: the resolver's NS answer is taken as the delegation (a resolver
   * that reports the registry's view).
   */
  delegationCheck: 'parent' | 'resolver';
  /** The port parent zones' servers are asked on (53; another only in a test lab standing for the registry). */
  parentPort: number;
}

/** Token buckets (rate per second, burst); null = no limit. */
export interface ApiRateLimits {
  /** Per client address (IPv6: per /64): requests without credentials and failed authentications. */
  address: { rate: number; burst: number } | null;
  /** Per API key: authenticated requests. */
  key: { rate: number; burst: number } | null;
  /** Per account: the authenticated requests of all its keys together. */
  account: { rate: number; burst: number } | null;
}

export interface Config {
  dataDir: string;
  /** Set: the Redis store at this URL; unset: the embedded store in dataDir (or Sentinels: `redis`). */
  redisUrl?: string;
  redisPrefix: string;
  /**
   * Set (REDIS_URL or PALISADE_REDIS_SENTINELS): the Redis store, where and how to reach it;
   * unset: the embedded store.
   */
  redis?: RedisConnection;
  api: {
    host: string;
    port: number;
    bodyLimit: number;
    rateLimit: ApiRateLimits;
    /** PALISADE_METRICS_TOKEN: set, /metrics answers only `Authorization: Bearer <it>`; unset, only loopback clients. */
    metricsToken?: string;
    /** PEM files the API serves HTTPS with (both or neither); read again when they change. */
    tls?: { certFile: string; keyFile: string };
    /** Plain HTTP on an address that is not loopback (a TLS terminator in front does TLS). */
    plainHttp: boolean;
    /** Proxies whose X-Forwarded-For names the client (addresses or prefixes). */
    trustedProxies: string[];
  };
  dns: {
    host: string;
    port: number;
    cache: boolean;
    /** Bounds of the DNSSEC signature cache, per DNS process. */
    signatureCache: { entries: number; bytes: number };
    tcp: TcpLimits;
    /** Response-rate limiting, and the bounds on fresh DNSSEC signatures per zone and client network a second. */
    rateLimit: { rate: number; slip: number; signZoneRate: number; signClientRate: number };
    cookieSecret?: Buffer;
    /** The catalog zone's name offered to secondaries (RFC 9432); "" = none. */
    catalogZone: string;
    /** This name server's NSID (RFC 5001), answered to queries that ask; "" = none. */
    nsid: string;
    /** Bytes of IXFR history (the differences secondaries ask for) kept per zone, per account and in all, by each DNS process. */
    ixfrJournal: JournalLimits;
    /** PALISADE_DNS_NOTIFY_SOURCE: NOTIFY's source address per family (at most one each); empty: the listening address, when it is one. */
    notifySource: string[];
    /** PALISADE_DNS_TRANSFERS_PER_SECONDARY: zone transfers one secondary may have running at once; more wait their turn. */
    transfersPerSecondary: number;
  };
  /** A MaxMind DB file (GeoIP2/GeoLite2 Country or City, or an ISO-code-only country DB; may be gzipped). */
  geoipDb?: string;
  /** The dns role's link to the API's change feed. */
  sync: {
    url?: string;
    token?: string;
    secret?: string;
    host: string;
    port: number;
    pollMs: number;
    maxLagMs: number;
    /** PALISADE_SYNC_CA_FILE: CA certificates (PEM) trusted for the API's HTTPS besides the system's. */
    caPem?: string;
  };
  nameservers: [string, string];
  ownership: OwnershipConfig;
  hostmaster: string;
  /** The edge (reverse proxy) of the serve role. */
  edge: {
    host: string;
    httpPort: number;
    /** 0 = any free port. */
    httpsPort: number;
    /** The registered node an `edge` process serves as (the serve role's edge stands for every node). */
    node?: number;
    nodeName: string;
    connectTimeoutMs: number;
    responseTimeoutMs: number;
    checkIntervalMs: number;
    /** How often measures and verdicts are reported to the API (and soon after a backend goes down or comes back). */
    reportMs: number;
    /** Largest request body passed on (413 beyond). */
    maxBodyBytes: number;
    /** A client that sends nothing for this long while its request is incomplete gets 408. */
    clientTimeoutMs: number;
    /** The memory cache's bound. */
    cacheMemoryBytes: number;
    /** Where large files are cached (cachelargefiles). */
    cacheDir: string;
    /** Peers whose X-Forwarded-For names the client (addresses or prefixes). */
    trustedProxies: string[];
    /** baseprotection's per-client limits. */
    clientLimits: { rate: number; burst: number; banAfter: number; banWindowMs: number; banMs: number };
    /** The JS challenge: leading hex zeros of the proof of work, clearance lifetime, signing key. */
    challenge: { difficulty: number; cookieMinutes: number; secret?: Buffer };
    /** Open connections in all and per client network (/32, /64). */
    maxConnections: number;
    maxConnectionsPerClient: number;
    /** A request body's deadline: `bodyGraceMs`, a second more per `bodyMinRate` bytes received (0: no pace), never past `bodyMaxMs` (0: no maximum). */
    bodyMinRate: number;
    bodyGraceMs: number;
    bodyMaxMs: number;
    /** Requests of one client network in flight to one backend address at once, across domains. */
    backendSharePerClient: number;
    /** Requests of one account's domains in flight to a backend address other accounts name too. */
    backendSharePerAccount: number;
    /** Bytes of request bodies baseprotection may hold at once on the node, and per client network (/32, /64). */
    bodyBufferBytes: number;
    bodyBufferPerClientBytes: number;
    /** An upgraded (WebSocket) connection silent both ways this long is closed. */
    upgradeIdleMs: number;
    /** Worker processes of the edge role (1: one process, as before workers existed). */
    workers: number;
    /**
     * How the edge role's workers get connections: `client` (the primary accepts and hands each
     * to the worker its client address hashes to: per-client limits exact) or `kernel` (each
     * worker listens with SO_REUSEPORT: per-client limits per worker).
     */
    workerBalance: 'client' | 'kernel';
  };
  /** Certificates: the ACME CA, the key that seals private keys, and the issuing work's pace. */
  certs: CertConfig;
  /** Events, webhooks and the conditions looked for. */
  notify: NotifyConfig;
  /** Backends may be loopback or private addresses (tests, a single machine). */
  allowPrivateBackends: boolean;
  /** The operator's own zones: only accounts marked for it may register them or names under them. */
  reservedZones: string[];
  logLevel: string;
  changeRetention: number;
}
