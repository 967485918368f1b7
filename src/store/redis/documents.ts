// Internal documents and leases (Redis store): no revision, since no consumer acts on them.
import { ApiError } from '../../errors.ts';
import { decodeCursor, encodeCursor } from '../cursor.ts';
import type { DocKind, DocumentStore, Page, PageRequest } from '../types.ts';
import type { RedisCore } from './core.ts';

/** Writes a document only if it is still what was read ("" for absent: stored documents are JSON, never empty). */
const DOC_CAS_SCRIPT = `
local current = redis.call('HGET', KEYS[1], ARGV[1])
if (current or '') ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('ZADD', KEYS[2], 0, ARGV[1])
return 1
`;

/** KEYS[1] lease, ARGV holder, ttl ms: 1 when taken or renewed, 0 when another holder has it. */
const LEASE_SCRIPT = `
local current = redis.call('GET', KEYS[1])
if current and current ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', tonumber(ARGV[2]))
return 1`;

declare module 'ioredis' {
  interface RedisCommander {
    palisadeLease(key: string, holder: string, ttlMs: string): Promise<number>;
    palisadeDocCas(hash: string, ids: string, id: string, expected: string, value: string): Promise<number>;
  }
}

export class RedisDocuments implements DocumentStore {
  constructor(private readonly core: RedisCore) {
    core.redis.defineCommand('palisadeLease', { lua: LEASE_SCRIPT, numberOfKeys: 1 });
    core.redis.defineCommand('palisadeDocCas', { lua: DOC_CAS_SCRIPT, numberOfKeys: 2 });
  }

  // A hash per kind (field = id) and a sorted set of its ids for ordered, paged listings.

  getDoc<T>(kind: DocKind, id: string): Promise<T | undefined> {
    return this.core.guard(async () => {
      const text = await this.core.redis.hget(this.core.k('doc', kind), id);
      return text === null ? undefined : (JSON.parse(text) as T);
    });
  }

  async putDoc(kind: DocKind, id: string, value: unknown): Promise<void> {
    await this.core.guard(() => this.core.redis.multi().hset(this.core.k('doc', kind), id, JSON.stringify(value)).zadd(this.core.k('docids', kind), 0, id).exec());
  }

  deleteDoc(kind: DocKind, id: string): Promise<boolean> {
    return this.core.guard(async () => {
      const result = await this.core.redis.multi().hdel(this.core.k('doc', kind), id).zrem(this.core.k('docids', kind), id).exec();
      return Number(result?.[0]?.[1] ?? 0) > 0;
    });
  }

  listDocs<T>(kind: DocKind, page: PageRequest, prefix = ''): Promise<Page<{ id: string; value: T }>> {
    return this.core.guard(async () => {
      const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor);
      // Ids are ASCII: every id starting with the prefix sorts below prefix + DEL.
      const from = after !== undefined ? `(${after}` : prefix ? `[${prefix}` : '-';
      const to = prefix ? `(${prefix}\x7f` : '+';
      const ids = await this.core.redis.zrangebylex(this.core.k('docids', kind), from, to, 'LIMIT', 0, page.limit + 1);
      const chosen = ids.slice(0, page.limit).filter((id) => id.startsWith(prefix));
      const texts = chosen.length === 0 ? [] : await this.core.redis.hmget(this.core.k('doc', kind), ...chosen);
      const items = chosen.flatMap((id, i) => (texts[i] ? [{ id, value: JSON.parse(texts[i]!) as T }] : []));
      const last = chosen[chosen.length - 1];
      return { items, next: ids.length > page.limit && last ? encodeCursor(last) : undefined };
    });
  }

  updateDoc<T>(kind: DocKind, id: string, mutate: (current: T | undefined) => T | undefined): Promise<{ before: T | undefined; after: T | undefined }> {
    // Optimistic: read, decide, and write only if the text is still the one read.
    return this.core.guard(async () => {
      for (let attempt = 0; attempt < 50; attempt++) {
        const text = await this.core.redis.hget(this.core.k('doc', kind), id);
        const before = text === null ? undefined : (JSON.parse(text) as T);
        const after = mutate(text === null ? undefined : (JSON.parse(text) as T));
        if (after === undefined) return { before, after: before };
        if ((await this.core.redis.palisadeDocCas(this.core.k('doc', kind), this.core.k('docids', kind), id, text ?? '', JSON.stringify(after))) === 1) return { before, after };
      }
      throw new ApiError('STORE_UNAVAILABLE', `the document ${kind}/${id} kept changing under 50 attempts to update it`);
    });
  }


  tryLease(name: string, holder: string, ttlMs: number): Promise<boolean> {
    // One script: take the lease when it is free (expired keys are gone) or renew it when it is ours.
    return this.core.guard(async () => {
      return (await this.core.redis.palisadeLease(this.core.k('lease', name), holder, String(ttlMs))) === 1;
    });
  }
}
