// The metrics registry's pure parts: families declared once with their merge rule, snapshots of
// several processes merged by each family's rule (sum, max, first), and the one writer of
// Prometheus text — escaping as the format says, histograms cumulative with +Inf equal to the count.
import { describe, expect, it } from 'vitest';
import { byLabel, family, histogramOf, labelled, single } from '../../src/common/metrics/family.ts';
import { mergeSnapshots } from '../../src/common/metrics/merge.ts';
import { prometheusText } from '../../src/common/metrics/prometheus-text.ts';
import { readPrometheusText } from '../helpers/prometheus-text.ts';

const QUERIES = family({ name: 'q_total', type: 'counter', help: 'Queries.', labels: ['t'] });
const ZONES = family({ name: 'zones', type: 'gauge', help: 'Zones served.', combine: 'first' });
const KNOWN = family({ name: 'known', type: 'gauge', help: 'Domains known.', combine: 'max' });
const OPEN = family({ name: 'open', type: 'gauge', help: 'Connections open.' });
const LATENCY = family({ name: 'latency_seconds', type: 'histogram', help: 'Latency.', buckets: [0.1, 1] });

describe('mergeSnapshots', () => {
  const primary = [byLabel(QUERIES, [['udp', 5]]), single(ZONES, 10), single(KNOWN, 7), single(OPEN, 2), histogramOf(LATENCY, [1, 0, 1], 2.05)];
  const worker = [byLabel(QUERIES, [['udp', 3], ['tcp', 2]]), single(ZONES, 9), single(KNOWN, 6), single(OPEN, 4), histogramOf(LATENCY, [0, 2, 0], 1)];
  const merged = readPrometheusText(prometheusText(mergeSnapshots([primary, worker])));

  it('adds up counters, histograms and summing gauges series by series', () => {
    expect(merged.samples.get('q_total{t="udp"}')).toBe(8);
    expect(merged.samples.get('q_total{t="tcp"}')).toBe(2);
    expect(merged.samples.get('open{}')).toBe(6);
    expect(merged.samples.get('latency_seconds_bucket{le="0.1"}')).toBe(1);
    expect(merged.samples.get('latency_seconds_bucket{le="1"}')).toBe(3);
    expect(merged.samples.get('latency_seconds_bucket{le="+Inf"}')).toBe(4);
    expect(merged.samples.get('latency_seconds_count{}')).toBe(4);
    expect(merged.samples.get('latency_seconds_sum{}')).toBeCloseTo(3.05);
  });

  it('takes a `first` family from the primary alone and a `max` family at its largest', () => {
    expect(merged.samples.get('zones{}')).toBe(10);
    expect(merged.samples.get('known{}')).toBe(7);
  });

  it('takes a `first` family from the first process that has it', () => {
    const text = prometheusText(mergeSnapshots([[single(OPEN, 1)], [single(ZONES, 9)], [single(ZONES, 8)]]));
    expect(readPrometheusText(text).samples.get('zones{}')).toBe(9);
  });

  it('writes each family once, valid, in the order first seen', () => {
    expect(merged.problems).toEqual([]);
    expect(merged.families.map((f) => f.name)).toEqual(['q_total', 'zones', 'known', 'open', 'latency_seconds']);
    expect(mergeSnapshots([])).toEqual([]);
    expect(prometheusText([])).toBe('');
  });
});

describe('prometheusText', () => {
  it('escapes label values and HELP as the format says', () => {
    const NAMES = family({ name: 'names', type: 'gauge', help: 'A back\\slash\nand a line.', labels: ['consumer', 'kind'] });
    const text = prometheusText([labelled(NAMES, [[['a"b\\c\nd', 'x'], 1]])]);
    expect(text).toBe('# HELP names A back\\\\slash\\nand a line.\n# TYPE names gauge\nnames{consumer="a\\"b\\\\c\\nd",kind="x"} 1\n');
    expect(readPrometheusText(text).problems).toEqual([]);
  });

  it('writes a family without series as its HELP and TYPE alone, and a histogram cumulative', () => {
    const text = prometheusText([byLabel(QUERIES, []), histogramOf(LATENCY, [2, 0, 1], 3)]);
    expect(text).toBe(
      [
        '# HELP q_total Queries.',
        '# TYPE q_total counter',
        '# HELP latency_seconds Latency.',
        '# TYPE latency_seconds histogram',
        'latency_seconds_bucket{le="0.1"} 2',
        'latency_seconds_bucket{le="1"} 2',
        'latency_seconds_bucket{le="+Inf"} 3',
        'latency_seconds_sum 3',
        'latency_seconds_count 3',
        '',
      ].join('\n'),
    );
  });

  it('merges a family given twice by one process into one', () => {
    const text = prometheusText([single(OPEN, 1), single(OPEN, 2)]);
    expect(text).toBe('# HELP open Connections open.\n# TYPE open gauge\nopen 3\n');
  });
});

describe('family', () => {
  it('refuses what Prometheus would not read', () => {
    expect(() => family({ name: 'bad-name', type: 'gauge', help: '' })).toThrow(/not a Prometheus name/);
    expect(() => family({ name: 'h', type: 'histogram', help: '' })).toThrow(/need them/);
    expect(() => family({ name: 'h', type: 'histogram', help: '', buckets: [1, 0.5] })).toThrow(/ascending/);
    expect(() => family({ name: 'g', type: 'gauge', help: '', labels: ['le'] })).toThrow(/not allowed/);
  });
});

describe('the strict reader the /metrics tests use', () => {
  it('finds every breach a scraper would trip on', () => {
    const broken = [
      'a 1',
      '# HELP a A.',
      '# TYPE a gauge',
      '# HELP a A again.',
      'a 2',
      '# HELP h H.',
      '# TYPE h histogram',
      'h_bucket{le="0.1"} 3',
      'h_bucket{le="1"} 2',
      'h_bucket{le="+Inf"} 4',
      'h_sum 1',
      'h_count 5',
      '',
    ].join('\n');
    expect(readPrometheusText(broken).problems).toEqual([
      'a: a sample before its HELP',
      'a: a sample before its TYPE',
      'a: HELP after its samples',
      'a: TYPE after its samples',
      'a: a second HELP',
      'a: HELP after its samples',
      'a{}: written twice',
      'h{}: bucket le=1 below le=0.1 (not cumulative)',
      'h{}: +Inf bucket 4 is not the count 5',
    ]);
  });
});
