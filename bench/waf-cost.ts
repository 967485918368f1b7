// What the WAF's body inspection costs, as a ratio to what a backend pays to parse the same body
// (issue 38's target: JSON ≤ 3× JSON.parse, forms ≤ 2× URLSearchParams): per body kind, the
// thread CPU time of the inspection (readBody + firstFinding at level 1: parse and rules) beside
// JSON.parse / new URLSearchParams / Response.formData() of the same bytes (text: JSON.parse of
// the same text as one JSON string, a single read of its characters). In one process, the
// contenders interleaved round by round (their order alternating), each round a batch of at
// least ~25 ms of CPU (--batch-ms); the figures are medians over rounds, the ratio the median of
// the rounds' ratios. Thread CPU time, not wall time: a busy machine stretches the clock, not the
// work. That clock may advance in ticks of a few milliseconds (4 ms seen on a loaded VM): a 1 MB
// body is one call per 25 ms batch, so a round's figure is then ± a tick (±15%) and medians snap
// to tick multiples; a change smaller than that needs longer batches (--batch-ms 250).
//
// The code measured is the build (dist/), as production runs it.
//
//   npm run bench:waf-cost [-- --rounds N] [-- --batch-ms MS] [-- --against DIR]
//     --against DIR   also measure the inspection of another checkout of the project (built:
//                     its dist/edge/waf, e.g. a `git archive` of an earlier commit, built with
//                     `tsc -p tsconfig.build.json`), interleaved with this one: before and after
//                     in the same run.
//   npm run build && node --cpu-prof --import tsx bench/waf-cost.ts --only 'JSON (1 MB)' --seconds 5
//                     runs only this checkout's inspection of one body, for a profile
//                     (bench/profile-top.ts reads it).
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { costBodies, type CostBody } from './waf-bodies.ts';

type BodyParse = typeof import('../src/edge/waf/body-parse.ts');
type Rules = typeof import('../src/edge/waf/inspect.ts');
type Settings = typeof import('../src/edge/waf/settings.ts');

type Inspector = (body: Buffer, contentType: string) => unknown;

interface Contender {
  label: string;
  run: (b: CostBody) => unknown;
}

const cpuMicros = () => {
  const u = process.threadCpuUsage();
  return u.user + u.system;
};

/** This checkout. */
export const HERE = resolve(import.meta.dirname, '..');

/**
 * The inspection of a checkout as it runs in production: its build (dist/, what tsc emits), not
 * its sources through a loader. It parses the body and runs the rules at level 1; a finding on
 * these benign bodies is an error.
 */
export async function inspectorAt(dir: string): Promise<Inspector> {
  const at = async (file: string): Promise<unknown> => import(pathToFileURL(resolve(dir, 'dist/edge/waf', file)).href);
  const { readBody } = (await at('body-parse.js')) as BodyParse;
  const { firstFinding } = (await at('inspect.js')) as Rules;
  const settings = ((await at('settings.js')) as Settings).wafSettings({ waf_level: 1 });
  return (body, contentType) => {
    const finding = firstFinding(readBody(body, contentType).inputs, '/', settings);
    if (finding) throw new Error(`a benign body refused: ${finding.rule} in ${finding.where}`);
    return finding;
  };
}

/** What a backend pays to parse the body (the denominator of the ratio). */
function baseline(b: CostBody, text: string): () => unknown {
  switch (b.baseline) {
    case 'json':
      return () => JSON.parse(b.body.toString());
    case 'form':
      return () => new URLSearchParams(b.body.toString());
    case 'multipart': {
      const bytes = new Uint8Array(b.body.buffer as ArrayBuffer, b.body.byteOffset, b.body.length);
      return () => new Response(bytes, { headers: { 'content-type': b.contentType } }).formData();
    }
    case 'text':
      return () => JSON.parse(text);
  }
}

const BASELINE_NAME = { json: 'JSON.parse', form: 'URLSearchParams', multipart: 'Response.formData', text: 'JSON.parse (one string)' } as const;
const TARGET: Partial<Record<CostBody['baseline'], number>> = { json: 3, form: 2 };

/** CPU µs per call of `fn`, over `calls` calls (awaited when it answers a promise). */
async function batch(fn: () => unknown, calls: number): Promise<number> {
  const start = cpuMicros();
  for (let i = 0; i < calls; i++) {
    const r = fn();
    if (r instanceof Promise) await r;
  }
  return (cpuMicros() - start) / calls;
}

