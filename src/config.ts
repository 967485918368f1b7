// Environment → typed, validated configuration. Every wrong value is reported at once with the
// variable's name, so an operator fixes them all in one go.
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { DEFAULT_TCP_LIMITS, type TcpLimits } from './dns/server/tcp.ts';
import { JOURNAL_LIMITS, type JournalLimits } from './dns/transfer/journal.ts';
import { BUNDLED_GEOIP_DB } from './geo/default-db.ts';
import { canonicalIpOrPrefix } from './model/ip.ts';
import { normaliseDomainName } from './model/names.ts';
import { registrableDomainOf } from './model/registrable.ts';
import { parseSentinels, type RedisConnection } from './store/redis/connection.ts';

/** Response-rate limiting's defaults: 100 responses a second per client /24 (/56) and response category, every 2nd dropped one slipped as TC=1 (see docs/dns.md). */
export const DNS_RRL_DEFAULTS = { rate: 100, slip: 2 } as const;

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

/** PALISADE_ACME_CAA_IDENTITY, or the registrable domain of PALISADE_ACME_DIRECTORY's host. */
function caaIdentity(env: NodeJS.ProcessEnv, problems: string[]): string | undefined {
  const given = env.PALISADE_ACME_CAA_IDENTITY;
  if (given !== undefined && given !== '') {
    const name = normaliseDomainName(given);
    if (name.ok) return name.value;
    problems.push(`PALISADE_ACME_CAA_IDENTITY=${given}: must be the CA's issuer domain name as CAA records name it (e.g. letsencrypt.org): ${name.message}`);
    return undefined;
  }
  const host = /^https?:\/\/(\[[^\]]+\]|[^/:?#]+)/.exec(env.PALISADE_ACME_DIRECTORY ?? '')?.[1]?.toLowerCase();
  return host === undefined ? undefined : isIP(host) || host.startsWith('[') ? host : registrableDomainOf(host);
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
  /**
   * `parent`: a delegation is asked of the parent zone's servers, found through the resolver (what
   * the registry says); `resolver`: the resolver's NS answer is taken as the delegation (a resolver
   * that reports the registry's view).
   */
  delegationCheck: 'parent' | 'resolver';
  /** The port parent zones' servers are asked on (53; another only in a test lab standing for the registry). */
  parentPort: number;
}

/** address:port pairs (IPv6 as [addr]:port). */
function hostPorts(name: string, text: string | undefined, problems: string[]): string[] {
  if (!text) return [];
  const out: string[] = [];
  for (const entry of text.split(',').map((e) => e.trim()).filter(Boolean)) {
    const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s]+)):(\d{1,5})$/.exec(entry);
    if (!m || Number(m[3]) > 65535 || isIP(m[1] ?? m[2]!) === 0) problems.push(`${name}: "${entry}" must be address:port ([IPv6]:port)`);
    else out.push(entry);
  }
  return out;
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
    tcp: TcpLimits;
    rateLimit: { rate: number; slip: number };
    cookieSecret?: Buffer;
    /** The catalog zone's name offered to secondaries (RFC 9432); "" = none. */
    catalogZone: string;
    /** This name server's NSID (RFC 5001), answered to queries that ask; "" = none. */
    nsid: string;
    /** Bytes of IXFR history (the differences secondaries ask for) kept per zone, per account and in all, by each DNS process. */
    ixfrJournal: JournalLimits;
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

/**
 * PALISADE_RESERVED_ZONES: comma-separated zones; unset, the registrable domains of the name
 * servers' and hostmaster's names; empty ("") reserves nothing.
 */
function reservedZones(text: string | undefined, ownNames: string[], problems: string[]): string[] {
  if (text === undefined) return [...new Set(ownNames.map(registrableDomainOf))];
  const zones: string[] = [];
  for (const entry of text.split(',').map((e) => e.trim()).filter((e) => e !== '')) {
    const checked = normaliseDomainName(entry);
    if (checked.ok) zones.push(checked.value);
    else problems.push(`PALISADE_RESERVED_ZONES: "${entry}" ${checked.message}`);
  }
  return zones;
}

