// Reads Prometheus text (format 0.0.4) the way a scraper does, strictly: each family's HELP and
// TYPE once and before its samples, every series once, histograms cumulative with the +Inf bucket
// equal to the count. `problems` lists every breach (empty: valid); `families` is what a dashboard
// sees — name, type, help and the label names of the family's series.

export interface SeenFamily {
  name: string;
  type: string;
  help: string;
  /** Label names of the family's series, sorted (a histogram's `le` left out). */
  labels: string[];
}

export interface ReadText {
  families: SeenFamily[];
  problems: string[];
  /** Every sample: series (name and labels as written) → value. */
  samples: Map<string, number>;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\\\|\\"|\\n)*)"(,|$)/y;

/** Label pairs of `{…}`'s inside, undefined when not well formed. */
function labelPairs(inside: string): Array<[string, string]> | undefined {
  const pairs: Array<[string, string]> = [];
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < inside.length) {
    const m = LABEL.exec(inside);
    if (!m) return undefined;
    pairs.push([m[1]!, m[2]!]);
  }
  return pairs;
}

/** The family a sample belongs to: a histogram's _bucket/_sum/_count series belong to its name. */
function familyOf(name: string, types: Map<string, string>): string {
  for (const suffix of ['_bucket', '_sum', '_count']) {
    const base = name.endsWith(suffix) ? name.slice(0, -suffix.length) : undefined;
    if (base !== undefined && types.get(base) === 'histogram') return base;
  }
  return name;
}

export function readPrometheusText(text: string): ReadText {
  const problems: string[] = [];
  const helps = new Map<string, string>();
  const types = new Map<string, string>();
  const labels = new Map<string, Set<string>>();
  const samples = new Map<string, number>();
  const order: string[] = [];
  const ended = new Set<string>();
  let current: string | undefined;
  const enter = (name: string) => {
    if (current === name) return;
    if (current !== undefined) ended.add(current);
    if (ended.has(name)) problems.push(`${name}: its lines are not together`);
    current = name;
    if (!order.includes(name)) order.push(name);
  };
  if (text !== '' && !text.endsWith('\n')) problems.push('the text does not end with a line break');
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const meta = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(line);
    if (meta) {
      const [, kind, name, rest = ''] = meta;
      enter(name!);
      const book = kind === 'HELP' ? helps : types;
      if (book.has(name!)) problems.push(`${name}: a second ${kind}`);
      if (samples.size > 0 && [...samples.keys()].some((k) => familyOf(k.split('{')[0]!, types) === name)) problems.push(`${name}: ${kind} after its samples`);
      book.set(name!, rest);
      continue;
    }
    if (line.startsWith('#')) continue;
    const m = SAMPLE.exec(line);
    if (!m) {
      problems.push(`not a sample line: ${line}`);
      continue;
    }
    const [, name, , inside = '', value] = m;
    const family = familyOf(name!, types);
    enter(family);
    if (!helps.has(family)) problems.push(`${family}: a sample before its HELP`);
    if (!types.has(family)) problems.push(`${family}: a sample before its TYPE`);
    const pairs = labelPairs(inside);
    if (!pairs) problems.push(`${name}: labels not well formed: {${inside}}`);
    const names = labels.get(family) ?? new Set<string>();
    labels.set(family, names);
    for (const [label] of pairs ?? []) if (!(types.get(family) === 'histogram' && label === 'le')) names.add(label);
    const series = `${name}{${(pairs ?? []).map(([k, v]) => `${k}="${v}"`).sort().join(',')}}`;
    if (samples.has(series)) problems.push(`${series}: written twice`);
    const n = Number(value);
    if (Number.isNaN(n) && value !== 'NaN') problems.push(`${series}: value ${value} is not a number`);
    samples.set(series, n);
  }
  problems.push(...histogramProblems(types, samples));
  const families = order.map((name) => ({ name, type: types.get(name) ?? '', help: helps.get(name) ?? '', labels: [...(labels.get(name) ?? [])].sort() }));
  return { families, problems, samples };
}

/** Each histogram series: buckets not decreasing as `le` grows, the +Inf bucket present and equal to _count. */
function histogramProblems(types: Map<string, string>, samples: Map<string, number>): string[] {
  const problems: string[] = [];
  for (const [family, type] of types) {
    if (type !== 'histogram') continue;
    const groups = new Map<string, Array<[number, number]>>();
    for (const [series, value] of samples) {
      if (!series.startsWith(`${family}_bucket{`)) continue;
      const inside = series.slice(series.indexOf('{') + 1, -1);
      const le = /(?:^|,)le="([^"]*)"/.exec(inside)?.[1];
      const rest = inside.split(',').filter((p) => p !== '' && !p.startsWith('le=')).join(',');
      const list = groups.get(rest) ?? [];
      groups.set(rest, list);
      list.push([le === '+Inf' ? Infinity : Number(le), value]);
    }
    for (const [rest, list] of groups) {
      list.sort((a, b) => a[0] - b[0]);
      for (let i = 1; i < list.length; i++) if (list[i]![1] < list[i - 1]![1]) problems.push(`${family}{${rest}}: bucket le=${list[i]![0]} below le=${list[i - 1]![0]} (not cumulative)`);
      const inf = list.at(-1);
      const count = samples.get(`${family}_count{${rest}}`);
      if (!inf || inf[0] !== Infinity) problems.push(`${family}{${rest}}: no +Inf bucket`);
      else if (inf[1] !== count) problems.push(`${family}{${rest}}: +Inf bucket ${inf[1]} is not the count ${count}`);
      if (!samples.has(`${family}_sum{${rest}}`)) problems.push(`${family}{${rest}}: no _sum`);
    }
  }
  return problems;
}
