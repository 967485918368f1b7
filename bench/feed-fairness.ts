// The change feed under one account's flood of settings changes (issue 25 §1), the full cases:
// `palisade serve` and two `palisade dns`; an attacker PATCHes the tags of its big zones
// (1,000 TXT × 4,000 bytes each) at 36/s per key while a victim account adds a record every
// 200 ms. Prints the victim's propagation to serve's DNS, ns1 and ns2 (p50/p99) before and during
// the attack, and how long each consumer takes to catch up once it ends.
//   node --import tsx bench/feed-fairness.ts                 (both cases)
//   BENCH_CASES=one node --import tsx bench/feed-fairness.ts (one key, two zones, 20 s)
//   BENCH_CASES=five …                                       (five keys, three zones, 30 s)
import { formatDelays, runFeedAttack, type AttackOptions } from '../test/helpers/feed-attack.ts';

const CASES: Record<string, { label: string } & AttackOptions> = {
  one: { label: 'one key, two zones, 36 PATCHes/s, 20 s', keys: 1, zones: 2, ratePerKey: 36, attackMs: 20_000 },
  five: { label: 'five keys, three zones, 5 × 36 PATCHes/s, 30 s', keys: 5, zones: 3, ratePerKey: 36, attackMs: 30_000 },
};

const wanted = (process.env.BENCH_CASES ?? 'one,five').split(',');
for (const name of wanted) {
  const spec = CASES[name];
  if (!spec) throw new Error(`unknown case ${name} (${Object.keys(CASES).join(', ')})`);
  console.log(`— ${spec.label}`);
  const figures = await runFeedAttack({ ...spec, baselineWrites: 25, log: (line) => console.log(`  ${line}`) });
  console.log(`  ${formatDelays('victim before', figures.baseline)}`);
  console.log(`  ${formatDelays('victim during', figures.attack)}`);
  console.log(`  attacker: ${figures.edits.sent} PATCHes (${figures.edits.perSecond}/s), ${figures.edits.failed} failed`);
  console.log(`  caught up after the attack's last answer: ${Object.entries(figures.catchUpMs).map(([s, ms]) => `${s} ${ms} ms`).join(', ')}`);
}
