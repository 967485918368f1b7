// What a name server keeps on disk so that a restart serves at once, even with the API down: the
// last snapshot exactly as it arrived (its NDJSON bytes, stored chunk by chunk: no per-zone write
// while it streams in), what changed since, the edge nodes, and the applied revision. What
// changed is kept at the size of the change: per changed zone a head (its domain, and whether its
// records are all stored here or are the snapshot's with changes on top), and per changed record
// its JSON ('' once removed). There are two sides, A and B, each a snapshot plus its changes: a
// new snapshot is written into the inactive side while the active one stays whole, and one
// transaction switches them — a crash mid-load leaves the previous state intact.
//
// A disk that is full or failing stops nothing (local-state-writes.ts): what cannot be written is
// kept in memory, in the same shape — per zone the head and records to write, over the stored
// state or over a snapshot held in memory (its chunks as received) — and read through by
// `zone()`, so what the index patches from is what it serves. Once the disk takes writes again,
// all of it is written in one transaction (a snapshot held in memory: into the inactive side,
// then one transaction switches), so the disk holds, at every moment, a state served at some
// revision. A start on a full disk reads what is stored (LMDB opens an existing state without
// writing); a state that does not exist yet is not created without room (LMDB would fault on its
// lock file), the name server runs from the feed in memory meanwhile.
//
// Its layout, the upgrades from earlier layouts and the merging of overlays are
// local-state-layout.ts; reading a zone's line and its stored changes, local-state-read.ts.
import type { RootDatabase } from 'lmdb';
import type { Logger } from 'pino';
import { diskFailureOf, diskWriteFailure, guardLmdbCommitFailures, quietly } from '../common/lmdb-commit-guard.ts';
import type { RecordState } from '../model/record.ts';
import type { Zone } from '../store/types.ts';
import { freeBytes, LocalStateWrites, closeLocalDb, noRoom, openLocalDb, type LocalStateWritesOptions } from './local-state-writes.ts';
import type { SnapshotHeader } from './snapshot-format.ts';
import { MAX_PENDING_WRITES, allWritten, clearSide, merged, openSides, putLines, writeHeader, storedHeader, upgradeOneEntryPerZone, upgradeWholeChangedZones } from './local-state-layout.ts';
import { sideZones, snapshotZones, withStoredChanges, zoneAt } from './local-state-read.ts';
import type { MetaKey, Side, SideDbs, SnapshotBytes, SnapshotWriter, StoredChange, StoredHead, Unwritten, ZoneOverlay } from './local-state-layout.ts';

export type { SnapshotWriter, StoredChange } from './local-state-layout.ts';

export class LocalState {
  private root: RootDatabase<unknown, MetaKey> | undefined;
  private sides: Record<Side, SideDbs> | undefined;
  private active: Side = 'a';
  /** Where each zone's line starts in the active snapshot, and where each stored chunk starts. */
  private offsets = new Map<string, number>();
  private chunkStarts: number[] = [];
  /** Served, not written: being written now, and since. */
  private writing: Unwritten | undefined;
  private pending: Unwritten | undefined;
  /** A snapshot is being stored into the inactive side (a snapshot held in memory waits for it). */
  private loading = false;
  private readonly writes: LocalStateWrites;

  constructor(
    private readonly path: string,
    log?: Logger,
    options: Pick<LocalStateWritesOptions, 'roomWanted'> = {},
  ) {
    guardLmdbCommitFailures();
    this.writes = new LocalStateWrites({ dir: path, log, who: 'sync', flush: () => this.flush(), unwritten: () => this.unwritten(), ...options });
    try {
      this.openDisk();
    } catch (error) {
      const disk = diskFailureOf(error);
      if (disk === undefined) throw error;
      this.closeDisk();
      this.writes.fail(disk, false);
      return;
    }
    if (!this.writes.roomFor(0)) this.writes.fail(noRoom(freeBytes(path)).message, false);
  }

  /** Why what is served is not all on disk, and since when; undefined when it is. */
  get problem(): { reason: string; since: number } | undefined {
    return this.writes.problem === undefined ? undefined : { reason: this.writes.problem, since: this.writes.since };
  }

  private openDisk(): void {
    const root = openLocalDb<MetaKey>(this.path);
    this.root = root;
    this.sides = openSides(root);
    this.active = (root.get(['meta', 'active']) as Side | undefined) ?? 'a';
    this.active = upgradeOneEntryPerZone(root, this.sides) ?? this.active;
    upgradeWholeChangedZones(root, this.sides);
  }

  private closeDisk(): void {
    const root = this.root;
    this.root = undefined;
    this.sides = undefined;
    if (root) quietly(root.close());
  }

