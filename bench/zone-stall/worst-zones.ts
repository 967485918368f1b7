// The worst zones the per-domain limits allow, for the stall benchmark and test: every record at
// one name, every TXT at its largest, every name at its longest, every record geo-targeted at
// every target there is, and delegation cuts under a long mask.
import { geoTargets } from '../../src/geo/targets.ts';
import type { RecordState } from '../../src/model/record.ts';
import { TXT_MAX_BYTES } from '../../src/model/record-values.ts';

export interface WorstZone {
  /** What the zone stresses. */
  label: string;
  /** Relative name of its biggest RRset, for the query that answers from it. */
  bigName: string;
  bigType: number;
  records: RecordState[];
  mask?: string;
}

const txt = (i: number, bytes: number) => `${String(i).padStart(6, '0')}${'x'.repeat(bytes - 6)}`;
const record = (id: number, name: string, type: RecordState['type'], value: string, target: number[] = []): RecordState => ({
  id,
  name,
  type,
  value,
  ttl: 300,
  priority: null,
  target,
});

/** A name of `length` characters under `apex`, as many one-character labels as fit, unique by `i`. */
function longName(i: number, apex: string): string {
  const head = `n${i}`;
  const room = 253 - apex.length - 1 - head.length;
  return [head, ...Array<string>(Math.floor(room / 2)).fill('a')].join('.');
}

export function worstZones(limit: number, apexOf: (label: string) => string): WorstZone[] {
  const allTargets = geoTargets.map((t) => t.id).sort((a, b) => a - b);
  const ids = (n: number) => Array.from({ length: n }, (_, i) => i + 1);
  const deepApex = apexOf('longest-names');
  const cutsMask = Array.from({ length: 200 }, (_, i) => `m${i}`).join(',');
  return [
    { label: 'txt-4000b-one-name', bigName: 'big', bigType: 16, records: ids(limit).map((i) => record(i, 'big', 6, txt(i, TXT_MAX_BYTES))) },
    { label: 'txt-255b-one-name', bigName: 'big', bigType: 16, records: ids(limit).map((i) => record(i, 'big', 6, txt(i, 255))) },
    {
      label: 'a-one-name-all-targets',
      bigName: 'big',
      bigType: 1,
      records: ids(limit).map((i) => record(i, 'big', 1, `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, allTargets)),
    },
    { label: 'longest-names', bigName: longName(1, deepApex), bigType: 1, records: ids(limit).map((i) => record(i, longName(i, deepApex), 1, '192.0.2.1')) },
    {
      label: 'ns-cuts-long-mask',
      bigName: 'm1',
      bigType: 2,
      mask: cutsMask,
      records: ids(limit).map((i) => record(i, `m${i % 400}`, 5, `ns${i}.example.net`)),
    },
  ];
}
