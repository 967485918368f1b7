// The edge's counters for /metrics (the families of edge-families.ts) and, per domain, every
// proxied request's upstream time and outcome — what the uptime statistics build on. Per-domain
// figures stay in memory (bounded: least recently used domains beyond the bound are forgotten) and
// out of /metrics, whose series must not grow with the number of customers.
import { lruByCount } from './lru-by-count.ts';
import { byLabel, labelled, single, type MetricsSnapshot } from '../common/metrics/family.ts';
import * as F from './edge-families.ts';

const BUCKETS = F.UPSTREAM_BUCKETS;

export type UpstreamOutcome = 'ok' | 'error-status' | 'unreachable' | 'timeout';

export interface DomainStats {
  requests: number;
  /** By outcome. */
  outcomes: Record<UpstreamOutcome, number>;
  /** Upstream time (ms) of answered requests, summed, and counts per bucket (same bounds as BUCKETS). */
  upstreamMsSum: number;
  buckets: number[];
  last: { at: number; outcome: UpstreamOutcome; ms?: number } | undefined;
}

export class EdgeMetrics {
  private readonly bucketCounts = BUCKETS.map(() => 0);
  private upstreamCount = 0;
  private upstreamSum = 0;
  activeConnections = 0;
  private readonly blocks = new Map<string, number>();

  blocked(reason: string): void {
    this.blocks.set(reason, (this.blocks.get(reason) ?? 0) + 1);
  }
  readonly perDomain = lruByCount<string, DomainStats>(100_000);

  /** Counts by status class (1–5) and cache status: no key built per request. */
  private readonly byClass: Array<Map<string, number>> = [1, 2, 3, 4, 5, 6].map(() => new Map());

  /** Requests by the protocol the client spoke (ALPN's names). */
  private readonly byProtocol = new Map<string, number>();

  request(status: number, cache: string, protocol: string): void {
    this.byProtocol.set(protocol, (this.byProtocol.get(protocol) ?? 0) + 1);
    const counts = this.byClass[Math.min(5, Math.max(0, Math.floor(status / 100) - 1))]!;
    counts.set(cache, (counts.get(cache) ?? 0) + 1);
  }

  upstream(domain: string, outcome: UpstreamOutcome, ms?: number): void {
    let stats = this.perDomain.get(domain);
    if (!stats) {
      stats = { requests: 0, outcomes: { ok: 0, 'error-status': 0, unreachable: 0, timeout: 0 }, upstreamMsSum: 0, buckets: BUCKETS.map(() => 0), last: undefined };
      this.perDomain.set(domain, stats);
    }
    stats.requests++;
    stats.outcomes[outcome]++;
    stats.last = { at: Date.now(), outcome, ms };
    if (ms === undefined) return;
    stats.upstreamMsSum += ms;
    this.upstreamCount++;
    this.upstreamSum += ms / 1000;
    for (let i = 0; i < BUCKETS.length; i++) {
      if (ms / 1000 <= BUCKETS[i]!) {
        this.bucketCounts[i]!++;
        stats.buckets[i]!++;
      }
    }
  }

  /** The figures as data; `extra`: the gauges the edge's owner adds (cache, routes, feed). */
  snapshot(extra: MetricsSnapshot): MetricsSnapshot {
    const requests: Array<[string[], number]> = [];
    for (const [i, counts] of this.byClass.entries()) for (const [cache, count] of counts) requests.push([[`${i + 1}xx`, cache], count]);
    return [
      labelled(F.EDGE_REQUESTS, requests),
      byLabel(F.EDGE_REQUESTS_BY_PROTOCOL, this.byProtocol),
      // The bucket counts are kept cumulative (each observation counted in every bucket it fits).
      { family: F.EDGE_UPSTREAM_SECONDS, histograms: [{ labels: [], counts: [...this.bucketCounts, this.upstreamCount], sum: this.upstreamSum }] },
      byLabel(F.EDGE_BLOCKED, this.blocks),
      single(F.EDGE_ACTIVE_CONNECTIONS, this.activeConnections),
      ...extra,
    ];
  }
}
