// Every edge family a scraper sees, declared once: name, type, help, labels and how the figures
// of an edge's worker processes combine (summed, but for the domains every worker knows alike).
// The per-domain figures stay out (edge-metrics.ts): series must not grow with the customers.
import { family, single, type MetricsSnapshot } from '../common/metrics/family.ts';

/** Upstream latency buckets, seconds (Prometheus `le`). */
export const UPSTREAM_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export const EDGE_REQUESTS = family({ name: 'palisade_edge_requests_total', type: 'counter', help: 'Edge requests by status class and cache status.', labels: ['class', 'cache'] });
export const EDGE_REQUESTS_BY_PROTOCOL = family({ name: 'palisade_edge_requests_by_protocol_total', type: 'counter', help: 'Edge requests by the protocol the client spoke.', labels: ['protocol'] });
export const EDGE_UPSTREAM_SECONDS = family({ name: 'palisade_edge_upstream_seconds', type: 'histogram', help: "Time until the backend's response headers arrived.", buckets: UPSTREAM_BUCKETS });
export const EDGE_BLOCKED = family({ name: 'palisade_edge_blocked_total', type: 'counter', help: 'Requests refused by a protection, by reason.', labels: ['reason'] });
export const EDGE_ACTIVE_CONNECTIONS = family({ name: 'palisade_edge_active_connections', type: 'gauge', help: 'Client connections open now.' });
export const EDGE_CACHE_ENTRIES = family({ name: 'palisade_edge_cache_entries', type: 'gauge', help: 'Objects in the edge cache (memory and disk).' });
export const EDGE_CACHE_MEMORY_BYTES = family({ name: 'palisade_edge_cache_memory_bytes', type: 'gauge', help: 'Bytes the memory cache holds.' });
/** Every worker holds the same routes: summed they would count N times. */
export const EDGE_DOMAINS = family({ name: 'palisade_edge_domains', type: 'gauge', help: 'Domains this edge knows.', combine: 'max' });
export const EDGE_BODY_BUFFER_BYTES = family({ name: 'palisade_edge_body_buffer_bytes', type: 'gauge', help: 'Bytes of request bodies reserved now for baseprotection to read (PALISADE_EDGE_BODY_BUFFER_MB).' });
export const LOG_LINES_DROPPED = family({ name: 'palisade_log_lines_dropped', type: 'gauge', help: 'Log lines dropped since start because the log output did not keep up (its backlog is bounded).' });

// What the feed consumer and the uptime reporter of an edge know (one of each per edge: the
// primary's, with workers).
export const EDGE_REVISION_APPLIED = family({ name: 'palisade_edge_revision_applied', type: 'gauge', help: 'Change-feed revision this edge has applied.', combine: 'first' });
export const EDGE_UPTIME_REPORTS_SENT = family({ name: 'palisade_edge_uptime_reports_sent', type: 'gauge', help: 'Uptime reports the API accepted since start.', combine: 'first' });
export const EDGE_UPTIME_REPORTS_DROPPED = family({ name: 'palisade_edge_uptime_reports_dropped', type: 'gauge', help: 'Uptime reports dropped undelivered since start (the oldest, past 30 kept).', combine: 'first' });

/** The feed's revision and the uptime reports of an edge, as its families. */
export function edgeFeedFigures(revision: number, reports: { sent: number; dropped: number }): MetricsSnapshot {
  return [single(EDGE_REVISION_APPLIED, revision), single(EDGE_UPTIME_REPORTS_SENT, reports.sent), single(EDGE_UPTIME_REPORTS_DROPPED, reports.dropped)];
}
