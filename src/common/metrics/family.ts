// A metric family declared once, where its figures are counted: name, type, help, label names and
// how the figures of several processes of one role (DNS workers, edge workers) become one — the
// merge rule lives here, on the family, not in lists kept by whoever merges. Pure data: a family
// and its samples travel between processes as they are (structured clone or JSON).

export type MetricType = 'counter' | 'gauge' | 'histogram';

/**
 * How a family's figures from several processes of one role combine: `sum` (counters, histograms,
 * gauges that add up such as open connections), `max` (gauges every process holds alike, such as
 * the domains an edge knows: summed they would count N times), `first` (what the primary alone
 * knows, such as the zones it serves: the first process's figures, the others' left out).
 */
export type Combine = 'sum' | 'max' | 'first';

export interface Family {
  readonly name: string;
  readonly type: MetricType;
  readonly help: string;
  readonly labels: readonly string[];
  readonly combine: Combine;
  /** A histogram's bucket upper bounds, ascending (+Inf is implied). */
  readonly buckets?: readonly number[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Declares a family (checked once, at load: a bad name fails the process's start, not a scrape). */
export function family(spec: { name: string; type: MetricType; help: string; labels?: readonly string[]; combine?: Combine; buckets?: readonly number[] }): Family {
  const { name, type, help, labels = [], combine = 'sum', buckets } = spec;
  if (!NAME.test(name)) throw new Error(`metric family name ${JSON.stringify(name)} is not a Prometheus name`);
  for (const label of labels) if (!LABEL.test(label) || label.startsWith('__') || label === 'le') throw new Error(`${name}: label name ${JSON.stringify(label)} is not allowed`);
  if ((type === 'histogram') !== (buckets !== undefined)) throw new Error(`${name}: buckets are for histograms, and histograms need them`);
  if (buckets?.some((b, i) => !Number.isFinite(b) || (i > 0 && b <= buckets[i - 1]!))) throw new Error(`${name}: buckets must be finite and ascending`);
  return Object.freeze({ name, type, help, labels: Object.freeze([...labels]), combine, ...(buckets && { buckets: Object.freeze([...buckets]) }) });
}

/** One series of a counter or gauge: label values in the order of the family's label names. */
export interface Sample {
  labels: readonly string[];
  value: number;
}

/** One series of a histogram: counts per bucket, cumulative, the last one +Inf (the count). */
export interface HistogramSample {
  labels: readonly string[];
  counts: readonly number[];
  sum: number;
}

/** A family's figures at one moment, as data. */
export type FamilySnapshot = { family: Family; samples: Sample[] } | { family: Family; histograms: HistogramSample[] };

/** A process's (or a role's, once merged) figures. */
export type MetricsSnapshot = FamilySnapshot[];

/** A family of one unlabelled series. */
export function single(family: Family, value: number): FamilySnapshot {
  return { family, samples: [{ labels: [], value }] };
}

/** A labelled family's series, from [label values, value] pairs. */
export function labelled(family: Family, entries: Iterable<readonly [readonly string[], number]>): FamilySnapshot {
  const samples: Sample[] = [];
  for (const [labels, value] of entries) samples.push({ labels, value });
  return { family, samples };
}

/** A family of one label, from a Map (or pairs) of label value → value. */
export function byLabel(family: Family, entries: Iterable<readonly [string, number]>): FamilySnapshot {
  const samples: Sample[] = [];
  for (const [label, value] of entries) samples.push({ labels: [label], value });
  return { family, samples };
}

/** An unlabelled histogram from per-bucket counts (not cumulative, the last one above every bound). */
export function histogramOf(family: Family, perBucket: readonly number[], sum: number): FamilySnapshot {
  let total = 0;
  const counts = perBucket.map((n) => (total += n));
  return { family, histograms: [{ labels: [], counts, sum }] };
}
