// The name server: where it listens, its caches and limits, cookies, NSID, the catalog zone, IXFR
// history, and how many processes answer.
import { availableParallelism } from 'node:os';
import { DEFAULT_TCP_LIMITS } from '../dns/server/tcp-limits.ts';
import { JOURNAL_LIMITS, type JournalLimits } from '../dns/transfer/journal.ts';
import { checkNotifySources } from '../dns/transfer/notify-source.ts';
import { DEFAULT_TRANSFERS_PER_SECONDARY } from '../dns/transfer/slots.ts';
import { SIGNATURE_CACHE_LIMITS } from '../dns/signer/signature-cache.ts';
import { bool, checkedDomain, choice, hexKey, host, int, optionalInt, optionalText, pattern, readTable, type Values } from './kinds.ts';
import type { Config } from './types.ts';

/** Response-rate limiting's defaults: 100 responses a second per client /24 (/56) and response category, every 2nd dropped one slipped as TC=1 (see docs/dns.md). */
export const DNS_RRL_DEFAULTS = { rate: 100, slip: 2 } as const;

/**
 * Fresh DNSSEC signatures a second per zone and per client network (~47 µs each: 2,000 are about a
 * tenth of a core). Past them a question that needs a new signature is answered SERVFAIL.
 */
export const DNS_SIGNING_DEFAULTS = { zoneRate: 2000, clientRate: 500 } as const;

export const MAX_DNS_WORKERS = 64;

/** How DNS workers hold the zones (PALISADE_DNS_WORKER_ZONES): see its help text. */
export const DNS_WORKER_ZONES = ['index', 'stored'] as const;
export type DnsWorkerZones = (typeof DNS_WORKER_ZONES)[number];
const T = DEFAULT_TCP_LIMITS;

