// The one writer of Prometheus text (exposition format 0.0.4): every family's HELP and TYPE once,
// then its samples; label values and HELP escaped as the format says (a backslash, a double quote
// in label values, a line break), so a value someone chose — a consumer's name, a CA's problem
// type — cannot break the text. Pure.
import type { FamilySnapshot, MetricsSnapshot } from './family.ts';
import { mergeSnapshots } from './merge.ts';

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

const escapeHelp = (text: string) => text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
const escapeLabel = (value: string) => value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

/** Prometheus's spelling of a number (+Inf, -Inf, NaN; otherwise JavaScript's). */
const number = (n: number) => (n === Infinity ? '+Inf' : n === -Infinity ? '-Inf' : String(n));

function labelText(names: readonly string[], values: readonly string[], extra?: string): string {
  const pairs = names.map((name, i) => `${name}="${escapeLabel(values[i] ?? '')}"`);
  if (extra !== undefined) pairs.push(extra);
  return pairs.length === 0 ? '' : `{${pairs.join(',')}}`;
}

function familyLines(part: FamilySnapshot, lines: string[]): void {
  const { name, type, help, labels } = part.family;
  lines.push(`# HELP ${name} ${escapeHelp(help)}`, `# TYPE ${name} ${type}`);
  if ('samples' in part) {
    for (const s of part.samples) lines.push(`${name}${labelText(labels, s.labels)} ${number(s.value)}`);
    return;
  }
  const bounds = part.family.buckets ?? [];
  for (const h of part.histograms) {
    bounds.forEach((le, i) => lines.push(`${name}_bucket${labelText(labels, h.labels, `le="${le}"`)} ${h.counts[i] ?? 0}`));
    const count = h.counts[bounds.length] ?? 0;
    lines.push(`${name}_bucket${labelText(labels, h.labels, 'le="+Inf"')} ${count}`, `${name}_sum${labelText(labels, h.labels)} ${number(h.sum)}`, `${name}_count${labelText(labels, h.labels)} ${count}`);
  }
}

/** The text of a snapshot: a family given twice (two parts of a process) is written once, merged. */
export function prometheusText(snapshot: MetricsSnapshot): string {
  const lines: string[] = [];
  for (const part of mergeSnapshots([snapshot])) familyLines(part, lines);
  return lines.length > 0 ? `${lines.join('\n')}\n` : '';
}
