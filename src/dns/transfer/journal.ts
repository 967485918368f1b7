// The differences IXFR sends (RFC 1995), kept from the index's record patches: for each change
// of a zone, the records removed and added at the names the patch rebuilt, between the serials it
// went from and to. A zone built whole (a settings or node change, a load) starts its history
// again; a secondary asking from a serial no longer held gets the whole zone (RFC 1995 §4).
//
// Bounded in bytes (an estimate of what each change holds: its records' names and data, and the
// objects around them), since a change of a thousand 4 KB TXT records weighs what a million
// changes of an A record do: per zone, per account and in all. Oldest first: past a zone's bound
// its oldest change goes; past an account's, the account's oldest (whichever of its zones); past
// the global bound, the oldest change of the account holding the most — so one account's burst
// takes another's history only once it holds no more than that other. A change larger than a
// bound is not kept at all (nor, since IXFR must chain, the zone's history before it). Every
// eviction is O(1) (linked queues) plus O(log accounts) to re-rank the account.
import { rdataKey } from '../zone/build.ts';
import type { NameNode, RData, RRset, ZoneData } from '../zone/types.ts';
import { LargestFirst, type Sized } from './largest-first.ts';
import { transferredSets } from './zone-content.ts';

export interface JournalLimits {
  /** Bytes of one zone's changes (PALISADE_DNS_IXFR_ZONE_BYTES). */
  zoneBytes: number;
  /** Bytes of the changes of all of one account's zones (PALISADE_DNS_IXFR_ACCOUNT_BYTES). */
  accountBytes: number;
  /** Bytes of every change held by this process (PALISADE_DNS_IXFR_JOURNAL_BYTES). */
  totalBytes: number;
}

const MiB = 1_048_576;
export const JOURNAL_LIMITS: JournalLimits = { zoneBytes: MiB, accountBytes: 4 * MiB, totalBytes: 64 * MiB };

/** Changes kept per zone whatever their size: a secondary further behind gets the whole zone, which is then smaller than the differences. */
const MAX_STEPS = 256;

// What the objects cost on V8 (64-bit), measured (test/dns/transfer/journal-bounds.test.ts checks
// the estimate against the heap): a one-record RRset with its rdata array; an rdata object; a
// Buffer view (TXT strings, AAAA); a string's header; a change with its two lists and links.
const RR_BYTES = 120;
const RDATA_BYTES = 64;
const BUFFER_BYTES = 180;
const STRING_BYTES = 16;
const STEP_BYTES = 200;

export interface JournalStep {
  from: number;
  to: number;
  fromSoa: RRset;
  toSoa: RRset;
  removed: RRset[];
  added: RRset[];
}

interface Entry extends JournalStep {
  bytes: number;
  history: ZoneHistory;
  /** The zone's next newer change (a zone's queue: oldest first). */
  newer: Entry | undefined;
  /** The account's queue (all its zones, oldest first), doubly linked: a zone's oldest may sit anywhere in it. */
  olderInAccount: Entry | undefined;
  newerInAccount: Entry | undefined;
}

interface ZoneHistory {
  name: string;
  account: AccountHistory;
  oldest: Entry | undefined;
  newest: Entry | undefined;
  bytes: number;
  entries: number;
}

interface AccountHistory extends Sized {
  id: number;
  oldest: Entry | undefined;
  newest: Entry | undefined;
}

const stringBytes = (s: string) => STRING_BYTES + s.length;

function rdataBytes(r: RData): number {
  switch (r.type) {
    case 64:
    case 65:
      return stringBytes(r.target) + BUFFER_BYTES + r.params.length;
    case 1:
      return 0;
    case 28:
      return BUFFER_BYTES + r.address.length;
    case 2:
    case 5:
      return stringBytes(r.target);
    case 15:
      return stringBytes(r.exchange);
    case 16:
      return r.strings.reduce((sum, s) => sum + BUFFER_BYTES + s.length, 0);
    case 33:
      return stringBytes(r.target);
    case 6:
      return stringBytes(r.mname) + stringBytes(r.rname);
    case 13:
      return stringBytes(r.cpu) + stringBytes(r.os);
    case 0:
      return BUFFER_BYTES + r.data.length;
  }
}

