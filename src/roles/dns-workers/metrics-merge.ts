// The name server's /metrics with DNS workers: every process's DNS metrics summed sample by sample
// (counters, histogram buckets, and gauges that add up, such as open TCP connections); families
// named in `firstOnly` (zones served, revision applied) are the primary's alone.

interface Family {
  lines: string[];
  samples: Map<string, number>;
}

export function mergeMetrics(texts: readonly string[], firstOnly: ReadonlySet<string>): string {
  const families = new Map<string, Family>();
  texts.forEach((text, i) => {
    let family: Family | undefined;
    let skip = false;
    for (const line of text.split('\n')) {
      if (line === '') continue;
      const meta = /^# (HELP|TYPE) (\S+)/.exec(line);
      if (meta) {
        const name = meta[2]!;
        skip = i > 0 && firstOnly.has(name);
        family = families.get(name);
        if (!family) families.set(name, (family = { lines: [], samples: new Map() }));
        if (i === 0 || family.lines.length < 2) {
          if (!family.lines.includes(line)) family.lines.push(line);
        }
        continue;
      }
      if (line.startsWith('#') || skip) continue;
      const space = line.lastIndexOf(' ');
      const key = line.slice(0, space);
      const value = Number(line.slice(space + 1));
      if (!family) {
        // A sample before any HELP/TYPE: its own family.
        families.set(key, (family = { lines: [], samples: new Map() }));
      }
      family.samples.set(key, (family.samples.get(key) ?? 0) + value);
    }
  });
  const out: string[] = [];
  for (const family of families.values()) {
    out.push(...family.lines);
    for (const [key, value] of family.samples) out.push(`${key} ${value}`);
  }
  return `${out.join('\n')}\n`;
}
