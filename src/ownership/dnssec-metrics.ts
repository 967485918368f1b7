// What the parent monitor did for DNSSEC (dnssec-parent.ts), for /metrics: its looks at parents'
// DS sets by outcome — a parent that gives no definite answer holds domains in their state, and
// an operator sees it here before a customer asks why a rollover or a turning off does not move —
// the turnings-off it ended and the rollover phases it moved on.
import { byLabel, family, single, type MetricsSnapshot } from '../common/metrics/family.ts';

const LOOKS = family({ name: 'palisade_dnssec_parent_looks_total', type: 'counter', help: 'Looks at a parent zone\'s DS set for a signing domain, by outcome (seen: a definite answer; no_answer: none, the domain\'s state held).', labels: ['outcome'] });
const UNSIGNED = family({ name: 'palisade_dnssec_unsigning_ended_total', type: 'counter', help: 'Domains whose turning DNSSEC off ended (the parent\'s DS gone and its TTL over): their name servers stopped signing.' });
const ROLLED = family({ name: 'palisade_dnssec_rollover_steps_total', type: 'counter', help: 'Key rollover phases ended by the monitor (a new key signing, an old key removed).' });

export interface DnssecParentCounts {
  looks: number;
  noAnswer: number;
  unsigned: number;
  rolled: number;
}

export function dnssecParentMetrics(counts: DnssecParentCounts): MetricsSnapshot {
  return [
    byLabel(LOOKS, [
      ['seen', counts.looks - counts.noAnswer],
      ['no_answer', counts.noAnswer],
    ]),
    single(UNSIGNED, counts.unsigned),
    single(ROLLED, counts.rolled),
  ];
}