/** How many calls make a batch of about `micros` of CPU (after a warm-up of the same length). */
async function calibrate(fn: () => unknown, micros: number): Promise<number> {
  await batch(fn, 1);
  let calls = 1;
  for (;;) {
    const start = cpuMicros();
    await batch(fn, calls);
    const used = cpuMicros() - start;
    if (used >= micros) return Math.max(1, Math.round((calls * micros) / used));
    calls *= used < micros / 8 ? 8 : 2;
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

export interface CostRow {
  name: string;
  bytes: number;
  baseline: string;
  /** Median µs per body of each contender, baseline first. */
  micros: number[];
  /** Median over rounds of each inspector's time / the baseline's. */
  ratios: number[];
  /** With two inspectors (before, after): the median over rounds of the second's time / the first's. */
  change?: number;
  target?: number;
}

/** The ratios for every body: `inspectors` labelled, against each body's baseline. */
export async function measureCost(inspectors: Array<[string, Inspector]>, rounds: number, log: (line: string) => void = () => {}, batchMicros = 25_000): Promise<CostRow[]> {
  const rows: CostRow[] = [];
  for (const b of costBodies()) {
    const text = JSON.stringify(b.body.toString());
    const contenders: Contender[] = [{ label: BASELINE_NAME[b.baseline], run: baseline(b, text) }, ...inspectors.map(([label, inspect]): Contender => ({ label, run: () => inspect(b.body, b.contentType) }))];
    const fns = contenders.map((c) => () => c.run(b));
    const calls: number[] = [];
    for (const fn of fns) calls.push(await calibrate(fn, batchMicros));
    const times: number[][] = fns.map(() => []);
    const ratios: number[][] = inspectors.map(() => []);
    const changes: number[] = [];
    for (let round = 0; round < rounds; round++) {
      // Alternate the order: whoever runs first in a round runs last in the next.
      const order = fns.map((_, i) => i);
      if (round % 2 === 1) order.reverse();
      const got: number[] = [];
      for (const i of order) got[i] = await batch(fns[i]!, calls[i]!);
      got.forEach((t, i) => times[i]!.push(t));
      for (let k = 0; k < inspectors.length; k++) ratios[k]!.push(got[k + 1]! / got[0]!);
      if (inspectors.length === 2) changes.push(got[2]! / got[1]!);
    }
    const row: CostRow = { name: b.name, bytes: b.body.length, baseline: BASELINE_NAME[b.baseline], micros: times.map(median), ratios: ratios.map(median), target: TARGET[b.baseline] };
    if (changes.length > 0) row.change = median(changes);
    rows.push(row);
    log(formatRow(row, inspectors.map(([label]) => label)));
  }
  return rows;
}

const micros = (us: number) => (us >= 1000 ? `${(us / 1000).toFixed(2)} ms` : `${us.toFixed(1)} µs`).padStart(9);

export function costHeader(labels: string[]): string {
  return `${'body'.padEnd(21)} ${'bytes'.padStart(8)}  ${'baseline'.padEnd(24)} ${'its time'.padStart(9)}  ${labels.map((l) => `${l.padStart(9)} ${'ratio'.padStart(6)}`).join('  ')}  target${labels.length === 2 ? `  ${labels[1]}/${labels[0]}` : ''}`;
}

export function formatRow(row: CostRow, labels: string[]): string {
  const cells = labels.map((_, k) => `${micros(row.micros[k + 1]!)} ${`${row.ratios[k]!.toFixed(2)}×`.padStart(6)}`);
  return `${row.name.padEnd(21)} ${String(row.bytes).padStart(8)}  ${row.baseline.padEnd(24)} ${micros(row.micros[0]!)}  ${cells.join('  ')}  ${(row.target ? `≤ ${row.target}×` : '').padEnd(6)}${row.change === undefined ? '' : `  ${row.change.toFixed(2)}`}`;
}

function argument(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at < 0 ? undefined : process.argv[at + 1];
}

async function main(): Promise<void> {
  const here = await inspectorAt(HERE);
  const only = argument('--only');
  if (only !== undefined) {
    const b = costBodies().find((x) => x.name === only);
    if (!b) throw new Error(`--only: one of ${costBodies().map((x) => `'${x.name}'`).join(', ')}`);
    const until = performance.now() + Number(argument('--seconds') ?? 5) * 1000;
    let calls = 0;
    for (; performance.now() < until; calls++) here(b.body, b.contentType);
    console.log(`${calls} inspections of ${b.name}`);
    return;
  }
  const rounds = Number(argument('--rounds') ?? 11);
  const batchMs = Number(argument('--batch-ms') ?? 25);
  const against = argument('--against');
  const inspectors: Array<[string, Inspector]> = against ? [['before', await inspectorAt(against)], ['after', here]] : [['WAF', here]];
  const labels = inspectors.map(([l]) => l);
  console.log(`inspection (parse + rules, level 1) vs parsing the same body; thread CPU time, median of ${rounds} interleaved rounds of ${batchMs} ms batches\n${costHeader(labels)}`);
  await measureCost(inspectors, rounds, console.log, batchMs * 1000);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