  /** The revision, node revision and nodes served (written or not). */
  header(): SnapshotHeader {
    const top = this.pending ?? this.writing;
    if (top) return top.header;
    return this.root ? storedHeader(this.root) : { revision: 0, nodesRevision: 0, nodes: [] };
  }

  private layers(): { base: SnapshotBytes | undefined; overlays: Unwritten[] } {
    const list = [this.writing, this.pending].filter((u): u is Unwritten => u !== undefined);
    let from = 0;
    list.forEach((u, i) => {
      if (u.snapshot) from = i;
    });
    return { base: list[from]?.snapshot, overlays: list.slice(from) };
  }

  /**
   * Every zone served (read once, at start): the snapshot's (with the changes since on top; those
   * removed skipped), then the zones that came whole since.
   */
  *zones(): Generator<Zone> {
    const { base, overlays } = this.layers();
    const touched = new Set(overlays.flatMap((u) => [...u.zones.keys()]));
    const seen = new Set<string>();
    for (const zone of base ? snapshotZones(base.chunks) : this.storedZones()) {
      const name = zone.domain.domain;
      if (!touched.has(name)) yield zone;
      else {
        seen.add(name);
        const current = this.zone(name);
        if (current) yield current;
      }
    }
    for (const name of touched) {
      if (seen.has(name)) continue;
      const current = this.zone(name);
      if (current) yield current;
    }
  }

  private *storedZones(): Generator<Zone> {
    if (!this.sides) return;
    const side = this.sides[this.active];
    const found = { offsets: new Map<string, number>(), chunkStarts: [] as number[] };
    yield* sideZones(side, found);
    this.offsets = found.offsets;
    this.chunkStarts = found.chunkStarts;
    this.noteLines(side);
  }

  /** A side stored before the lines table existed gets it, from the offsets just read (once). */
  private noteLines(side: SideDbs): void {
    if (!this.root || this.offsets.size === 0 || this.writes.problem !== undefined) return;
    if (side.lines.getKeysCount({ limit: 1 }) > 0) return;
    const offsets = this.offsets;
    quietly(this.root.transaction(() => {
      if (this.sides?.[this.active] !== side) return;
      putLines(side, offsets);
    }));
  }

  /**
   * One zone as it is served (a zone's first record difference patches from it): from the stored
   * state (its line read back from the stored snapshot by offset, with the stored changes on top)
   * or the snapshot held in memory, with the changes not yet written on top.
   */
  zone(name: string): Zone | undefined {
    const { base, overlays } = this.layers();
    // The newest entries first, down to one that does not build on what is below it.
    const entries: ZoneOverlay[] = [];
    for (let i = overlays.length - 1; i >= 0; i--) {
      const entry = overlays[i]!.zones.get(name);
      if (!entry) continue;
      entries.unshift(entry);
      if (entry.cleared) break;
    }
    let zone = entries[0]?.cleared ? undefined : base ? this.snapshotZone(name, base.offsets, base.chunkStarts, (i) => base.chunks[i]) : this.storedZone(name);
    for (const entry of entries) {
      if (!entry.head) {
        zone = undefined;
        continue;
      }
      const byId = new Map(entry.cleared || !zone ? [] : zone.records.map((r) => [r.id, r]));
      for (const [id, json] of entry.records) {
        if (json === null || json === '') byId.delete(id);
        else byId.set(id, JSON.parse(json) as RecordState);
      }
      zone = { domain: entry.head.domain, records: [...byId.values()] };
    }
    return zone;
  }

  private storedZone(name: string): Zone | undefined {
    if (!this.sides) return undefined;
    const { heads, snapshot } = this.sides[this.active];
    const stored = heads.get(name);
    if (stored === '') return undefined;
    const head = stored === undefined ? undefined : (JSON.parse(stored) as StoredHead);
    if (head?.own) return this.withChanges({ domain: head.domain, records: [] });
    const line = this.snapshotZone(name, this.offsets, this.chunkStarts, (i) => snapshot.get(this.chunkStarts[i]!));
    if (!line) return head ? this.withChanges({ domain: head.domain, records: [] }) : undefined;
    return head ? this.withChanges({ domain: head.domain, records: line.records }) : line;
  }

  /**
   * Whether the zone's records are kept here (served or not), read without reading them: the
   * newest change not yet written, else the snapshot held in memory, else the stored state.
   */
  holds(name: string): boolean {
    const { base, overlays } = this.layers();
    for (let i = overlays.length - 1; i >= 0; i--) {
      const entry = overlays[i]!.zones.get(name);
      if (entry) return entry.head !== null;
    }
    if (base) return base.offsets.has(name);
    const stored = this.sides?.[this.active].heads.get(name);
    return stored === undefined ? this.offsets.has(name) : stored !== '';
  }

