// The edge role's /metrics: the workers' texts (each its own counters) added up series by series,
// so a scraper sees one edge node. Gauges every worker holds alike (the domains it knows) take the
// largest value instead of the sum. Comments (HELP, TYPE) once, in the order first seen. Pure.

export function mergeMetrics(texts: Iterable<string>, alike: ReadonlySet<string>): string {
  const order: string[] = [];
  const comments = new Set<string>();
  const values = new Map<string, number>();
  for (const text of texts) {
    for (const line of text.split('\n')) {
      if (line === '') continue;
      if (line.startsWith('#')) {
        if (!comments.has(line)) {
          comments.add(line);
          order.push(line);
        }
        continue;
      }
      const space = line.lastIndexOf(' ');
      const series = line.slice(0, space);
      const value = Number(line.slice(space + 1));
      const before = values.get(series);
      if (before === undefined) order.push(series);
      const name = series.split('{')[0]!;
      values.set(series, before === undefined ? value : alike.has(name) ? Math.max(before, value) : before + value);
    }
  }
  return order.map((item) => (values.has(item) ? `${item} ${values.get(item)}` : item)).join('\n') + (order.length > 0 ? '\n' : '');
}
