// The supervisor's restart delays: quick after a first crash, doubling while a part keeps crashing
// soon after each start, capped, and forgiven once a part has run for a while.
import { describe, expect, it } from 'vitest';
import { crashesAfter, restartDelay, RESTART_FIRST_MS, RESTART_FORGIVE_MS, RESTART_MAX_MS } from '../../src/roles/supervisor/restart-backoff.ts';

describe('restart backoff', () => {
  it('doubles from the first delay and stops at the cap', () => {
    expect([1, 2, 3, 4].map(restartDelay)).toEqual([RESTART_FIRST_MS, RESTART_FIRST_MS * 2, RESTART_FIRST_MS * 4, RESTART_FIRST_MS * 8]);
    expect(restartDelay(50)).toBe(RESTART_MAX_MS);
    expect(restartDelay(1_000_000)).toBe(RESTART_MAX_MS);
  });

  it('counts crashes in a row only while a part dies soon after starting', () => {
    let crashes = 0;
    for (let i = 0; i < 5; i++) crashes = crashesAfter(crashes, 100);
    expect(crashes).toBe(5);
    expect(crashesAfter(crashes, RESTART_FORGIVE_MS)).toBe(1);
    expect(restartDelay(crashesAfter(crashes, RESTART_FORGIVE_MS + 1))).toBe(RESTART_FIRST_MS);
  });
});
