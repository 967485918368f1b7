// What the primary of a name server alone knows of its DNS workers, as metric families.
import { byLabel, family, single, type MetricsSnapshot } from '../../common/metrics/family.ts';
import type { DnsWorkers } from './supervisor.ts';

const WORKERS = family({ name: 'palisade_dns_workers', type: 'gauge', help: 'DNS worker processes taking batches (the primary included).', combine: 'first' });
const WORKER_REVISION = family({ name: 'palisade_dns_worker_revision_applied', type: 'gauge', help: 'Revision each DNS worker answers from (0 is the primary).', labels: ['worker'], combine: 'first' });
const WORKER_RESTARTS = family({ name: 'palisade_dns_worker_restarts_total', type: 'counter', help: 'DNS workers started again after exiting.', combine: 'first' });

export function dnsWorkersMetrics(workers: DnsWorkers): MetricsSnapshot {
  const health = workers.health();
  return [
    single(WORKERS, health.filter((w) => w.live).length),
    byLabel(WORKER_REVISION, health.map((w) => [String(w.worker), w.revision] as const)),
    single(WORKER_RESTARTS, workers.restarts),
  ];
}
