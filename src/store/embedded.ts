// The embedded store: LMDB on local disk, no server to run. LMDB commits are atomic and
// serialised across threads and processes (the operator CLI may write while the API runs), and
// lmdb-js resolves a write's promise once the commit is flushed to disk, so an acknowledged write
// survives kill -9 and power loss alike.
import { open, type Database, type RootDatabase, type Transaction } from 'lmdb';
import { ApiError, notFound } from '../errors.ts';
import type { AcmeChallengeInput, AcmeChallengeState } from '../model/acme-challenge.ts';
import type { CertificateInput, CertificateState } from '../model/certificate.ts';
import { sortedIndex, type IpListState } from '../model/iplist.ts';
import { settingsChange, withoutNsRevision } from '../model/domain.ts';
import type { EdgeNode } from '../model/node.ts';
import type { RecordState } from '../model/record.ts';
import { DEFAULT_LIMITS, type ApiKeyState, type UserState } from '../model/user.ts';
import { decodeCursor, decodeIdCursor, encodeCursor } from './cursor.ts';
import { guardLmdbCommitFailures } from './lmdb-commit-guard.ts';
import { ancestorsOf, claimKey, nameOfReversed, overlapError, reversedName } from './name-tree.ts';
import { isProven, type DomainState } from '../model/domain.ts';
import { collectSnapshot } from './snapshot.ts';
import { LmdbUptime } from './uptime-lmdb.ts';
import type { Resolution } from '../uptime/periods.ts';
import { applyUserPatch } from './user-patch.ts';
import type { UserPatch } from './types.ts';
import { CHANGES_MAX_BYTES } from './types.ts';
import type { UptimePoint, UptimeRow } from './types.ts';
import type { Change, ChangeKind, ClaimRef, ConsumerState, DocKind, IpEntryChange, IpListSummary, MutationContext, Page, PageRequest, RecordDelta, RecordMutation, RecordView, Snapshot, SnapshotChunk, Store, Zone, ZoneHead, ZoneMutation } from './types.ts';

type Key = (string | number)[];

export interface EmbeddedStoreOptions {
  /** Directory of the database files; created if missing. */
  path: string;
  /** How many change entries to keep for consumers catching up (default 100,000). */
  changeRetention?: number;
}

/** Helpers valid only inside one write transaction. */
interface Tx {
  seq(name: string): number;
  change(kind: ChangeKind, key: string | number, op: 'put' | 'delete', records?: RecordDelta, settings?: string[]): number;
  ctx(): MutationContext & { finish(): void };
  now: string;
}

const END = '\uffff';

/** Entries per stored block of an IP list, at most (blocks are written half full). */
const IP_BLOCK = 1024;

/** An IP list as kept: everything but its entries, which are kept in blocks. */
type IpListHead = IpListSummary;

const ignore = () => undefined;

/**
 * A failed commit as the API reports it. The mutation's own rejections (ApiError) pass through;
 * a full or failing disk (ENOSPC, EDQUOT, EIO; LMDB's MDB_MAP_FULL) is 507, anything else 503.
 * Nothing was written either way: LMDB commits all or nothing. lmdb-js rejects with a generic
 * error whose `commitError` is a promise of the real one (handled here, or it would surface as
 * an unhandled rejection and end the process).
 */
async function storeWriteError(error: unknown): Promise<unknown> {
  if (error instanceof ApiError) return error;
  let cause: unknown = error;
  const pending = (error as { commitError?: unknown }).commitError;
  if (pending instanceof Promise) {
    const timeout = new Promise<undefined>((resolve) => (setTimeout(resolve, 1000) as unknown as NodeJS.Timeout).unref());
    cause = (await Promise.race([pending.then(() => undefined, (e: unknown) => e), timeout])) ?? error;
  }
  const { code, message = String(cause) } = cause as { code?: unknown; message?: string };
  const full = code === 28 || code === 122 || code === 5 || code === -30792 || /ENOSPC|EDQUOT|MDB_MAP_FULL|No space|Input\/output/i.test(`${String(code)} ${message}`);
  const failure = new ApiError(
    full ? 'STORAGE_FULL' : 'STORE_UNAVAILABLE',
    full ? `the store's disk is full or failing (${message}); the change was not made — try again once space is freed` : `the store failed to commit (${message}); the change was not made`,
  );
  failure.retryAfter = full ? 60 : 5;
  return failure;
}

/** Zones per streamed snapshot chunk. */
const SNAPSHOT_BATCH = 500;

export class EmbeddedStore implements Store {
  readonly kind = 'embedded';
  private readonly db: RootDatabase<unknown, Key>;
  /** Each record's JSON text by [zone, id] (see the zones section). */
  private readonly records: Database<string, [string, number]>;
  private readonly retention: number;
  private readonly commitListeners = new Set<() => void>();
  private readonly uptime: LmdbUptime;

  constructor(options: EmbeddedStoreOptions) {
    // The path is always a directory: lmdb-js would otherwise take a name with a dot in it
    // ("/var/lib/palisade.d") for a database file.
    guardLmdbCommitFailures();
    this.db = open<unknown, Key>({ path: options.path, compression: false, noSubdir: false });
    this.records = this.db.openDB<string, [string, number]>({ name: 'records', encoding: 'string' });
    this.retention = options.changeRetention ?? 100_000;
    this.uptime = new LmdbUptime(this.db.openDB({ name: 'uptime' }), storeWriteError);
    this.splitZoneDocuments();
    this.splitIpLists();
    this.indexZoneTree();
  }

