// Prometheus text exposition (format 0.0.4), written by hand the same way everywhere: a family's
// # HELP and # TYPE lines, then its samples. Kept this small on purpose: the figures are counted
// where the work happens, and each part writes its own families.

export type MetricType = 'counter' | 'gauge' | 'histogram';

/** The two header lines of a metric family. */
export function metricHeader(name: string, type: MetricType, help: string): [string, string] {
  return [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`];
}

/**
 * A label value as the metrics have always written one from a name someone chose (a consumer, a
 * problem type): quotes, backslashes and line breaks become "_", so no escape can go wrong.
 */
export function labelValue(value: string): string {
  return value.replace(/["\\\n]/g, '_');
}
