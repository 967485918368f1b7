// Issue 25 §1: one account's flood of settings changes must not hold back another account's
// changes. Real `palisade serve` and two `palisade dns` fed by its change feed; an attacker PATCHes
// two 4 MB zones (1,000 TXT × 4,000 bytes) at 36/s from one key while a victim adds a record every
// 200 ms; every victim write must reach serve's DNS, ns1 and ns2 quickly, and every consumer must
// have caught up within a second of the attack's end. Shorter attacks (5 s) than the 20 s;
// `node --import tsx bench/feed-fairness.ts` runs the full cases.
import { afterAll, describe, expect, it } from 'vitest';
import { formatDelays, runFeedAttack, type AttackFigures } from '../helpers/feed-attack.ts';
import { removeTempDirs } from '../helpers/temp.ts';

/**
 * The bound is p99 ≤ 100 ms. This test runs on two shared cores beside its own three
 * servers and load generator, where a neighbour's burst alone has cost a write 650 ms: it asserts
 * bounds that still tell the fix from the flaw by far (before it: p50 9–20 s, writes not visible
 * after 30 s, caught up 30 s after 8 s of attack; 5 s of it here) and prints the real figures; the bench
 * measures the cases (p99 9–36 ms on a quiet machine). Each bound is at least six times
 * under the flaw's figure and ten times over the fix's.
 */
const P50_BOUND_MS = 500;
const P99_BOUND_MS = 2000;
const CATCH_UP_BOUND_MS = 5000;

afterAll(() => removeTempDirs());

function report(figures: AttackFigures): void {
  console.log(formatDelays('victim propagation during the attack', figures.attack));
  console.log(`victim writes slower than 100 ms: ${JSON.stringify(figures.slow)}`);
  console.log(`edits: ${figures.edits.sent} sent (${figures.edits.perSecond}/s), ${figures.edits.failed} failed; catch-up ${JSON.stringify(figures.catchUpMs)}; attacker's zones as left ${JSON.stringify(figures.attackerSettledMs)}`);
  expect(figures.edits.failed).toBe(0);
  for (const [server, delays] of Object.entries(figures.attack)) {
    expect(delays.missing, server).toBe(0);
    expect(delays.p50, server).toBeLessThanOrEqual(P50_BOUND_MS);
    expect(delays.p99, server).toBeLessThanOrEqual(P99_BOUND_MS);
  }
  for (const [server, ms] of Object.entries(figures.catchUpMs)) expect(ms, server).toBeLessThanOrEqual(CATCH_UP_BOUND_MS);
}

describe('the change feed under one account\'s flood of settings changes', () => {
  it('tags (no name server uses them), one key, two 4 MB zones, 36 PATCHes/s: the victim\'s changes reach every DNS server within the bound', { timeout: 180_000 }, async () => {
    const figures = await runFeedAttack({ attackMs: 5_000, keys: 1, ratePerKey: 36, zones: 2, log: (line) => console.log(line) });
    report(figures);
  });

  it('tags, mask and activation on and off in turn (zones rebuilt from the records held, bounded per zone): the same, and the latest settings land', { timeout: 180_000 }, async () => {
    const figures = await runFeedAttack({ attackMs: 5_000, keys: 1, ratePerKey: 36, zones: 2, edit: 'mixed', log: (line) => console.log(line) });
    report(figures);
    // A zone's rebuilds wait at most one token of its budget (5 s) after the burst.
    for (const [server, ms] of Object.entries(figures.attackerSettledMs)) expect(ms, server).toBeLessThanOrEqual(15_000);
  });
});
