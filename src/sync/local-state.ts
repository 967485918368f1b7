// What a name server keeps on disk so that a restart serves at once, even with the API down: the
// last snapshot exactly as it arrived (its NDJSON bytes, stored chunk by chunk: no per-zone write
// while it streams in), what changed since, the edge nodes, and the applied revision. What
// changed is kept at the size of the change: per changed zone a head (its domain, and whether its
// records are all stored here or are the snapshot's with changes on top), and per changed record
// its JSON ('' once removed). There are two sides, A and B, each a snapshot plus its changes: a
// new snapshot is written into the inactive side while the active one stays whole, and one
// transaction switches them — a crash mid-load leaves the previous state intact.
import { open, type Database, type RootDatabase } from 'lmdb';
import type { EdgeNode } from '../model/node.ts';
import { guardLmdbCommitFailures } from '../store/lmdb-commit-guard.ts';
import type { RecordState } from '../model/record.ts';
import type { RecordDelta, Zone } from '../store/types.ts';
import { LineSplitter, type Line } from './ndjson.ts';
import { endLine, headerLine, zoneJson, zoneLine, type SnapshotHeader } from './snapshot-format.ts';

type Side = 'a' | 'b';
type RecordKey = [string, number];
type MetaKey = ['meta', string] | ['node', number] | ['zone', string];

/** Chunk writes waiting for LMDB before a snapshot load waits for them (bounds memory). */
const MAX_PENDING_WRITES = 64;
/** Marks the layout described above (1: one entry per zone; 2: changed zones kept whole). */
const LAYOUT = 3;

/** A changed zone's head: `own` when its records are all stored here (it came whole). */
interface StoredHead {
  domain: Zone['domain'];
  own: boolean;
}

/** What one applied batch changes in the stored state, in order. */
export type StoredChange =
  | { name: string; zone: Zone | undefined }
  | { name: string; domain: Zone['domain']; delta: RecordDelta };


interface SideDbs {
  /** Stream offset of a chunk's first byte → the chunk. */
  snapshot: Database<Buffer, number>;
  /** Zone name → its head (StoredHead JSON) since the snapshot, or '' when it is no longer served. */
  heads: Database<string, string>;
  /** [zone, record id] → the record's JSON, or '' when removed since the snapshot. */
  records: Database<string, RecordKey>;
  /** Layout 2's changed zones (read once to upgrade, then emptied). */
  changed: Database<string, string>;
}

export class LocalState {
  private readonly root: RootDatabase<unknown, MetaKey>;
  private readonly sides: Record<Side, SideDbs>;
  private active: Side;
  /** Where each zone's line starts in the active snapshot, and where each stored chunk starts. */
  private offsets = new Map<string, number>();
  private chunkStarts: number[] = [];

  constructor(path: string) {
    guardLmdbCommitFailures();
    this.root = open<unknown, MetaKey>({ path, compression: false, noSubdir: false });
    const side = (name: Side): SideDbs => ({
      snapshot: this.root.openDB<Buffer, number>({ name: `snapshot-${name}`, encoding: 'binary' }),
      heads: this.root.openDB<string, string>({ name: `heads-${name}`, encoding: 'string' }),
      records: this.root.openDB<string, RecordKey>({ name: `records-${name}`, encoding: 'string' }),
      changed: this.root.openDB<string, string>({ name: `changed-${name}`, encoding: 'string' }),
    });
    this.sides = { a: side('a'), b: side('b') };
    this.active = (this.root.get(['meta', 'active']) as Side | undefined) ?? 'a';
    this.upgradeOneEntryPerZone();
    this.upgradeWholeChangedZones();
  }

  /** Layout 2 kept each changed zone whole: it becomes a head that owns its records. */
  private upgradeWholeChangedZones(): void {
    if (this.root.get(['meta', 'layout']) === LAYOUT) return;
    this.root.transactionSync(() => {
      for (const side of Object.values(this.sides)) {
        for (const { key, value } of side.changed.getRange()) {
          if (value === '') void side.heads.put(key, '');
          else {
            const zone = JSON.parse(value) as Zone;
            void side.heads.put(key, JSON.stringify({ domain: zone.domain, own: true } satisfies StoredHead));
            for (const record of zone.records) void side.records.put([key, record.id], JSON.stringify(record));
          }
          void side.changed.remove(key);
        }
      }
      void this.root.put(['meta', 'layout'], LAYOUT);
    });
  }

