import { getHeapStatistics } from 'node:v8';
import { LRUCache } from 'lru-cache';
import { describe, expect, it } from 'vitest';
import { lruByCount } from '../../src/edge/lru-by-count.ts';

const heapUsed = () => getHeapStatistics().used_heap_size;

describe('lruByCount', () => {
  it('keeps at most its number of entries, dropping the least recently used first', () => {
    const lru = lruByCount<string, number>(3);
    lru.set('a', 1).set('b', 2).set('c', 3);
    expect(lru.get('a')).toBe(1); // a is now the most recent
    lru.set('d', 4);
    expect([...lru.keys()].sort()).toEqual(['a', 'c', 'd']);
    expect(lru.size).toBe(3);
  });

  it('calls dispose for what it drops', () => {
    const dropped: string[] = [];
    const lru = lruByCount<string, number>(2, { dispose: (_v, k) => dropped.push(k) });
    lru.set('a', 1).set('b', 2).set('c', 3);
    expect(dropped).toEqual(['a']);
  });

  it('holds memory for the entries it has, not for the most it may have', () => {
    // lru-cache given `max` fills two lists of that length at once: 2 × 8 bytes × 1,000,000.
    const keep: unknown[] = [];
    const before = heapUsed();
    keep.push(lruByCount<string, number>(1_000_000));
    const ours = heapUsed() - before;
    const before2 = heapUsed();
    keep.push(new LRUCache<string, number>({ max: 1_000_000 }));
    const preallocated = heapUsed() - before2;
    expect(preallocated).toBeGreaterThan(10_000_000);
    expect(ours).toBeLessThan(1_000_000);
    expect(keep).toHaveLength(2);
  });
});