  private get<T>(key: Key): T | undefined {
    return this.db.get(key) as T | undefined;
  }

  // Writes inside a transaction callback. lmdb-js gives each its own promise, which rejects too
  // when the commit fails (a full disk); the commit's own rejection is what reports it, so these
  // must not surface as unhandled rejections (which would end the process).
  private put(key: Key, value: unknown): void {
    this.db.put(key, value).catch(ignore);
  }

  private del(key: Key): void {
    this.db.remove(key).catch(ignore);
  }

  /** Runs `fn` inside one atomic, durable write transaction. `fn` must throw before its first write. */
  private async commit<T>(fn: (tx: Tx) => T): Promise<T> {
    const result = await this.db
      .transaction(() => {
      const now = new Date().toISOString();
      const tx: Tx = {
        now,
        seq: (name) => {
          const next = (this.get<number>(['seq', name]) ?? 0) + 1;
          this.put(['seq', name], next);
          return next;
        },
        change: (kind, key, op, records, settings) => {
          const revision = tx.seq('revision');
          // A record difference is kept beside the entry as JSON text, the entry noting its size:
          // a reader bounding its bytes decides before reading it.
          const detail = records && JSON.stringify(records);
          const entry: Change = { revision, at: now, kind, key: String(key), op, ...(detail !== undefined && { bytes: detail.length }), ...(settings && { settings }) };
          this.put(['chg', revision], entry);
          if (detail !== undefined) this.put(['chgd', revision], detail);
          if (revision > this.retention) {
            this.del(['chg', revision - this.retention]);
            this.del(['chgd', revision - this.retention]);
          }
          // Node changes alter every protected zone's answers; name servers fold this into serials.
          if (kind === 'node') this.put(['meta', 'nodesRevision'], revision);
          return revision;
        },
        ctx: () => {
          // Record ids are counted locally and written once the mutation has succeeded, so a
          // rejected mutation writes nothing at all.
          let lastId = this.get<number>(['seq', 'record']) ?? 0;
          const start = lastId;
          return {
            now,
            nextRecordId: () => ++lastId,
            nodeExists: (id) => this.get(['node', id]) !== undefined,
            finish: () => {
              if (lastId !== start) this.put(['seq', 'record'], lastId);
            },
          };
        },
      };
      return fn(tx);
      })
      .catch(async (error: unknown) => {
        throw await storeWriteError(error);
      });
    for (const listener of this.commitListeners) listener();
    return result;
  }

  onCommit(listener: () => void): () => void {
    this.commitListeners.add(listener);
    return () => this.commitListeners.delete(listener);
  }

  committedElsewhere(): void {
    this.db.resetReadTxn();
  }

  // ---- users and keys

  createUser(input: { name: string; email: string; limits?: Partial<UserState['limits']> }): Promise<UserState> {
    return this.commit((tx) => {
      const user: UserState = {
        id: tx.seq('user'),
        name: input.name,
        email: input.email,
        created: tx.now,
        limits: { ...DEFAULT_LIMITS, ...input.limits },
      };
      this.put(['user', user.id], user);
      tx.change('user', user.id, 'put');
      return user;
    });
  }

  async getUser(id: number): Promise<UserState | undefined> {
    return this.get<UserState>(['user', id]);
  }

  updateUser(id: number, patch: UserPatch): Promise<UserState> {
    return this.commit((tx) => {
      const user = this.get<UserState>(['user', id]);
      if (!user) throw notFound(`user ${id}`);
      const updated = applyUserPatch(user, patch);
      this.put(['user', id], updated);
      tx.change('user', id, 'put');
      return updated;
    });
  }

  deleteUser(id: number): Promise<boolean> {
    return this.commit((tx) => {
      if (!this.get<UserState>(['user', id])) return false;
      const domains = this.countPrefix('udom', id);
      const lists = this.countPrefix('uipl', id);
      if (domains + lists > 0) throw new ApiError('CONFLICT', `user ${id} still holds ${domains} domains and ${lists} IP lists (--force removes them first)`);
      for (const key of this.db.getKeys({ start: ['ukey', id, 0], end: ['ukey', id, Number.MAX_SAFE_INTEGER] })) {
        const apiKey = this.get<ApiKeyState>(['apikey', key[2] as number]);
        if (apiKey) this.del(['keyhash', apiKey.hash]);
        this.del(['apikey', key[2] as number]);
        this.del(key);
      }
      this.del(['user', id]);
      tx.change('user', id, 'delete');
      return true;
    });
  }

  async listUsers(): Promise<UserState[]> {
    return [...this.db.getRange({ start: ['user', 0], end: ['user', Number.MAX_SAFE_INTEGER] })].map((e) => e.value as UserState);
  }

  addApiKey(userId: number, hash: string, label: string): Promise<ApiKeyState> {
    return this.commit((tx) => {
      if (!this.get(['user', userId])) throw notFound(`user ${userId}`);
      const key: ApiKeyState = { id: tx.seq('apikey'), userId, hash, label, created: tx.now, revoked: null };
      this.put(['apikey', key.id], key);
      this.put(['keyhash', hash], key.id);
      this.put(['ukey', userId, key.id], 1);
      tx.change('user', userId, 'put');
      return key;
    });
  }

