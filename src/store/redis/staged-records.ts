// Large record changes on Redis (a zone-file import, a bulk change), in pieces: the zone's record
// hash and owner-name index are copied server-side (COPY: a few milliseconds for 20,000 records)
// to keys of their own, the change is written to the copies in small pipelined batches, and the
// commit script then swaps the copies in (UNLINK + RENAME) together with the head, the revision
// and the change entry. One script applying 40,000 writes held Redis — every account's requests —
// for half a second and more; readers still see the zone before or after, never between. Copies
// left by a process that died half-way expire by themselves.
import { randomBytes } from 'node:crypto';
import { TimeSlices } from '../../common/time-slices.ts';
import type { RecordState } from '../../model/record.ts';
import type { RecordChangeSet, RecordDelta } from '../types.ts';
import type { RedisCore } from './core.ts';

/** How long an unfinished copy is kept: far longer than any import takes. */
const STAGE_MS = 10 * 60_000;
/** Records per batch: each of its commands costs Redis about a millisecond. */
const BATCH = 1000;

export interface StagedRecords {
  records: string;
  names: string;
  delta: RecordDelta;
  /** The zone's record count after the change. */
  count: number;
  /** Removes the copies (a change not committed). */
  discard(): Promise<void>;
}

/**
 * Writes `change` (its creates given `ids`) to copies of the zone's record keys; `recordCount`
 * is the zone's count as read. Every record change rewrites the zone's head, so the commit's
 * check of the head as read covers the records copied and read here.
 */
export async function stageRecordChange(core: RedisCore, zone: string, recordCount: number, change: RecordChangeSet, ids: number[]): Promise<StagedRecords> {
  const slices = new TimeSlices();
  const live = { records: core.k('zrec', zone), names: core.k('zat', zone) };
  const tag = randomBytes(9).toString('hex');
  const staged = { records: core.k('zstage', tag, 'rec'), names: core.k('zstage', tag, 'at') };
  const discard = async () => void (await core.redis.unlink(staged.records, staged.names).catch(() => undefined));
  try {
    const old = await recordsAsTheyAre(core, live.records, [...change.del, ...change.put.map((r) => r.id)], slices);
    await core.redis.multi().copy(live.records, staged.records).copy(live.names, staged.names).exec();
    // The same steps as changeRecords, written to the copies a batch at a time, each batch as
    // four commands of many arguments (one command per record made 40,000 command objects, and
    // their garbage, for an import). In a batch the removals go first, as they come first in the
    // change: no id or index entry is both removed and written after in one batch otherwise.
    const delta: RecordDelta = { put: [], del: [] };
    let count = recordCount;
    const removed = new Set<number>();
    const batch = { hdel: [] as string[], zrem: [] as string[], hset: [] as string[], zadd: [] as Array<string | number> };
    let queued = 0;
    const flush = async (force = false) => {
      if (queued === 0 || (!force && queued < BATCH)) return;
      const pipeline = core.redis.pipeline();
      if (batch.hdel.length > 0) pipeline.hdel(staged.records, ...batch.hdel);
      if (batch.zrem.length > 0) pipeline.zrem(staged.names, ...batch.zrem);
      if (batch.hset.length > 0) pipeline.hset(staged.records, ...batch.hset);
      if (batch.zadd.length > 0) pipeline.zadd(staged.names, ...batch.zadd);
      // Each batch renews the copies' expiry (a copy of an empty zone exists from its first write).
      pipeline.pexpire(staged.records, STAGE_MS).pexpire(staged.names, STAGE_MS);
      const results = await pipeline.exec();
      const failed = results?.find(([error]) => error);
      if (failed) throw failed[0];
      batch.hdel = [];
      batch.zrem = [];
      batch.hset = [];
      batch.zadd = [];
      queued = 0;
    };
    for (const id of change.del) {
      await slices.breathe();
      const record = old.get(id);
      if (!record || removed.has(id)) continue;
      removed.add(id);
      batch.hdel.push(String(id));
      batch.zrem.push(`${record.name}|${id}`);
      queued++;
      delta.del.push({ id, name: record.name });
      count--;
      await flush();
    }
    await flush(true);
    const written = [...change.create.map((record, i) => ({ ...record, id: ids[i]! })), ...change.put];
    for (const record of written) {
      await slices.breathe();
      const before = removed.has(record.id) ? undefined : old.get(record.id);
      if (before) {
        batch.zrem.push(`${before.name}|${before.id}`);
        if (before.name !== record.name) delta.del.push({ id: before.id, name: before.name });
      } else count++;
      removed.delete(record.id);
      batch.hset.push(String(record.id), JSON.stringify(record));
      batch.zadd.push(0, `${record.name}|${record.id}`);
      queued++;
      delta.put.push(record);
      await flush();
    }
    await flush(true);
    return { ...staged, delta, count, discard };
  } catch (error) {
    await discard();
    throw error;
  }
}

/** The records as they are, of every id removed or rewritten (read a batch at a time, pausing between records). */
async function recordsAsTheyAre(core: RedisCore, key: string, wanted: number[], slices: TimeSlices): Promise<Map<number, RecordState>> {
  const old = new Map<number, RecordState>();
  for (let at = 0; at < wanted.length; at += BATCH) {
    const batch = wanted.slice(at, at + BATCH);
    const texts = await core.redis.hmget(key, ...batch.map(String));
    for (let i = 0; i < batch.length; i++) {
      await slices.breathe();
      if (texts[i]) old.set(batch[i]!, JSON.parse(texts[i]!) as RecordState);
    }
  }
  return old;
}