/**
 * The estimated bytes a removed RR holds: its data is no longer the zone's (nor, if the name went,
 * its name). An added RR's data is the zone's own until a later change removes it, which counts
 * it then (the journal drops a zone's changes oldest first, or all at once, so that later change
 * is held as long as this one is): an added RR costs only its wrapper.
 */
const removedBytes = (set: RRset): number => RR_BYTES + stringBytes(set.name) + set.rdata.reduce((sum, r) => sum + RDATA_BYTES + rdataBytes(r), 0);
const ADDED_BYTES = RR_BYTES;

/** Each RR a transfer carries of a name (zone-content.ts: the general variants, or a geo-only name's stand-in), but the SOA, by type, TTL and data. */
function rrsOf(node: NameNode | undefined): Map<string, RRset> {
  const out = new Map<string, RRset>();
  for (const set of node ? transferredSets(node) : []) {
    for (const r of set.rdata) out.set(`${set.type}\n${set.ttl}\n${rdataKey(r)}`, { name: set.name, type: set.type, ttl: set.ttl, rdata: [r] });
  }
  return out;
}

/** What a patch removed and added at the names it rebuilt, with their bytes; undefined past `budget` bytes (not kept). */
function differences(before: ReadonlyMap<string, NameNode | undefined>, zone: ZoneData, budget: number): { removed: RRset[]; added: RRset[]; bytes: number } | undefined {
  const removed: RRset[] = [];
  const added: RRset[] = [];
  let bytes = 0;
  for (const [owner, old] of before) {
    const was = rrsOf(old);
    const now = rrsOf(zone.nodes.get(owner));
    for (const [key, rr] of was) {
      if (now.has(key)) continue;
      removed.push(rr);
      bytes += removedBytes(rr);
    }
    for (const [key, rr] of now) {
      if (was.has(key)) continue;
      added.push(rr);
      bytes += ADDED_BYTES;
    }
    if (bytes > budget) return undefined;
  }
  return { removed, added, bytes };
}

export class IxfrJournal {
  private readonly zones = new Map<string, ZoneHistory>();
  private readonly accounts = new Map<number, AccountHistory>();
  private readonly byBytes = new LargestFirst<AccountHistory>();
  private held = 0;
  private count = 0;
  private dropped = 0;

  constructor(private readonly limits: JournalLimits = JOURNAL_LIMITS) {}

  /** A zone swapped in or gone; `before`: the names a patch rebuilt, as they were (absent: built whole). */
  record(name: string, zone: ZoneData | undefined, previousSerial: number | undefined, previousSoa: RRset | undefined, before?: ReadonlyMap<string, NameNode | undefined>): void {
    if (!zone || !before || previousSerial === undefined || !previousSoa) return this.forget(name);
    if (zone.serial === previousSerial) return;
    const accountId = zone.domain?.ownerId ?? 0;
    let history = this.zones.get(name);
    // Changes must chain: a gap (a change not seen as a patch) starts the history again, and so
    // does a zone that moved to another account (its bytes counted where they now belong).
    if (history && (history.newest!.to !== previousSerial || history.account.id !== accountId)) {
      this.forget(name);
      history = undefined;
    }
    const { zoneBytes, accountBytes, totalBytes } = this.limits;
    // The SOA a change went from is no longer the zone's; the one it went to is, until the next.
    const fixed = STEP_BYTES + removedBytes(previousSoa) + ADDED_BYTES;
    const diff = differences(before, zone, Math.min(zoneBytes, accountBytes, totalBytes) - fixed);
    if (!diff) {
      // Larger than a bound allows: not kept, and what came before it no longer chains to now.
      this.dropped += 1 + (history?.entries ?? 0);
      return this.forget(name);
    }
    history ??= this.open(name, accountId);
    const account = history.account;
    const entry: Entry = {
      from: previousSerial,
      to: zone.serial,
      fromSoa: previousSoa,
      toSoa: zone.soa,
      removed: diff.removed,
      added: diff.added,
      bytes: fixed + diff.bytes,
      history,
      newer: undefined,
      olderInAccount: account.newest,
      newerInAccount: undefined,
    };
    if (history.newest) history.newest.newer = entry;
    else history.oldest = entry;
    history.newest = entry;
    if (account.newest) account.newest.newerInAccount = entry;
    else account.oldest = entry;
    account.newest = entry;
    history.bytes += entry.bytes;
    history.entries++;
    account.bytes += entry.bytes;
    this.held += entry.bytes;
    this.count++;
    this.byBytes.update(account);
    while (history.entries > 0 && (history.entries > MAX_STEPS || history.bytes > zoneBytes)) this.evict(history.oldest!);
    while (account.bytes > accountBytes) this.evict(account.oldest!);
    while (this.held > totalBytes) this.evict(this.byBytes.largest()!.oldest!);
  }