  async findApiKeyByHash(hash: string): Promise<ApiKeyState | undefined> {
    const id = this.get<number>(['keyhash', hash]);
    return id === undefined ? undefined : this.get<ApiKeyState>(['apikey', id]);
  }

  async listApiKeys(userId: number): Promise<ApiKeyState[]> {
    const ids = [...this.db.getKeys({ start: ['ukey', userId, 0], end: ['ukey', userId, Number.MAX_SAFE_INTEGER] })];
    return ids.map((k) => this.get<ApiKeyState>(['apikey', k[2] as number])!);
  }

  revokeApiKey(keyId: number): Promise<ApiKeyState | undefined> {
    return this.commit((tx) => {
      const key = this.get<ApiKeyState>(['apikey', keyId]);
      if (!key) return undefined;
      if (key.revoked) return key;
      const revoked = { ...key, revoked: tx.now };
      this.put(['apikey', keyId], revoked);
      tx.change('user', key.userId, 'put');
      return revoked;
    });
  }

  // ---- zones
  //
  // A zone is kept in parts, so that changing a record costs the same in a zone of 20 records
  // and of 200,000: its head (['zone', name]: the domain and the record count), each record
  // as JSON text in the `records` database (key [zone, id]), and an index of the records at each
  // owner name (['rat', zone, owner, id]) for the rules a record must pass beside its neighbours.
  // ['served', name] marks the zones whose name servers are active (what a snapshot carries),
  // holding the domain's JSON text (written with the head: a snapshot serialises nothing).

