// The change feed (Redis store): snapshots read zone by zone after the revision, change entries
// from a stream with their record differences in a hash beside it.
import { ApiError } from '../../errors.ts';
import { isProven } from '../../model/domain.ts';
import type { EdgeNode } from '../../model/node.ts';
import { collectSnapshot } from '../snapshot.ts';
import { CHANGES_MAX_BYTES, type Change, type ChangeFeedStore, type RecordDelta, type Snapshot, type SnapshotChunk, type ZoneHead } from '../types.ts';
import type { RedisCore } from './core.ts';
import type { RedisZones } from './zones.ts';

/** Zones per streamed snapshot chunk (one MGET). */
const SNAPSHOT_BATCH = 500;

export class RedisChangeFeed implements Omit<ChangeFeedStore, 'onCommit' | 'committedElsewhere'> {
  constructor(
    private readonly core: RedisCore,
    /** Brings zones of an earlier layout to the current one before they are read (zones.ts). */
    private readonly zones: Pick<RedisZones, 'splitZoneDocuments'>,
  ) {}

  snapshot(): Promise<Snapshot> {
    return collectSnapshot(this.streamSnapshot());
  }

  /**
   * The revision is read first: the documents are at least that new, and replaying the changes
   * after it (idempotent puts and deletes) brings a consumer to any later state.
   */
  async *streamSnapshot(): AsyncGenerator<SnapshotChunk, void, undefined> {
    const header = await this.core.guard(async () => {
      const revision = Number((await this.core.redis.get(this.core.k('rev'))) ?? 0);
      const nodesRevision = Number((await this.core.redis.get(this.core.k('nodesRevision'))) ?? 0);
      return { kind: 'header' as const, revision, nodesRevision, nodes: await this.core.documents<EdgeNode>(this.core.k('nodes'), 'node') };
    });
    yield header;
    const names = await this.core.guard(async () => {
      await this.zones.splitZoneDocuments();
      return this.core.redis.zrange(this.core.k('zones'), '0', '-1');
    });
    for (let i = 0; i < names.length; i += SNAPSHOT_BATCH) {
      const json = await this.core.guard(async () => {
        const batch = names.slice(i, i + SNAPSHOT_BATCH);
        const docs = await this.core.redis.mget(batch.map((n) => this.core.k('zone', n)));
        const served = batch.flatMap((name, j) => {
          const head = docs[j] ? (JSON.parse(docs[j]) as ZoneHead) : undefined;
          return head?.domain.ns_active && isProven(head.domain) ? [{ name, head }] : [];
        });
        const pipeline = this.core.redis.pipeline();
        for (const { name } of served) pipeline.hgetall(this.core.k('zrec', name));
        const results = (await pipeline.exec()) ?? [];
        // Records are JSON already: joined in id order, never parsed.
        return served.map(({ head }, j) => {
          const [error, flat] = results[j]!;
          if (error) throw error;
          const texts = Object.entries(flat as Record<string, string>)
            .sort(([a], [b]) => Number(a) - Number(b))
            .map(([, t]) => t);
          return `{"domain":${JSON.stringify(head.domain)},"records":[${texts.join(',')}]}`;
        });
      });
      yield { kind: 'zones', json };
    }
  }

  currentRevision(): Promise<number> {
    return this.core.guard(async () => Number((await this.core.redis.get(this.core.k('rev'))) ?? 0));
  }

  changesSince(since: number, limit: number, maxBytes = CHANGES_MAX_BYTES, records = true): Promise<{ changes: Change[] } | { gone: true; oldest: number }> {
    return this.core.guard(async () => {
      const current = Number((await this.core.redis.get(this.core.k('rev'))) ?? 0);
      if (since >= current) return { changes: [] };
      const first = await this.core.redis.xrange(this.core.k('changes'), '-', '+', 'COUNT', 1);
      // The stream is trimmed roughly; record differences exactly `retention` back.
      const oldest = Math.max(first.length === 0 ? current + 1 : Number(first[0]![0].split('-')[0]), current - this.core.retention + 1);
      if (since + 1 < oldest) return { gone: true, oldest };
      // Entries are small (a difference is kept apart, its size noted): read them in batches,
      // then only the differences that fit in maxBytes.
      const changes: Change[] = [];
      let bytes = 0;
      let from = `${since + 1}-0`;
      let full = false;
      while (!full && changes.length < limit) {
        const entries = await this.core.redis.xrange(this.core.k('changes'), from, '+', 'COUNT', Math.min(500, limit - changes.length));
        if (entries.length === 0) break;
        for (const [id, fields] of entries) {
          const change = JSON.parse(fields[1]!) as Change;
          // cjson writes an empty list as {}.
          if (change.settings !== undefined && !Array.isArray(change.settings)) change.settings = [];
          const size = records ? (change.bytes ?? 0) : 0;
          if (changes.length > 0 && bytes + size > maxBytes) {
            full = true;
            break;
          }
          bytes += size;
          changes.push(change);
          from = `(${id}`;
        }
      }
      const detailed = records ? changes.filter((c) => c.bytes !== undefined) : [];
      if (detailed.length > 0) {
        const details = await this.core.redis.hmget(this.core.k('changedetails'), ...detailed.map((c) => String(c.revision)));
        detailed.forEach((change, i) => {
          const detail = details[i];
          if (detail === null || detail === undefined) throw new ApiError('STORE_UNAVAILABLE', `the change at revision ${change.revision} has lost its detail`);
          change.records = JSON.parse(detail) as RecordDelta;
        });
      }
      return { changes };
    });
  }
}
