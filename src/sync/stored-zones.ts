// A read-only view of the local state at one revision, for the name server's DNS workers: an LMDB
// read transaction pinned on it (a snapshot of the file: the writer, the name server's primary,
// writes each batch and its revision in one transaction, so the view is always one whole
// revision, and it never moves under the reader). Any zone is read on demand: its line in the
// stored snapshot (found through the side's lines table), the record changes stored over it.
// Nothing of the zones is held here but where each chunk of the snapshot starts.
import type { RootDatabase, Transaction } from 'lmdb';
import type { EdgeNode } from '../model/node.ts';
import type { Zone } from '../store/types.ts';
import { closeLocalDb, openLocalDb } from './local-state-writes.ts';
import { openSides, storedHeader, type MetaKey, type Side, type SideDbs, type StoredHead } from './local-state-layout.ts';
import { sideZones, withStoredChanges, zoneAt } from './local-state-read.ts';

export class StoredZones {
  readonly revision: number;
  readonly nodesRevision: number;
  readonly nodes: EdgeNode[];
  /** Zones kept (served or not). */
  readonly count: number;
  private readonly side: SideDbs;
  private readonly chunkStarts: number[];
  /** Where each zone's line starts, when the side has no lines table yet (read through once). */
  private readonly offsets: Map<string, number> | undefined;
  private closed = false;

  private constructor(
    root: RootDatabase<unknown, MetaKey>,
    private readonly transaction: Transaction,
  ) {
    const sides = openSides(root);
    const active = (root.get(['meta', 'active'], { transaction }) as Side | undefined) ?? 'a';
    this.side = sides[active];
    const header = storedHeader(root, transaction);
    this.revision = header.revision;
    this.nodesRevision = header.nodesRevision;
    this.nodes = header.nodes;
    this.chunkStarts = [...this.side.snapshot.getKeys({ transaction })];
    const noLines = this.chunkStarts.length > 0 && this.side.lines.getKeysCount({ limit: 1, transaction }) === 0;
    if (noLines) {
      const found = { offsets: new Map<string, number>(), chunkStarts: [] as number[] };
      for (const zone of sideZones(this.side, found, transaction)) void zone;
      this.offsets = found.offsets;
    }
    let count = this.offsets ? this.offsets.size : this.side.lines.getKeysCount({ transaction });
    for (const { key, value } of this.side.heads.getRange({ transaction })) {
      const inSnapshot = this.offsets ? this.offsets.has(key) : this.side.lines.get(key, { transaction }) !== undefined;
      if (value === '' && inSnapshot) count--;
      else if (value !== '' && !inSnapshot) count++;
    }
    this.count = count;
  }

  /** Opens the local state in `dir` (to pin it, as often as wanted: `pin`). */
  static openState(dir: string): RootDatabase<unknown, MetaKey> {
    const root = openLocalDb<MetaKey>(dir);
    // Opened before any pin: opening a database may write (creating it) in a transaction of its own.
    openSides(root);
    return root;
  }

  /** The state as it is now, pinned. */
  static pin(root: RootDatabase<unknown, MetaKey>): StoredZones {
    return new StoredZones(root, root.useReadTransaction());
  }

  static async closeState(root: RootDatabase<unknown, MetaKey>): Promise<void> {
    await closeLocalDb(root);
  }

  /** The zone as stored at `revision` (served or not: the index decides), or undefined when none is kept. */
  zone(name: string): Zone | undefined {
    const { transaction, side } = this;
    const stored = side.heads.get(name, { transaction });
    if (stored === '') return undefined;
    const head = stored === undefined ? undefined : (JSON.parse(stored) as StoredHead);
    if (head?.own) return withStoredChanges(side.records, { domain: head.domain, records: [] }, transaction);
    const offset = this.offsets ? this.offsets.get(name) : (side.lines.get(name, { transaction }) as number | undefined);
    const line = offset === undefined ? undefined : zoneAt(offset, this.chunkStarts, (i) => this.chunk(i));
    if (!line) return head ? withStoredChanges(side.records, { domain: head.domain, records: [] }, transaction) : undefined;
    return head ? withStoredChanges(side.records, { domain: head.domain, records: line.records }, transaction) : line;
  }

  /**
   * A chunk of the stored snapshot, read without a buffer of its own (a chunk is what one network
   * read brought, up to tens of KiB; a zone's line is ~2 KB): valid until the next read.
   */
  private chunk(i: number): Buffer | undefined {
    // lmdb-js takes the options (a pinned transaction) that its typings leave out.
    const read = this.side.snapshot.getBinaryFast as (key: number, options: { transaction: Transaction }) => Buffer | undefined;
    const fast = read.call(this.side.snapshot, this.chunkStarts[i]!, { transaction: this.transaction });
    // lmdb-js sets the reused buffer's length to the value's: a view of exactly that.
    return fast?.subarray(0, fast.length);
  }

  /** Every zone name kept (served or not), each once. */
  *names(): Generator<string> {
    const { transaction, side } = this;
    const heads = new Map<string, boolean>();
    for (const { key, value } of side.heads.getRange({ transaction })) heads.set(key, value !== '');
    const lines = this.offsets ? this.offsets.keys() : side.lines.getKeys({ transaction });
    for (const name of lines) if (heads.get(name) !== false) yield name as string;
    for (const [name, kept] of heads) if (kept && !(this.offsets ? this.offsets.has(name) : side.lines.get(name, { transaction }) !== undefined)) yield name;
  }

  /** Ends the pin: LMDB may then reuse the pages written since. */
  release(): void {
    if (this.closed) return;
    this.closed = true;
    this.transaction.done();
  }
}