  createZone(build: (ctx: MutationContext) => Zone): Promise<ZoneHead> {
    return this.commit((tx) => {
      const ctx = tx.ctx();
      const zone = build(ctx);
      const name = zone.domain.domain;
      const ownerId = zone.domain.ownerId;
      const holder = this.get<ZoneHead>(['zone', name]);
      // A pending claim may sit beside other accounts' claims of the name (issue 26); a proven
      // domain is first come, first served, and overlaps no other account's proven domain.
      const pending = !isProven(zone.domain);
      if (holder && (!pending || holder.domain.ownerId === ownerId)) throw new ApiError('CONFLICT', `${name} is already registered`, [{ field: 'domain', message: 'is already registered' }]);
      if (this.get(['claimz', name, ownerId])) throw new ApiError('CONFLICT', `${name} is already registered`, [{ field: 'domain', message: 'is already registered' }]);
      if (!pending) this.checkNoOverlap(name, ownerId);
      const owner = this.get<UserState>(['user', ownerId]);
      if (!owner) throw notFound(`user ${ownerId}`);
      if (this.countPrefix('udom', ownerId) >= owner.limits.max_domains) {
        throw new ApiError('LIMIT_EXCEEDED', `the account may hold at most ${owner.limits.max_domains} domains`);
      }
      ctx.finish();
      const primary = holder === undefined;
      const revision = tx.change(primary ? 'zone' : 'claim', name, 'put');
      const head: ZoneHead = { domain: { ...zone.domain, created: tx.now, updated: tx.now, revision }, recordCount: zone.records.length };
      this.putHead(head, primary);
      const key = primary ? name : claimKey(name, ownerId);
      for (const record of zone.records) this.putRecord(key, record);
      this.put(['udom', ownerId, name], 1);
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
      this.put(['zone', name], head);
      if (head.domain.ns_active && proven) this.put(['served', name], JSON.stringify(head.domain));
      else this.del(['served', name]);
      if (proven) this.put(['ztree', reversedName(name)], head.domain.ownerId);
      else this.del(['ztree', reversedName(name)]);
    } else this.put(['claimz', name, head.domain.ownerId], head);
    if (proven) this.del(['pend', reversedName(name), head.domain.ownerId]);
    else this.put(['pend', reversedName(name), head.domain.ownerId], 1);
  }

  /** The owner's claim of a name: the holder's head, or a pending claim beside it. */
  private claimOf(name: string, ownerId: number): { head: ZoneHead; key: string; primary: boolean } | undefined {
    const holder = this.get<ZoneHead>(['zone', name]);
    if (holder?.domain.ownerId === ownerId) return { head: holder, key: name, primary: true };
    const head = this.get<ZoneHead>(['claimz', name, ownerId]);
    return head && { head, key: claimKey(name, ownerId), primary: false };
  }

  /** Inside a transaction: removes a claim, its records and indexes (and the holder's certificate and challenge). */
  private dropClaim(name: string, ownerId: number, key: string, primary: boolean): void {
    if (primary) {
      this.del(['zone', name]);
      this.del(['served', name]);
      this.del(['ztree', reversedName(name)]);
      this.del(['cert', name]);
      this.del(['acmech', name]);
    } else this.del(['claimz', name, ownerId]);
    this.del(['udom', ownerId, name]);
    this.del(['pend', reversedName(name), ownerId]);
    // Removing a zone costs what it holds: every record goes with it.
    for (const k of this.records.getKeys({ start: [key, 0], end: [key, Number.MAX_SAFE_INTEGER] })) void this.records.remove(k).catch(ignore);
    for (const k of this.db.getKeys({ start: ['rat', key, ''], end: ['rat', key, END] })) this.del(k as Key);
  }

  private putRecord(zone: string, record: RecordState): void {
    void this.records.put([zone, record.id], JSON.stringify(record)).catch(ignore);
    this.put(['rat', zone, record.name, record.id], 1);
  }

  private removeRecord(zone: string, record: RecordState): void {
    void this.records.remove([zone, record.id]).catch(ignore);
    this.del(['rat', zone, record.name, record.id]);
  }

  private readRecord(zone: string, id: number): RecordState | undefined {
    const text = this.records.get([zone, id]);
    return text === undefined ? undefined : (JSON.parse(text) as RecordState);
  }

  /** A zone's records as their JSON texts, in id order. */
  private recordTexts(zone: string, transaction?: Transaction): string[] {
    return Array.from(this.records.getRange({ start: [zone, 0], end: [zone, Number.MAX_SAFE_INTEGER], transaction }), (e) => e.value);
  }

  /**
   * Data written before records were kept apart (a zone document with its records inside, and
   * the served zones' JSON beside it) is split once, at open.
   */
  private splitZoneDocuments(): void {
    if (this.db.get(['meta', 'recordLayout']) === 1) return;
    this.db.transactionSync(() => {
      for (const { key, value } of this.db.getRange({ start: ['zone', ''], end: ['zone', END] })) {
        const old = value as Partial<Zone> & { recordCount?: number };
        if (!Array.isArray(old.records)) continue;
        const name = key[1] as string;
        this.putHead({ domain: old.domain!, recordCount: old.records.length });
        for (const record of old.records) this.putRecord(name, record);
      }
      for (const { key } of this.db.getRange({ start: ['served', ''], end: ['served', END] })) {
        const head = this.get<ZoneHead>(['zone', key[1] as string]);
        if (head) this.put(key as Key, JSON.stringify(head.domain));
      }
      this.put(['meta', 'recordLayout'], 1);
    });
  }

  /**
   * Inside the write transaction: refuses a name at, under or above another owner's domain.
   * Ancestors are exact reads; descendants one range read of the reversed-name index, stopping at
   * the first foreign owner (the owner's own subdomains are allowed and usually few).
   */
  private checkNoOverlap(name: string, ownerId: number): void {
    for (const ancestor of ancestorsOf(name)) {
      const zone = this.get<ZoneHead>(['zone', ancestor]);
      if (zone && isProven(zone.domain) && zone.domain.ownerId !== ownerId) throw overlapError(name, 'under');
    }
    const prefix = reversedName(name);
    for (const { key, value } of this.db.getRange({ start: ['ztree', prefix], end: ['ztree', prefix + END] })) {
      if (key[1] !== prefix && value !== ownerId) throw overlapError(name, 'above');
    }
  }

  /** Data written before the reversed-name index existed gets it once, at open. */
  private indexZoneTree(): void {
    if (this.db.get(['meta', 'zoneTree'])) return;
    this.db.transactionSync(() => {
      for (const { value } of this.db.getRange({ start: ['zone', ''], end: ['zone', END] })) {
        const zone = value as ZoneHead;
        this.put(['ztree', reversedName(zone.domain.domain)], zone.domain.ownerId);
      }
      this.put(['meta', 'zoneTree'], 1);
    });
  }

  async getZone(name: string, ownerId?: number): Promise<Zone | undefined> {
    const found = ownerId === undefined ? this.holderOf(name) : this.claimOf(name, ownerId);
    if (!found) return undefined;
    return { domain: found.head.domain, records: this.recordTexts(found.key).map((t) => JSON.parse(t) as RecordState) };
  }

  private holderOf(name: string): { head: ZoneHead; key: string; primary: true } | undefined {
    const head = this.get<ZoneHead>(['zone', name]);
    return head && { head, key: name, primary: true };
  }

  async getZoneHead(name: string, ownerId?: number): Promise<ZoneHead | undefined> {
    return ownerId === undefined ? this.get<ZoneHead>(['zone', name]) : this.claimOf(name, ownerId)?.head;
  }

  async getRecord(zone: string, id: number, ownerId?: number): Promise<RecordState | undefined> {
    if (ownerId === undefined) return this.readRecord(zone, id);
    const found = this.claimOf(zone, ownerId);
    return found && this.readRecord(found.key, id);
  }

  async getRecordsAt(zone: string, owner: string): Promise<RecordState[]> {
    return [...this.db.getKeys({ start: ['rat', zone, owner, 0], end: ['rat', zone, owner, Number.MAX_SAFE_INTEGER] })].flatMap((key) => {
      const record = this.readRecord(zone, key[3] as number);
      return record ? [record] : [];
    });
  }

  async listClaims(name: string): Promise<ZoneHead[]> {
    const holder = this.get<ZoneHead>(['zone', name]);
    const others = [...this.db.getRange({ start: ['claimz', name, 0], end: ['claimz', name, Number.MAX_SAFE_INTEGER] })].map((e) => e.value as ZoneHead);
    return holder ? [holder, ...others] : others;
  }

  async pendingClaimsUnder(name: string): Promise<ClaimRef[]> {
    const prefix = reversedName(name);
    return [...this.db.getKeys({ start: ['pend', prefix, 0], end: ['pend', prefix + END, 0] })].flatMap((key) =>
      typeof key[1] === 'string' && key[1].startsWith(prefix) ? [{ name: nameOfReversed(key[1]), ownerId: key[2] as number }] : [],
    );
  }

  proveClaim(name: string, ownerId: number, mutate: (head: ZoneHead) => DomainState): Promise<{ head: ZoneHead; released?: ZoneHead }> {
    return this.commit((tx) => {
      const mine = this.claimOf(name, ownerId);
      if (!mine) throw notFound(`domain ${name}`);
      const holder = mine.primary ? undefined : this.get<ZoneHead>(['zone', name]);
      if (holder && isProven(holder.domain)) throw new ApiError('CONFLICT', `${name} is held, proven, by another account: its proof must lapse first`);
      const next = mutate(mine.head);
      const revision = tx.change('zone', name, 'put');
      if (holder) this.dropClaim(name, holder.domain.ownerId, name, true);
      if (!mine.primary) {
        // The claim takes the name: its records move to the holder's place.
        for (const { key, value } of [...this.records.getRange({ start: [mine.key, 0], end: [mine.key, Number.MAX_SAFE_INTEGER] })]) {
          void this.records.remove(key).catch(ignore);
          this.putRecord(name, JSON.parse(value) as RecordState);
        }
        for (const key of this.db.getKeys({ start: ['rat', mine.key, ''], end: ['rat', mine.key, END] })) this.del(key as Key);
        this.del(['claimz', name, ownerId]);
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
    for (const key of this.db.getKeys({ start: ['udom', ownerId, after ?? ''], end: ['udom', ownerId, END] })) {
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
    return this.pageByName<ZoneHead>('zone', page, (z) => z.domain.domain);
  }

  /** A page of the documents under `prefix` keyed by name, in name order, after the cursor's name. */
  private pageByName<T>(prefix: string, page: PageRequest, nameOf: (doc: T) => string): Page<T> {
    const after = page.cursor === undefined ? '' : decodeCursor(page.cursor);
    const items: T[] = [];
    let more = false;
    for (const { key, value } of this.db.getRange({ start: [prefix, after], end: [prefix, END] })) {
      if (key[1] === after) continue;
      if (items.length === page.limit) {
        more = true;
        break;
      }
      items.push(value as T);
    }
    const last = items[items.length - 1];
    return { items, next: more && last ? encodeCursor(nameOf(last)) : undefined };
  }

  async countZones(ownerId: number): Promise<number> {
    return this.countPrefix('udom', ownerId);
  }

  /** Entries of an owner index: domain names (string keys) or IP list ids (number keys). */
  private countPrefix(prefix: 'udom' | 'uipl', ownerId: number): number {
    return prefix === 'udom'
      ? this.db.getKeysCount({ start: [prefix, ownerId, ''], end: [prefix, ownerId, END] })
      : this.db.getKeysCount({ start: [prefix, ownerId, 0], end: [prefix, ownerId, Number.MAX_SAFE_INTEGER] });
  }

  updateZone(name: string, ownerId: number, mutate: ZoneMutation): Promise<ZoneHead> {
    return this.commit((tx) => {
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
    return this.commit((tx) => {
      const found = this.claimOf(name, ownerId);
      if (!found) throw notFound(`domain ${name}`);
      const { head, primary, key: zone } = found;
      const view: RecordView = {
        head,
        at: (owner) =>
          [...this.db.getKeys({ start: ['rat', zone, owner, 0], end: ['rat', zone, owner, Number.MAX_SAFE_INTEGER] })].flatMap((key) => {
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

  deleteZone(name: string, ownerId: number): Promise<boolean> {
    return this.commit((tx) => {
      const found = this.claimOf(name, ownerId);
      if (!found) return false;
      this.dropClaim(name, ownerId, found.key, found.primary);
      tx.change(found.primary ? 'zone' : 'claim', name, 'delete');
      return true;
    });
  }

  // ---- IP lists

  // An IP list is kept as a head (['iplist', id]: everything but the entries, and their count)
  // and its entries in sorted blocks of at most IP_BLOCK (['ipb', id, first entry] → entries):
  // adding or removing one entry rewrites one block, whatever the list's size, and reading the
  // whole list reads a few blocks.

  createIpList(build: (ctx: MutationContext & { id: number }) => IpListState): Promise<IpListState> {
    return this.commit((tx) => {
      const ctx = tx.ctx();
      const draft = build({ ...ctx, id: 0 });
      const owner = this.get<UserState>(['user', draft.ownerId]);
      if (!owner) throw notFound(`user ${draft.ownerId}`);
      if (this.countPrefix('uipl', draft.ownerId) >= owner.limits.max_iplists) {
        throw new ApiError('LIMIT_EXCEEDED', `the account may hold at most ${owner.limits.max_iplists} IP lists`);
      }
      const id = tx.seq('iplist');
      const revision = tx.change('iplist', id, 'put');
      const list: IpListState = { ...draft, id, created: tx.now, updated: tx.now, revision };
      this.putIpList(list, true);
      this.put(['uipl', list.ownerId, id], 1);
      return list;
    });
  }

  /** Writes a list's head and, when `entries`, all its entries anew. */
  private putIpList(list: IpListState, entries: boolean): void {
    const { ips, ...head } = list;
    this.put(['iplist', list.id], { ...head, count: ips.length } satisfies IpListHead);
    if (!entries) return;
    this.dropIpBlocks(list.id);
    for (let i = 0; i < ips.length; i += IP_BLOCK / 2) this.put(['ipb', list.id, ips[i]!], ips.slice(i, i + IP_BLOCK / 2));
  }

  private dropIpBlocks(id: number): void {
    for (const key of this.db.getKeys({ start: ['ipb', id, ''], end: ['ipb', id, END] })) this.del(key as Key);
  }

  /** A head with its entries joined from the blocks (inside or outside a transaction). */
  private ipListOf(head: IpListHead | undefined): IpListState | undefined {
    if (!head) return undefined;
    const { count: _count, ...rest } = head;
    const ips: string[] = [];
    for (const { value } of this.db.getRange({ start: ['ipb', head.id, ''], end: ['ipb', head.id, END] })) for (const ip of value as string[]) ips.push(ip);
    return { ...rest, ips };
  }

  /** The block that holds (or would hold) `ip`: the last whose first entry is at most `ip`, else the first. */
  private ipBlockFor(id: number, ip: string): { key: Key; entries: string[] } | undefined {
    for (const { key, value } of this.db.getRange({ start: ['ipb', id, ip], end: ['ipb', id, ''], reverse: true, limit: 1 })) return { key: key as Key, entries: value as string[] };
    for (const { key, value } of this.db.getRange({ start: ['ipb', id, ''], end: ['ipb', id, END], limit: 1 })) return { key: key as Key, entries: value as string[] };
    return undefined;
  }

  /** Writes a changed block under its (possibly new) first entry; split in two past IP_BLOCK. */
  private putIpBlock(id: number, oldKey: Key | undefined, entries: string[]): void {
    if (oldKey) this.del(oldKey);
    if (entries.length === 0) return;
    if (entries.length <= IP_BLOCK) return this.put(['ipb', id, entries[0]!], entries);
    for (let i = 0; i < entries.length; i += IP_BLOCK / 2) this.put(['ipb', id, entries[i]!], entries.slice(i, i + IP_BLOCK / 2));
  }

  async getIpList(id: number): Promise<IpListState | undefined> {
    return this.ipListOf(this.get<IpListHead>(['iplist', id]));
  }

  async listIpLists(ownerId: number, page: PageRequest): Promise<Page<IpListState>> {
    const after = page.cursor === undefined ? 0 : decodeIdCursor(page.cursor);
    const items: IpListState[] = [];
    let more = false;
    for (const key of this.db.getKeys({ start: ['uipl', ownerId, after + 1], end: ['uipl', ownerId, Number.MAX_SAFE_INTEGER] })) {
      if (items.length === page.limit) {
        more = true;
        break;
      }
      items.push(this.ipListOf(this.get<IpListHead>(['iplist', key[2] as number]))!);
    }
    const last = items[items.length - 1];
    return { items, next: more && last ? encodeCursor(String(last.id)) : undefined };
  }

  async countIpLists(ownerId: number): Promise<number> {
    return this.countPrefix('uipl', ownerId);
  }

  updateIpList(id: number, ownerId: number, mutate: (list: IpListState, ctx: MutationContext) => IpListState | undefined): Promise<IpListState> {
    return this.commit((tx) => {
      const list = this.ipListOf(this.get<IpListHead>(['iplist', id]));
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
    return this.commit((tx) => {
      const head = this.get<IpListHead>(['iplist', id]);
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
      this.put(['iplist', id], stored);
      return stored;
    });
  }

  deleteIpList(id: number, ownerId: number): Promise<boolean> {
    return this.commit((tx) => {
      const list = this.get<IpListHead>(['iplist', id]);
      if (!list || list.ownerId !== ownerId) return false;
      this.del(['iplist', id]);
      this.dropIpBlocks(id);
      this.del(['uipl', ownerId, id]);
      tx.change('iplist', id, 'delete');
      return true;
    });
  }

  async listAllIpLists(page: PageRequest): Promise<Page<IpListState>> {
    const after = page.cursor === undefined ? 0 : decodeIdCursor(page.cursor);
    const items: IpListState[] = [];
    let more = false;
    for (const { value } of this.db.getRange({ start: ['iplist', after + 1], end: ['iplist', Number.MAX_SAFE_INTEGER] })) {
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
  private splitIpLists(): void {
    if (this.db.get(['meta', 'ipBlocks']) === 1) return;
    this.db.transactionSync(() => {
      for (const { value } of this.db.getRange({ start: ['iplist', 0], end: ['iplist', Number.MAX_SAFE_INTEGER] })) {
        const list = value as IpListState & { count?: number };
        if (Array.isArray(list.ips)) this.putIpList(list, true);
      }
      this.put(['meta', 'ipBlocks'], 1);
    });
  }

  // ---- certificates and ACME challenges: one document per domain, gone with the domain

  putCertificate(cert: CertificateInput): Promise<CertificateState> {
    return this.putDomainItem('certificate', 'cert', cert);
  }

  async getCertificate(domain: string): Promise<CertificateState | undefined> {
    return this.get<CertificateState>(['cert', domain]);
  }

  deleteCertificate(domain: string): Promise<boolean> {
    return this.deleteDomainItem('certificate', 'cert', domain);
  }

  async listCertificates(page: PageRequest): Promise<Page<CertificateState>> {
    return this.pageByName<CertificateState>('cert', page, (c) => c.domain);
  }

  putChallenge(challenge: AcmeChallengeInput): Promise<AcmeChallengeState> {
    return this.putDomainItem('challenge', 'acmech', challenge);
  }

  async getChallenge(domain: string): Promise<AcmeChallengeState | undefined> {
    return this.get<AcmeChallengeState>(['acmech', domain]);
  }

  deleteChallenge(domain: string): Promise<boolean> {
    return this.deleteDomainItem('challenge', 'acmech', domain);
  }

  async listChallenges(page: PageRequest): Promise<Page<AcmeChallengeState>> {
    return this.pageByName<AcmeChallengeState>('acmech', page, (c) => c.domain);
  }

  private putDomainItem<T extends { domain: string }>(kind: 'certificate' | 'challenge', prefix: string, item: T): Promise<T & { updated: string; revision: number }> {
    return this.commit((tx) => {
      if (!this.get<ZoneHead>(['zone', item.domain])) throw notFound(`domain ${item.domain}`);
      const revision = tx.change(kind, item.domain, 'put');
      const stored = { ...item, updated: tx.now, revision };
      this.put([prefix, item.domain], stored);
      return stored;
    });
  }

  private deleteDomainItem(kind: 'certificate' | 'challenge', prefix: string, domain: string): Promise<boolean> {
    return this.commit((tx) => {
      if (!this.get([prefix, domain])) return false;
      this.del([prefix, domain]);
      tx.change(kind, domain, 'delete');
      return true;
    });
  }

  // ---- internal documents and leases (no revision: no consumer acts on them)

  async getDoc<T>(kind: DocKind, id: string): Promise<T | undefined> {
    return this.get<T>(['doc', kind, id]);
  }

  async putDoc(kind: DocKind, id: string, value: unknown): Promise<void> {
    await this.db.put(['doc', kind, id], value).catch(async (error: unknown) => {
      throw await storeWriteError(error);
    });
  }

  async deleteDoc(kind: DocKind, id: string): Promise<boolean> {
    return this.db
      .transaction(() => {
        if (this.get(['doc', kind, id]) === undefined) return false;
        this.del(['doc', kind, id]);
        return true;
      })
      .catch(async (error: unknown) => {
        throw await storeWriteError(error);
      });
  }

  async listDocs<T>(kind: DocKind, page: PageRequest, prefix = ''): Promise<Page<{ id: string; value: T }>> {
    const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor);
    const items: Array<{ id: string; value: T }> = [];
    let more = false;
    for (const { key, value } of this.db.getRange({ start: ['doc', kind, after ?? prefix], end: ['doc', kind, `${prefix}${END}`] })) {
      const id = key[2] as string;
      if (id === after) continue;
      if (items.length === page.limit) {
        more = true;
        break;
      }
      items.push({ id, value: value as T });
    }
    const last = items[items.length - 1];
    return { items, next: more && last ? encodeCursor(last.id) : undefined };
  }

  async updateDoc<T>(kind: DocKind, id: string, mutate: (current: T | undefined) => T | undefined): Promise<{ before: T | undefined; after: T | undefined }> {
    return this.db
      .transaction(() => {
        const before = this.get<T>(['doc', kind, id]);
        const after = mutate(before === undefined ? undefined : structuredClone(before));
        if (after !== undefined) this.put(['doc', kind, id], after);
        return { before, after: after ?? before };
      })
      .catch(async (error: unknown) => {
        throw await storeWriteError(error);
      });
  }

  // ---- uptime measures (see uptime-lmdb.ts)

  addUptime(rows: readonly UptimeRow[]): Promise<void> {
    return this.uptime.add(rows);
  }

  async readUptime(domain: string, resolution: Resolution, from: number, to: number): Promise<UptimePoint[]> {
    return this.uptime.read(domain, resolution, from, to);
  }

  deleteUptime(domain: string): Promise<void> {
    return this.uptime.delete(domain);
  }

  async tryLease(name: string, holder: string, ttlMs: number): Promise<boolean> {
    // LMDB serialises write transactions across processes: the read and the write are one step.
    return this.db
      .transaction(() => {
        const now = Date.now();
        const lease = this.get<{ holder: string; until: number }>(['lease', name]);
        if (lease && lease.holder !== holder && lease.until > now) return false;
        this.put(['lease', name], { holder, until: now + ttlMs });
        return true;
      })
      .catch(async (error: unknown) => {
        throw await storeWriteError(error);
      });
  }

  // ---- nodes

  createNode(node: Omit<EdgeNode, 'id'>): Promise<EdgeNode> {
    return this.commit((tx) => {
      const stored: EdgeNode = { ...node, id: tx.seq('node') };
      this.put(['node', stored.id], stored);
      tx.change('node', stored.id, 'put');
      return stored;
    });
  }

  async getNode(id: number): Promise<EdgeNode | undefined> {
    return this.get<EdgeNode>(['node', id]);
  }

  async listNodes(): Promise<EdgeNode[]> {
    return [...this.db.getRange({ start: ['node', 0], end: ['node', Number.MAX_SAFE_INTEGER] })].map((e) => e.value as EdgeNode);
  }

  updateNode(id: number, patch: Partial<Omit<EdgeNode, 'id'>>): Promise<EdgeNode> {
    return this.commit((tx) => {
      const node = this.get<EdgeNode>(['node', id]);
      if (!node) throw notFound(`node ${id}`);
      const stored: EdgeNode = { ...node, ...patch, id };
      this.put(['node', id], stored);
      tx.change('node', id, 'put');
      return stored;
    });
  }

  deleteNode(id: number): Promise<boolean> {
    return this.commit((tx) => {
      if (!this.get(['node', id])) return false;
      const users = this.usedBy(id);
      if (users.length > 0) {
        throw new ApiError('CONFLICT', `node ${id} is still named by ${users.slice(0, 5).join(', ')}${users.length > 5 ? ` and ${users.length - 5} more` : ''}`);
      }
      this.del(['node', id]);
      tx.change('node', id, 'delete');
      return true;
    });
  }

  /** Domains (bind_node) and IP lists (nodes) that name the node. */
  private usedBy(nodeId: number): string[] {
    const out: string[] = [];
    for (const { value } of this.db.getRange({ start: ['zone', ''], end: ['zone', END] })) {
      const zone = value as ZoneHead;
      if (zone.domain.bind_node.includes(nodeId)) out.push(`domain ${zone.domain.domain}`);
    }
    for (const { value } of this.db.getRange({ start: ['iplist', 0], end: ['iplist', Number.MAX_SAFE_INTEGER] })) {
      const list = value as IpListHead;
      if (!list.allnodes && list.nodes.includes(nodeId)) out.push(`IP list ${list.id}`);
    }
    return out;
  }

  // ---- change-feed consumers

  createConsumer(input: Omit<ConsumerState, 'id' | 'created'>): Promise<ConsumerState> {
    return this.commit((tx) => {
      const consumer: ConsumerState = { ...input, id: tx.seq('consumer'), created: tx.now };
      this.put(['consumer', consumer.id], consumer);
      this.put(['ctoken', consumer.tokenHash], consumer.id);
      tx.change('consumer', consumer.id, 'put');
      return consumer;
    });
  }

  async listConsumers(): Promise<ConsumerState[]> {
    return [...this.db.getRange({ start: ['consumer', 0], end: ['consumer', Number.MAX_SAFE_INTEGER] })].map((e) => e.value as ConsumerState);
  }

  async findConsumerByTokenHash(hash: string): Promise<ConsumerState | undefined> {
    const id = this.get<number>(['ctoken', hash]);
    return id === undefined ? undefined : this.get<ConsumerState>(['consumer', id]);
  }

  deleteConsumer(id: number): Promise<boolean> {
    return this.commit((tx) => {
      const consumer = this.get<ConsumerState>(['consumer', id]);
      if (!consumer) return false;
      this.del(['consumer', id]);
      this.del(['ctoken', consumer.tokenHash]);
      tx.change('consumer', id, 'delete');
      return true;
    });
  }

  // ---- change feed

  snapshot(): Promise<Snapshot> {
    return collectSnapshot(this.streamSnapshot());
  }

  /** One read transaction from the header to the last zone: every part is at the same revision. */
  async *streamSnapshot(): AsyncGenerator<SnapshotChunk, void, undefined> {
    const transaction = this.db.useReadTransaction();
    let records: Iterator<{ key: [string, number]; value: string }> | undefined;
    try {
      yield {
        kind: 'header',
        revision: (this.db.get(['seq', 'revision'], { transaction }) as number | undefined) ?? 0,
        nodesRevision: (this.db.get(['meta', 'nodesRevision'], { transaction }) as number | undefined) ?? 0,
        nodes: [...this.db.getRange({ start: ['node', 0], end: ['node', Number.MAX_SAFE_INTEGER], transaction })].map((e) => e.value as EdgeNode),
      };
      let batch: string[] = [];
      // Served zones in name order beside all records in (zone, id) order: one walk of each, the
      // records of zones not served skipped. Each zone's line is joined from stored texts.
      records = this.records.getRange({ transaction })[Symbol.iterator]();
      let record = records.next();
      for (const { key, value } of this.db.getRange({ start: ['served', ''], end: ['served', END], transaction })) {
        const name = key[1] as string;
        const domain = typeof value === 'string' ? value : JSON.stringify((this.db.get(['zone', name], { transaction }) as ZoneHead).domain);
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
    return this.get<number>(['seq', 'revision']) ?? 0;
  }

  async changesSince(since: number, limit: number, maxBytes = CHANGES_MAX_BYTES, records = true): Promise<{ changes: Change[] } | { gone: true; oldest: number }> {
    const current = await this.currentRevision();
    const oldest = Math.max(1, current - this.retention + 1);
    if (since < oldest - 1) return { gone: true, oldest };
    const changes: Change[] = [];
    let bytes = 0;
    for (const { value } of this.db.getRange({ start: ['chg', since + 1], end: ['chg', Number.MAX_SAFE_INTEGER], limit })) {
      const entry = value as Change;
      if (!records) {
        changes.push(entry);
        continue;
      }
      const size = entry.bytes ?? 0;
      if (changes.length > 0 && bytes + size > maxBytes) break;
      bytes += size;
      const detail = entry.bytes === undefined ? undefined : this.get<string>(['chgd', entry.revision]);
      changes.push(detail === undefined ? entry : { ...entry, records: JSON.parse(detail) as RecordDelta });
    }
    return { changes };
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}
