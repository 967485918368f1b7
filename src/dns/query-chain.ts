// The order a query passes the DNS stages, outermost first — this server's plugin.cfg. Each stage
// is a folder of its own (its README says what it owns), with a hook for the cached path and one
// for the full path (chain/stage.ts); the runner (server/handler.ts) reads the packet just enough
// for a cache key, runs the cached path, and runs the full path when the cache did not answer.
//
//   cookies      in:  our reply to the query's cookie, and whether it proved the client
//   rate-limit   out: UDP responses limited per client network, unless the cookie proved it
//   transfers    in:  AXFR/IXFR, NOTIFY and TSIG-signed messages answered by the responder (full path)
//   metrics      out: every response counted and timed; packets left unanswered counted
//   answer-cache in:  a repeated question answered from its encoded answer (cached path)
//                out: what the engine made kept for the next asker (full path)
//   engine       the question answered from the zone index, and encoded (full path)
//   signer       between the engine's answer and its encoding: RRSIGs and compact denial for a
//                DNSSEC-OK query of a signed zone; SERVFAIL for a zone that should be signed
//                and whose keys are missing (full path; the cache keeps what it made)
//
// A stage that changes answers goes after the engine: it sees the answer before it is encoded,
// and the cache keeps what it made. See docs/architecture.md, "Adding a DNS stage".
import { answerCacheStage } from './cache/stage.ts';
import type { DnsStage } from './chain/stage.ts';
import { cookieStage } from './cookies/stage.ts';
import type { ServerCookies } from './cookies/server-cookies.ts';
import { engineStage } from './engine/stage.ts';
import type { ClientLocation } from './engine/types.ts';
import type { DnsMetrics } from './metrics/dns-metrics.ts';
import { metricsStage } from './metrics/stage.ts';
import type { ResponseRateLimiter } from './rate-limit/rate-limit.ts';
import { rateLimitStage } from './rate-limit/stage.ts';
import type { SigningBudget } from './rate-limit/signing-budget.ts';
import type { TransferResponder } from './transfer/responder.ts';
import { transferStage } from './transfer/stage.ts';
import { SIGNATURE_CACHE_LIMITS } from './signer/signature-cache.ts';
import { signerStage } from './signer/stage.ts';
import type { ZoneIndex } from './zone/index.ts';

export interface ChainSettings {
  /** Serve repeated questions from encoded answers (default on; off measures the engine). */
  cache?: boolean;
  cacheEntries?: number;
  /** The answer cache holds the zones its answers came from weakly (an index whose zones come and go). */
  cacheWeakZones?: boolean;
  /** Where a client is; geo-targeted answers pick their variant by it. */
  locate?: (address: string) => ClientLocation;
  /** DNS Cookies (RFC 7873/9018): answer cookies with ours; absent, cookies are ignored. */
  cookies?: ServerCookies;
  /** UDP response-rate limiting; absent: off. */
  rateLimiter?: ResponseRateLimiter;
  /** This name server's identifier, sent to queries that ask (RFC 5001 NSID); absent: none. */
  nsid?: Buffer;
  /** Zone transfers and TSIG (./transfer): given first look at the few messages it wants. */
  transfers?: TransferResponder;
  /** The signature cache's bounds (entries, estimated bytes); absent: the defaults. */
  signatureCache?: { entries: number; bytes: number };
  /** Bounds on fresh signatures per zone and per client network; absent: unbounded. */
  signingBudget?: SigningBudget;
}

export function queryChain(index: ZoneIndex, metrics: DnsMetrics, settings: ChainSettings): DnsStage[] {
  return [
    cookieStage(settings.cookies, metrics),
    rateLimitStage(settings.rateLimiter),
    transferStage(settings.transfers),
    metricsStage(metrics),
    ...(settings.cache === false ? [] : [answerCacheStage(index, metrics, { entries: settings.cacheEntries, locate: settings.locate, cookies: settings.cookies !== undefined, weakZones: settings.cacheWeakZones })]),
    engineStage(index, metrics, { locate: settings.locate, nsid: settings.nsid }),
    signer(metrics, settings),
  ];
}

function signer(metrics: DnsMetrics, settings: ChainSettings): DnsStage {
  const budget = settings.signingBudget;
  const { stage, stats } = signerStage(settings.signatureCache ?? SIGNATURE_CACHE_LIMITS, { budget });
  metrics.signing = () => ({
    signed: stats.signed,
    cacheHits: stats.cache.hits,
    entries: stats.cache.size,
    bytes: stats.cache.bytes,
    evicted: stats.cache.evicted,
    refusedZone: budget?.refused.zone ?? 0,
    refusedClient: budget?.refused.client ?? 0,
  });
  return stage;
}