  private open(name: string, accountId: number): ZoneHistory {
    let account = this.accounts.get(accountId);
    if (!account) this.accounts.set(accountId, (account = { id: accountId, oldest: undefined, newest: undefined, bytes: 0, slot: -1 }));
    const history: ZoneHistory = { name, account, oldest: undefined, newest: undefined, bytes: 0, entries: 0 };
    this.zones.set(name, history);
    return history;
  }

  /** Drops one change, the oldest of its zone (every bound evicts a zone's oldest first). */
  private evict(entry: Entry): void {
    this.dropped++;
    this.unlink(entry);
  }

  private unlink(entry: Entry): void {
    const history = entry.history;
    const account = history.account;
    history.oldest = entry.newer;
    if (!history.oldest) history.newest = undefined;
    history.bytes -= entry.bytes;
    history.entries--;
    if (entry.olderInAccount) entry.olderInAccount.newerInAccount = entry.newerInAccount;
    else account.oldest = entry.newerInAccount;
    if (entry.newerInAccount) entry.newerInAccount.olderInAccount = entry.olderInAccount;
    else account.newest = entry.olderInAccount;
    account.bytes -= entry.bytes;
    this.held -= entry.bytes;
    this.count--;
    entry.newer = entry.olderInAccount = entry.newerInAccount = undefined;
    if (history.entries === 0) this.zones.delete(history.name);
    if (account.oldest) this.byBytes.update(account);
    else {
      this.byBytes.remove(account);
      this.accounts.delete(account.id);
    }
  }

  /** The zone's history is gone (rebuilt whole, no longer served, no secondary to ask). */
  forget(name: string): void {
    const history = this.zones.get(name);
    while (history?.oldest) this.unlink(history.oldest);
  }

  /** Everything dropped (no secondary listed any more: no one to ask). */
  clear(): void {
    for (const name of [...this.zones.keys()]) this.forget(name);
  }

  /** The steps from `serial` to `current`, or undefined when that history is not held. */
  since(name: string, serial: number, current: number): JournalStep[] | undefined {
    const history = this.zones.get(name);
    if (!history || history.newest!.to !== current) return undefined;
    let entry = history.oldest;
    while (entry && entry.from !== serial) entry = entry.newer;
    const steps: JournalStep[] = [];
    for (; entry; entry = entry.newer) steps.push(entry);
    return steps.length > 0 ? steps : undefined;
  }

  /** Estimated bytes held. */
  get bytes(): number {
    return this.held;
  }

  /** Changes held. */
  get entries(): number {
    return this.count;
  }

  /** Changes dropped to stay within the bounds (too large to keep included). */
  get evicted(): number {
    return this.dropped;
  }

  /** Bytes held for one zone, and for one account (tests, diagnostics). */
  zoneBytes(name: string): number {
    return this.zones.get(name)?.bytes ?? 0;
  }

  accountBytes(id: number): number {
    return this.accounts.get(id)?.bytes ?? 0;
  }
}
