// Issue 25 §1: one account's flood of settings changes must not hold back another account's
// changes. Real `palisade serve` and two `palisade dns` fed by its change feed; an attacker PATCHes
// the tags of two 4 MB zones (1,000 TXT × 4,000 bytes) at 36/s from one key while a victim adds a
// record every 200 ms; every victim write must reach serve's DNS, ns1 and ns2 quickly, and every
// consumer must have caught up within a second of the attack's end. A shorter attack than the
// issue's 20 s; `node --import tsx bench/feed-fairness.ts` runs the full cases.
import { afterAll, describe, expect, it } from 'vitest';
import { formatDelays, runFeedAttack } from '../helpers/feed-attack.ts';
import { removeTempDirs } from '../helpers/temp.ts';

/**
 * The bound is p99 ≤ 100 ms; this test runs on two shared cores beside its own three
 * servers and load generator, so it asserts with some room and prints the real figures.
 */
const P99_BOUND_MS = 250;
const CATCH_UP_BOUND_MS = 1000;

afterAll(() => removeTempDirs());

describe('the change feed under a flood of tag changes', () => {
  it('one key, two 4 MB zones, 36 tag PATCHes/s: the victim\'s changes reach every DNS server within the bound', { timeout: 180_000 }, async () => {
    const figures = await runFeedAttack({ attackMs: 8_000, keys: 1, ratePerKey: 36, zones: 2, log: (line) => console.log(line) });
    console.log(formatDelays('victim propagation during the attack', figures.attack));
    console.log(`edits: ${figures.edits.sent} sent (${figures.edits.perSecond}/s), ${figures.edits.failed} failed; catch-up ${JSON.stringify(figures.catchUpMs)}`);
    expect(figures.edits.failed).toBe(0);
    for (const [server, delays] of Object.entries(figures.attack)) {
      expect(delays.missing, server).toBe(0);
      expect(delays.p99, server).toBeLessThanOrEqual(P99_BOUND_MS);
    }
    for (const [server, ms] of Object.entries(figures.catchUpMs)) expect(ms, server).toBeLessThanOrEqual(CATCH_UP_BOUND_MS);
  });
});
