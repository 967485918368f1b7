// Every whole-number setting keeps its bounds as declared: the value just past either end is one
// problem line starting with its name, and the ends themselves are accepted (with the settings
// bound to it moved along where one must not exceed another).
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { dnsWorkers, dnsWorkerZones, MAX_DNS_WORKERS } from '../../src/config/dns.ts';
import { SETTING_GROUPS } from '../../src/config/groups.ts';
import type { Setting } from '../../src/config/kinds.ts';

/** Read by loadConfig: the dns role's workers and the edge's worker index are read on their own. */
const LOADED_ELSEWHERE = new Set(['PALISADE_DNS_WORKERS', 'PALISADE_EDGE_WORKER']);
const bounded = SETTING_GROUPS.flatMap((g) => Object.entries(g.settings))
  .map(([name, s]) => ({ name, ...(s as Setting<unknown> & { min?: number; max?: number }) }))
  .filter((s): s is typeof s & { min: number; max: number } => !LOADED_ELSEWHERE.has(s.name) && typeof s.min === 'number' && typeof s.max === 'number')
  .map(({ name, min, max }) => ({ name, min, max }));

/** Settings another must not exceed (or fall under): moved to their own ends when one is tried at its end. */
const ROOM: Record<string, Record<string, string>> = {
  max: { PALISADE_DNS_IXFR_ACCOUNT_BYTES: String(2 ** 40), PALISADE_DNS_IXFR_JOURNAL_BYTES: String(2 ** 40), PALISADE_EDGE_BODY_BUFFER_MB: '1048576', PALISADE_EDGE_BODY_MAX_MS: '0' },
  min: { PALISADE_DNS_IXFR_ZONE_BYTES: '65536', PALISADE_DNS_IXFR_ACCOUNT_BYTES: '65536', PALISADE_EDGE_BODY_GRACE_MS: '100', PALISADE_EDGE_BODY_BUFFER_PER_CLIENT_MB: '1' },
};

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig({ PALISADE_DATA_DIR: '/nonexistent-data-dir', ...env });
    return [];
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return error.problems;
  }
}

describe('whole-number settings', () => {
  it('there are many (the table is read)', () => expect(bounded.length).toBeGreaterThan(60));

  for (const { name, min, max } of bounded) {
    it(`${name}: ${min} to ${max}`, () => {
      expect(problemsOf({ ...ROOM.max, [name]: String(max) })).toEqual([]);
      expect(problemsOf({ ...ROOM.min, [name]: String(min) })).toEqual([]);
      // A value past its bounds may break a bound between settings too (that line follows).
      expect(problemsOf({ [name]: String(max + 1) })[0]).toBe(`${name}=${max + 1}: must be an integer from ${min} to ${max}`);
      if (min > 0) expect(problemsOf({ [name]: String(min - 1) })[0]).toBe(`${name}=${min - 1}: must be an integer from ${min} to ${max}`);
      expect(problemsOf({ [name]: 'many' })).toEqual([`${name}=many: must be an integer from ${min} to ${max}`]);
    });
  }

  it('PALISADE_DNS_WORKERS is checked by the dns role, with what unset means', () => {
    expect(problemsOf({ PALISADE_DNS_WORKERS: 'many' })).toEqual([]);
    expect(dnsWorkers({ PALISADE_DNS_WORKERS: 'many' }).problem).toBe(`PALISADE_DNS_WORKERS=many: must be an integer from 1 to ${MAX_DNS_WORKERS} (unset: one per core)`);
    expect(dnsWorkers({ PALISADE_DNS_WORKERS: '3' })).toEqual({ workers: 3 });
    expect(dnsWorkers({ PALISADE_DNS_WORKERS: '' }).workers).toBeGreaterThanOrEqual(1);
  });

  it('PALISADE_DNS_WORKER_ZONES likewise: index unless told stored', () => {
    expect(problemsOf({ PALISADE_DNS_WORKER_ZONES: 'lmdb' })).toEqual([]);
    expect(dnsWorkerZones({ PALISADE_DNS_WORKER_ZONES: 'lmdb' }).problem).toBe('PALISADE_DNS_WORKER_ZONES=lmdb: must be one of index, stored');
    expect(dnsWorkerZones({})).toEqual({ zones: 'index' });
    expect(dnsWorkerZones({ PALISADE_DNS_WORKER_ZONES: '' })).toEqual({ zones: 'index' });
    expect(dnsWorkerZones({ PALISADE_DNS_WORKER_ZONES: 'stored' })).toEqual({ zones: 'stored' });
  });
});
