// One node's measurements of one domain's backend over a period, and how periods add up. Pure.
//
// A measure counts the active checks (and how many passed) and the proxied requests (and how many
// the backend answered), with the response times of each as sparse histograms over fixed bounds —
// so a minute's measures from several reports, and the minutes of an hour or the hours of a day,
// merge by adding counts (downsampling loses no count, only time resolution), and percentiles
// come from the merged histogram.

/** Histogram bucket upper bounds, ms; one more bucket above the last holds everything slower. */
export const LATENCY_BOUNDS_MS: readonly number[] = [1, 2, 3, 5, 7, 10, 15, 20, 30, 50, 75, 100, 150, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 5000, 7500, 10_000, 15_000, 20_000, 30_000, 60_000];

export interface Measure {
  /** Active checks made. */
  c: number;
  /** Active checks passed. */
  u: number;
  /** Requests proxied to the backend. */
  r: number;
  /** Requests the backend answered (not unreachable, not timed out, not a 5xx counted against it). */
  o: number;
  /** Check times (TCP connect), sparse histogram: bucket index → count. */
  ch: Record<string, number>;
  /** Request times (until the response headers), sparse histogram. */
  rh: Record<string, number>;
}

export const emptyMeasure = (): Measure => ({ c: 0, u: 0, r: 0, o: 0, ch: {}, rh: {} });

export function bucketOf(ms: number): number {
  // Bisection: the first bound not below ms.
  let lo = 0;
  let hi = LATENCY_BOUNDS_MS.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (LATENCY_BOUNDS_MS[mid]! < ms) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function addSample(histogram: Record<string, number>, ms: number): void {
  const key = String(bucketOf(ms));
  histogram[key] = (histogram[key] ?? 0) + 1;
}

/** Adds `from` into `into` (changes `into`). */
export function mergeInto(into: Measure, from: Measure): Measure {
  into.c += from.c;
  into.u += from.u;
  into.r += from.r;
  into.o += from.o;
  for (const [k, n] of Object.entries(from.ch)) into.ch[k] = (into.ch[k] ?? 0) + n;
  for (const [k, n] of Object.entries(from.rh)) into.rh[k] = (into.rh[k] ?? 0) + n;
  return into;
}

export const isEmptyMeasure = (m: Measure): boolean => m.c === 0 && m.r === 0;

/**
 * The q-quantile (0..1) of a histogram, in ms, interpolated linearly inside its bucket; null for
 * no samples. The top bucket (beyond the last bound) answers the last bound.
 */
export function quantile(histogram: Record<string, number>, q: number): number | null {
  let total = 0;
  for (const n of Object.values(histogram)) total += n;
  if (total === 0) return null;
  const rank = q * total;
  let seen = 0;
  for (let i = 0; i <= LATENCY_BOUNDS_MS.length; i++) {
    const n = histogram[String(i)] ?? 0;
    if (n === 0) continue;
    if (seen + n >= rank) {
      if (i === LATENCY_BOUNDS_MS.length) return LATENCY_BOUNDS_MS[i - 1]!;
      const low = i === 0 ? 0 : LATENCY_BOUNDS_MS[i - 1]!;
      const high = LATENCY_BOUNDS_MS[i]!;
      return Math.round((low + ((high - low) * Math.max(0, rank - seen)) / n) * 10) / 10;
    }
    seen += n;
  }
  return LATENCY_BOUNDS_MS[LATENCY_BOUNDS_MS.length - 1]!;
}

/** Whether a value received from a node is a well-formed measure (counts bounded, indexes known). */
export function isMeasure(value: unknown): value is Measure {
  if (!value || typeof value !== 'object') return false;
  const m = value as Record<string, unknown>;
  const count = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0 && (v as number) <= 10_000_000;
  const histogram = (v: unknown) =>
    !!v && typeof v === 'object' && !Array.isArray(v) && Object.entries(v).every(([k, n]) => /^\d{1,2}$/.test(k) && Number(k) <= LATENCY_BOUNDS_MS.length && count(n));
  return count(m.c) && count(m.u) && count(m.r) && count(m.o) && (m.u as number) <= (m.c as number) && (m.o as number) <= (m.r as number) && histogram(m.ch) && histogram(m.rh);
}

/**
 * A measure as a dense array of counts (checks, passed, requests, answered, then each check-time
 * bucket, then each request-time bucket): what the embedded store keeps, since adding two is a
 * loop over numbers and encoding one costs no per-key work.
 */
export const DENSE_LENGTH = 4 + 2 * (LATENCY_BOUNDS_MS.length + 1);

export function addToDense(dense: number[] | undefined, m: Measure): number[] {
  const out = dense && dense.length === DENSE_LENGTH ? dense : new Array<number>(DENSE_LENGTH).fill(0);
  out[0]! += m.c;
  out[1]! += m.u;
  out[2]! += m.r;
  out[3]! += m.o;
  const h = LATENCY_BOUNDS_MS.length + 1;
  for (const k in m.ch) out[4 + Number(k)]! += m.ch[k]!;
  for (const k in m.rh) out[4 + h + Number(k)]! += m.rh[k]!;
  return out;
}

export function fromDense(dense: readonly number[]): Measure {
  const h = LATENCY_BOUNDS_MS.length + 1;
  const ch: Record<string, number> = {};
  const rh: Record<string, number> = {};
  for (let i = 0; i < h; i++) {
    if (dense[4 + i]) ch[i] = dense[4 + i]!;
    if (dense[4 + h + i]) rh[i] = dense[4 + h + i]!;
  }
  return { c: dense[0] ?? 0, u: dense[1] ?? 0, r: dense[2] ?? 0, o: dense[3] ?? 0, ch, rh };
}
