// Zones, their records and claims of names (Redis store).
import { notFound, StoreError } from '../errors.ts';
import { isProven, settingsChange, withoutNsRevision, type DomainState } from '../../model/domain.ts';
import type { RecordState } from '../../model/record.ts';
import { decodeCursor, encodeCursor } from '../cursor.ts';
import { claimKey, nameOfReversed, reversedName } from '../name-tree.ts';
import type { ClaimRef, MutationContext, Page, PageRequest, RecordChangeSet, RecordDelta, RecordMutation, RecordView, Zone, ZoneHead, ZoneMutation, ZoneStore } from '../types.ts';
import { INDEX_ZONE_TREE_SCRIPT } from './commit-script.ts';
import type { RedisCore } from './core.ts';
import type { Op } from './plan.ts';
import { stageRecordChange } from './staged-records.ts';
import { dropClaimOps, recordOps, zoneOps } from './zone-ops.ts';
import { jsonArrayInSlices, TimeSlices } from '../../common/time-slices.ts';

/** Thrown by a record view for what is not read yet (see changeRecords). */
class ReadFirst extends Error {
  constructor(readonly what: { owner?: string; id?: number }) {
    super('read first');
  }
  get owner(): string | undefined {
    return this.what.owner;
  }
  get id(): number | undefined {
    return this.what.id;
  }
}

function readFirst(what: { owner?: string; id?: number }): never {
  throw new ReadFirst(what);
}

export class RedisZones implements ZoneStore {
  constructor(private readonly core: RedisCore) {}

  // A zone is kept in parts, so that changing a record costs the same in a zone of 20 records
  // and of 200,000: its head (zone:NAME, the domain and the record count), its records as JSON
  // in a hash (zrec:NAME, field = id), and the records at each owner name in a sorted set
  // (zat:NAME, members "owner|id"; owner names never hold "|"). Every change rewrites the head
  // (its revision), so checking the head's text covers every record read beside it.

  /** The owner's claim of a name: the holder's, or a pending one beside it. */
  private async claimOf(name: string, ownerId: number): Promise<{ text: string; head: ZoneHead; key: string; primary: boolean } | undefined> {
    const found = await this.head(name);
    if (found?.head.domain.ownerId === ownerId) return { ...found, key: name, primary: true };
    const text = await this.core.redis.get(this.core.k('zone', claimKey(name, ownerId)));
    return text === null ? undefined : { text, head: JSON.parse(text) as ZoneHead, key: claimKey(name, ownerId), primary: false };
  }
  /** Data written before the tree set and owners hash existed gets them once. */
  private zoneTreeIndexed?: Promise<unknown>;
  private indexZoneTree(): Promise<unknown> {
    this.zoneTreeIndexed ??= (async () => {
      if ((await this.core.redis.exists(this.core.k('meta', 'zoneTree'))) === 1) return;
      await this.core.redis.eval(INDEX_ZONE_TREE_SCRIPT, 4, this.core.k('zones'), this.core.k('zoneowners'), this.core.k('zonetree'), this.core.k('meta', 'zoneTree'), this.core.k('zone', ''));
    })().catch((error: unknown) => {
      this.zoneTreeIndexed = undefined;
      throw error;
    });
    return this.zoneTreeIndexed;
  }

  /**
   * Data written before records were kept apart (one zone document holding its records) is
   * split once, zone by zone; each zone under WATCH, so a process still writing the old way
   * cannot lose a change, and a second process doing the same finds nothing left to split.
   */
  private layoutSplit?: Promise<void>;
  splitZoneDocuments(): Promise<void> {
    this.layoutSplit ??= (async () => {
      if ((await this.core.redis.exists(this.core.k('meta', 'recordLayout'))) === 1) return;
      const names = await this.core.redis.zrange(this.core.k('zones'), '0', '-1');
      for (const name of names) {
        await this.core.rewriteWatched(this.core.k('zone', name), (text) => {
          const old = text === null ? undefined : (JSON.parse(text) as Partial<Zone>);
          if (!old || !Array.isArray(old.records)) return undefined;
          const multi = this.core.redis.multi().set(this.core.k('zone', name), JSON.stringify({ domain: old.domain!, recordCount: old.records.length } satisfies ZoneHead));
          for (const record of old.records) {
            multi.hset(this.core.k('zrec', name), String(record.id), JSON.stringify(record));
            multi.zadd(this.core.k('zat', name), 0, `${record.name}|${record.id}`);
          }
          return multi;
        });
      }
      await this.core.redis.set(this.core.k('meta', 'recordLayout'), '1');
    })().catch((error: unknown) => {
      this.layoutSplit = undefined;
      throw error;
    });
    return this.layoutSplit;
  }

