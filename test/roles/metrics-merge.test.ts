// Several processes' /metrics seen as one: samples added up per series, each family kept together
// under its HELP/TYPE, the primary's own families taken from it alone, alike gauges not summed.
import { describe, expect, it } from 'vitest';
import { mergeMetrics } from '../../src/roles/metrics-merge.ts';

const primary = [
  '# HELP q Queries.',
  '# TYPE q counter',
  'q{t="udp"} 5',
  '# HELP zones Zones served.',
  '# TYPE zones gauge',
  'zones 10',
  '# HELP known Domains known.',
  '# TYPE known gauge',
  'known 7',
  '',
].join('\n');
const worker = [
  '# HELP q Queries.',
  '# TYPE q counter',
  'q{t="udp"} 3',
  'q{t="tcp"} 2',
  '# HELP zones Zones served.',
  '# TYPE zones gauge',
  'zones 9',
  '# HELP known Domains known.',
  '# TYPE known gauge',
  'known 6',
  '',
].join('\n');

describe('mergeMetrics', () => {
  it('adds series up and keeps a family together, a series only some processes have included', () => {
    const text = mergeMetrics([primary, worker]);
    expect(text).toBe(
      ['# HELP q Queries.', '# TYPE q counter', 'q{t="udp"} 8', 'q{t="tcp"} 2', '# HELP zones Zones served.', '# TYPE zones gauge', 'zones 19', '# HELP known Domains known.', '# TYPE known gauge', 'known 13', ''].join('\n'),
    );
  });

  it("takes the primary's value for firstOnly families and the largest for largest ones", () => {
    const text = mergeMetrics([primary, worker], { firstOnly: new Set(['zones']), largest: new Set(['known']) });
    expect(text).toMatch(/^zones 10$/m);
    expect(text).toMatch(/^known 7$/m);
    expect(text).toMatch(/^q\{t="udp"\} 8$/m);
  });

  it('nothing in, nothing out', () => {
    expect(mergeMetrics([])).toBe('');
  });
});
