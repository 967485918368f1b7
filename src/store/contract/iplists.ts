// IP lists: a head and its entries, changed whole or an entry at a time.
import type { IpListState } from '../../model/iplist.ts';
import type { MutationContext, Page, PageRequest } from './common.ts';

/** An IP list without its entries: what a change of entries answers (reading them all is the caller's choice). */
export type IpListSummary = Omit<IpListState, 'ips'> & { count: number };

/** Entries to add to and remove from an IP list (those already so are left alone). */
export interface IpEntryChange {
  add: string[];
  del: string[];
}
export type IpListMutation = (list: IpListState, ctx: MutationContext) => IpListState | undefined;

/** IP lists of every account. */
export interface IpListStore {
  createIpList(build: (ctx: MutationContext & { id: number }) => IpListState): Promise<IpListState>;
  getIpList(id: number): Promise<IpListState | undefined>;
  listIpLists(ownerId: number, page: PageRequest): Promise<Page<IpListState>>;
  /** Every IP list of every owner, in id order (what edges act on). */
  listAllIpLists(page: PageRequest): Promise<Page<IpListState>>;
  countIpLists(ownerId: number): Promise<number>;
  updateIpList(id: number, ownerId: number, mutate: IpListMutation): Promise<IpListState>;
  /**
   * Adds and removes single entries in one revision, at a cost that does not grow with the
   * list; `checkCount` sees the count the list would have (and may throw to refuse). No
   * revision when nothing changes. Resolves to the list's head and count (its entries are not
   * read: that would cost what the list holds).
   */
  changeIpEntries(id: number, ownerId: number, change: IpEntryChange, checkCount: (count: number) => void): Promise<IpListSummary>;
  deleteIpList(id: number, ownerId: number): Promise<boolean>;
}
