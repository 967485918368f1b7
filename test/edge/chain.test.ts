// The edge chain's order (src/edge/chain.ts) as a property of the list itself: every phase present,
// in Pingora's order, and a list out of that order refused when the chain is built. What each
// stage does is tested end to end against a real edge in the other files here.
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { edgeChain } from '../../src/edge/chain.ts';
import { ChainRunner } from '../../src/edge/stage/run.ts';
import { PHASES, type ChainEntry } from '../../src/edge/stage/stage.ts';
import type { EdgeParts } from '../../src/edge/stage/parts.ts';

// The stage factories only keep what they are given until a request comes; no request comes here.
const parts = { options: {} } as unknown as EdgeParts;
const log = pino({ level: 'silent' });

describe('edge chain', () => {
  const entries = edgeChain(parts);

  it('lists every phase, in order, and each stage once', () => {
    const phases = entries.map((entry) => entry.phase);
    expect([...new Set(phases)]).toEqual([...PHASES]);
    const names = entries.map((entry) => entry.name);
    expect(new Set(names).size).toBe(names.length);
    expect(() => new ChainRunner(entries, log)).not.toThrow();
  });

  it('keeps the order of checks: IP lists before the WAF, the WAF before the challenge, the cache before the backend share, the share before the proxy', () => {
    const at = (words: string) => entries.findIndex((entry) => entry.name.includes(words));
    expect(at('IP lists')).toBeLessThan(at('client rate'));
    expect(at('the body read')).toBeLessThan(at('JS challenge'));
    expect(at('cache → HIT')).toBeLessThan(at("share of the backend"));
    expect(at("share of the backend")).toBeLessThan(at('proxy →'));
    for (const words of ['IP lists', 'client rate', 'the body read', 'JS challenge', 'cache → HIT', "share of the backend", 'proxy →']) expect(at(words), words).toBeGreaterThanOrEqual(0);
  });

  it('refuses a list whose phases are out of order', () => {
    const late: ChainEntry = { phase: 'request head', name: 'a head check after the proxy', run: () => undefined };
    expect(() => new ChainRunner([...entries, late], log)).toThrow(/a head check after the proxy/);
  });
});
