// Importing a zone file into a zone: parse, convert, compare with the zone as stored, and (unless
// a dry run) apply the difference as one record change: one revision, one change-feed entry. The
// zone is read whole first; the change commits only if the zone is still at the revision read
// (else it is read again, a few times), so what was checked is what is replaced.
import { ApiError, notFound, type FieldError } from '../errors.ts';
import { renderRecord, TTL_DEFAULT, type RecordState } from '../model/record.ts';
import { TYPE } from '../model/record-types.ts';
import type { Store } from '../store/types.ts';
import { planImport, type ImportPlan } from './diff.ts';
import { parseZoneFile, type LineError } from './parse.ts';
import { Slices } from './slices.ts';
import { toRecords } from './to-records.ts';

export interface ImportOutcome {
  dry_run: boolean;
  /** The zone's revision after the import (the one it had when nothing changed, or on a dry run). */
  revision: number;
  added: Array<{ line: number; record: ReturnType<typeof renderRecord> }>;
  changed: Array<{ line: number; record: ReturnType<typeof renderRecord>; ttl_before: number }>;
  removed: Array<ReturnType<typeof renderRecord>>;
  unchanged: number;
  skipped: LineError[];
}

/** Records the import leaves alone: the service's SOA record and its certificate challenges. */
const kept = (r: RecordState) => r.acme === true || r.type === TYPE.SOA;

/** A message quotes what it found; a huge field quoted whole would echo megabytes back. */
export function shortMessage(message: string): string {
  const clipped = message.replace(/\S{101,}/g, (run) => `${run.slice(0, 100)}…`);
  return clipped.length > 300 ? `${clipped.slice(0, 300)}…` : clipped;
}

const lineErrors = (errors: readonly LineError[]): FieldError[] => errors.slice(0, 100).map((e) => ({ field: `line ${e.line}`, message: shortMessage(e.message) }));

/** Yields to the event loop (a large file is worked through in steps, not one long one). */
const breathe = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * `replaceAll`: a file that would remove every record of the zone (an empty one, comments only, the
 * wrong file) is applied only when asked for so; otherwise refused, saying how many would go.
 */
export async function importZoneFile(store: Store, zone: string, ownerId: number, text: string, options: { dryRun: boolean; maxRecords: number; replaceAll?: boolean }): Promise<ImportOutcome> {
  for (let attempt = 0; ; attempt++) {
    const current = await store.getZone(zone, ownerId);
    if (!current) throw notFound(`domain ${zone}`);
    await breathe();
    // One more than the limit is read, so a file past it is refused as such rather than cut short.
    const parsed = await parseZoneFile(text, { origin: zone, defaultTtl: TTL_DEFAULT, maxRecords: options.maxRecords + 1 });
    if (parsed.errors.length > 0) throw new ApiError('UNPROCESSABLE', `the zone file has ${parsed.errors.length} error(s); nothing was changed`, lineErrors(parsed.errors));
    await breathe();
    const keep = current.records.filter(kept);
    const converted = await toRecords(parsed.records, zone, keep);
    if (converted.errors.length > 0) {
      const sorted = [...converted.errors].sort((a, b) => a.line - b.line);
      throw new ApiError('UNPROCESSABLE', `the zone file has ${sorted.length} error(s); nothing was changed`, lineErrors(sorted));
    }
    const total = keep.length + converted.records.length;
    if (total > options.maxRecords) throw new ApiError('LIMIT_EXCEEDED', `the zone would hold ${total} records; a domain may hold at most ${options.maxRecords}`);
    await breathe();
    const plan = await planImport(current.records.filter((r) => !kept(r)), converted.records);
    // 20,000 records rendered twice over (added and removed) take tens of milliseconds: in slices.
    const outcome = async (revision: number, ids: number[]): Promise<ImportOutcome> => {
      const slices = new Slices();
      const each = async <T, R>(items: readonly T[], fn: (item: T, i: number) => R): Promise<R[]> => {
        const out: R[] = [];
        for (const [i, item] of items.entries()) {
          if (slices.due()) await slices.pause();
          out.push(fn(item, i));
        }
        return out;
      };
      return {
        dry_run: options.dryRun,
        revision,
        added: await each(plan.added, (a, i) => ({ line: a.line, record: renderRecord({ ...a.record, id: ids[i] ?? 0 }) })),
        changed: await each(plan.changed, (c) => ({ line: c.line, record: renderRecord(c.after), ttl_before: c.before.ttl })),
        removed: await each(plan.removed, (r) => renderRecord(r)),
        unchanged: plan.unchanged.length,
        skipped: converted.skipped,
      };
    };
    if (options.dryRun || changes(plan) === 0) return outcome(current.domain.revision, []);
    if (converted.records.length === 0 && plan.removed.length > 0 && !options.replaceAll) {
      throw new ApiError(
        'UNPROCESSABLE',
        `the zone file holds no records, and applying it would remove all ${plan.removed.length} of the zone's records; nothing was changed. To empty the zone on purpose, send it again with ?replace=all`,
      );
    }
    // A change set, not a mutation callback: the store commits it off the event loop or in pieces
    // (20,000 records take a quarter to half a second to write), only if the zone is still as read.
    const applied = await store.applyRecordChangeSet(zone, ownerId, {
      revision: current.domain.revision,
      create: plan.added.map((a) => a.record),
      put: plan.changed.map((c) => c.after),
      del: plan.removed.map((r) => r.id),
    });
    if (applied !== 'moved') return outcome(applied.head.domain.revision, applied.ids);
    if (attempt >= 2) throw new ApiError('CONFLICT', 'the zone kept changing while the file was applied; nothing was changed, send it again');
  }
}

const changes = (plan: ImportPlan) => plan.added.length + plan.changed.length + plan.removed.length;
