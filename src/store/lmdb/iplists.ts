// IP lists (embedded store).
import { ApiError, notFound } from '../../errors.ts';
import { sortedIndex, type IpListState } from '../../model/iplist.ts';
import type { UserState } from '../../model/user.ts';
import { decodeIdCursor, encodeCursor } from '../cursor.ts';
import type { IpEntryChange, IpListStore, IpListSummary, MutationContext, Page, PageRequest } from '../types.ts';
import { END, type Key, type LmdbCore } from './core.ts';

/** Entries per stored block of an IP list, at most (blocks are written half full). */
const IP_BLOCK = 1024;

/** An IP list as kept: everything but its entries, which are kept in blocks. */
export type IpListHead = IpListSummary;

export class LmdbIpLists implements IpListStore {
  constructor(private readonly core: LmdbCore) {}


  // An IP list is kept as a head (['iplist', id]: everything but the entries, and their count)
  // and its entries in sorted blocks of at most IP_BLOCK (['ipb', id, first entry] → entries):
  // adding or removing one entry rewrites one block, whatever the list's size, and reading the
  // whole list reads a few blocks.

  createIpList(build: (ctx: MutationContext & { id: number }) => IpListState): Promise<IpListState> {
    return this.core.commit((tx) => {
      const ctx = tx.ctx();
      const draft = build({ ...ctx, id: 0 });
      const owner = this.core.get<UserState>(['user', draft.ownerId]);
      if (!owner) throw notFound(`user ${draft.ownerId}`);
      if (this.core.countPrefix('uipl', draft.ownerId) >= owner.limits.max_iplists) {
        throw new ApiError('LIMIT_EXCEEDED', `the account may hold at most ${owner.limits.max_iplists} IP lists`);
      }
      const id = tx.seq('iplist');
      const revision = tx.change('iplist', id, 'put');
      const list: IpListState = { ...draft, id, created: tx.now, updated: tx.now, revision };
      this.putIpList(list, true);
      this.core.put(['uipl', list.ownerId, id], 1);
      return list;
    });
  }

  /** Writes a list's head and, when `entries`, all its entries anew. */
  private putIpList(list: IpListState, entries: boolean): void {
    const { ips, ...head } = list;
    this.core.put(['iplist', list.id], { ...head, count: ips.length } satisfies IpListHead);
    if (!entries) return;
    this.dropIpBlocks(list.id);
    for (let i = 0; i < ips.length; i += IP_BLOCK / 2) this.core.put(['ipb', list.id, ips[i]!], ips.slice(i, i + IP_BLOCK / 2));
  }

  private dropIpBlocks(id: number): void {
    for (const key of this.core.db.getKeys({ start: ['ipb', id, ''], end: ['ipb', id, END] })) this.core.del(key as Key);
  }

  /** A head with its entries joined from the blocks (inside or outside a transaction). */
  private ipListOf(head: IpListHead | undefined): IpListState | undefined {
    if (!head) return undefined;
    const { count: _count, ...rest } = head;
    const ips: string[] = [];
    for (const { value } of this.core.db.getRange({ start: ['ipb', head.id, ''], end: ['ipb', head.id, END] })) for (const ip of value as string[]) ips.push(ip);
    return { ...rest, ips };
  }

  /** The block that holds (or would hold) `ip`: the last whose first entry is at most `ip`, else the first. */
  private ipBlockFor(id: number, ip: string): { key: Key; entries: string[] } | undefined {
    for (const { key, value } of this.core.db.getRange({ start: ['ipb', id, ip], end: ['ipb', id, ''], reverse: true, limit: 1 })) return { key: key as Key, entries: value as string[] };
    for (const { key, value } of this.core.db.getRange({ start: ['ipb', id, ''], end: ['ipb', id, END], limit: 1 })) return { key: key as Key, entries: value as string[] };
    return undefined;
  }

  /** Writes a changed block under its (possibly new) first entry; split in two past IP_BLOCK. */
  private putIpBlock(id: number, oldKey: Key | undefined, entries: string[]): void {
    if (oldKey) this.core.del(oldKey);
    if (entries.length === 0) return;
    if (entries.length <= IP_BLOCK) return this.core.put(['ipb', id, entries[0]!], entries);
    for (let i = 0; i < entries.length; i += IP_BLOCK / 2) this.core.put(['ipb', id, entries[i]!], entries.slice(i, i + IP_BLOCK / 2));
  }

  async getIpList(id: number): Promise<IpListState | undefined> {
    return this.ipListOf(this.core.get<IpListHead>(['iplist', id]));
  }

