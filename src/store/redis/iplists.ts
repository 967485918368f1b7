// IP lists (Redis store).
import { ApiError, notFound } from '../../errors.ts';
import type { IpListState } from '../../model/iplist.ts';
import { decodeIdCursor, encodeCursor } from '../cursor.ts';
import type { IpEntryChange, IpListStore, IpListSummary, MutationContext, Page, PageRequest } from '../types.ts';
import type { RedisCore } from './core.ts';
import { withRevision, type Op } from './plan.ts';

/** An IP list as kept: everything but its entries, which are kept in a sorted set. */
export type IpListHead = IpListSummary;

export class RedisIpLists implements IpListStore {
  constructor(private readonly core: RedisCore) {}

  //
  // An IP list is kept as a head (iplist:ID: everything but its entries, and their count) and
  // its entries in a sorted set (ipe:ID): adding or removing one entry is one ZADD or ZREM,
  // whatever the list's size. Every change rewrites the head (its revision), so checking the
  // head's text covers the entries read beside it.

  private ipListOps(list: IpListState, entries: boolean): Op[] {
    const { ips, ...head } = list;
    const ops: Op[] = [withRevision(this.core.k('iplist', list.id), { ...head, count: ips.length } satisfies IpListHead, (l) => l)];
    if (entries) {
      ops.push({ op: 'del', key: this.core.k('ipe', list.id) });
      for (const ip of ips) ops.push({ op: 'zaddv', key: this.core.k('ipe', list.id), v: ip });
    }
    return ops;
  }

  /**
   * Lists written whole by an earlier release (their entries inside the document) get their
   * entries moved into the sorted set, list by list under WATCH, once.
   */
  private ipListsSplit?: Promise<void>;
  private splitIpLists(): Promise<void> {
    this.ipListsSplit ??= (async () => {
      if ((await this.core.redis.exists(this.core.k('meta', 'ipEntries'))) === 1) return;
      for (const id of await this.core.redis.zrange(this.core.k('iplists'), '0', '-1')) {
        await this.core.rewriteWatched(this.core.k('iplist', id), (text) => {
          const old = text === null ? undefined : (JSON.parse(text) as Partial<IpListState>);
          if (!old || !Array.isArray(old.ips)) return undefined;
          const { ips, ...head } = old;
          const multi = this.core.redis.multi().set(this.core.k('iplist', id), JSON.stringify({ ...head, count: ips.length })).del(this.core.k('ipe', id));
          for (let i = 0; i < ips.length; i += 1000) multi.zadd(this.core.k('ipe', id), ...ips.slice(i, i + 1000).flatMap((ip) => [0, ip]));
          return multi;
        });
      }
      await this.core.redis.set(this.core.k('meta', 'ipEntries'), '1');
    })().catch((error: unknown) => {
      this.ipListsSplit = undefined;
      throw error;
    });
    return this.ipListsSplit;
  }

  /** Heads with their entries (in entry order), one round trip for the entries of all. */
  private async ipListsOf(heads: Array<string | null>): Promise<IpListState[]> {
    const found = heads.flatMap((text) => (text ? [JSON.parse(text) as IpListHead] : []));
    if (found.length === 0) return [];
    const pipeline = this.core.redis.pipeline();
    for (const head of found) pipeline.zrange(this.core.k('ipe', head.id), '0', '-1');
    const results = (await pipeline.exec()) ?? [];
    return found.map(({ count: _count, ...head }, i) => {
      const [error, ips] = results[i]!;
      if (error) throw error;
      return { ...head, ips: ips as string[] };
    });
  }

  async createIpList(build: (ctx: MutationContext & { id: number }) => IpListState): Promise<IpListState> {
    const nodes = await this.core.guard(() => this.core.nodeIds());
    const now = new Date().toISOString();
    const ctx = { now, nodeExists: (id: number) => nodes.has(id), nextRecordId: () => 0, id: 0 };
    const draft = build(ctx);
    const owner = await this.core.readUser(draft.ownerId);
    if (!owner) throw notFound(`user ${draft.ownerId}`);
    const id = await this.core.guard(() => this.core.redis.incr(this.core.k('seq', 'iplist')));
    const list: IpListState = { ...draft, id, created: now, updated: now };
    return this.core.mutate(async () => ({
      checks: [],
      limit: {
        key: this.core.k('uipl', list.ownerId),
        max: owner.limits.max_iplists,
        error: new ApiError('LIMIT_EXCEEDED', `the account may hold at most ${owner.limits.max_iplists} IP lists`),
      },
      ops: [
        ...this.ipListOps(list, true),
        { op: 'zadd', key: this.core.k('uipl', list.ownerId), s: id, v: String(id) },
        { op: 'zadd', key: this.core.k('iplists'), s: id, v: String(id) },
      ],
      change: { kind: 'iplist', key: String(id), op: 'put' },
      result: (revision) => ({ ...list, revision }),
    }));
  }

