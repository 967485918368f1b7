// Zones, their records and claims of names (embedded store).
import type { Transaction } from 'lmdb';
import { notFound, StoreError } from '../errors.ts';
import { isProven, settingsChange, withoutNsRevision, type DomainState } from '../../model/domain.ts';
import type { RecordState } from '../../model/record.ts';
import type { UserState } from '../../model/user.ts';
import { decodeCursor, encodeCursor } from '../cursor.ts';
import { claimKey, nameOfReversed, reversedName } from '../name-tree.ts';
import type { ClaimRef, MutationContext, Page, PageRequest, RecordChangeSet, RecordDelta, RecordMutation, RecordView, Zone, ZoneHead, ZoneMutation, ZoneStore } from '../types.ts';
import { END, ignore, type Key, type LmdbCore } from './core.ts';
import { TimeSlices } from '../../common/time-slices.ts';

export class LmdbZones implements ZoneStore {
  constructor(private readonly core: LmdbCore) {}

  // A zone is kept in parts, so that changing a record costs the same in a zone of 20 records
  // and of 200,000: its head (['zone', name]: the domain and the record count), each record
  // as JSON text in the `records` database (key [zone, id]), and an index of the records at each
  // owner name (['rat', zone, owner, id]) for the rules a record must pass beside its neighbours.
  // ['served', name] marks the zones whose name servers are active (what a snapshot carries),
  // holding the domain's JSON text (written with the head: a snapshot serialises nothing).

  createZone(build: (ctx: MutationContext) => Zone): Promise<ZoneHead> {
    return this.core.commit((tx) => {
      const ctx = tx.ctx();
      const zone = build(ctx);
      const name = zone.domain.domain;
      const ownerId = zone.domain.ownerId;
      const holder = this.core.get<ZoneHead>(['zone', name]);
      // A pending claim may sit beside other accounts' claims of the name (issue 26); a proven
      // domain is first come, first served, and overlaps no other account's proven domain.
      const pending = !isProven(zone.domain);
      if (holder && (!pending || holder.domain.ownerId === ownerId)) throw new StoreError('CONFLICT', `${name} is already registered`, [{ field: 'domain', message: 'is already registered' }]);
      if (this.core.get(['claimz', name, ownerId])) throw new StoreError('CONFLICT', `${name} is already registered`, [{ field: 'domain', message: 'is already registered' }]);
      if (!pending) this.core.checkNoOverlap(name, ownerId);
      const owner = this.core.get<UserState>(['user', ownerId]);
      if (!owner) throw notFound(`user ${ownerId}`);
      if (this.core.countPrefix('udom', ownerId) >= owner.limits.max_domains) {
        throw new StoreError('LIMIT_EXCEEDED', `the account may hold at most ${owner.limits.max_domains} domains`);
      }
      ctx.finish();
      const primary = holder === undefined;
      const revision = tx.change(primary ? 'zone' : 'claim', name, 'put');
      const head: ZoneHead = { domain: { ...zone.domain, created: tx.now, updated: tx.now, revision }, recordCount: zone.records.length };
      this.putHead(head, primary);
      const key = primary ? name : claimKey(name, ownerId);
      for (const record of zone.records) this.putRecord(key, record);
      this.core.put(['udom', ownerId, name], 1);
      return head;
    });
  }

  /**
   * Writes a claim's head and its indexes. The account holding the name (`primary`) keeps it at
   * ['zone', name] (what name servers, edges and certificates read); another account's claim of
   * the same name, pending, at ['claimz', name, owner] with its records under claimKey().
   * ['ztree'] indexes proven holders (the overlap rule), ['pend'] every pending claim.
   */
  private putHead(head: ZoneHead, primary = true): void {
    const name = head.domain.domain;
    const proven = isProven(head.domain);
    if (primary) {
      this.core.put(['zone', name], head);
      if (head.domain.ns_active && proven) this.core.put(['served', name], JSON.stringify(head.domain));
      else this.core.del(['served', name]);
      if (proven) this.core.put(['ztree', reversedName(name)], head.domain.ownerId);
      else this.core.del(['ztree', reversedName(name)]);
    } else this.core.put(['claimz', name, head.domain.ownerId], head);
    if (proven) this.core.del(['pend', reversedName(name), head.domain.ownerId]);
    else this.core.put(['pend', reversedName(name), head.domain.ownerId], 1);
  }

