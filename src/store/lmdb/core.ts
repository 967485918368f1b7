// The embedded store's core: the LMDB environment, its keys, and the one way to write — an
// atomic, durable transaction that takes the next revision and appends the change entry. The
// resource parts (users.ts, zones.ts, …) read and write through it. LMDB commits are atomic and
// serialised across threads and processes (the operator CLI may write while the API runs), and
// lmdb-js resolves a write's promise once the commit is flushed to disk, so an acknowledged write
// survives kill -9 and power loss alike.
import { open, type Database, type RootDatabase } from 'lmdb';
import { isProven } from '../../model/domain.ts';
import { decodeCursor, encodeCursor } from '../cursor.ts';
import { guardLmdbCommitFailures } from '../../common/lmdb-commit-guard.ts';
import { ancestorsOf, overlapError, reversedName } from '../name-tree.ts';
import type { Change, ChangeKind, MutationContext, Page, PageRequest, RecordDelta, ZoneHead } from '../types.ts';
import { storeWriteError } from './write-error.ts';

export type Key = (string | number)[];

/** Sorts after every name: the end of a range of string keys. */
export const END = '\uffff';

export const ignore = (): undefined => undefined;

export interface EmbeddedStoreOptions {
  /** Directory of the database files; created if missing. */
  path: string;
  /** How many change entries to keep for consumers catching up (default 100,000). */
  changeRetention?: number;
}

/** Helpers valid only inside one write transaction. */
export interface Tx {
  seq(name: string): number;
  change(kind: ChangeKind, key: string | number, op: 'put' | 'delete', records?: RecordDelta, settings?: string[]): number;
  ctx(): MutationContext & { finish(): void };
  now: string;
}

export class LmdbCore {
  readonly db: RootDatabase<unknown, Key>;
  /** Each record's JSON text by [zone, id] (see zones.ts). */
  readonly records: Database<string, [string, number]>;
  readonly retention: number;
  private readonly commitListeners = new Set<() => void>();

  constructor(options: EmbeddedStoreOptions) {
    // The path is always a directory: lmdb-js would otherwise take a name with a dot in it
    // ("/var/lib/palisade.d") for a database file.
    guardLmdbCommitFailures();
    this.db = open<unknown, Key>({ path: options.path, compression: false, noSubdir: false });
    this.records = this.db.openDB<string, [string, number]>({ name: 'records', encoding: 'string' });
    this.retention = options.changeRetention ?? 100_000;
  }

  get<T>(key: Key): T | undefined {
    return this.db.get(key) as T | undefined;
  }

  // Writes inside a transaction callback. lmdb-js gives each its own promise, which rejects too
  // when the commit fails (a full disk); the commit's own rejection is what reports it, so these
  // must not surface as unhandled rejections (which would end the process).
  put(key: Key, value: unknown): void {
    this.db.put(key, value).catch(ignore);
  }

  del(key: Key): void {
    this.db.remove(key).catch(ignore);
  }

  /** Runs `fn` inside one atomic, durable write transaction. `fn` must throw before its first write. */
  async commit<T>(fn: (tx: Tx) => T): Promise<T> {
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
    this.notifyCommitted();
    return result;
  }

  /** After a commit of this thread, or of the store's commit thread (then read afresh first). */
  notifyCommitted(otherThread = false): void {
    if (otherThread) this.db.resetReadTxn();
    for (const listener of this.commitListeners) listener();
  }

  /** One atomic, durable write transaction that takes no revision (documents, leases). */
  async writeOnly<T>(fn: () => T): Promise<T> {
    return this.db.transaction(fn).catch(async (error: unknown) => {
      throw await storeWriteError(error);
    });
  }

  onCommit(listener: () => void): () => void {
    this.commitListeners.add(listener);
    return () => this.commitListeners.delete(listener);
  }

  committedElsewhere(): void {
    this.db.resetReadTxn();
  }

  /** Entries of an owner index: domain names (string keys) or IP list ids (number keys). */
  countPrefix(prefix: 'udom' | 'uipl', ownerId: number): number {
    return prefix === 'udom'
      ? this.db.getKeysCount({ start: [prefix, ownerId, ''], end: [prefix, ownerId, END] })
      : this.db.getKeysCount({ start: [prefix, ownerId, 0], end: [prefix, ownerId, Number.MAX_SAFE_INTEGER] });
  }

  /** A page of the documents under `prefix` keyed by name, in name order, after the cursor's name. */
  pageByName<T>(prefix: string, page: PageRequest, nameOf: (doc: T) => string): Page<T> {
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

  /**
   * Inside the write transaction: refuses a name at, under or above another owner's domain.
   * Ancestors are exact reads; descendants one range read of the reversed-name index, stopping at
   * the first foreign owner (the owner's own subdomains are allowed and usually few).
   */
  checkNoOverlap(name: string, ownerId: number): void {
    for (const ancestor of ancestorsOf(name)) {
      const zone = this.get<ZoneHead>(['zone', ancestor]);
      if (zone && isProven(zone.domain) && zone.domain.ownerId !== ownerId) throw overlapError(name, 'under');
    }
    const prefix = reversedName(name);
    for (const { key, value } of this.db.getRange({ start: ['ztree', prefix], end: ['ztree', prefix + END] })) {
      if (key[1] !== prefix && value !== ownerId) throw overlapError(name, 'above');
    }
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}
