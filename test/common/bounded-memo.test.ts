import { expect, it } from 'vitest';
import { boundedMemo } from '../../src/common/bounded-memo.ts';

it('computes a key once, undefined results included, and starts again empty when full', () => {
  const calls: string[] = [];
  const memo = boundedMemo((key: string) => {
    calls.push(key);
    return key === 'none' ? undefined : key.length;
  }, 3);
  expect([memo('a'), memo('a'), memo('none'), memo('none'), memo('bb')]).toEqual([1, 1, undefined, undefined, 2]);
  expect(calls).toEqual(['a', 'none', 'bb']);
  // A fourth key: the memo holds at most 3, so it starts again (an attacker's keys cost time, never memory).
  expect(memo('ccc')).toBe(3);
  expect(memo('a')).toBe(1);
  expect(calls).toEqual(['a', 'none', 'bb', 'ccc', 'a']);
});