  /** The owner's claim of a name: the holder's head, or a pending claim beside it. */
  private claimOf(name: string, ownerId: number): { head: ZoneHead; key: string; primary: boolean } | undefined {
    const holder = this.core.get<ZoneHead>(['zone', name]);
    if (holder?.domain.ownerId === ownerId) return { head: holder, key: name, primary: true };
    const head = this.core.get<ZoneHead>(['claimz', name, ownerId]);
    return head && { head, key: claimKey(name, ownerId), primary: false };
  }

  /** Inside a transaction: removes a claim, its records and indexes (and the holder's certificate and challenge). */
  private dropClaim(name: string, ownerId: number, key: string, primary: boolean): void {
    if (primary) {
      this.core.del(['zone', name]);
      this.core.del(['served', name]);
      this.core.del(['ztree', reversedName(name)]);
      this.core.del(['cert', name]);
      this.core.del(['acmech', name]);
    } else this.core.del(['claimz', name, ownerId]);
    this.core.del(['udom', ownerId, name]);
    this.core.del(['pend', reversedName(name), ownerId]);
    // Removing a zone costs what it holds: every record goes with it.
    for (const k of this.core.records.getKeys({ start: [key, 0], end: [key, Number.MAX_SAFE_INTEGER] })) void this.core.records.remove(k).catch(ignore);
    for (const k of this.core.db.getKeys({ start: ['rat', key, ''], end: ['rat', key, END] })) this.core.del(k as Key);
  }

  private putRecord(zone: string, record: RecordState): void {
    void this.core.records.put([zone, record.id], JSON.stringify(record)).catch(ignore);
    this.core.put(['rat', zone, record.name, record.id], 1);
  }

  private removeRecord(zone: string, record: RecordState): void {
    void this.core.records.remove([zone, record.id]).catch(ignore);
    this.core.del(['rat', zone, record.name, record.id]);
  }

  private readRecord(zone: string, id: number): RecordState | undefined {
    const text = this.core.records.get([zone, id]);
    return text === undefined ? undefined : (JSON.parse(text) as RecordState);
  }

  /** A zone's records as their JSON texts, in id order. */
  private recordTexts(zone: string, transaction?: Transaction): string[] {
    return Array.from(this.core.records.getRange({ start: [zone, 0], end: [zone, Number.MAX_SAFE_INTEGER], transaction }), (e) => e.value);
  }

  /**
   * Data written before records were kept apart (a zone document with its records inside, and
   * the served zones' JSON beside it) is split once, at open.
   */
  splitZoneDocuments(): void {
    if (this.core.db.get(['meta', 'recordLayout']) === 1) return;
    this.core.db.transactionSync(() => {
      for (const { key, value } of this.core.db.getRange({ start: ['zone', ''], end: ['zone', END] })) {
        const old = value as Partial<Zone> & { recordCount?: number };
        if (!Array.isArray(old.records)) continue;
        const name = key[1] as string;
        this.putHead({ domain: old.domain!, recordCount: old.records.length });
        for (const record of old.records) this.putRecord(name, record);
      }
      for (const { key } of this.core.db.getRange({ start: ['served', ''], end: ['served', END] })) {
        const head = this.core.get<ZoneHead>(['zone', key[1] as string]);
        if (head) this.core.put(key as Key, JSON.stringify(head.domain));
      }
      this.core.put(['meta', 'recordLayout'], 1);
    });
  }

  /** Data written before the reversed-name index existed gets it once, at open. */
  indexZoneTree(): void {
    if (this.core.db.get(['meta', 'zoneTree'])) return;
    this.core.db.transactionSync(() => {
      for (const { value } of this.core.db.getRange({ start: ['zone', ''], end: ['zone', END] })) {
        const zone = value as ZoneHead;
        this.core.put(['ztree', reversedName(zone.domain.domain)], zone.domain.ownerId);
      }
      this.core.put(['meta', 'zoneTree'], 1);
    });
  }

  async getZone(name: string, ownerId?: number): Promise<Zone | undefined> {
    const found = ownerId === undefined ? this.holderOf(name) : this.claimOf(name, ownerId);
    if (!found) return undefined;
    // Read at once (one consistent view), parsed in slices: 20,000 records take tens of milliseconds.
    const texts = this.recordTexts(found.key);
    const slices = new TimeSlices();
    const records: RecordState[] = [];
    for (const text of texts) {
      await slices.breathe();
      records.push(JSON.parse(text) as RecordState);
    }
    return { domain: found.head.domain, records };
  }

