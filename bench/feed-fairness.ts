// The change feed under one account's flood of settings changes (issue 25 §1), the full cases:
// `palisade serve` and two `palisade dns`; an attacker PATCHes the tags of its big zones
// (1,000 TXT × 4,000 bytes each) at 36/s per key while a victim account adds a record every
// 200 ms. Prints the victim's propagation to serve's DNS, ns1 and ns2 (p50/p99) before and during
// the attack, how long each consumer takes to catch up once it ends, and when the attacker's
// zones are served as it left them.
//   node --import tsx bench/feed-fairness.ts                 (all three cases, ~2 minutes)
//   BENCH_CASES=one node --import tsx bench/feed-fairness.ts (one key, two zones, 20 s)
//   BENCH_CASES=five …                                       (five keys, three zones, 30 s)
//   BENCH_CASES=mixed …  (settings name servers use: mask, activation on and off; their rebuilds are bounded)
import { formatDelays, runFeedAttack, type AttackOptions } from '../test/helpers/feed-attack.ts';

const CASES: Record<string, { label: string } & AttackOptions> = {
  one: { label: 'one key, two zones, 36 PATCHes/s, 20 s', keys: 1, zones: 2, ratePerKey: 36, attackMs: 20_000 },
  five: { label: 'five keys, three zones, 5 × 36 PATCHes/s, 30 s', keys: 5, zones: 3, ratePerKey: 36, attackMs: 30_000 },
  mixed: { label: 'one key, two zones, 36/s of tags, mask and activation on and off in turn, 20 s', keys: 1, zones: 2, ratePerKey: 36, attackMs: 20_000, edit: 'mixed' },
};

const wanted = (process.env.BENCH_CASES ?? 'one,five,mixed').split(',');
for (const name of wanted) {
  const spec = CASES[name];
  if (!spec) throw new Error(`unknown case ${name} (${Object.keys(CASES).join(', ')})`);
  console.log(`— ${spec.label}`);
  const figures = await runFeedAttack({ ...spec, baselineWrites: 25, log: (line) => console.log(`  ${line}`) });
  console.log(`  ${formatDelays('victim before', figures.baseline)}`);
  console.log(`  ${formatDelays('victim during', figures.attack)}`);
  console.log(`  attacker: ${figures.edits.sent} PATCHes (${figures.edits.perSecond}/s), ${figures.edits.failed} failed`);
  console.log(`  caught up after the attack's last answer: ${Object.entries(figures.catchUpMs).map(([s, ms]) => `${s} ${ms} ms`).join(', ')}`);
  console.log(`  the attacker's zones served as it left them: ${Object.entries(figures.attackerSettledMs).map(([s, ms]) => `${s} ${ms} ms`).join(', ')} after its last answer`);
}
