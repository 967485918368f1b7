// How the answer cache holds the zones its answers came from: as they are by default (an index
// that holds every zone), weakly when asked (a DNS worker answering from the stored state, whose
// zones are built on demand and dropped): either way an answer from a zone replaced is stale.
import { describe, expect, it } from 'vitest';
import { AnswerCache } from '../../src/dns/cache/answer-cache.ts';
import type { ZoneData } from '../../src/dns/zone/types.ts';

const zone = () => ({ apex: 'held.example', stale: false }) as unknown as ZoneData;

describe('answer cache: the zones an answer came from', () => {
  for (const weak of [false, true]) {
    it(`${weak ? 'weakly' : 'as they are (the default)'}: stale once its zone is`, () => {
      const cache = new AnswerCache(10, weak);
      const z = zone();
      const held = cache.hold([z]);
      expect(held[0] instanceof WeakRef).toBe(weak);
      cache.set('k', { full: Buffer.alloc(20), zones: held, generation: 1 });
      expect(cache.get('k', 1)).toBeDefined();
      z.stale = true;
      expect(cache.get('k', 1)).toBeUndefined();
    });
  }

  it('the default is as they are', () => {
    expect(new AnswerCache(10).hold([zone()])[0] instanceof WeakRef).toBe(false);
  });
});