  private holderOf(name: string): { head: ZoneHead; key: string; primary: true } | undefined {
    const head = this.core.get<ZoneHead>(['zone', name]);
    return head && { head, key: name, primary: true };
  }

  async getZoneHead(name: string, ownerId?: number): Promise<ZoneHead | undefined> {
    return ownerId === undefined ? this.core.get<ZoneHead>(['zone', name]) : this.claimOf(name, ownerId)?.head;
  }

  async getRecord(zone: string, id: number, ownerId?: number): Promise<RecordState | undefined> {
    if (ownerId === undefined) return this.readRecord(zone, id);
    const found = this.claimOf(zone, ownerId);
    return found && this.readRecord(found.key, id);
  }

  async getRecordsAt(zone: string, owner: string): Promise<RecordState[]> {
    return [...this.core.db.getKeys({ start: ['rat', zone, owner, 0], end: ['rat', zone, owner, Number.MAX_SAFE_INTEGER] })].flatMap((key) => {
      const record = this.readRecord(zone, key[3] as number);
      return record ? [record] : [];
    });
  }

  async listClaims(name: string): Promise<ZoneHead[]> {
    const holder = this.core.get<ZoneHead>(['zone', name]);
    const others = [...this.core.db.getRange({ start: ['claimz', name, 0], end: ['claimz', name, Number.MAX_SAFE_INTEGER] })].map((e) => e.value as ZoneHead);
    return holder ? [holder, ...others] : others;
  }

  async pendingClaimsUnder(name: string): Promise<ClaimRef[]> {
    const prefix = reversedName(name);
    return [...this.core.db.getKeys({ start: ['pend', prefix, 0], end: ['pend', prefix + END, 0] })].flatMap((key) =>
      typeof key[1] === 'string' && key[1].startsWith(prefix) ? [{ name: nameOfReversed(key[1]), ownerId: key[2] as number }] : [],
    );
  }

  proveClaim(name: string, ownerId: number, mutate: (head: ZoneHead) => DomainState): Promise<{ head: ZoneHead; released?: ZoneHead }> {
    return this.core.commit((tx) => {
      const mine = this.claimOf(name, ownerId);
      if (!mine) throw notFound(`domain ${name}`);
      const holder = mine.primary ? undefined : this.core.get<ZoneHead>(['zone', name]);
      if (holder && isProven(holder.domain)) throw new StoreError('CONFLICT', `${name} is held, proven, by another account: its proof must lapse first`);
      const next = mutate(mine.head);
      const revision = tx.change('zone', name, 'put');
      if (holder) this.dropClaim(name, holder.domain.ownerId, name, true);
      if (!mine.primary) {
        // The claim takes the name: its records move to the holder's place.
        for (const { key, value } of [...this.core.records.getRange({ start: [mine.key, 0], end: [mine.key, Number.MAX_SAFE_INTEGER] })]) {
          void this.core.records.remove(key).catch(ignore);
          this.putRecord(name, JSON.parse(value) as RecordState);
        }
        for (const key of this.core.db.getKeys({ start: ['rat', mine.key, ''], end: ['rat', mine.key, END] })) this.core.del(key as Key);
        this.core.del(['claimz', name, ownerId]);
      }
      const stored: ZoneHead = { domain: { ...next, domain: name, ownerId, created: mine.head.domain.created, updated: tx.now, revision }, recordCount: mine.head.recordCount };
      this.putHead(stored, true);
      return { head: stored, released: holder };
    });
  }

