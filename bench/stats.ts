// Summaries of a benchmark's rounds: the median and the range.
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The lowest and highest value. */
export function spread(values: readonly number[]): [number, number] {
  return [Math.min(...values), Math.max(...values)];
}

/** The value below which `p` percent of the sorted values lie (nearest rank). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