  private async head(name: string): Promise<{ text: string; head: ZoneHead } | undefined> {
    await this.splitZoneDocuments();
    const text = await this.core.redis.get(this.core.k('zone', name));
    return text === null ? undefined : { text, head: JSON.parse(text) as ZoneHead };
  }

  createZone(build: (ctx: MutationContext) => Zone): Promise<ZoneHead> {
    return this.core.mutate(async () => {
      await this.indexZoneTree();
      await this.splitZoneDocuments();
      const zone = (await this.core.withRecordIds(async (ctx) => build(ctx)))!;
      const name = zone.domain.domain;
      const ownerId = zone.domain.ownerId;
      const taken = () => new StoreError('CONFLICT', `${name} is already registered`, [{ field: 'domain', message: 'is already registered' }]);
      // A pending claim may sit beside other accounts' claims of the name (issue 26); a proven
      // domain is first come, first served, and overlaps no other account's proven domain.
      const pending = !isProven(zone.domain);
      const holder = await this.head(name);
      if (holder && (!pending || holder.head.domain.ownerId === ownerId)) throw taken();
      const mine = this.core.k('zone', claimKey(name, ownerId));
      if ((await this.core.redis.exists(mine)) === 1) throw taken();
      const owner = await this.core.readUser(ownerId);
      if (!owner) throw notFound(`user ${ownerId}`);
      const now = new Date().toISOString();
      const head: ZoneHead = { domain: { ...zone.domain, created: now, updated: now }, recordCount: zone.records.length };
      const primary = holder === undefined;
      return {
        // As read: the script refuses if another process registered the name meanwhile.
        checks: [
          [this.core.k('zone', name), holder?.text ?? null],
          [mine, null],
        ],
        limit: {
          key: this.core.k('udom', ownerId),
          max: owner.limits.max_domains,
          error: new StoreError('LIMIT_EXCEEDED', `the account may hold at most ${owner.limits.max_domains} domains`),
        },
        overlap: pending ? undefined : { name, owner: ownerId },
        ops: zoneOps(this.core, head, true, zone.records, primary),
        change: { kind: primary ? 'zone' : 'claim', key: name, op: 'put' },
        result: (revision) => ({ ...head, domain: { ...head.domain, revision } }),
      };
    });
  }

  /**
   * A zone's records in id order, read a thousand at a time (HSCAN) and parsed in slices: one
   * HGETALL of 20,000 records held Redis, and its parsing this process, for tens of milliseconds.
   * A scan may return a record twice; it is kept once.
   */
  private async recordsOf(name: string): Promise<RecordState[]> {
    const slices = new TimeSlices();
    const byId = new Map<number, RecordState>();
    let cursor = '0';
    do {
      const [next, flat] = await this.core.redis.hscan(this.core.k('zrec', name), cursor, 'COUNT', 1000);
      cursor = next;
      for (let i = 0; i < flat.length; i += 2) {
        await slices.breathe();
        byId.set(Number(flat[i]), JSON.parse(flat[i + 1]!) as RecordState);
      }
    } while (cursor !== '0');
    return [...byId.entries()].sort(([a], [b]) => a - b).map(([, record]) => record);
  }

  getZone(name: string, ownerId?: number): Promise<Zone | undefined> {
    return this.core.guard(async () => {
      // Every record change rewrites the head: the records read between two equal reads of it
      // are the zone at that revision (else read again).
      for (let attempt = 0; ; attempt++) {
        const found = ownerId === undefined ? await this.head(name).then((f) => f && { ...f, key: name }) : await this.claimOf(name, ownerId);
        if (!found) return undefined;
        const records = await this.recordsOf(found.key);
        if (attempt >= 4 || (await this.core.redis.get(this.core.k('zone', found.key))) === found.text) return { domain: found.head.domain, records };
      }
    });
  }

  getZoneHead(name: string, ownerId?: number): Promise<ZoneHead | undefined> {
    return this.core.guard(async () => (ownerId === undefined ? await this.head(name) : await this.claimOf(name, ownerId))?.head);
  }

  getRecord(zone: string, id: number, ownerId?: number): Promise<RecordState | undefined> {
    return this.core.guard(async () => {
      await this.splitZoneDocuments();
      const key = ownerId === undefined ? zone : (await this.claimOf(zone, ownerId))?.key;
      if (key === undefined) return undefined;
      const json = await this.core.redis.hget(this.core.k('zrec', key), String(id));
      return json === null ? undefined : (JSON.parse(json) as RecordState);
    });
  }

