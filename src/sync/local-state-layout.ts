// The local state's layout on disk (see local-state.ts for what it keeps and why): its databases
// per side, the shapes of what is held in memory until written, the upgrades from layouts written
// by earlier releases, and the merging of unwritten changes. Used only by local-state.ts.
import type { Database, RootDatabase, Transaction } from 'lmdb';
import { diskWriteFailure } from '../common/lmdb-commit-guard.ts';
import type { EdgeNode } from '../model/node.ts';
import type { RecordDelta, Zone } from '../store/types.ts';
import { endLine, headerLine, zoneLine, type SnapshotHeader } from './snapshot-format.ts';

export type Side = 'a' | 'b';
export type RecordKey = [string, number];
export type MetaKey = ['meta', string] | ['node', number] | ['zone', string];

/** Chunk writes waiting for LMDB before a snapshot load waits for them (bounds memory). */
export const MAX_PENDING_WRITES = 64;
/** Marks the layout described above (1: one entry per zone; 2: changed zones kept whole). */
export const LAYOUT = 3;

/** A changed zone's head: `own` when its records are all stored here (it came whole). */
export interface StoredHead {
  domain: Zone['domain'];
  own: boolean;
}

/** What one applied batch changes in the stored state, in order. */
export type StoredChange =
  | { name: string; zone: Zone | undefined }
  | { name: string; domain: Zone['domain']; delta: RecordDelta };


export interface SideDbs {
  /** Stream offset of a chunk's first byte → the chunk. */
  snapshot: Database<Buffer, number>;
  /** Zone name → its head (StoredHead JSON) since the snapshot, or '' when it is no longer served. */
  heads: Database<string, string>;
  /** [zone, record id] → the record's JSON, or '' when removed since the snapshot. */
  records: Database<string, RecordKey>;
  /** Layout 2's changed zones (read once to upgrade, then emptied). */
  changed: Database<string, string>;
  /**
   * Zone name → where its line starts in the snapshot, written in the snapshot's own transaction,
   * so that a reader finds any zone without reading the snapshot through (stored-zones.ts). A
   * side stored before this table existed has it written once the name server has read it.
   */
  lines: Database<number, string>;
}

/** The databases of both sides (opened, created if missing, in `root`). */
export function openSides(root: RootDatabase<unknown, MetaKey>): Record<Side, SideDbs> {
  const side = (name: Side): SideDbs => ({
    snapshot: root.openDB<Buffer, number>({ name: `snapshot-${name}`, encoding: 'binary' }),
    heads: root.openDB<string, string>({ name: `heads-${name}`, encoding: 'string' }),
    records: root.openDB<string, RecordKey>({ name: `records-${name}`, encoding: 'string' }),
    changed: root.openDB<string, string>({ name: `changed-${name}`, encoding: 'string' }),
    lines: root.openDB<number, string>({ name: `lines-${name}` }),
  });
  return { a: side('a'), b: side('b') };
}

/** Inside a transaction: where each zone's line starts in the side's snapshot. */
export function putLines(side: SideDbs, offsets: ReadonlyMap<string, number>): void {
  for (const [name, offset] of offsets) void side.lines.put(name, offset);
}

/** Empties a side's snapshot and everything kept over it (before it takes a new snapshot). */
export function clearSide(side: SideDbs): Array<Promise<void>> {
  return [side.snapshot.clearAsync(), side.heads.clearAsync(), side.records.clearAsync(), side.lines.clearAsync()];
}

/** A snapshot's bytes as received, and where each zone's line and each chunk starts. */
export interface SnapshotBytes {
  chunks: Buffer[];
  chunkStarts: number[];
  offsets: Map<string, number>;
}

/**
 * One zone's changes not written yet, as they will be written: its head (null: no longer served,
 * stored as ''), whether what is stored of it goes first (it came whole, or went), and its
 * records by id (JSON; '' removed over the snapshot; null: the stored entry is removed).
 */
export interface ZoneOverlay {
  head: StoredHead | null;
  cleared: boolean;
  records: Map<number, string | null>;
}

/** Changes served but not written: over the stored state, or over a snapshot held in memory. */
export interface Unwritten {
  snapshot?: SnapshotBytes;
  zones: Map<string, ZoneOverlay>;
  header: SnapshotHeader;
  nodesChanged: boolean;
  /** Roughly what writing it takes. */
  bytes: number;
}