  /**
   * State written by an earlier release (one entry per zone, ['zone', name]) becomes a stored
   * snapshot of those zones, so an upgraded name server still serves at once with the API away.
   */
  private upgradeOneEntryPerZone(): void {
    if (((this.root.get(['meta', 'layout']) as number | undefined) ?? 1) >= 2) return;
    const old = [...this.root.getRange({ start: ['zone', ''], end: ['zone', '\uffff'] })];
    const { revision, nodesRevision, nodes } = this.header();
    const text = [headerLine({ revision, nodesRevision, nodes }), ...old.map(({ value }) => zoneLine(JSON.stringify(value))), endLine(old.length)].join('');
    this.root.transactionSync(() => {
      if (old.length > 0) void this.sides.a.snapshot.put(0, Buffer.from(text));
      for (const { key } of old) void this.root.remove(key);
      void this.root.put(['meta', 'active'], 'a');
      void this.root.put(['meta', 'layout'], 2);
    });
    this.active = 'a';
  }

  header(): SnapshotHeader {
    return {
      revision: (this.root.get(['meta', 'revision']) as number | undefined) ?? 0,
      nodesRevision: (this.root.get(['meta', 'nodesRevision']) as number | undefined) ?? 0,
      nodes: [...this.root.getRange({ start: ['node', 0], end: ['node', Number.MAX_SAFE_INTEGER] })].map((e) => e.value as EdgeNode),
    };
  }

  /**
   * Every stored zone: the snapshot's (with the changes since on top; those removed skipped),
   * then the zones that came whole since.
   */
  *zones(): Generator<Zone> {
    const { snapshot, heads } = this.sides[this.active];
    const changed = new Map<string, StoredHead | undefined>();
    for (const { key, value } of heads.getRange()) changed.set(key, value === '' ? undefined : (JSON.parse(value) as StoredHead));
    const splitter = new LineSplitter();
    const done = new Set<string>();
    this.offsets = new Map();
    this.chunkStarts = [];
    const zonesOf = function* (this: LocalState, lines: Line[]): Generator<Zone> {
      for (const line of lines) {
        const json = zoneJson(line.text);
        if (json === undefined) continue;
        const zone = JSON.parse(json) as Zone;
        const name = zone.domain.domain;
        this.offsets.set(name, line.offset);
        if (!changed.has(name)) {
          yield zone;
          continue;
        }
        const head = changed.get(name);
        done.add(name);
        if (head) yield this.withChanges(head.own ? { domain: head.domain, records: [] } : { domain: head.domain, records: zone.records });
      }
    };
    for (const { key, value } of snapshot.getRange()) {
      this.chunkStarts.push(key);
      yield* zonesOf.call(this, splitter.push(value));
    }
    yield* zonesOf.call(this, splitter.end());
    for (const [name, head] of changed) if (head && !done.has(name)) yield this.withChanges({ domain: head.domain, records: [] });
  }

  /**
   * One stored zone as it now is (a zone's first record difference patches from it): its line
   * read back from the stored snapshot by offset, with the changes since on top.
   */
  zone(name: string): Zone | undefined {
    const { heads } = this.sides[this.active];
    const stored = heads.get(name);
    if (stored === '') return undefined;
    const head = stored === undefined ? undefined : (JSON.parse(stored) as StoredHead);
    if (head?.own) return this.withChanges({ domain: head.domain, records: [] });
    const line = this.snapshotZone(name);
    if (!line) return head ? this.withChanges({ domain: head.domain, records: [] }) : undefined;
    return head ? this.withChanges({ domain: head.domain, records: line.records }) : line;
  }

  /** Whether the zone's records are stored here (served or not), read without reading them. */
  holds(name: string): boolean {
    const stored = this.sides[this.active].heads.get(name);
    return stored === undefined ? this.offsets.has(name) : stored !== '';
  }

  /** The zone's domain as stored since the snapshot (undefined: unchanged since, or not stored). */
  storedDomain(name: string): Zone['domain'] | undefined {
    const stored = this.sides[this.active].heads.get(name);
    return stored ? (JSON.parse(stored) as StoredHead).domain : undefined;
  }