  getRecordsAt(zone: string, owner: string): Promise<RecordState[]> {
    return this.core.guard(async () => {
      await this.splitZoneDocuments();
      const members = await this.core.redis.zrangebylex(this.core.k('zat', zone), `[${owner}|`, `[${owner}|\xff`);
      if (members.length === 0) return [];
      const texts = await this.core.redis.hmget(this.core.k('zrec', zone), ...members.map((m) => m.slice(m.lastIndexOf('|') + 1)));
      return texts.flatMap((t) => (t ? [JSON.parse(t) as RecordState] : []));
    });
  }

  listClaims(name: string): Promise<ZoneHead[]> {
    return this.core.guard(async () => {
      const holder = await this.head(name);
      const owners = (await this.core.redis.hkeys(this.core.k('zclaims', name))).map(Number).sort((a, b) => a - b);
      const docs = owners.length === 0 ? [] : await this.core.redis.mget(owners.map((o) => this.core.k('zone', claimKey(name, o))));
      const others = docs.flatMap((d) => (d ? [JSON.parse(d) as ZoneHead] : []));
      return holder ? [holder.head, ...others] : others;
    });
  }

  pendingClaimsUnder(name: string): Promise<ClaimRef[]> {
    return this.core.guard(async () => {
      const prefix = reversedName(name);
      const members = await this.core.redis.zrangebylex(this.core.k('pending'), `[${prefix}`, `[${prefix}\xff`);
      return members.map((m) => {
        const bar = m.lastIndexOf('|');
        return { name: nameOfReversed(m.slice(0, bar)), ownerId: Number(m.slice(bar + 1)) };
      });
    });
  }

  proveClaim(name: string, ownerId: number, mutate: (head: ZoneHead) => DomainState): Promise<{ head: ZoneHead; released?: ZoneHead }> {
    return this.core.mutate(async () => {
      const mine = await this.claimOf(name, ownerId);
      if (!mine) throw notFound(`domain ${name}`);
      const holder = mine.primary ? undefined : await this.head(name);
      if (holder && isProven(holder.head.domain)) throw new StoreError('CONFLICT', `${name} is held, proven, by another account: its proof must lapse first`);
      const next = mutate(mine.head);
      const stored: ZoneHead = { domain: { ...next, domain: name, ownerId, created: mine.head.domain.created, updated: new Date().toISOString() }, recordCount: mine.head.recordCount };
      const ops: Op[] = [];
      if (holder) ops.push(...dropClaimOps(this.core, name, holder.head.domain.ownerId, true));
      if (!mine.primary) {
        // The claim takes the name: its records move to the holder's place.
        ops.push(
          { op: 'rename', key: this.core.k('zrec', mine.key), to: this.core.k('zrec', name) },
          { op: 'rename', key: this.core.k('zat', mine.key), to: this.core.k('zat', name) },
          { op: 'del', key: this.core.k('zone', mine.key) },
          { op: 'hdel', key: this.core.k('zclaims', name), f: String(ownerId) },
          { op: 'zadd', key: this.core.k('zones'), s: 0, v: name },
        );
      }
      ops.push(...zoneOps(this.core, stored, false));
      return {
        checks: [
          [this.core.k('zone', name), mine.primary ? mine.text : (holder?.text ?? null)],
          [this.core.k('zone', mine.key), mine.text],
        ],
        ops,
        change: { kind: 'zone', key: name, op: 'put' },
        result: (revision) => ({ head: { ...stored, domain: { ...stored.domain, revision } }, released: holder?.head }),
      };
    });
  }