  async listIpLists(ownerId: number, page: PageRequest): Promise<Page<IpListState>> {
    const after = page.cursor === undefined ? 0 : decodeIdCursor(page.cursor);
    const items: IpListState[] = [];
    let more = false;
    for (const key of this.core.db.getKeys({ start: ['uipl', ownerId, after + 1], end: ['uipl', ownerId, Number.MAX_SAFE_INTEGER] })) {
      if (items.length === page.limit) {
        more = true;
        break;
      }
      items.push(this.ipListOf(this.core.get<IpListHead>(['iplist', key[2] as number]))!);
    }
    const last = items[items.length - 1];
    return { items, next: more && last ? encodeCursor(String(last.id)) : undefined };
  }

  async countIpLists(ownerId: number): Promise<number> {
    return this.core.countPrefix('uipl', ownerId);
  }

  updateIpList(id: number, ownerId: number, mutate: (list: IpListState, ctx: MutationContext) => IpListState | undefined): Promise<IpListState> {
    return this.core.commit((tx) => {
      const list = this.ipListOf(this.core.get<IpListHead>(['iplist', id]));
      if (!list || list.ownerId !== ownerId) throw notFound(`IP list ${id}`);
      const next = mutate(list, tx.ctx());
      if (!next) return list;
      const revision = tx.change('iplist', id, 'put');
      const stored: IpListState = { ...next, id, ownerId, created: list.created, updated: tx.now, revision };
      this.putIpList(stored, next.ips !== list.ips);
      return stored;
    });
  }

  changeIpEntries(id: number, ownerId: number, change: IpEntryChange, checkCount: (count: number) => void): Promise<IpListSummary> {
    return this.core.commit((tx) => {
      const head = this.core.get<IpListHead>(['iplist', id]);
      if (!head || head.ownerId !== ownerId) throw notFound(`IP list ${id}`);
      let count = head.count;
      let changed = false;
      // Blocks changed so far in this step, by their key as read (an entry's block may change twice).
      const pending = new Map<string, { key: Key | undefined; entries: string[] }>();
      const blockFor = (ip: string) => {
        const found = this.ipBlockFor(id, ip);
        const tag = found ? String(found.key[2]) : '';
        let block = pending.get(tag);
        if (!block) pending.set(tag, (block = { key: found?.key, entries: found ? [...found.entries] : [] }));
        return block;
      };
      for (const ip of change.del) {
        const block = blockFor(ip);
        const at = sortedIndex(block.entries, ip);
        if (block.entries[at] !== ip) continue;
        block.entries.splice(at, 1);
        count--;
        changed = true;
      }
      for (const ip of change.add) {
        const block = blockFor(ip);
        const at = sortedIndex(block.entries, ip);
        if (block.entries[at] === ip) continue;
        block.entries.splice(at, 0, ip);
        count++;
        changed = true;
      }
      if (!changed) return head;
      checkCount(count);
      const revision = tx.change('iplist', id, 'put');
      for (const block of pending.values()) this.putIpBlock(id, block.key, block.entries);
      const stored: IpListHead = { ...head, count, updated: tx.now, revision };
      this.core.put(['iplist', id], stored);
      return stored;
    });
  }

  deleteIpList(id: number, ownerId: number): Promise<boolean> {
    return this.core.commit((tx) => {
      const list = this.core.get<IpListHead>(['iplist', id]);
      if (!list || list.ownerId !== ownerId) return false;
      this.core.del(['iplist', id]);
      this.dropIpBlocks(id);
      this.core.del(['uipl', ownerId, id]);
      tx.change('iplist', id, 'delete');
      return true;
    });
  }

  async listAllIpLists(page: PageRequest): Promise<Page<IpListState>> {
    const after = page.cursor === undefined ? 0 : decodeIdCursor(page.cursor);
    const items: IpListState[] = [];
    let more = false;
    for (const { value } of this.core.db.getRange({ start: ['iplist', after + 1], end: ['iplist', Number.MAX_SAFE_INTEGER] })) {
      if (items.length === page.limit) {
        more = true;
        break;
      }
      items.push(this.ipListOf(value as IpListHead)!);
    }
    const last = items[items.length - 1];
    return { items, next: more && last ? encodeCursor(String(last.id)) : undefined };
  }

  /** Lists written whole by an earlier release get their entries moved into blocks, once, at open. */
  splitIpLists(): void {
    if (this.core.db.get(['meta', 'ipBlocks']) === 1) return;
    this.core.db.transactionSync(() => {
      for (const { value } of this.core.db.getRange({ start: ['iplist', 0], end: ['iplist', Number.MAX_SAFE_INTEGER] })) {
        const list = value as IpListState & { count?: number };
        if (Array.isArray(list.ips)) this.putIpList(list, true);
      }
      this.core.put(['meta', 'ipBlocks'], 1);
    });
  }
}
