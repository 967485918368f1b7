// The edge's counters for /metrics (Prometheus text) and, per domain, every proxied request's
// upstream time and outcome — what the uptime statistics build on. Per-domain figures stay in
// memory (bounded: least recently used domains beyond the bound are forgotten) and out of the
// Prometheus text, whose series must not grow with the number of customers.
import { LRUCache } from 'lru-cache';

/** Upstream latency buckets, seconds (Prometheus `le`). */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

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

/** What the gauges the roles add mean (every family a scraper sees has its HELP). */
const GAUGE_HELP: Record<string, string> = {
  palisade_edge_cache_entries: 'Objects in the edge cache (memory and disk)',
  palisade_edge_cache_memory_bytes: 'Bytes the memory cache holds',
  palisade_edge_domains: 'Domains this edge knows',
  palisade_edge_body_buffer_bytes: 'Bytes of request bodies reserved now for baseprotection to read (PALISADE_EDGE_BODY_BUFFER_MB)',
  palisade_edge_revision_applied: 'Change-feed revision this edge has applied',
  palisade_edge_uptime_reports_sent: 'Uptime reports the API accepted since start',
  palisade_edge_uptime_reports_dropped: 'Uptime reports dropped undelivered since start (the oldest, past 30 kept)',
  palisade_log_lines_dropped: 'Log lines dropped since start because the log output did not keep up (its backlog is bounded)',
};

export class EdgeMetrics {
  private readonly bucketCounts = BUCKETS.map(() => 0);
  private upstreamCount = 0;
  private upstreamSum = 0;
  activeConnections = 0;
  private readonly blocks = new Map<string, number>();

  blocked(reason: string): void {
    this.blocks.set(reason, (this.blocks.get(reason) ?? 0) + 1);
  }
  readonly perDomain = new LRUCache<string, DomainStats>({ max: 100_000 });

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

  render(extra: Record<string, number>): string {
    const lines = ['# HELP palisade_edge_requests_total Edge requests by status class and cache status.', '# TYPE palisade_edge_requests_total counter'];
    for (const [i, counts] of this.byClass.entries()) {
      for (const [cache, count] of counts) lines.push(`palisade_edge_requests_total{class="${i + 1}xx",cache="${cache}"} ${count}`);
    }
    lines.push('# HELP palisade_edge_requests_by_protocol_total Edge requests by the protocol the client spoke.', '# TYPE palisade_edge_requests_by_protocol_total counter');
    for (const [protocol, count] of this.byProtocol) lines.push(`palisade_edge_requests_by_protocol_total{protocol="${protocol}"} ${count}`);
    lines.push('# HELP palisade_edge_upstream_seconds Time until the backend\'s response headers arrived.', '# TYPE palisade_edge_upstream_seconds histogram');
    BUCKETS.forEach((le, i) => lines.push(`palisade_edge_upstream_seconds_bucket{le="${le}"} ${this.bucketCounts[i]}`));
    lines.push(`palisade_edge_upstream_seconds_bucket{le="+Inf"} ${this.upstreamCount}`, `palisade_edge_upstream_seconds_sum ${this.upstreamSum}`, `palisade_edge_upstream_seconds_count ${this.upstreamCount}`);
    lines.push('# HELP palisade_edge_blocked_total Requests refused by a protection, by reason.', '# TYPE palisade_edge_blocked_total counter');
    for (const [reason, count] of this.blocks) lines.push(`palisade_edge_blocked_total{reason="${reason}"} ${count}`);
    lines.push('# HELP palisade_edge_active_connections Client connections open now.', '# TYPE palisade_edge_active_connections gauge', `palisade_edge_active_connections ${this.activeConnections}`);
    for (const [name, value] of Object.entries(extra)) lines.push(`# HELP ${name} ${GAUGE_HELP[name] ?? name.replaceAll('_', ' ')}.`, `# TYPE ${name} gauge`, `${name} ${value}`);
    return `${lines.join('\n')}\n`;
  }
}
