// The edge (reverse proxy): where it listens, its node, timeouts, caches, baseprotection's limits,
// the JS challenge, and its worker processes (docs/edge-workers.md).
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { choice, hexKey, host, int, LONG_HEX, LONG_HEX_MUST, optionalInt, optionalText, prefixes, readTable, text, type Values } from './kinds.ts';
import type { Config } from './types.ts';

const MB = 1_048_576;

export const EDGE_SETTINGS = {
  PALISADE_EDGE_HOST: host('127.0.0.1', { help: 'where an edge (the edge role\'s, or the serve role\'s) listens' }),
  PALISADE_EDGE_HTTP_PORT: int(8081, 0, 65535, { help: 'the edge\'s HTTP port' }),
  PALISADE_EDGE_HTTPS_PORT: int(8443, 0, 65535, { help: 'the edge\'s HTTPS port (0 = any free port)' }),
  PALISADE_EDGE_NODE: optionalInt(1, 2_147_483_647, {
    help: 'edge role: the registered node it serves as (with `PALISADE_SYNC_URL`, `_TOKEN`, `_SECRET` from `consumer add --node`)',
    emptyIsUnset: true,
  }),
  PALISADE_EDGE_NAME: text('local', { help: 'the node name the edge\'s status page and default certificate show' }),
  PALISADE_EDGE_WORKERS: int(availableParallelism(), 1, 256, {
    help:
      'edge role: worker processes; `1` = one process. With more, the process started is the primary: the node\'s one feed consumer, `/healthz` and `/metrics` for all workers, ' +
      'uptime reports; workers restarted if they stop (`docs/edge-workers.md`)',
    shown: 'one per core',
  }),
  PALISADE_EDGE_WORKER_BALANCE: choice(['client', 'kernel'] as const, 'client', {
    help:
      '`client`: the primary hands each connection to the worker its client network hashes to (per-client limits exact); `kernel`: every worker listens with SO_REUSEPORT ' +
      '(about twice the new connections per second; per-client limits per worker)',
    emptyIsUnset: true,
  }),
  PALISADE_EDGE_MAX_BODY_BYTES: int(1024 * MB, 0, Number.MAX_SAFE_INTEGER, { help: 'largest request body passed on (413 page beyond)' }),
  PALISADE_EDGE_CLIENT_TIMEOUT_MS: int(30_000, 100, 3_600_000, { help: 'a client silent this long mid-request gets 408; idle connections close' }),
  PALISADE_EDGE_CACHE_MEMORY_MB: int(256, 1, 1_048_576, { help: 'memory cache bound (divided between the edge role\'s workers)' }),
  PALISADE_EDGE_CACHE_DIR: optionalText({
    help: 'where large files are cached (emptied at start; with workers every cached response is a file there, shared)',
    shown: '`$PALISADE_DATA_DIR/edge-cache`',
  }),
  PALISADE_EDGE_TRUSTED_PROXIES: prefixes({ help: 'comma-separated addresses or prefixes whose `X-Forwarded-For` names the client (load balancers in front of the edge)' }),
  PALISADE_EDGE_CLIENT_RATE: int(100, 0, 1_000_000, { help: 'baseprotection: requests per second per client address (429 past it); 0 = none' }),
  PALISADE_EDGE_CLIENT_BURST: int(300, 1, 1_000_000, { help: 'baseprotection: burst of `PALISADE_EDGE_CLIENT_RATE`' }),
  PALISADE_EDGE_BAN_AFTER: int(10, 0, 1_000_000, { help: 'baseprotection: refused requests within 60 s that ban a client; 0 = never ban' }),
  PALISADE_EDGE_BAN_SECONDS: int(300, 1, 86_400, { help: 'baseprotection: how long a ban lasts' }),
  PALISADE_EDGE_CHALLENGE_DIFFICULTY: int(4, 1, 8, { help: 'the JS challenge: leading hex zeros of its proof of work' }),
  PALISADE_EDGE_CHALLENGE_COOKIE_MINUTES: int(30, 1, 10_080, { help: 'the JS challenge: how long a clearance holds' }),
  PALISADE_EDGE_CHALLENGE_SECRET: hexKey(LONG_HEX, LONG_HEX_MUST, {
    help: 'hex key (32–128 digits) signing challenges and clearances; edges that should honour each other\'s clearances share one',
    shown: 'random per edge node (its workers share it)',
  }),
  PALISADE_EDGE_CONNECT_TIMEOUT_MS: int(5000, 100, 600_000, { help: 'backend connect timeout (502 page)' }),
  PALISADE_EDGE_RESPONSE_TIMEOUT_MS: int(60_000, 100, 3_600_000, { help: 'backend response-header timeout (504 page)' }),
  PALISADE_EDGE_CHECK_INTERVAL_MS: int(5000, 100, 3_600_000, { help: 'active backend checks (TCP connect); down after 3 failures, up after 2 passes' }),
  PALISADE_EDGE_REPORT_MS: int(30_000, 100, 3_600_000, {
    help: 'edge: how often measures and verdicts are reported to the API (a backend going down or coming back is reported at once)',
  }),
  PALISADE_EDGE_MAX_CONNECTIONS: int(16_384, 16, 10_000_000, {
    help: 'open connections in all (the node\'s, divided between the workers); past 15/16 of it only clients holding fewer than 16 get another; trusted proxies count in the whole only',
  }),
  PALISADE_EDGE_MAX_CONNECTIONS_PER_CLIENT: int(1024, 1, 10_000_000, { help: 'open connections per client network (/32, /64; generous for offices and carrier NAT)' }),
  PALISADE_EDGE_BODY_GRACE_MS: int(10_000, 100, 3_600_000, {
    help: 'a request body\'s deadline (mod_reqtimeout\'s `body=10-300,MinRate=500`) starts at this grace; overdue → 408 and the backend\'s request ends',
  }),
  PALISADE_EDGE_BODY_MIN_RATE: int(500, 0, 1_073_741_824, { help: 'a request body\'s deadline grows a second per this many bytes received (0 = no pace)' }),
  PALISADE_EDGE_BODY_MAX_MS: int(300_000, 0, 86_400_000, { help: 'a request body\'s deadline is never past this from its start (0 = none; else at least the grace)' }),
  PALISADE_EDGE_BACKEND_SHARE_PER_CLIENT: int(64, 1, 1_000_000, { help: 'requests of one client network in flight to one backend address at once, across every domain naming it (429 past it)' }),
  PALISADE_EDGE_BACKEND_SHARE_PER_ACCOUNT: int(128, 1, 1_000_000, {
    help: 'requests of one account\'s domains in flight to a backend address that other accounts\' domains name too (429 past it; of the 256 pooled connections per address)',
  }),
  PALISADE_EDGE_BODY_BUFFER_MB: int(256, 1, 1_048_576, {
    help:
      'MiB of request bodies baseprotection may hold at once (read for inspection) on the node; a body is counted before it is read, up to its length or the domain\'s `waf_body_limit`: ' +
      '503 past it (with edge workers, each holds its part)',
  }),
  PALISADE_EDGE_BODY_BUFFER_PER_CLIENT_MB: int(32, 1, 1_048_576, { help: 'the same per client network (/32, /64): 429 past it' }),
  PALISADE_EDGE_UPGRADE_IDLE_MS: int(100_000, 100, 86_400_000, { help: 'a WebSocket silent both ways this long is closed (Cloudflare\'s 100 s)' }),
};