/** PALISADE_NAMESERVER_POOL: comma-separated names; unset, the default pair (PALISADE_NS1, PALISADE_NS2). */
function nameserverPool(text: string | undefined, pair: [string, string], problems: string[]): string[] {
  if (text === undefined || text.trim() === '') return [...pair];
  const names: string[] = [];
  for (const entry of text.split(',').map((e) => e.trim()).filter((e) => e !== '')) {
    const checked = normaliseDomainName(entry);
    if (!checked.ok) problems.push(`PALISADE_NAMESERVER_POOL: "${entry}" ${checked.message}`);
    else if (!names.includes(checked.value)) names.push(checked.value);
  }
  if (names.length < 2) problems.push('PALISADE_NAMESERVER_POOL: must name at least two name servers');
  return names;
}

/** At least 16 bytes as hex digits (an HMAC key), or undefined when unset. */
function longHexSecret(name: string, text: string | undefined, problems: string[]): Buffer | undefined {
  if (text === undefined || text === '') return undefined;
  if (!/^(?:[0-9a-fA-F]{2}){16,64}$/.test(text)) {
    problems.push(`${name}: must be 32 to 128 hex digits (e.g. from \`openssl rand -hex 32\`)`);
    return undefined;
  }
  return Buffer.from(text, 'hex');
}

/** 16 bytes as 32 hex digits (RFC 9018's SipHash key), or undefined when unset. */
function hexSecret(name: string, text: string | undefined, problems: string[]): Buffer | undefined {
  if (text === undefined || text === '') return undefined;
  if (!/^[0-9a-fA-F]{32}$/.test(text)) {
    problems.push(`${name}: must be 32 hex digits (16 random bytes, e.g. from \`openssl rand -hex 16\`)`);
    return undefined;
  }
  return Buffer.from(text, 'hex');
}

/** A name server identifier (RFC 5001): visible ASCII, at most 128 octets; unset or "" = none. */
function nsid(text: string | undefined, problems: string[]): string {
  if (text === undefined || text === '') return '';
  if (!/^[\x21-\x7e]{1,128}$/.test(text)) problems.push('PALISADE_DNS_NSID: must be 1–128 visible ASCII characters (e.g. the instance name: ns1-fra)');
  return text;
}

/** A file's text (a path given by the operator), or undefined when unset. */
/** The API's certificate and key files: both or neither, each readable now. */
function tlsFiles(cert: string | undefined, key: string | undefined, problems: string[]): { certFile: string; keyFile: string } | undefined {
  if (!cert && !key) return undefined;
  if (!cert || !key) {
    problems.push('PALISADE_API_TLS_CERT and PALISADE_API_TLS_KEY: set both (a PEM certificate chain and its private key) or neither');
    return undefined;
  }
  const read = [fileText('PALISADE_API_TLS_CERT', cert, problems), fileText('PALISADE_API_TLS_KEY', key, problems)];
  return read.every((t) => t !== undefined) ? { certFile: resolve(cert), keyFile: resolve(key) } : undefined;
}