  /** A zone's line in the stored snapshot: the chunk holding its start, then chunks until its newline. */
  private snapshotZone(name: string): Zone | undefined {
    const offset = this.offsets.get(name);
    if (offset === undefined) return undefined;
    const { snapshot } = this.sides[this.active];
    let low = 0;
    let high = this.chunkStarts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (this.chunkStarts[middle]! <= offset) low = middle;
      else high = middle - 1;
    }
    const parts: Buffer[] = [];
    for (let i = low; i < this.chunkStarts.length; i++) {
      const chunk = snapshot.get(this.chunkStarts[i]!);
      if (!chunk) break;
      const from = parts.length === 0 ? offset - this.chunkStarts[i]! : 0;
      const newline = chunk.indexOf(10, from);
      parts.push(chunk.subarray(from, newline === -1 ? chunk.length : newline));
      if (newline !== -1) break;
    }
    const json = zoneJson(Buffer.concat(parts).toString('utf8'));
    return json === undefined ? undefined : (JSON.parse(json) as Zone);
  }

  /** A zone's records with the stored changes on top (by id; '' removes). */
  private withChanges(zone: Zone): Zone {
    const { records } = this.sides[this.active];
    const name = zone.domain.domain;
    const byId = new Map(zone.records.map((r) => [r.id, r]));
    for (const { key, value } of records.getRange({ start: [name, 0], end: [name, Number.MAX_SAFE_INTEGER] })) {
      if (value === '') byId.delete(key[1]);
      else byId.set(key[1], JSON.parse(value) as RecordState);
    }
    return { domain: zone.domain, records: [...byId.values()] };
  }

  /** Starts storing a snapshot in the inactive side (emptied first: a cut-short load may have left data). */
  async beginSnapshot(): Promise<SnapshotWriter> {
    const target: Side = this.active === 'a' ? 'b' : 'a';
    const { snapshot, heads, records } = this.sides[target];
    await Promise.all([snapshot.clearAsync(), heads.clearAsync(), records.clearAsync()]);
    const offsets = new Map<string, number>();
    const chunkStarts: number[] = [];
    let position = 0;
    let pending: Array<Promise<boolean>> = [];
    return {
      write: async (chunk) => {
        chunkStarts.push(position);
        pending.push(snapshot.put(position, Buffer.from(chunk)));
        position += chunk.byteLength;
        if (pending.length >= MAX_PENDING_WRITES) {
          await Promise.all(pending);
          pending = [];
        }
      },
      noteZone: (name, offset) => void offsets.set(name, offset),
      commit: async (header) => {
        await Promise.all(pending);
        await this.root.transaction(() => {
          this.writeHeader(header, true);
          void this.root.put(['meta', 'active'], target);
        });
        const previous = this.sides[this.active];
        this.active = target;
        this.offsets = offsets;
        this.chunkStarts = chunkStarts;
        // The old side is emptied in the background; it is emptied again before its next use.
        void previous.snapshot.clearAsync();
        void previous.heads.clearAsync();
        void previous.records.clearAsync();
      },
    };
  }

  /**
   * Records one applied batch in one transaction, each change at its own size: a zone that came
   * whole replaces what was kept of it; a record difference writes those records only.
   */
  async apply(changes: readonly StoredChange[], header: SnapshotHeader, nodesChanged: boolean): Promise<void> {
    const { heads, records } = this.sides[this.active];
    const clear = (name: string) => {
      for (const key of records.getKeys({ start: [name, 0], end: [name, Number.MAX_SAFE_INTEGER] })) void records.remove(key);
    };
    await this.root.transaction(() => {
      for (const change of changes) {
        if ('delta' in change) {
          const stored = heads.get(change.name);
          const own = stored ? (JSON.parse(stored) as StoredHead).own : false;
          void heads.put(change.name, JSON.stringify({ domain: change.domain, own } satisfies StoredHead));
          // Over the snapshot's records a removal must be remembered; in an owned zone it is just gone.
          for (const { id } of change.delta.del) void (own ? records.remove([change.name, id]) : records.put([change.name, id], ''));
          for (const record of change.delta.put) void records.put([change.name, record.id], JSON.stringify(record));
        } else if (change.zone) {
          clear(change.name);
          void heads.put(change.name, JSON.stringify({ domain: change.zone.domain, own: true } satisfies StoredHead));
          for (const record of change.zone.records) void records.put([change.name, record.id], JSON.stringify(record));
        } else {
          clear(change.name);
          void heads.put(change.name, '');
        }
      }
      this.writeHeader(header, nodesChanged);
    });
  }

  private writeHeader(header: SnapshotHeader, withNodes: boolean): void {
    void this.root.put(['meta', 'revision'], header.revision);
    void this.root.put(['meta', 'nodesRevision'], header.nodesRevision);
    if (!withNodes) return;
    for (const { key } of this.root.getRange({ start: ['node', 0], end: ['node', Number.MAX_SAFE_INTEGER] })) void this.root.remove(key);
    for (const node of header.nodes) void this.root.put(['node', node.id], node);
  }

  async close(): Promise<void> {
    await this.root.close();
  }
}

export interface SnapshotWriter {
  /** Stores the next chunk of the snapshot's bytes, as received. */
  write(chunk: Uint8Array): Promise<void>;
  /** Remembers where a zone's line starts (to read that zone back later). */
  noteZone(name: string, offset: number): void;
  /** Makes the stored snapshot, with this header, the local state (one transaction). */
  commit(header: SnapshotHeader): Promise<void>;
}
