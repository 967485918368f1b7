// The figures of several processes of one role seen as one: each family merged by its own rule
// (family.ts: sum, max, first), series matched by their label values, in the order first seen. The
// first snapshot is the primary's. Pure.
import type { FamilySnapshot, HistogramSample, MetricsSnapshot, Sample } from './family.ts';

interface Merging {
  first: FamilySnapshot;
  /** Series by their label values (joined with a separator no label value is split on). */
  samples: Map<string, Sample>;
  histograms: Map<string, HistogramSample>;
}

const keyOf = (labels: readonly string[]) => labels.join('\u0000');

export function mergeSnapshots(snapshots: Iterable<MetricsSnapshot>): MetricsSnapshot {
  const merged = new Map<string, Merging>();
  for (const snapshot of snapshots) {
    const seenHere = new Set<string>();
    for (const part of snapshot) {
      const { family } = part;
      let into = merged.get(family.name);
      if (!into) merged.set(family.name, (into = { first: part, samples: new Map(), histograms: new Map() }));
      // `first`: the first process that has the family gives its figures (the primary's, when it does).
      else if (into.first.family.combine === 'first' && !seenHere.has(family.name)) continue;
      seenHere.add(family.name);
      if ('samples' in part) for (const s of part.samples) addSample(into, s);
      else for (const h of part.histograms) addHistogram(into, h);
    }
  }
  return [...merged.values()].map(({ first, samples, histograms }) => ('samples' in first ? { family: first.family, samples: [...samples.values()] } : { family: first.family, histograms: [...histograms.values()] }));
}

function addSample(into: Merging, sample: Sample): void {
  const key = keyOf(sample.labels);
  const before = into.samples.get(key);
  if (!before) into.samples.set(key, { labels: sample.labels, value: sample.value });
  else before.value = into.first.family.combine === 'max' ? Math.max(before.value, sample.value) : before.value + sample.value;
}

function addHistogram(into: Merging, h: HistogramSample): void {
  const key = keyOf(h.labels);
  const before = into.histograms.get(key);
  if (!before) into.histograms.set(key, { labels: h.labels, counts: [...h.counts], sum: h.sum });
  else into.histograms.set(key, { labels: h.labels, counts: before.counts.map((n, i) => n + (h.counts[i] ?? 0)), sum: before.sum + h.sum });
}