function fileText(name: string, path: string | undefined, problems: string[]): string | undefined {
  if (!path) return undefined;
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    problems.push(`${name}=${path}: cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    return undefined;
  }
}

/** A rate of 0 turns the limit off. */
const bucket = (rate: number, burst: number) => (rate === 0 ? null : { rate, burst });

/** An operator's bearer token: 16 to 256 visible ASCII characters, or undefined when unset. */
function bearerToken(name: string, text: string | undefined, problems: string[]): string | undefined {
  if (text === undefined || text === '') return undefined;
  if (!/^[\x21-\x7e]{16,256}$/.test(text)) {
    problems.push(`${name}: must be 16 to 256 visible ASCII characters, no spaces (e.g. from \`openssl rand -hex 32\`)`);
    return undefined;
  }
  return text;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
  }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];
  const str = (name: string, fallback: string) => env[name] ?? fallback;
  const int = (name: string, fallback: number, min: number, max: number) => {
    const text = env[name];
    if (text === undefined) return fallback;
    const n = /^\d+$/.test(text) ? Number(text) : NaN;
    if (!(n >= min && n <= max)) problems.push(`${name}=${text}: must be an integer from ${min} to ${max}`);
    return n;
  };
  const host = (name: string, fallback: string) => {
    const value = str(name, fallback);
    if (isIP(value) === 0 && value !== 'localhost') problems.push(`${name}=${value}: must be an IP address to listen on`);
    return value;
  };
  const bool = (name: string, fallback: boolean) => {
    const text = env[name];
    if (text === undefined) return fallback;
    if (!['true', 'false', '1', '0', 'on', 'off'].includes(text)) problems.push(`${name}=${text}: must be true or false`);
    return ['true', '1', 'on'].includes(text);
  };
  const oneOf = <T extends string>(name: string, values: readonly T[], fallback: T): T => {
    const text = env[name];
    if (text === undefined || text === '') return fallback;
    if (!(values as readonly string[]).includes(text)) problems.push(`${name}=${text}: must be one of ${values.join(', ')}`);
    return text as T;
  };
  const domain = (name: string, fallback: string) => {
    const value = str(name, fallback);
    const checked = normaliseDomainName(value);
    if (!checked.ok) problems.push(`${name}=${value}: ${checked.message}`);
    return checked.ok ? checked.value : value;
  };

  /** Comma-separated addresses or CIDR prefixes. */
  const prefixes = (name: string): string[] => {
    const out: string[] = [];
    for (const entry of (env[name] ?? '').split(',').map((e) => e.trim()).filter(Boolean)) {
      const checked = canonicalIpOrPrefix(entry);
      if ('value' in checked) out.push(checked.value);
      else problems.push(`${name}: ${checked.error}`);
    }
    return out;
  };
  /** IXFR history bounds: each at least 64 KiB (a few changes), a zone's no more than its account's, an account's no more than all. */
  const ixfrJournal = (): JournalLimits => {
    const zoneBytes = int('PALISADE_DNS_IXFR_ZONE_BYTES', JOURNAL_LIMITS.zoneBytes, 65_536, 2 ** 40);
    const accountBytes = int('PALISADE_DNS_IXFR_ACCOUNT_BYTES', JOURNAL_LIMITS.accountBytes, 65_536, 2 ** 40);
    const totalBytes = int('PALISADE_DNS_IXFR_JOURNAL_BYTES', JOURNAL_LIMITS.totalBytes, 65_536, 2 ** 40);
    if (zoneBytes > accountBytes) problems.push(`PALISADE_DNS_IXFR_ZONE_BYTES=${zoneBytes}: must not exceed PALISADE_DNS_IXFR_ACCOUNT_BYTES (${accountBytes})`);
    if (accountBytes > totalBytes) problems.push(`PALISADE_DNS_IXFR_ACCOUNT_BYTES=${accountBytes}: must not exceed PALISADE_DNS_IXFR_JOURNAL_BYTES (${totalBytes})`);
    return { zoneBytes, accountBytes, totalBytes };
  };
  const dataDir = resolve(str('PALISADE_DATA_DIR', 'data'));
  const keyRate = int('PALISADE_API_RATE_PER_KEY', 100, 0, 1_000_000);
  const keyBurst = int('PALISADE_API_BURST_PER_KEY', 300, 1, 1_000_000);
  const config: Config = {
    dataDir,
    redisUrl: env.REDIS_URL === undefined || env.REDIS_URL === '' ? undefined : env.REDIS_URL,
    redisPrefix: str('PALISADE_REDIS_PREFIX', '{palisade}:'),
    // Unset: the bundled database; "off": none (geo-targeted records answer with their general set).
    geoipDb: !env.PALISADE_GEOIP_DB ? BUNDLED_GEOIP_DB : env.PALISADE_GEOIP_DB === 'off' ? undefined : resolve(env.PALISADE_GEOIP_DB),
    sync: {
      url: env.PALISADE_SYNC_URL?.replace(/\/+$/, ''),
      token: env.PALISADE_SYNC_TOKEN,
      secret: env.PALISADE_SYNC_SECRET,
      host: host('PALISADE_SYNC_HOST', '127.0.0.1'),
      port: int('PALISADE_SYNC_PORT', 5380, 0, 65535),
      pollMs: int('PALISADE_SYNC_POLL_MS', 2000, 100, 600_000),
      maxLagMs: int('PALISADE_SYNC_MAX_LAG_MS', 30_000, 1000, 86_400_000),
      caPem: fileText('PALISADE_SYNC_CA_FILE', env.PALISADE_SYNC_CA_FILE, problems),
    },
    api: {
      host: host('PALISADE_API_HOST', '127.0.0.1'),
      port: int('PALISADE_API_PORT', 8080, 0, 65535),
      bodyLimit: int('PALISADE_API_BODY_LIMIT', 1_048_576, 1024, 64 * 1_048_576),
      rateLimit: {
        address: bucket(int('PALISADE_API_RATE_PER_ADDRESS', 2, 0, 1_000_000), int('PALISADE_API_BURST_PER_ADDRESS', 30, 1, 1_000_000)),
        key: bucket(keyRate, keyBurst),
        // Unset: twice one key's (so one runaway key leaves the account's other keys half), and off
        // when the per-key limit is off.
        account: bucket(int('PALISADE_API_RATE_PER_ACCOUNT', 2 * keyRate, 0, 2_000_000), int('PALISADE_API_BURST_PER_ACCOUNT', 2 * keyBurst, 1, 2_000_000)),
      },
      metricsToken: bearerToken('PALISADE_METRICS_TOKEN', env.PALISADE_METRICS_TOKEN, problems),
      tls: tlsFiles(env.PALISADE_API_TLS_CERT, env.PALISADE_API_TLS_KEY, problems),
      plainHttp: bool('PALISADE_API_PLAIN_HTTP', false),
      trustedProxies: prefixes('PALISADE_API_TRUSTED_PROXIES'),
    },
    dns: {
      host: host('PALISADE_DNS_HOST', '127.0.0.1'),
      port: int('PALISADE_DNS_PORT', 5300, 0, 65535),
      cache: bool('PALISADE_DNS_CACHE', true),
      rateLimit: { rate: int('PALISADE_DNS_RRL_RATE', DNS_RRL_DEFAULTS.rate, 0, 1_000_000), slip: int('PALISADE_DNS_RRL_SLIP', DNS_RRL_DEFAULTS.slip, 0, 100) },
      cookieSecret: hexSecret('PALISADE_DNS_COOKIE_SECRET', env.PALISADE_DNS_COOKIE_SECRET, problems),
      catalogZone: env.PALISADE_DNS_CATALOG_ZONE === '' ? '' : domain('PALISADE_DNS_CATALOG_ZONE', 'catalog.palisade.invalid'),
      nsid: nsid(env.PALISADE_DNS_NSID, problems),
      ixfrJournal: ixfrJournal(),
      tcp: {
        idleTimeoutMs: int('PALISADE_DNS_TCP_IDLE_MS', DEFAULT_TCP_LIMITS.idleTimeoutMs, 100, 600_000),
        maxLifetimeMs: int('PALISADE_DNS_TCP_LIFETIME_MS', DEFAULT_TCP_LIMITS.maxLifetimeMs, 1000, 86_400_000),
        maxConnections: int('PALISADE_DNS_TCP_MAX_CONNECTIONS', DEFAULT_TCP_LIMITS.maxConnections, 1, 1_000_000),
        maxConnectionsPerClient: int('PALISADE_DNS_TCP_MAX_PER_CLIENT', DEFAULT_TCP_LIMITS.maxConnectionsPerClient, 1, 1_000_000),
        prefixV4: int('PALISADE_DNS_TCP_CLIENT_PREFIX_V4', DEFAULT_TCP_LIMITS.prefixV4, 8, 32),
        prefixV6: int('PALISADE_DNS_TCP_CLIENT_PREFIX_V6', DEFAULT_TCP_LIMITS.prefixV6, 16, 128),
        maxOutputBytes: int('PALISADE_DNS_TCP_MAX_OUTPUT_BYTES', DEFAULT_TCP_LIMITS.maxOutputBytes, 65_537, 64 * 1_048_576),
        outputBudgetBytes: int('PALISADE_DNS_TCP_OUTPUT_BUDGET_BYTES', DEFAULT_TCP_LIMITS.outputBudgetBytes, 1_048_576, 4096 * 1_048_576),
      },
    },
    nameservers: [domain('PALISADE_NS1', 'ns1.palisade.example.net'), domain('PALISADE_NS2', 'ns2.palisade.example.net')],
    hostmaster: domain('PALISADE_HOSTMASTER', 'hostmaster.palisade.example.net'),
    ownership: {
      proof: env.PALISADE_OWNERSHIP_PROOF === 'off' ? 'off' : 'required',
      pool: [],
      recheckMs: int('PALISADE_OWNERSHIP_RECHECK_SECONDS', 60, 1, 86_400) * 1000,
      recheckMaxMs: int('PALISADE_OWNERSHIP_RECHECK_MAX_SECONDS', 21_600, 1, 30 * 86_400) * 1000,
      graceMs: int('PALISADE_OWNERSHIP_GRACE_SECONDS', 259_200, 1, 365 * 86_400) * 1000,
      checksPerPass: int('PALISADE_OWNERSHIP_CHECKS_PER_PASS', 50, 1, 10_000),
      delegationCheck: env.PALISADE_DELEGATION_CHECK === 'resolver' ? 'resolver' : 'parent',
      parentPort: int('PALISADE_DELEGATION_PARENT_PORT', 53, 1, 65535),
    },
    edge: {
      host: host('PALISADE_EDGE_HOST', '127.0.0.1'),
      httpPort: int('PALISADE_EDGE_HTTP_PORT', 8081, 0, 65535),
      httpsPort: int('PALISADE_EDGE_HTTPS_PORT', 8443, 0, 65535),
      node: env.PALISADE_EDGE_NODE === undefined || env.PALISADE_EDGE_NODE === '' ? undefined : int('PALISADE_EDGE_NODE', 0, 1, 2_147_483_647),
      nodeName: str('PALISADE_EDGE_NAME', 'local'),
      maxBodyBytes: int('PALISADE_EDGE_MAX_BODY_BYTES', 1024 * 1_048_576, 0, Number.MAX_SAFE_INTEGER),
      clientTimeoutMs: int('PALISADE_EDGE_CLIENT_TIMEOUT_MS', 30_000, 100, 3_600_000),
      cacheMemoryBytes: int('PALISADE_EDGE_CACHE_MEMORY_MB', 256, 1, 1_048_576) * 1_048_576,
      cacheDir: resolve(str('PALISADE_EDGE_CACHE_DIR', join(dataDir, 'edge-cache'))),
      trustedProxies: prefixes('PALISADE_EDGE_TRUSTED_PROXIES'),
      clientLimits: {
        rate: int('PALISADE_EDGE_CLIENT_RATE', 100, 0, 1_000_000),
        burst: int('PALISADE_EDGE_CLIENT_BURST', 300, 1, 1_000_000),
        banAfter: int('PALISADE_EDGE_BAN_AFTER', 10, 0, 1_000_000),
        banWindowMs: 60_000,
        banMs: int('PALISADE_EDGE_BAN_SECONDS', 300, 1, 86_400) * 1000,
      },
      challenge: {
        difficulty: int('PALISADE_EDGE_CHALLENGE_DIFFICULTY', 4, 1, 8),
        cookieMinutes: int('PALISADE_EDGE_CHALLENGE_COOKIE_MINUTES', 30, 1, 10_080),
        secret: longHexSecret('PALISADE_EDGE_CHALLENGE_SECRET', env.PALISADE_EDGE_CHALLENGE_SECRET, problems),
      },
      connectTimeoutMs: int('PALISADE_EDGE_CONNECT_TIMEOUT_MS', 5000, 100, 600_000),
      responseTimeoutMs: int('PALISADE_EDGE_RESPONSE_TIMEOUT_MS', 60_000, 100, 3_600_000),
      checkIntervalMs: int('PALISADE_EDGE_CHECK_INTERVAL_MS', 5000, 100, 3_600_000),
      reportMs: int('PALISADE_EDGE_REPORT_MS', 30_000, 100, 3_600_000),
      maxConnections: int('PALISADE_EDGE_MAX_CONNECTIONS', 16_384, 16, 10_000_000),
      maxConnectionsPerClient: int('PALISADE_EDGE_MAX_CONNECTIONS_PER_CLIENT', 1024, 1, 10_000_000),
      bodyMinRate: int('PALISADE_EDGE_BODY_MIN_RATE', 500, 0, 1_073_741_824),
      bodyGraceMs: int('PALISADE_EDGE_BODY_GRACE_MS', 10_000, 100, 3_600_000),
      bodyMaxMs: int('PALISADE_EDGE_BODY_MAX_MS', 300_000, 0, 86_400_000),
      backendSharePerClient: int('PALISADE_EDGE_BACKEND_SHARE_PER_CLIENT', 64, 1, 1_000_000),
      backendSharePerAccount: int('PALISADE_EDGE_BACKEND_SHARE_PER_ACCOUNT', 128, 1, 1_000_000),
      bodyBufferBytes: int('PALISADE_EDGE_BODY_BUFFER_MB', 256, 1, 1_048_576) * 1_048_576,
      bodyBufferPerClientBytes: int('PALISADE_EDGE_BODY_BUFFER_PER_CLIENT_MB', 32, 1, 1_048_576) * 1_048_576,
      upgradeIdleMs: int('PALISADE_EDGE_UPGRADE_IDLE_MS', 100_000, 100, 86_400_000),
      workers: int('PALISADE_EDGE_WORKERS', availableParallelism(), 1, 256),
      workerBalance: oneOf('PALISADE_EDGE_WORKER_BALANCE', ['client', 'kernel'] as const, 'client'),
    },
    notify: {
      retryBaseMs: int('PALISADE_WEBHOOK_RETRY_MS', 30_000, 10, 86_400_000),
      maxAttempts: int('PALISADE_WEBHOOK_MAX_ATTEMPTS', 8, 1, 100),
      timeoutMs: int('PALISADE_WEBHOOK_TIMEOUT_MS', 5000, 100, 60_000),
      allowPrivate: bool('PALISADE_WEBHOOK_ALLOW_PRIVATE', false),
      sweepMs: int('PALISADE_MONITOR_SWEEP_SECONDS', 300, 1, 86_400) * 1000,
      resolver: hostPorts('PALISADE_DELEGATION_RESOLVER', env.PALISADE_DELEGATION_RESOLVER, problems)[0],
      expiringMs: int('PALISADE_CERT_EXPIRING_DAYS', 14, 1, 365) * 86_400_000,
    },
    certs: {
      directoryUrl: env.PALISADE_ACME_DIRECTORY || undefined,
      email: env.PALISADE_ACME_EMAIL || undefined,
      caaIdentity: caaIdentity(env, problems),
      caPem: fileText('PALISADE_ACME_CA_FILE', env.PALISADE_ACME_CA_FILE, problems),
      secretKey: longHexSecret('PALISADE_SECRET_KEY', env.PALISADE_SECRET_KEY ?? fileText('PALISADE_SECRET_KEY_FILE', env.PALISADE_SECRET_KEY_FILE, problems)?.trim(), problems),
      resolver: hostPorts('PALISADE_ACME_RESOLVER', env.PALISADE_ACME_RESOLVER, problems)[0],
      checkNameservers: hostPorts('PALISADE_ACME_CHECK_NAMESERVERS', env.PALISADE_ACME_CHECK_NAMESERVERS, problems),
      httpPort: env.PALISADE_ACME_HTTP_PORT === undefined ? undefined : int('PALISADE_ACME_HTTP_PORT', 80, 1, 65535),
      renewCheckMs: int('PALISADE_CERT_RENEW_CHECK_SECONDS', 3600, 1, 86_400) * 1000,
      retryBaseMs: int('PALISADE_CERT_RETRY_SECONDS', 60, 1, 86_400) * 1000,
      maxAttempts: int('PALISADE_CERT_MAX_ATTEMPTS', 8, 1, 100),
      challengeTimeoutMs: int('PALISADE_CERT_CHALLENGE_TIMEOUT_SECONDS', 120, 1, 3600) * 1000,
      pollMinMs: int('PALISADE_ACME_POLL_MS', 1000, 10, 60_000),
      ordersPerUserHour: int('PALISADE_CERT_ORDERS_PER_USER_HOUR', 100, 1, 1_000_000),
    },
    reservedZones: [],
    allowPrivateBackends: bool('PALISADE_ALLOW_PRIVATE_BACKENDS', false),
    logLevel: str('PALISADE_LOG_LEVEL', 'info'),
    changeRetention: int('PALISADE_CHANGE_RETENTION', 100_000, 100, 100_000_000),
  };
  if (config.sync.url && !/^https?:\/\/[^\s]+$/.test(config.sync.url)) problems.push(`PALISADE_SYNC_URL=${config.sync.url}: must be an http:// or https:// URL`);
  if (config.certs.directoryUrl && !/^https?:\/\/[^\s]+$/.test(config.certs.directoryUrl)) problems.push(`PALISADE_ACME_DIRECTORY=${config.certs.directoryUrl}: must be an http:// or https:// URL`);
  if (config.certs.email && !/^[^@\s]+@[^@\s]+$/.test(config.certs.email)) problems.push(`PALISADE_ACME_EMAIL=${config.certs.email}: must be an e-mail address`);
  if (config.redisUrl && !/^rediss?:\/\//.test(config.redisUrl)) problems.push(`REDIS_URL=${config.redisUrl}: must start with redis:// or rediss://`);
  config.redis = redisConnection(env, config.redisUrl, int, bool, problems);
  const logFormat = env.PALISADE_LOG_FORMAT ?? 'auto';
  if (!['auto', 'json', 'pretty'].includes(logFormat)) problems.push(`PALISADE_LOG_FORMAT=${logFormat}: must be auto (readable lines at a terminal, JSON elsewhere), json or pretty`);
  if (!LOG_LEVELS.includes(config.logLevel)) problems.push(`PALISADE_LOG_LEVEL=${config.logLevel}: must be one of ${LOG_LEVELS.join(', ')}`);
  if (env.PALISADE_OWNERSHIP_PROOF !== undefined && !['required', 'off'].includes(env.PALISADE_OWNERSHIP_PROOF)) problems.push(`PALISADE_OWNERSHIP_PROOF=${env.PALISADE_OWNERSHIP_PROOF}: must be required or off`);
  if (env.PALISADE_DELEGATION_CHECK !== undefined && !['parent', 'resolver'].includes(env.PALISADE_DELEGATION_CHECK)) problems.push(`PALISADE_DELEGATION_CHECK=${env.PALISADE_DELEGATION_CHECK}: must be parent or resolver`);
  if (config.edge.bodyBufferPerClientBytes > config.edge.bodyBufferBytes) problems.push(`PALISADE_EDGE_BODY_BUFFER_PER_CLIENT_MB=${config.edge.bodyBufferPerClientBytes / 1_048_576}: must not exceed PALISADE_EDGE_BODY_BUFFER_MB (${config.edge.bodyBufferBytes / 1_048_576})`);
  config.ownership.pool = nameserverPool(env.PALISADE_NAMESERVER_POOL, config.nameservers, problems);
  config.reservedZones = reservedZones(env.PALISADE_RESERVED_ZONES, [...config.nameservers, ...config.ownership.pool, config.hostmaster], problems);
  const { bodyMaxMs, bodyGraceMs } = config.edge;
  if (bodyMaxMs > 0 && bodyMaxMs < bodyGraceMs) problems.push(`PALISADE_EDGE_BODY_MAX_MS=${bodyMaxMs}: must be 0 (no maximum) or at least PALISADE_EDGE_BODY_GRACE_MS (${bodyGraceMs})`);
  if (config.nameservers[0] === config.nameservers[1]) problems.push('PALISADE_NS1 and PALISADE_NS2 must differ');
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/**
 * Where the Redis store is: REDIS_URL (one server), or PALISADE_REDIS_SENTINELS (host:port,…) and
 * PALISADE_REDIS_MASTER_NAME (the primary the Sentinels follow: found again after a failover);
 * PALISADE_REDIS_USERNAME / _PASSWORD for the data servers, PALISADE_REDIS_SENTINEL_USERNAME /
 * _PASSWORD for the Sentinels, PALISADE_REDIS_TLS / PALISADE_REDIS_SENTINEL_TLS; and
 * PALISADE_REDIS_MIN_REPLICAS (WAIT before a commit is answered, PALISADE_REDIS_WAIT_MS at most).
 */
function redisConnection(
  env: Record<string, string | undefined>,
  url: string | undefined,
  int: (name: string, fallback: number, min: number, max: number) => number,
  bool: (name: string, fallback: boolean) => boolean,
  problems: string[],
): RedisConnection | undefined {
  const sentinelText = env.PALISADE_REDIS_SENTINELS;
  const minReplicas = int('PALISADE_REDIS_MIN_REPLICAS', 0, 0, 16);
  const waitTimeoutMs = int('PALISADE_REDIS_WAIT_MS', 1000, 10, 4000);
  const auth = {
    ...(env.PALISADE_REDIS_USERNAME && { username: env.PALISADE_REDIS_USERNAME }),
    ...(env.PALISADE_REDIS_PASSWORD && { password: env.PALISADE_REDIS_PASSWORD }),
  };
  if (!sentinelText) {
    if (env.PALISADE_REDIS_MASTER_NAME) problems.push('PALISADE_REDIS_MASTER_NAME is set without PALISADE_REDIS_SENTINELS');
    return url === undefined ? undefined : { url, ...auth, minReplicas, waitTimeoutMs };
  }
  if (url !== undefined) problems.push('REDIS_URL and PALISADE_REDIS_SENTINELS are both set: name one server, or the Sentinels that find the primary');
  const { sentinels, problems: wrong } = parseSentinels(sentinelText);
  for (const problem of wrong) problems.push(`PALISADE_REDIS_SENTINELS: ${problem}`);
  const masterName = env.PALISADE_REDIS_MASTER_NAME;
  if (!masterName) problems.push('PALISADE_REDIS_MASTER_NAME: the primary\'s name as the Sentinels know it is required with PALISADE_REDIS_SENTINELS');
  return {
    sentinels,
    masterName,
    ...auth,
    ...(env.PALISADE_REDIS_SENTINEL_USERNAME && { sentinelUsername: env.PALISADE_REDIS_SENTINEL_USERNAME }),
    ...(env.PALISADE_REDIS_SENTINEL_PASSWORD && { sentinelPassword: env.PALISADE_REDIS_SENTINEL_PASSWORD }),
    tls: bool('PALISADE_REDIS_TLS', false),
    sentinelTls: bool('PALISADE_REDIS_SENTINEL_TLS', false),
    minReplicas,
    waitTimeoutMs,
  };
}
