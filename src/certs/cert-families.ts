// The certificate worker's metric families, declared once.
import { byLabel, family, single, type MetricsSnapshot } from '../common/metrics/family.ts';

const ATTEMPTS = family({ name: 'palisade_cert_attempts_total', type: 'counter', help: 'Certificate issuance attempts by this process, by outcome.', labels: ['outcome'] });
const ORDERS = family({ name: 'palisade_cert_orders_total', type: 'counter', help: 'ACME orders placed by this process.' });
const FAILURES = family({ name: 'palisade_cert_failures_total', type: 'counter', help: "Failed attempts by problem type (the CA's, or palisade:… before ordering).", labels: ['type'] });
const LEADER = family({ name: 'palisade_cert_worker_leader', type: 'gauge', help: "Whether this process holds the certificate work's lease (1) or not (0)." });

export function certMetrics(counts: { issued: number; failed: number; orders: number; leader: number }, failures: ReadonlyMap<string, number>): MetricsSnapshot {
  return [
    byLabel(ATTEMPTS, [
      ['issued', counts.issued],
      ['failed', counts.failed],
    ]),
    single(ORDERS, counts.orders),
    byLabel(FAILURES, failures),
    single(LEADER, counts.leader),
  ];
}
