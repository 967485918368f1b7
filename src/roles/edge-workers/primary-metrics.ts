// /metrics of an edge with workers: the workers' own figures merged (each sends its text with its
// stats), then what only the primary knows — the workers' states and revisions, the shared
// cache's size, the feed and the uptime reports.
import { feedMetrics } from '../feed-health.ts';
import { mergeMetrics } from '../metrics-merge.ts';
import type { WorkerPool } from './worker-pool.ts';

/** Gauges every worker holds alike: summed they would count N times. */
const ALIKE = new Set(['palisade_edge_domains']);

export interface PrimaryFigures {
  pool: WorkerPool;
  /** Each worker's last metrics text, by worker index. */
  workerTexts: Iterable<string>;
  cacheDiskBytes: number;
  applied: number;
  lag: number;
  reports: { sent: number; dropped: number };
  pushes: { accepted: number; upToDate: number; rejected: number };
}

export function primaryMetrics(f: PrimaryFigures): string {
  const { pool } = f;
  const lines = [
    '# HELP palisade_edge_workers Worker processes of this edge, by whether they serve now.',
    '# TYPE palisade_edge_workers gauge',
    `palisade_edge_workers{state="serving"} ${pool.readyCount}`,
    `palisade_edge_workers{state="starting"} ${pool.slots.length - pool.readyCount}`,
    '# HELP palisade_edge_worker_restarts_total Workers started again after they stopped.',
    '# TYPE palisade_edge_worker_restarts_total counter',
    `palisade_edge_worker_restarts_total ${pool.restarts}`,
    '# HELP palisade_edge_worker_revision_applied Change-feed revision each worker serves.',
    '# TYPE palisade_edge_worker_revision_applied gauge',
    ...pool.slots.map((s) => `palisade_edge_worker_revision_applied{worker="${s.index}"} ${s.revision}`),
    '# HELP palisade_edge_cache_disk_bytes Bytes in the shared cache directory at the last sweep.',
    '# TYPE palisade_edge_cache_disk_bytes gauge',
    `palisade_edge_cache_disk_bytes ${f.cacheDiskBytes}`,
  ];
  const own = `# HELP palisade_edge_revision_applied Change-feed revision this edge has applied.\n# TYPE palisade_edge_revision_applied gauge\npalisade_edge_revision_applied ${f.applied}\n# HELP palisade_edge_uptime_reports_sent Uptime reports the API accepted since start.\n# TYPE palisade_edge_uptime_reports_sent gauge\npalisade_edge_uptime_reports_sent ${f.reports.sent}\n# HELP palisade_edge_uptime_reports_dropped Uptime reports dropped undelivered since start (the oldest, past 30 kept).\n# TYPE palisade_edge_uptime_reports_dropped gauge\npalisade_edge_uptime_reports_dropped ${f.reports.dropped}\n`;
  return mergeMetrics(f.workerTexts, { largest: ALIKE }) + own + `${lines.join('\n')}\n` + feedMetrics(f.lag, f.pushes);
}