  getIpList(id: number): Promise<IpListState | undefined> {
    return this.core.guard(async () => {
      await this.splitIpLists();
      return (await this.ipListsOf([await this.core.redis.get(this.core.k('iplist', id))]))[0];
    });
  }

  listIpLists(ownerId: number, page: PageRequest): Promise<Page<IpListState>> {
    return this.ipListPage(this.core.k('uipl', ownerId), page);
  }

  /** A page of the IP lists an id set names (an owner's, or all), in id order. */
  private ipListPage(ids: string, page: PageRequest): Promise<Page<IpListState>> {
    return this.core.guard(async () => {
      await this.splitIpLists();
      const after = page.cursor === undefined ? 0 : decodeIdCursor(page.cursor);
      const chosenAll = await this.core.redis.zrangebyscore(ids, `(${after}`, '+inf', 'LIMIT', 0, page.limit + 1);
      const more = chosenAll.length > page.limit;
      const chosen = chosenAll.slice(0, page.limit);
      const items = chosen.length === 0 ? [] : await this.ipListsOf(await this.core.redis.mget(chosen.map((id) => this.core.k('iplist', id))));
      const last = items[items.length - 1];
      return { items, next: more && last ? encodeCursor(String(last.id)) : undefined };
    });
  }

  countIpLists(ownerId: number): Promise<number> {
    return this.core.guard(() => this.core.redis.zcard(this.core.k('uipl', ownerId)));
  }

  updateIpList(id: number, ownerId: number, mutate: (list: IpListState, ctx: MutationContext) => IpListState | undefined): Promise<IpListState> {
    const key = this.core.k('iplist', id);
    return this.core.mutate<IpListState>(async () => {
      await this.splitIpLists();
      const text = await this.core.redis.get(key);
      const list = (await this.ipListsOf([text]))[0];
      if (!list || list.ownerId !== ownerId) throw notFound(`IP list ${id}`);
      const nodes = await this.core.nodeIds();
      const next = mutate(list, { now: new Date().toISOString(), nodeExists: (n) => nodes.has(n), nextRecordId: () => 0 });
      if (!next) return { unchanged: list };
      const stored: IpListState = { ...next, id, ownerId, created: list.created, updated: new Date().toISOString() };
      return {
        checks: [[key, text]],
        ops: this.ipListOps(stored, next.ips !== list.ips),
        change: { kind: 'iplist', key: String(id), op: 'put' },
        result: (revision) => ({ ...stored, revision }),
      };
    });
  }

  changeIpEntries(id: number, ownerId: number, change: IpEntryChange, checkCount: (count: number) => void): Promise<IpListSummary> {
    const key = this.core.k('iplist', id);
    const entries = this.core.k('ipe', id);
    return this.core.mutate<IpListSummary>(async () => {
      await this.splitIpLists();
      const text = await this.core.redis.get(key);
      const head = text === null ? undefined : (JSON.parse(text) as IpListHead);
      if (!head || head.ownerId !== ownerId) throw notFound(`IP list ${id}`);
      const asked = [...change.del, ...change.add];
      const scores = asked.length === 0 ? [] : await this.core.redis.zmscore(entries, ...asked);
      const present = new Set(asked.filter((_, i) => scores[i] !== null));
      const ops: Op[] = [];
      let count = head.count;
      for (const ip of new Set(change.del)) {
        if (!present.has(ip)) continue;
        present.delete(ip);
        ops.push({ op: 'zremv', key: entries, v: ip });
        count--;
      }
      for (const ip of new Set(change.add)) {
        if (present.has(ip)) continue;
        present.add(ip);
        ops.push({ op: 'zaddv', key: entries, v: ip });
        count++;
      }
      if (ops.length === 0) return { unchanged: head };
      checkCount(count);
      const stored: IpListHead = { ...head, count, updated: new Date().toISOString() };
      return {
        checks: [[key, text]],
        ops: [withRevision(key, stored, (l) => l), ...ops],
        change: { kind: 'iplist', key: String(id), op: 'put' },
        result: (revision) => ({ ...stored, revision }),
      };
    });
  }

  deleteIpList(id: number, ownerId: number): Promise<boolean> {
    const key = this.core.k('iplist', id);
    return this.core.mutate<boolean>(async () => {
      await this.splitIpLists();
      const text = await this.core.redis.get(key);
      const list = text === null ? undefined : (JSON.parse(text) as IpListHead);
      if (!list || list.ownerId !== ownerId) return { unchanged: false };
      return {
        checks: [[key, text]],
        ops: [
          { op: 'del', key },
          { op: 'del', key: this.core.k('ipe', id) },
          { op: 'zrem', key: this.core.k('uipl', ownerId), v: String(id) },
          { op: 'zrem', key: this.core.k('iplists'), v: String(id) },
        ],
        change: { kind: 'iplist', key: String(id), op: 'delete' },
        result: () => true,
      };
    });
  }

  listAllIpLists(page: PageRequest): Promise<Page<IpListState>> {
    return this.ipListPage(this.core.k('iplists'), page);
  }
}
