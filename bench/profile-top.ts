// The top frames of a V8 CPU profile (node --cpu-prof) by self time, and by total time for our
// own code: a text table for docs/perf/.
//   node --import tsx bench/profile-top.ts FILE.cpuprofile [ROWS]
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const [file, rowsText] = process.argv.slice(2);
if (!file) throw new Error('usage: profile-top.ts FILE.cpuprofile [ROWS]');
const rows = Number(rowsText ?? 30);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const frame = (n: Node) => {
  // Paths from the project's folder on (the first node_modules/, src/, dist/ or bench/).
  const url = n.callFrame.url.replace(/^file:\/\/.*?\/(node_modules|src|dist|bench)\//, '$1/');
  return `${n.callFrame.functionName || '(anonymous)'} ${url ? `${url}:${n.callFrame.lineNumber + 1}` : ''}`.trim();
};
const self = new Map<string, number>();
const total = new Map<string, number>();
let all = 0;
profile.samples.forEach((id, i) => {
  const us = profile.timeDeltas[i] ?? 0;
  all += us;
  const leaf = byId.get(id)!;
  self.set(frame(leaf), (self.get(frame(leaf)) ?? 0) + us);
  const seen = new Set<string>();
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const f = frame(byId.get(at)!);
    if (seen.has(f)) continue;
    seen.add(f);
    total.set(f, (total.get(f) ?? 0) + us);
  }
});
const pct = (us: number) => `${((us / all) * 100).toFixed(1).padStart(5)}%`;
console.log(`${(all / 1e6).toFixed(2)} s sampled\n\nself time:`);
for (const [f, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, rows)) console.log(`  ${pct(us)}  ${f}`);
console.log('\ntotal time (frames of src/ or dist/):');
for (const [f, us] of [...total].filter(([f]) => / (src|dist)\//.test(f)).sort((a, b) => b[1] - a[1]).slice(0, rows)) console.log(`  ${pct(us)}  ${f}`);