export const DNS_SETTINGS = {
  PALISADE_DNS_HOST: host('127.0.0.1', { help: 'DNS listen address (UDP and TCP)' }),
  PALISADE_DNS_PORT: int(5300, 0, 65535, { help: 'DNS port (0 = any free port)' }),
  PALISADE_DNS_CACHE: bool(true, { help: 'serve repeated questions from encoded answers' }),
  PALISADE_DNS_SIGNATURE_CACHE_ENTRIES: int(SIGNATURE_CACHE_LIMITS.entries, 0, 100_000_000, {
    help: 'DNSSEC signatures kept per DNS process (by RRset, key and validity window), least recently used dropped first; 0 = none kept (every signed answer not in the answer cache is signed again)',
  }),
  PALISADE_DNS_SIGNATURE_CACHE_BYTES: int(SIGNATURE_CACHE_LIMITS.bytes, 65_536, 2 ** 40, {
    help: 'estimated bytes of the signature cache per DNS process (the signed data it is keyed by, and the signatures)',
  }),
  PALISADE_DNS_TCP_IDLE_MS: int(T.idleTimeoutMs, 100, 600_000, { help: 'idle TCP connections are closed after this' }),
  PALISADE_DNS_TCP_LIFETIME_MS: int(T.maxLifetimeMs, 1000, 86_400_000, { help: 'a TCP connection\'s longest life' }),
  PALISADE_DNS_TCP_MAX_CONNECTIONS: int(T.maxConnections, 1, 1_000_000, {
    help:
      'open TCP connections in all; when full, a new client takes the slot of a connection stalled ≥ 1 s, else of a heavy (flooding) one waiting for its turn, else of the one longest without a completed query. ' +
      'New and light connections are answered first; pipelining floods share 4 MiB/s of answers (during 2,048 non-reading connections a normal TCP query stays ≤ 200 ms at p99)',
  }),
  PALISADE_DNS_TCP_MAX_PER_CLIENT: int(T.maxConnectionsPerClient, 1, 1_000_000, { help: 'open TCP connections per client network' }),
  PALISADE_DNS_TCP_CLIENT_PREFIX_V4: int(T.prefixV4, 8, 32, { help: 'what one IPv4 client network is (prefix length)' }),
  PALISADE_DNS_TCP_CLIENT_PREFIX_V6: int(T.prefixV6, 16, 128, { help: 'what one IPv6 client network is (prefix length)' }),
  PALISADE_DNS_TCP_MAX_OUTPUT_BYTES: int(T.maxOutputBytes, 65_537, 64 * 1_048_576, { help: 'unsent answer bytes per connection before its further queries wait' }),
  PALISADE_DNS_TCP_OUTPUT_BUDGET_BYTES: int(T.outputBudgetBytes, 1_048_576, 4096 * 1_048_576, {
    help: 'unsent answer bytes of all connections; past it a new or light connection takes the room of the connection stalled longest',
  }),
  PALISADE_DNS_RRL_RATE: int(DNS_RRL_DEFAULTS.rate, 0, 1_000_000, { help: 'UDP responses per second per client /24 (/56) and category; 0 = off; clients with a valid DNS cookie are exempt' }),
  PALISADE_DNS_RRL_SLIP: int(DNS_RRL_DEFAULTS.slip, 0, 100, { help: 'every n-th rate-limited response is sent truncated (TC=1) instead of dropped' }),
  PALISADE_DNS_SIGN_ZONE_RATE: int(DNS_SIGNING_DEFAULTS.zoneRate, 0, 10_000_000, {
    help: 'new DNSSEC signatures per second for one zone (split among the DNS processes; cached ones are free); a question that needs one past it is answered SERVFAIL; 0 = unbounded',
  }),
  PALISADE_DNS_SIGN_CLIENT_RATE: int(DNS_SIGNING_DEFAULTS.clientRate, 0, 10_000_000, {
    help: 'new DNSSEC signatures per second for one client /24 (/56), all zones together, likewise; 0 = unbounded',
  }),
  PALISADE_DNS_COOKIE_SECRET: hexKey(/^[0-9a-fA-F]{32}$/, 'must be 32 hex digits (16 random bytes, e.g. from `openssl rand -hex 16`)', {
    help: '32 hex digits: the RFC 9018 server-cookie secret; give anycast instances the same one',
    shown: 'random per process',
  }),
  PALISADE_DNS_NSID: pattern(/^[\x21-\x7e]{1,128}$/, 'must be 1–128 visible ASCII characters (e.g. the instance name: ns1-fra)', {
    help: 'this name server\'s identifier (RFC 5001 NSID, 1–128 visible ASCII), answered to queries that ask: give each instance of an anycast address its own',
    shown: 'none',
  }),
  PALISADE_DNS_CATALOG_ZONE: optionalText({ help: 'the catalog zone (RFC 9432) listing the served zones, offered to secondaries; empty: none', shown: '`catalog.palisade.invalid`' }),
  PALISADE_DNS_NOTIFY_SOURCE: optionalText({
    help: 'the addresses NOTIFY is sent from (one IPv4, one IPv6, or both, comma-separated), for secondaries whose ACL names one address',
    shown: '`PALISADE_DNS_HOST` when it is one address',
  }),
  PALISADE_DNS_TRANSFERS_PER_SECONDARY: int(DEFAULT_TRANSFERS_PER_SECONDARY, 1, 1000, {
    help: 'zone transfers one secondary (by its key) may have running at once in a DNS process; more wait their turn, in order',
  }),
  PALISADE_DNS_IXFR_ZONE_BYTES: int(JOURNAL_LIMITS.zoneBytes, 65_536, 2 ** 40, {
    help: 'with a secondary listed, each DNS process keeps the changes of each zone (for IXFR) up to this many bytes, oldest dropped first; a secondary further behind gets the whole zone (AXFR form, RFC 1995 §4)',
  }),
  PALISADE_DNS_IXFR_ACCOUNT_BYTES: int(JOURNAL_LIMITS.accountBytes, 65_536, 2 ** 40, { help: 'the same, for all the zones of one account together (its oldest changes dropped first)' }),
  PALISADE_DNS_IXFR_JOURNAL_BYTES: int(JOURNAL_LIMITS.totalBytes, 65_536, 2 ** 40, {
    help: 'the same, for every zone of a DNS process; past it the account holding the most gives up its oldest change first',
  }),
};

/** Read by the dns role as it starts (dnsWorkers), not by loadConfig: other roles ignore it. */
export const DNS_WORKER_SETTINGS = {
  PALISADE_DNS_WORKERS: optionalInt(1, MAX_DNS_WORKERS, {
    help: 'dns role: processes answering on the port (SO_REUSEPORT); `1` = one process (see "A name server on every core")',
    shown: 'one per core',
    emptyIsUnset: true,
  }),
  PALISADE_DNS_WORKER_ZONES: choice(DNS_WORKER_ZONES, 'index', {
    help:
      'dns role: where the workers after the first answer from. `index`: each holds every zone built (memory grows by the whole index per worker: ~0.9 GB at 100,000 zones × 20 records). ' +
      '`stored`: the state the first process writes, pinned at one revision, each zone built on its first question into a cache of 4,096 (~60 MB more per worker at 100,000 zones), ' +
      'but about a quarter of the queries per core when the questions spread over more zones than that: for hosts whose memory, not CPU, bounds the zones they carry (see "A name server on every core")',
    emptyIsUnset: true,
  }),
};

type DnsValues = Values<typeof DNS_SETTINGS>;

