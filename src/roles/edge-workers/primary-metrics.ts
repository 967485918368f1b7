// /metrics of an edge with workers: the workers' own figures merged (each sends its snapshot with
// its stats; each family merged by its own rule, see edge/edge-families.ts), then what only the
// primary knows — the workers' states and revisions, the shared cache's size, the feed and the
// uptime reports.
import { byLabel, family, single, type MetricsSnapshot } from '../../common/metrics/family.ts';
import { mergeSnapshots } from '../../common/metrics/merge.ts';
import { edgeFeedFigures } from '../../edge/edge-families.ts';
import { feedMetrics } from '../feed-health.ts';
import type { WorkerPool } from './worker-pool.ts';

const WORKERS = family({ name: 'palisade_edge_workers', type: 'gauge', help: 'Worker processes of this edge, by whether they serve now.', labels: ['state'], combine: 'first' });
const WORKER_RESTARTS = family({ name: 'palisade_edge_worker_restarts_total', type: 'counter', help: 'Workers started again after they stopped.', combine: 'first' });
const WORKER_REVISION = family({ name: 'palisade_edge_worker_revision_applied', type: 'gauge', help: 'Change-feed revision each worker serves.', labels: ['worker'], combine: 'first' });
const CACHE_DISK_BYTES = family({ name: 'palisade_edge_cache_disk_bytes', type: 'gauge', help: 'Bytes in the shared cache directory at the last sweep.', combine: 'first' });

export interface PrimaryFigures {
  pool: WorkerPool;
  /** Each worker's last figures, by worker index. */
  workerSnapshots: Iterable<MetricsSnapshot>;
  cacheDiskBytes: number;
  applied: number;
  lag: number;
  reports: { sent: number; dropped: number };
  pushes: { accepted: number; upToDate: number; rejected: number };
}

export function primaryMetrics(f: PrimaryFigures): MetricsSnapshot {
  const { pool } = f;
  const own: MetricsSnapshot = [
    ...edgeFeedFigures(f.applied, f.reports),
    byLabel(WORKERS, [
      ['serving', pool.readyCount],
      ['starting', pool.slots.length - pool.readyCount],
    ]),
    single(WORKER_RESTARTS, pool.restarts),
    byLabel(WORKER_REVISION, pool.slots.map((s) => [String(s.index), s.revision] as const)),
    single(CACHE_DISK_BYTES, f.cacheDiskBytes),
    ...feedMetrics(f.lag, f.pushes),
  ];
  return mergeSnapshots([...f.workerSnapshots, own]);
}
