// The top frames of a V8 CPU profile (node --cpu-prof) by self time, by part (system calls, the
// runtime's HTTP, undici, our files, GC), and by total time for our own code: a text table for
// docs/perf/. Also writes the profile's stacks folded (FILE.folded: `root;…;leaf microseconds` per
// line), which flame graph tools read (speedscope, flamegraph.pl, inferno).
//   node --import tsx bench/profile-top.ts FILE.cpuprofile [ROWS]
import { readFileSync, writeFileSync } from 'node:fs';

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
// Busy time by part: what the process spends it on, idle left out.
const parts = new Map<string, number>();
let busy = 0;
const SYSCALLS = new Set(['writev', 'writeLatin1String', 'writeUtf8String', 'writeBuffer', 'writeString', 'latin1Slice', 'utf8Slice']);
profile.samples.forEach((id, i) => {
  const n = byId.get(id)!;
  const { functionName, url } = n.callFrame;
  if (functionName === '(idle)') return;
  const us = profile.timeDeltas[i] ?? 0;
  busy += us;
  const f = frame(n);
  const part = functionName === '(garbage collector)' ? 'garbage collector'
    : !url && SYSCALLS.has(functionName) ? `system call / native: ${functionName}`
    : url.includes('node_modules/') ? `package: ${url.split('node_modules/')[1]!.split('/')[0]}`
    : url.startsWith('node:') ? `runtime: ${url.replace(/^node:(internal\/)?/, '').split('/')[0]}`
    : / (src|dist)\//.test(f) ? `ours: ${f.split(' ').pop()!.replace(/:\d+$/, '')}`
    : functionName || '(anonymous)';
  parts.set(part, (parts.get(part) ?? 0) + us);
});

// Folded stacks for flame graph tools.
const folded = new Map<string, number>();
profile.samples.forEach((id, i) => {
  const names: string[] = [];
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) names.push(frame(byId.get(at)!).replaceAll(';', ','));
  const key = names.reverse().join(';');
  folded.set(key, (folded.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0));
});
writeFileSync(file.replace(/\.cpuprofile$/, '') + '.folded', [...folded].map(([k, us]) => `${k} ${us}`).join('\n') + '\n');

const pct = (us: number) => `${((us / all) * 100).toFixed(1).padStart(5)}%`;
console.log(`${(all / 1e6).toFixed(2)} s sampled, ${((busy / all) * 100).toFixed(0)}% busy\n\nbusy time by part:`);
for (const [part, us] of [...parts].sort((a, b) => b[1] - a[1]).slice(0, rows)) console.log(`  ${((us / busy) * 100).toFixed(1).padStart(5)}%  ${part}`);
console.log('\nself time:');
for (const [f, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, rows)) console.log(`  ${pct(us)}  ${f}`);
console.log('\ntotal time (frames of src/ or dist/):');
for (const [f, us] of [...total].filter(([f]) => / (src|dist)\//.test(f)).sort((a, b) => b[1] - a[1]).slice(0, rows)) console.log(`  ${pct(us)}  ${f}`);