export function dnsConfig(env: Record<string, string | undefined>, problems: string[]): Pick<Config, 'dns'> {
  const v = readTable(DNS_SETTINGS, env, problems);
  const catalog = v.PALISADE_DNS_CATALOG_ZONE;
  return {
    dns: {
      host: v.PALISADE_DNS_HOST,
      port: v.PALISADE_DNS_PORT,
      cache: v.PALISADE_DNS_CACHE,
      signatureCache: { entries: v.PALISADE_DNS_SIGNATURE_CACHE_ENTRIES, bytes: v.PALISADE_DNS_SIGNATURE_CACHE_BYTES },
      rateLimit: { rate: v.PALISADE_DNS_RRL_RATE, slip: v.PALISADE_DNS_RRL_SLIP, signZoneRate: v.PALISADE_DNS_SIGN_ZONE_RATE, signClientRate: v.PALISADE_DNS_SIGN_CLIENT_RATE },
      cookieSecret: v.PALISADE_DNS_COOKIE_SECRET,
      catalogZone: catalog === '' ? '' : checkedDomain('PALISADE_DNS_CATALOG_ZONE', catalog ?? 'catalog.palisade.invalid', problems),
      nsid: v.PALISADE_DNS_NSID ?? '',
      ixfrJournal: ixfrJournal(v, problems),
      notifySource: notifySource(v.PALISADE_DNS_NOTIFY_SOURCE, problems),
      transfersPerSecondary: v.PALISADE_DNS_TRANSFERS_PER_SECONDARY,
      tcp: {
        idleTimeoutMs: v.PALISADE_DNS_TCP_IDLE_MS,
        maxLifetimeMs: v.PALISADE_DNS_TCP_LIFETIME_MS,
        maxConnections: v.PALISADE_DNS_TCP_MAX_CONNECTIONS,
        maxConnectionsPerClient: v.PALISADE_DNS_TCP_MAX_PER_CLIENT,
        prefixV4: v.PALISADE_DNS_TCP_CLIENT_PREFIX_V4,
        prefixV6: v.PALISADE_DNS_TCP_CLIENT_PREFIX_V6,
        maxOutputBytes: v.PALISADE_DNS_TCP_MAX_OUTPUT_BYTES,
        outputBudgetBytes: v.PALISADE_DNS_TCP_OUTPUT_BUDGET_BYTES,
      },
    },
  };
}

/** IXFR history bounds: each at least 64 KiB (a few changes), a zone's no more than its account's, an account's no more than all. */
function ixfrJournal(v: DnsValues, problems: string[]): JournalLimits {
  const zoneBytes = v.PALISADE_DNS_IXFR_ZONE_BYTES;
  const accountBytes = v.PALISADE_DNS_IXFR_ACCOUNT_BYTES;
  const totalBytes = v.PALISADE_DNS_IXFR_JOURNAL_BYTES;
  if (zoneBytes > accountBytes) problems.push(`PALISADE_DNS_IXFR_ZONE_BYTES=${zoneBytes}: must not exceed PALISADE_DNS_IXFR_ACCOUNT_BYTES (${accountBytes})`);
  if (accountBytes > totalBytes) problems.push(`PALISADE_DNS_IXFR_ACCOUNT_BYTES=${accountBytes}: must not exceed PALISADE_DNS_IXFR_JOURNAL_BYTES (${totalBytes})`);
  return { zoneBytes, accountBytes, totalBytes };
}

/**
 * PALISADE_DNS_WORKERS for the dns role: unset or empty, one per core (at most 64); a problem when
 * wrong (the role refuses to start with it).
 */
export function dnsWorkers(env: Record<string, string | undefined> = process.env): { workers: number; problem?: string } {
  const problems: string[] = [];
  const n = DNS_WORKER_SETTINGS.PALISADE_DNS_WORKERS.read('PALISADE_DNS_WORKERS', env.PALISADE_DNS_WORKERS, problems);
  if (problems.length > 0) return { workers: NaN, problem: `${problems[0]} (unset: one per core)` };
  return { workers: n ?? Math.min(MAX_DNS_WORKERS, availableParallelism()) };
}

/** PALISADE_DNS_WORKER_ZONES for the dns role, likewise (unset or empty: `index`). */
export function dnsWorkerZones(env: Record<string, string | undefined> = process.env): { zones: DnsWorkerZones; problem?: string } {
  const problems: string[] = [];
  const zones = DNS_WORKER_SETTINGS.PALISADE_DNS_WORKER_ZONES.read('PALISADE_DNS_WORKER_ZONES', env.PALISADE_DNS_WORKER_ZONES, problems);
  return problems.length > 0 ? { zones, problem: problems[0] } : { zones };
}

/** PALISADE_DNS_NOTIFY_SOURCE: comma-separated addresses, at most one IPv4 and one IPv6. */
function notifySource(text: string | undefined, problems: string[]): string[] {
  const addresses = (text ?? '').split(',').map((a) => a.trim()).filter((a) => a !== '');
  const problem = checkNotifySources(addresses);
  if (problem) problems.push(`PALISADE_DNS_NOTIFY_SOURCE=${text}: ${problem} (the addresses NOTIFY is sent from: one IPv4, one IPv6, or both, comma-separated)`);
  return problem ? [] : addresses;
}
