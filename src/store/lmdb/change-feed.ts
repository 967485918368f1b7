// The change feed (embedded store): snapshots in one read transaction, change entries by revision.
import type { EdgeNode } from '../../model/node.ts';
import { collectSnapshot } from '../snapshot.ts';
import { CHANGES_MAX_BYTES, type Change, type ChangeFeedStore, type RecordDelta, type Snapshot, type SnapshotChunk, type ZoneHead } from '../types.ts';
import { END, type LmdbCore } from './core.ts';

/** Zones per streamed snapshot chunk. */
const SNAPSHOT_BATCH = 500;

export class LmdbChangeFeed implements Omit<ChangeFeedStore, 'onCommit' | 'committedElsewhere'> {
  constructor(private readonly core: LmdbCore) {}

  snapshot(): Promise<Snapshot> {
    return collectSnapshot(this.streamSnapshot());
  }

  /** One read transaction from the header to the last zone: every part is at the same revision. */
  async *streamSnapshot(): AsyncGenerator<SnapshotChunk, void, undefined> {
    const transaction = this.core.db.useReadTransaction();
    let records: Iterator<{ key: [string, number]; value: string }> | undefined;
    try {
      yield {
        kind: 'header',
        revision: (this.core.db.get(['seq', 'revision'], { transaction }) as number | undefined) ?? 0,
        nodesRevision: (this.core.db.get(['meta', 'nodesRevision'], { transaction }) as number | undefined) ?? 0,
        nodes: [...this.core.db.getRange({ start: ['node', 0], end: ['node', Number.MAX_SAFE_INTEGER], transaction })].map((e) => e.value as EdgeNode),
      };
      let batch: string[] = [];
      // Served zones in name order beside all records in (zone, id) order: one walk of each, the
      // records of zones not served skipped. Each zone's line is joined from stored texts.
      records = this.core.records.getRange({ transaction })[Symbol.iterator]();
      let record = records.next();
      for (const { key, value } of this.core.db.getRange({ start: ['served', ''], end: ['served', END], transaction })) {
        const name = key[1] as string;
        const domain = typeof value === 'string' ? value : JSON.stringify((this.core.db.get(['zone', name], { transaction }) as ZoneHead).domain);
        while (!record.done && record.value.key[0] < name) record = records.next();
        const texts: string[] = [];
        while (!record.done && record.value.key[0] === name) {
          texts.push(record.value.value);
          record = records.next();
        }
        batch.push(`{"domain":${domain},"records":[${texts.join(',')}]}`);
        if (batch.length === SNAPSHOT_BATCH) {
          yield { kind: 'zones', json: batch };
          batch = [];
        }
      }
      if (batch.length > 0) yield { kind: 'zones', json: batch };
    } finally {
      // A walk of the records left before their end (records of zones after the last served one)
      // holds a reader slot past done() once a write commits meanwhile: 126 such snapshots and
      // every read of the store failed (MDB_READERS_FULL).
      records?.return?.();
      transaction.done();
    }
  }

  async currentRevision(): Promise<number> {
    return this.core.get<number>(['seq', 'revision']) ?? 0;
  }

  async changesSince(since: number, limit: number, maxBytes = CHANGES_MAX_BYTES, records = true): Promise<{ changes: Change[] } | { gone: true; oldest: number }> {
    const current = await this.currentRevision();
    const oldest = Math.max(1, current - this.core.retention + 1);
    if (since < oldest - 1) return { gone: true, oldest };
    const changes: Change[] = [];
    let bytes = 0;
    for (const { value } of this.core.db.getRange({ start: ['chg', since + 1], end: ['chg', Number.MAX_SAFE_INTEGER], limit })) {
      const entry = value as Change;
      if (!records) {
        changes.push(entry);
        continue;
      }
      const size = entry.bytes ?? 0;
      if (changes.length > 0 && bytes + size > maxBytes) break;
      bytes += size;
      const detail = entry.bytes === undefined ? undefined : this.core.get<string>(['chgd', entry.revision]);
      changes.push(detail === undefined ? entry : { ...entry, records: JSON.parse(detail) as RecordDelta });
    }
    return { changes };
  }
}