  /** The zone's domain as changed since the snapshot (undefined: unchanged since, or not kept). */
  storedDomain(name: string): Zone['domain'] | undefined {
    const { overlays } = this.layers();
    for (let i = overlays.length - 1; i >= 0; i--) {
      const entry = overlays[i]!.zones.get(name);
      if (entry) return entry.head?.domain;
    }
    const stored = this.sides?.[this.active].heads.get(name);
    return stored ? (JSON.parse(stored) as StoredHead).domain : undefined;
  }

  /** A zone's line in a snapshot's bytes, found by the offset noted for it. */
  private snapshotZone(name: string, offsets: Map<string, number>, chunkStarts: number[], chunk: (i: number) => Buffer | undefined): Zone | undefined {
    const offset = offsets.get(name);
    return offset === undefined ? undefined : zoneAt(offset, chunkStarts, chunk);
  }

  /** A zone's records with the stored changes on top (by id; '' removes). */
  private withChanges(zone: Zone): Zone {
    return withStoredChanges(this.sides![this.active].records, zone);
  }

  /** Whether the zone's records are all kept as changes (it came whole since the snapshot). */
  private ownsRecords(name: string): boolean {
    const { base, overlays } = this.layers();
    for (let i = overlays.length - 1; i >= 0; i--) {
      const entry = overlays[i]!.zones.get(name);
      if (entry) return entry.head?.own ?? false;
    }
    if (base || !this.sides) return false;
    const stored = this.sides[this.active].heads.get(name);
    return stored ? (JSON.parse(stored) as StoredHead).own : false;
  }

  /**
   * Starts storing a snapshot in the inactive side (emptied first: a cut-short load may have left
   * data). With the disk full or failing, the snapshot is kept in memory instead, and written
   * once the disk takes writes again.
   */
  async beginSnapshot(): Promise<SnapshotWriter> {
    // A snapshot held in memory may be being written into the inactive side: it finishes first.
    await this.writes.exclusive(async () => undefined);
    this.loading = true;
    const offsets = new Map<string, number>();
    const chunkStarts: number[] = [];
    let position = 0;
    const target: Side = this.active === 'a' ? 'b' : 'a';
    const side = this.sides?.[target];
    /** The chunks, once they are kept in memory (undefined: they are stored as they arrive). */
    let memory: Buffer[] | undefined;
    let inflight: Array<{ start: number; chunk: Buffer; write: Promise<boolean> }> = [];
    const toMemory = async (error: unknown): Promise<void> => {
      const disk = await diskWriteFailure(error);
      if (disk === undefined) throw error;
      this.writes.fail(disk, true);
      const kept = new Map<number, Buffer>();
      if (side) for (const { key, value } of side.snapshot.getRange()) kept.set(key, Buffer.from(value));
      for (const { start, chunk } of inflight) kept.set(start, chunk);
      inflight = [];
      memory = chunkStarts.map((start) => {
        const chunk = kept.get(start);
        if (!chunk) throw new Error(`snapshot: the chunk at byte ${start} was neither stored nor kept`);
        return chunk;
      });
    };
    if (!side || !this.writes.roomFor(0) || this.writes.problem !== undefined) memory = [];
    else {
      try {
        await allWritten(clearSide(side));
      } catch (error) {
        await toMemory(error);
      }
    }
    const settle = async () => {
      try {
        await allWritten(inflight.map((w) => w.write));
        inflight = [];
      } catch (error) {
        await toMemory(error);
      }
    };
    return {
      write: async (chunk) => {
        const start = position;
        chunkStarts.push(start);
        position += chunk.byteLength;
        const copy = Buffer.from(chunk);
        if (memory) return void memory.push(copy);
        inflight.push({ start, chunk: copy, write: side!.snapshot.put(start, copy) });
        if (inflight.length >= MAX_PENDING_WRITES) await settle();
      },
      noteZone: (name, offset) => void offsets.set(name, offset),
      commit: async (header) => {
        if (!memory) await settle();
        if (!memory) {
          try {
            await this.writes.exclusive(async () => {
              await this.root!.transaction(() => {
                putLines(side!, offsets);
                writeHeader(this.root!, header, true);
                void this.root!.put(['meta', 'active'], target);
              });
              this.switchTo(target, offsets, chunkStarts);
              // Anything unwritten was older than this snapshot.
              this.pending = undefined;
            });
            this.loading = false;
            this.writes.recovered();
            return;
          } catch (error) {
            await toMemory(error);
          }
        }
        this.loading = false;
        this.pending = { snapshot: { chunks: memory!, chunkStarts, offsets }, zones: new Map(), header, nodesChanged: true, bytes: position };
        await this.writes.write();
      },
    };
  }

