// The /metrics of a role running several processes (DNS workers, edge workers): every process's
// Prometheus text added up sample by sample (counters, histogram buckets, gauges that add up such
// as open connections), each family kept together under its HELP and TYPE, in the order first
// seen. Families in `firstOnly` are the first text's alone (the primary's zones served, revision
// applied); families in `largest` take the largest value (gauges every process holds alike, such
// as the domains an edge knows). Pure.

export interface MergeRules {
  firstOnly?: ReadonlySet<string>;
  largest?: ReadonlySet<string>;
}

interface Family {
  name: string;
  lines: string[];
  samples: Map<string, number>;
}

export function mergeMetrics(texts: Iterable<string>, rules: MergeRules = {}): string {
  const families = new Map<string, Family>();
  let i = 0;
  for (const text of texts) {
    let family: Family | undefined;
    let skip = false;
    for (const line of text.split('\n')) {
      if (line === '') continue;
      const meta = /^# (HELP|TYPE) (\S+)/.exec(line);
      if (meta) {
        const name = meta[2]!;
        skip = i > 0 && rules.firstOnly?.has(name) === true;
        family = families.get(name);
        if (!family) families.set(name, (family = { name, lines: [], samples: new Map() }));
        if (!family.lines.includes(line)) family.lines.push(line);
        continue;
      }
      if (line.startsWith('#') || skip) continue;
      const space = line.lastIndexOf(' ');
      const key = line.slice(0, space);
      const value = Number(line.slice(space + 1));
      if (!family) {
        // A sample before any HELP/TYPE: its own family.
        const name = key.split('{')[0]!;
        family = families.get(name);
        if (!family) families.set(name, (family = { name, lines: [], samples: new Map() }));
      }
      const before = family.samples.get(key);
      const largest = rules.largest?.has(family.name) === true;
      family.samples.set(key, before === undefined ? value : largest ? Math.max(before, value) : before + value);
    }
    i++;
  }
  const out: string[] = [];
  for (const family of families.values()) {
    out.push(...family.lines);
    for (const [key, value] of family.samples) out.push(`${key} ${value}`);
  }
  return out.length > 0 ? `${out.join('\n')}\n` : '';
}