  async listZones(ownerId: number, page: PageRequest, tag?: string): Promise<Page<ZoneHead>> {
    const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor);
    const items: ZoneHead[] = [];
    let more = false;
    for (const key of this.core.db.getKeys({ start: ['udom', ownerId, after ?? ''], end: ['udom', ownerId, END] })) {
      const name = key[2] as string;
      if (name === after) continue;
      const zone = this.claimOf(name, ownerId)?.head;
      if (!zone || (tag !== undefined && !zone.domain.tags.includes(tag))) continue;
      if (items.length === page.limit) {
        more = true;
        break;
      }
      items.push(zone);
    }
    const last = items[items.length - 1];
    return { items, next: more && last ? encodeCursor(last.domain.domain) : undefined };
  }

  async listAllZones(page: PageRequest): Promise<Page<ZoneHead>> {
    return this.core.pageByName<ZoneHead>('zone', page, (z) => z.domain.domain);
  }


  async countZones(ownerId: number): Promise<number> {
    return this.core.countPrefix('udom', ownerId);
  }


  updateZone(name: string, ownerId: number, mutate: ZoneMutation): Promise<ZoneHead> {
    return this.core.commit((tx) => {
      const found = this.claimOf(name, ownerId);
      if (!found) throw notFound(`domain ${name}`);
      const { head, primary } = found;
      const ctx = tx.ctx();
      const next = mutate(head, ctx);
      if (!next) return head;
      ctx.finish();
      const { settings, domain } = settingsChange(head.domain, { ...next.domain, domain: name, ownerId });
      // A pending claim beside the holder's is no consumer's business.
      const revision = primary ? tx.change('zone', name, 'put', undefined, settings) : tx.change('claim', name, 'put');
      const stored: ZoneHead = {
        domain: { ...domain, created: head.domain.created, updated: tx.now, revision },
        recordCount: head.recordCount,
      };
      this.putHead(stored, primary);
      return stored;
    });
  }

  changeRecords(name: string, ownerId: number, mutate: RecordMutation): Promise<{ head: ZoneHead; delta: RecordDelta }> {
    return this.core.commit((tx) => {
      const found = this.claimOf(name, ownerId);
      if (!found) throw notFound(`domain ${name}`);
      const { head, primary, key: zone } = found;
      const view: RecordView = {
        head,
        at: (owner) =>
          [...this.core.db.getKeys({ start: ['rat', zone, owner, 0], end: ['rat', zone, owner, Number.MAX_SAFE_INTEGER] })].flatMap((key) => {
            const record = this.readRecord(zone, key[3] as number);
            return record ? [record] : [];
          }),
        byId: (id) => this.readRecord(zone, id),
      };
      const ctx = tx.ctx();
      const edit = mutate(view, ctx);
      if (!edit) return { head, delta: { put: [], del: [] } };
      ctx.finish();
      const delta: RecordDelta = { put: [], del: [] };
      let count = head.recordCount;
      const removed = new Set<number>();
      for (const id of edit.del) {
        const old = this.readRecord(zone, id);
        if (!old || removed.has(id)) continue;
        removed.add(id);
        this.removeRecord(zone, old);
        delta.del.push({ id, name: old.name });
        count--;
      }
      for (const record of edit.put) {
        const old = removed.has(record.id) ? undefined : this.readRecord(zone, record.id);
        if (old) {
          // Written again: the old owner name's index entry goes (the name may have changed).
          this.removeRecord(zone, old);
          if (old.name !== record.name) delta.del.push({ id: old.id, name: old.name });
        } else count++;
        removed.delete(record.id);
        this.putRecord(zone, record);
        delta.put.push(record);
      }
      // A pending claim beside the holder's: an entry without the difference (no consumer reads it).
      const revision = primary ? tx.change('zone', name, 'put', delta) : tx.change('claim', name, 'put');
      const stored: ZoneHead = { domain: { ...withoutNsRevision(head.domain), updated: tx.now, revision }, recordCount: count };
      this.putHead(stored, primary);
      return { head: stored, delta };
    });
  }

  /**
   * A change set applied in this thread, in one transaction (see off-thread.ts for the large ones):
   * 'moved' when the zone is no longer at the revision it was computed against.
   */
  async applyRecordChangeSet(name: string, ownerId: number, change: RecordChangeSet): Promise<{ head: ZoneHead; ids: number[] } | 'moved'> {
    const ids: number[] = [];
    try {
      const { head } = await this.changeRecords(name, ownerId, (view, ctx) => {
        if (view.head.domain.revision !== change.revision) throw new ZoneMoved();
        ids.length = 0;
        const created = change.create.map((record) => {
          const id = ctx.nextRecordId();
          ids.push(id);
          return { ...record, id };
        });
        return { put: [...created, ...change.put], del: change.del };
      });
      return { head, ids };
    } catch (error) {
      if (error instanceof ZoneMoved) return 'moved';
      throw error;
    }
  }

  deleteZone(name: string, ownerId: number): Promise<boolean> {
    return this.core.commit((tx) => {
      const found = this.claimOf(name, ownerId);
      if (!found) return false;
      this.dropClaim(name, ownerId, found.key, found.primary);
      tx.change(found.primary ? 'zone' : 'claim', name, 'delete');
      return true;
    });
  }
}

/** The zone changed after the change set was computed (a StoreError, so the commit passes it on as it is). */
class ZoneMoved extends StoreError {
  constructor() {
    super('CONFLICT', 'the zone changed after the change set was computed');
  }
}