  /** The other side is now the stored state; the old one is emptied in the background (and again before its next use). */
  private switchTo(target: Side, offsets: Map<string, number>, chunkStarts: number[]): void {
    const previous = this.sides![this.active];
    this.active = target;
    this.offsets = offsets;
    this.chunkStarts = chunkStarts;
    for (const clearing of clearSide(previous)) quietly(clearing);
  }

  /**
   * Records one applied batch, each change at its own size: a zone that came whole replaces what
   * was kept of it; a record difference writes those records only. Written in one transaction
   * with whatever was not written before it; kept in memory while the disk cannot take it.
   */
  async apply(changes: readonly StoredChange[], header: SnapshotHeader, nodesChanged: boolean): Promise<void> {
    this.loading = false;
    const into = (this.pending ??= { zones: new Map(), header, nodesChanged: false, bytes: 0 });
    for (const change of changes) {
      if ('delta' in change) {
        const own = this.ownsRecords(change.name);
        let entry = into.zones.get(change.name);
        if (!entry) into.zones.set(change.name, (entry = { head: null, cleared: false, records: new Map() }));
        entry.head = { domain: change.domain, own };
        // Over the snapshot's records a removal must be remembered; in an owned zone it is just gone.
        for (const { id } of change.delta.del) entry.records.set(id, own ? null : '');
        for (const record of change.delta.put) {
          const json = JSON.stringify(record);
          entry.records.set(record.id, json);
          into.bytes += json.length;
        }
      } else if (change.zone) {
        const records = new Map(change.zone.records.map((r) => [r.id, JSON.stringify(r)] as const));
        into.zones.set(change.name, { head: { domain: change.zone.domain, own: true }, cleared: true, records });
        for (const json of records.values()) into.bytes += json.length;
      } else into.zones.set(change.name, { head: null, cleared: true, records: new Map() });
      into.bytes += 64;
    }
    into.header = header;
    into.nodesChanged ||= nodesChanged;
    await this.writes.write();
  }

  private unwritten(): number | undefined {
    if (!this.pending) return this.root ? undefined : 0;
    return this.pending.bytes;
  }

  /** Writes everything unwritten (one write at a time: see LocalStateWrites); true when nothing is left. */
  private async flush(): Promise<boolean> {
    if (!this.root) {
      try {
        this.openDisk();
      } catch (error) {
        this.closeDisk();
        throw error;
      }
      // What is served came from the feed: it is all written below (as a snapshot held in memory).
      if (!this.pending) return true;
    }
    const batch = this.pending;
    if (!batch) return true;
    // A snapshot being stored into the inactive side supersedes this one when it is committed.
    if (batch.snapshot && this.loading) return false;
    this.writing = batch;
    this.pending = undefined;
    const root = this.root!;
    try {
      if (batch.snapshot) {
        const target: Side = this.active === 'a' ? 'b' : 'a';
        const side = this.sides![target];
        await allWritten(clearSide(side));
        const { chunks, chunkStarts, offsets } = batch.snapshot;
        for (let i = 0; i < chunks.length; i += MAX_PENDING_WRITES) {
          await allWritten(chunks.slice(i, i + MAX_PENDING_WRITES).map((chunk, j) => side.snapshot.put(chunkStarts[i + j]!, chunk)));
        }
        await root.transaction(() => {
          putLines(side, offsets);
          this.writeChanges(root, side, batch);
          void root.put(['meta', 'active'], target);
        });
        this.switchTo(target, offsets, chunkStarts);
      } else await root.transaction(() => this.writeChanges(root, this.sides![this.active], batch));
    } catch (error) {
      this.pending = this.pending ? merged(batch, this.pending) : batch;
      throw error;
    } finally {
      this.writing = undefined;
    }
    return this.pending === undefined;
  }

  /** Inside a transaction: unwritten changes into a side, and the header they reach. */
  private writeChanges(root: RootDatabase<unknown, MetaKey>, side: SideDbs, batch: Unwritten): void {
    const { heads, records } = side;
    for (const [name, entry] of batch.zones) {
      if (entry.cleared) for (const key of records.getKeys({ start: [name, 0], end: [name, Number.MAX_SAFE_INTEGER] })) void records.remove(key);
      void heads.put(name, entry.head ? JSON.stringify(entry.head) : '');
      for (const [id, json] of entry.records) void (json === null ? records.remove([name, id]) : records.put([name, id], json));
    }
    writeHeader(root, batch.header, batch.nodesChanged);
  }

  /** A last write if the disk takes it (what is not written is caught up from the API at the next start). */
  async close(): Promise<void> {
    await this.writes.close();
    const root = this.root;
    this.root = undefined;
    if (root) await closeLocalDb(root);
  }
}