/** The stored header (`transaction`: as a pinned reader sees it). */
export function storedHeader(root: RootDatabase<unknown, MetaKey>, transaction?: Transaction): SnapshotHeader {
  return {
    revision: (root.get(['meta', 'revision'], { transaction }) as number | undefined) ?? 0,
    nodesRevision: (root.get(['meta', 'nodesRevision'], { transaction }) as number | undefined) ?? 0,
    nodes: [...root.getRange({ start: ['node', 0], end: ['node', Number.MAX_SAFE_INTEGER], transaction })].map((e) => e.value as EdgeNode),
  };
}

/** What reads start from (the stored state, or a snapshot held in memory) and the unwritten changes over it, oldest first. */

/** Layout 2 kept each changed zone whole: it becomes a head that owns its records. */
export function upgradeWholeChangedZones(root: RootDatabase<unknown, MetaKey>, sides: Record<Side, SideDbs>): void {
  if (root.get(['meta', 'layout']) === LAYOUT) return;
  root.transactionSync(() => {
    for (const side of Object.values(sides)) {
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
    void root.put(['meta', 'layout'], LAYOUT);
  });
}

/**
 * State written by an earlier release (one entry per zone, ['zone', name]) becomes a stored
 * snapshot of those zones, so an upgraded name server still serves at once with the API away.
 * Returns the side now active when it upgraded.
 */
export function upgradeOneEntryPerZone(root: RootDatabase<unknown, MetaKey>, sides: Record<Side, SideDbs>): Side | undefined {
  if (((root.get(['meta', 'layout']) as number | undefined) ?? 1) >= 2) return undefined;
  const old = [...root.getRange({ start: ['zone', ''], end: ['zone', '\uffff'] })];
  const { revision, nodesRevision, nodes } = storedHeader(root);
  const text = [headerLine({ revision, nodesRevision, nodes }), ...old.map(({ value }) => zoneLine(JSON.stringify(value))), endLine(old.length)].join('');
  root.transactionSync(() => {
    if (old.length > 0) void sides.a.snapshot.put(0, Buffer.from(text));
    for (const { key } of old) void root.remove(key);
    void root.put(['meta', 'active'], 'a');
    void root.put(['meta', 'layout'], 2);
  });
  return 'a';
}

/** `later` on top of `earlier` (a write of `earlier` failed while `later` was gathered). */
export function merged(earlier: Unwritten, later: Unwritten): Unwritten {
  if (later.snapshot) return later;
  for (const [name, entry] of later.zones) {
    const below = earlier.zones.get(name);
    if (!below || entry.cleared) earlier.zones.set(name, entry);
    else {
      below.head = entry.head;
      for (const [id, json] of entry.records) below.records.set(id, json);
    }
  }
  earlier.header = later.header;
  earlier.nodesChanged ||= later.nodesChanged;
  earlier.bytes += later.bytes;
  return earlier;
}

/** Waits for every write, then throws the first failure (the others' are handled too). */
export async function allWritten(writes: Array<Promise<unknown>>): Promise<void> {
  const results = await Promise.allSettled(writes);
  const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  for (const other of failed.slice(1)) void diskWriteFailure(other.reason);
  if (failed[0]) throw failed[0].reason;
}

/** Inside a transaction: the revision reached, and the edge nodes when they changed. */
export function writeHeader(root: RootDatabase<unknown, MetaKey>, header: SnapshotHeader, withNodes: boolean): void {
  void root.put(['meta', 'revision'], header.revision);
  void root.put(['meta', 'nodesRevision'], header.nodesRevision);
  if (!withNodes) return;
  for (const { key } of root.getRange({ start: ['node', 0], end: ['node', Number.MAX_SAFE_INTEGER] })) void root.remove(key);
  for (const node of header.nodes) void root.put(['node', node.id], node);
}

export interface SnapshotWriter {
  /** Stores the next chunk of the snapshot's bytes, as received. */
  write(chunk: Uint8Array): Promise<void>;
  /** Remembers where a zone's line starts (to read that zone back later). */
  noteZone(name: string, offset: number): void;
  /** Makes the stored snapshot, with this header, the local state (one transaction). */
  commit(header: SnapshotHeader): Promise<void>;
}