  listZones(ownerId: number, page: PageRequest, tag?: string): Promise<Page<ZoneHead>> {
    return this.core.guard(async () => {
      await this.splitZoneDocuments();
      const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor);
      const items: ZoneHead[] = [];
      let from = after === undefined ? '-' : `(${after}`;
      let more = false;
      // Tag filters skip zones, so read in chunks until the page is full.
      for (;;) {
        const names = await this.core.redis.zrangebylex(this.core.k('udom', ownerId), from, '+', 'LIMIT', 0, Math.max(page.limit + 1, 100));
        if (names.length === 0) break;
        const held = await this.core.redis.mget(names.map((n) => this.core.k('zone', n)));
        // A name another account holds: this account's claim sits beside it.
        const beside = names.filter((_, i) => !held[i] || (JSON.parse(held[i]) as ZoneHead).domain.ownerId !== ownerId);
        const claims = beside.length === 0 ? [] : await this.core.redis.mget(beside.map((n) => this.core.k('zone', claimKey(n, ownerId))));
        const docs = names.map((n, i) => (beside.includes(n) ? claims[beside.indexOf(n)] : held[i]));
        for (const doc of docs) {
          if (!doc) continue;
          const zone = JSON.parse(doc) as ZoneHead;
          if (tag !== undefined && !zone.domain.tags.includes(tag)) continue;
          if (items.length === page.limit) {
            more = true;
            break;
          }
          items.push(zone);
        }
        if (more) break;
        from = `(${names[names.length - 1]}`;
      }
      const last = items[items.length - 1];
      return { items, next: more && last ? encodeCursor(last.domain.domain) : undefined };
    });
  }

  listAllZones(page: PageRequest): Promise<Page<ZoneHead>> {
    return this.core.guard(async () => {
      await this.splitZoneDocuments();
      const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor);
      const names = await this.core.redis.zrangebylex(this.core.k('zones'), after === undefined ? '-' : `(${after}`, '+', 'LIMIT', 0, page.limit + 1);
      const more = names.length > page.limit;
      const docs = names.length === 0 ? [] : await this.core.redis.mget(names.slice(0, page.limit).map((n) => this.core.k('zone', n)));
      const items = docs.flatMap((d) => (d ? [JSON.parse(d) as ZoneHead] : []));
      const last = names[Math.min(names.length, page.limit) - 1];
      return { items, next: more && last ? encodeCursor(last) : undefined };
    });
  }

  countZones(ownerId: number): Promise<number> {
    return this.core.guard(() => this.core.redis.zcard(this.core.k('udom', ownerId)));
  }

  updateZone(name: string, ownerId: number, mutate: ZoneMutation): Promise<ZoneHead> {
    return this.core.mutate<ZoneHead>(async () => {
      const found = await this.claimOf(name, ownerId);
      if (!found) throw notFound(`domain ${name}`);
      const { text, head, primary } = found;
      const key = this.core.k('zone', found.key);
      const next = await this.core.withRecordIds(async (ctx) => mutate(JSON.parse(text) as ZoneHead, ctx));
      if (!next) return { unchanged: head };
      const { settings, domain } = settingsChange(head.domain, { ...next.domain, domain: name, ownerId });
      const stored: ZoneHead = {
        domain: { ...domain, created: head.domain.created, updated: new Date().toISOString() },
        recordCount: head.recordCount,
      };
      return {
        checks: [[key, text]],
        ops: zoneOps(this.core, stored, false, [], primary),
        // A pending claim beside the holder's is no consumer's business.
        change: primary ? { kind: 'zone', key: name, op: 'put', settings } : { kind: 'claim', key: name, op: 'put' },
        result: (revision) => ({ ...stored, domain: { ...stored.domain, revision } }),
      };
    });
  }

  changeRecords(name: string, ownerId: number, mutate: RecordMutation): Promise<{ head: ZoneHead; delta: RecordDelta }> {
    return this.core.mutate<{ head: ZoneHead; delta: RecordDelta }>(async () => {
      const found = await this.claimOf(name, ownerId);
      if (!found) throw notFound(`domain ${name}`);
      const { text, head, primary } = found;
      const key = this.core.k('zone', found.key);
      const zone = found.key;
      // The mutation is synchronous: what it asks for that is not read yet stops it (ReadFirst),
      // is read, and the mutation runs again — it is pure, so running it again is harmless.
      const atName = new Map<string, RecordState[]>();
      const byId = new Map<number, RecordState | null>();
      const view: RecordView = {
        head,
        at: (owner) => atName.get(owner) ?? readFirst({ owner }),
        byId: (id) => {
          const record = byId.get(id);
          return record === undefined ? readFirst({ id }) : (record ?? undefined);
        },
      };
      const readIds = async (ids: number[]) => {
        const missing = ids.filter((id) => !byId.has(id));
        if (missing.length === 0) return;
        const texts = await this.core.redis.hmget(this.core.k('zrec', zone), ...missing.map(String));
        missing.forEach((id, i) => byId.set(id, texts[i] ? (JSON.parse(texts[i]) as RecordState) : null));
      };
      const edit = await this.core.withRecordIds(async (ctx) => {
        for (;;) {
          try {
            return mutate(view, ctx);
          } catch (error) {
            if (!(error instanceof ReadFirst)) throw error;
            if (error.owner !== undefined) {
              const members = await this.core.redis.zrangebylex(this.core.k('zat', zone), `[${error.owner}|`, `[${error.owner}|\xff`);
              const ids = members.map((m) => Number(m.slice(m.lastIndexOf('|') + 1)));
              await readIds(ids);
              atName.set(error.owner, ids.flatMap((id) => byId.get(id) ?? []));
            } else await readIds([error.id!]);
          }
        }
      });
      if (!edit) return { unchanged: { head, delta: { put: [], del: [] } } };
      await readIds([...edit.del, ...edit.put.map((r) => r.id)]);
      const ops: Op[] = [];
      const delta: RecordDelta = { put: [], del: [] };
      let count = head.recordCount;
      const removed = new Set<number>();
      for (const id of edit.del) {
        const old = byId.get(id);
        if (!old || removed.has(id)) continue;
        removed.add(id);
        ops.push({ op: 'hdel', key: this.core.k('zrec', zone), f: String(id) }, { op: 'zremv', key: this.core.k('zat', zone), v: `${old.name}|${id}` });
        delta.del.push({ id, name: old.name });
        count--;
      }
      for (const record of edit.put) {
        const old = removed.has(record.id) ? undefined : byId.get(record.id);
        if (old) {
          ops.push({ op: 'zremv', key: this.core.k('zat', zone), v: `${old.name}|${old.id}` });
          if (old.name !== record.name) delta.del.push({ id: old.id, name: old.name });
        } else count++;
        removed.delete(record.id);
        ops.push(...recordOps(this.core, zone, record));
        delta.put.push(record);
      }
      const stored: ZoneHead = { domain: { ...withoutNsRevision(head.domain), updated: new Date().toISOString() }, recordCount: count };
      return {
        checks: [[key, text]],
        ops: [...zoneOps(this.core, stored, false, [], primary), ...ops],
        // A pending claim beside the holder's: an entry without the difference (no consumer reads it).
        change: { kind: primary ? 'zone' : 'claim', key: name, op: 'put' },
        detail: primary ? JSON.stringify(delta) : undefined,
        result: (revision) => ({ head: { ...stored, domain: { ...stored.domain, revision } }, delta }),
      };
    });
  }

  /** Staged in pieces and swapped in by one commit (staged-records.ts). */
  applyRecordChangeSet(name: string, ownerId: number, change: RecordChangeSet): Promise<{ head: ZoneHead; ids: number[] } | 'moved'> {
    return this.core.guard(async () => {
      const found = await this.claimOf(name, ownerId);
      if (!found) throw notFound(`domain ${name}`);
      if (found.head.domain.revision !== change.revision) return 'moved';
      const ids: number[] = [];
      if (change.create.length > 0) {
        const last = await this.core.redis.incrby(this.core.k('seq', 'record'), change.create.length);
        for (let id = last - change.create.length + 1; id <= last; id++) ids.push(id);
      }
      const staged = await stageRecordChange(this.core, found.key, found.head.recordCount, change, ids);
      try {
        const detail = found.primary ? `{"put":${await jsonArrayInSlices(staged.delta.put)},"del":${JSON.stringify(staged.delta.del)}}` : undefined;
        const result = await this.core.mutate<{ head: ZoneHead; ids: number[] } | 'moved'>(async () => {
          const now = await this.claimOf(name, ownerId);
          if (now?.text !== found.text) return { unchanged: 'moved' };
          const stored: ZoneHead = { domain: { ...withoutNsRevision(found.head.domain), updated: new Date().toISOString() }, recordCount: staged.count };
          return {
            checks: [[this.core.k('zone', found.key), found.text]],
            ops: [
              ...zoneOps(this.core, stored, false, [], found.primary),
              { op: 'swap', key: staged.records, to: this.core.k('zrec', found.key) },
              { op: 'swap', key: staged.names, to: this.core.k('zat', found.key) },
            ],
            change: { kind: found.primary ? 'zone' : 'claim', key: name, op: 'put' },
            detail,
            result: (revision) => ({ head: { ...stored, domain: { ...stored.domain, revision } }, ids }),
          };
        });
        if (result === 'moved') await staged.discard();
        return result;
      } catch (error) {
        await staged.discard();
        throw error;
      }
    });
  }

  deleteZone(name: string, ownerId: number): Promise<boolean> {
    return this.core.mutate<boolean>(async () => {
      const found = await this.claimOf(name, ownerId);
      if (!found) return { unchanged: false };
      return {
        checks: [[this.core.k('zone', found.key), found.text]],
        ops: dropClaimOps(this.core, name, ownerId, found.primary),
        change: { kind: found.primary ? 'zone' : 'claim', key: name, op: 'delete' },
        result: () => true,
      };
    });
  }
}