/** Set by the edge role's primary for each worker it starts: which worker this is. */
export const EDGE_WORKER_SETTINGS = {
  PALISADE_EDGE_WORKER: { ...int(0, 0, 256, { help: 'which worker of the edge role this process is' }), internal: true },
};

export function edgeConfig(env: Record<string, string | undefined>, dataDir: string, problems: string[]): Pick<Config, 'edge'> {
  const v = readTable(EDGE_SETTINGS, env, problems);
  checkEdge(v, problems);
  return {
    edge: {
      host: v.PALISADE_EDGE_HOST,
      httpPort: v.PALISADE_EDGE_HTTP_PORT,
      httpsPort: v.PALISADE_EDGE_HTTPS_PORT,
      node: v.PALISADE_EDGE_NODE,
      nodeName: v.PALISADE_EDGE_NAME,
      maxBodyBytes: v.PALISADE_EDGE_MAX_BODY_BYTES,
      clientTimeoutMs: v.PALISADE_EDGE_CLIENT_TIMEOUT_MS,
      cacheMemoryBytes: v.PALISADE_EDGE_CACHE_MEMORY_MB * MB,
      cacheDir: resolve(v.PALISADE_EDGE_CACHE_DIR ?? join(dataDir, 'edge-cache')),
      trustedProxies: v.PALISADE_EDGE_TRUSTED_PROXIES,
      clientLimits: {
        rate: v.PALISADE_EDGE_CLIENT_RATE,
        burst: v.PALISADE_EDGE_CLIENT_BURST,
        banAfter: v.PALISADE_EDGE_BAN_AFTER,
        banWindowMs: 60_000,
        banMs: v.PALISADE_EDGE_BAN_SECONDS * 1000,
      },
      challenge: { difficulty: v.PALISADE_EDGE_CHALLENGE_DIFFICULTY, cookieMinutes: v.PALISADE_EDGE_CHALLENGE_COOKIE_MINUTES, secret: v.PALISADE_EDGE_CHALLENGE_SECRET },
      connectTimeoutMs: v.PALISADE_EDGE_CONNECT_TIMEOUT_MS,
      responseTimeoutMs: v.PALISADE_EDGE_RESPONSE_TIMEOUT_MS,
      checkIntervalMs: v.PALISADE_EDGE_CHECK_INTERVAL_MS,
      reportMs: v.PALISADE_EDGE_REPORT_MS,
      maxConnections: v.PALISADE_EDGE_MAX_CONNECTIONS,
      maxConnectionsPerClient: v.PALISADE_EDGE_MAX_CONNECTIONS_PER_CLIENT,
      bodyMinRate: v.PALISADE_EDGE_BODY_MIN_RATE,
      bodyGraceMs: v.PALISADE_EDGE_BODY_GRACE_MS,
      bodyMaxMs: v.PALISADE_EDGE_BODY_MAX_MS,
      backendSharePerClient: v.PALISADE_EDGE_BACKEND_SHARE_PER_CLIENT,
      backendSharePerAccount: v.PALISADE_EDGE_BACKEND_SHARE_PER_ACCOUNT,
      bodyBufferBytes: v.PALISADE_EDGE_BODY_BUFFER_MB * MB,
      bodyBufferPerClientBytes: v.PALISADE_EDGE_BODY_BUFFER_PER_CLIENT_MB * MB,
      upgradeIdleMs: v.PALISADE_EDGE_UPGRADE_IDLE_MS,
      workers: v.PALISADE_EDGE_WORKERS,
      workerBalance: v.PALISADE_EDGE_WORKER_BALANCE,
    },
  };
}

/** The bounds between edge settings. */
function checkEdge(v: Values<typeof EDGE_SETTINGS>, problems: string[]): void {
  const perClient = v.PALISADE_EDGE_BODY_BUFFER_PER_CLIENT_MB;
  const all = v.PALISADE_EDGE_BODY_BUFFER_MB;
  if (perClient > all) problems.push(`PALISADE_EDGE_BODY_BUFFER_PER_CLIENT_MB=${perClient}: must not exceed PALISADE_EDGE_BODY_BUFFER_MB (${all})`);
  const { PALISADE_EDGE_BODY_MAX_MS: maxMs, PALISADE_EDGE_BODY_GRACE_MS: graceMs } = v;
  if (maxMs > 0 && maxMs < graceMs) problems.push(`PALISADE_EDGE_BODY_MAX_MS=${maxMs}: must be 0 (no maximum) or at least PALISADE_EDGE_BODY_GRACE_MS (${graceMs})`);
}

/** The edge worker this process is (0: the primary, or no workers). */
export function edgeWorkerIndex(env: Record<string, string | undefined> = process.env): number {
  return readTable(EDGE_WORKER_SETTINGS, env, []).PALISADE_EDGE_WORKER;
}

