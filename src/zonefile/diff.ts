// What importing a zone file changes: the file's records against the zone's, matched by owner,
// type, data, priority and geo targets (TXT by the strings it is served as, so plain text and its
// quoted form are one record). A match whose TTL differs is changed in place (its id kept).
import type { RecordState } from '../model/record.ts';
import { TYPE } from '../model/record-types.ts';
import { txtStrings } from '../model/txt-strings.ts';
import { Slices } from './slices.ts';
import type { ImportedRecord } from './to-records.ts';

export interface ImportPlan {
  added: ImportedRecord[];
  changed: Array<{ line: number; before: RecordState; after: RecordState }>;
  removed: RecordState[];
  unchanged: Array<{ line: number; record: RecordState }>;
}

export function recordKey(r: RecordState): string {
  const data = r.type === TYPE.TXT ? txtStrings(r.value).map((b) => b.toString('hex')).join(',') : r.value;
  return `${r.name}\n${r.type}\n${data}\n${r.priority ?? ''}\n${r.target.join(',')}`;
}

/** `current`: the zone's records an import may replace (not the service's own: SOA, challenges). */
export async function planImport(current: readonly RecordState[], imported: readonly ImportedRecord[]): Promise<ImportPlan> {
  const slices = new Slices();
  const byKey = new Map<string, RecordState[]>();
  for (const r of current) {
    if (slices.due()) await slices.pause();
    const key = recordKey(r);
    const list = byKey.get(key);
    if (list) list.push(r);
    else byKey.set(key, [r]);
  }
  const plan: ImportPlan = { added: [], changed: [], removed: [], unchanged: [] };
  for (const item of imported) {
    if (slices.due()) await slices.pause();
    const match = byKey.get(recordKey(item.record))?.shift();
    if (!match) plan.added.push(item);
    else if (match.ttl === item.record.ttl) plan.unchanged.push({ line: item.line, record: match });
    else plan.changed.push({ line: item.line, before: match, after: { ...match, ttl: item.record.ttl } });
  }
  for (const list of byKey.values()) plan.removed.push(...list);
  return plan;
}
