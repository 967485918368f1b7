// What a name server keeps on disk so that a restart serves at once, even with the API down: the
// last snapshot exactly as it arrived (its NDJSON bytes, stored chunk by chunk: no per-zone write
// while it streams in), the zones changed since (JSON text, or '' once deleted), the edge nodes,
// and the applied revision. There are two sides, A and B, each a snapshot plus its changes: a new
// snapshot is written into the inactive side while the active one stays whole, and one
// transaction switches them — a crash mid-load leaves the previous state intact.
import { open, type Database, type RootDatabase } from 'lmdb';
import type { EdgeNode } from '../model/node.ts';
import { guardLmdbCommitFailures } from '../store/lmdb-commit-guard.ts';
import type { Zone } from '../store/types.ts';
import { LineSplitter, type Line } from './ndjson.ts';
import { endLine, headerLine, zoneJson, zoneLine, type SnapshotHeader } from './snapshot-format.ts';

type Side = 'a' | 'b';
type MetaKey = ['meta', string] | ['node', number] | ['zone', string];

/** Chunk writes waiting for LMDB before a snapshot load waits for them (bounds memory). */
const MAX_PENDING_WRITES = 64;
/** Marks the layout described above (earlier releases kept one entry per zone). */
const LAYOUT = 2;


interface SideDbs {
  /** Stream offset of a chunk's first byte → the chunk. */
  snapshot: Database<Buffer, number>;
  /** Zone name → its JSON since the snapshot, or '' when it is no longer served. */
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
      changed: this.root.openDB<string, string>({ name: `changed-${name}`, encoding: 'string' }),
    });
    this.sides = { a: side('a'), b: side('b') };
    this.active = (this.root.get(['meta', 'active']) as Side | undefined) ?? 'a';
    this.upgradeOneEntryPerZone();
  }

  /**
   * State written by an earlier release (one entry per zone, ['zone', name]) becomes a stored
   * snapshot of those zones, so an upgraded name server still serves at once with the API away.
   */
  private upgradeOneEntryPerZone(): void {
    if (this.root.get(['meta', 'layout']) === LAYOUT) return;
    const old = [...this.root.getRange({ start: ['zone', ''], end: ['zone', '\uffff'] })];
    const { revision, nodesRevision, nodes } = this.header();
    const text = [headerLine({ revision, nodesRevision, nodes }), ...old.map(({ value }) => zoneLine(JSON.stringify(value))), endLine(old.length)].join('');
    this.root.transactionSync(() => {
      if (old.length > 0) void this.sides.a.snapshot.put(0, Buffer.from(text));
      for (const { key } of old) void this.root.remove(key);
      void this.root.put(['meta', 'active'], 'a');
      void this.root.put(['meta', 'layout'], LAYOUT);
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

  /** Every stored zone: the snapshot's (those changed since skipped), then the changed ones. */
  *zones(): Generator<Zone> {
    const { snapshot, changed } = this.sides[this.active];
    const since = new Map<string, string>();
    for (const { key, value } of changed.getRange()) since.set(key, value);
    this.offsets = new Map();
    this.chunkStarts = [];
    const splitter = new LineSplitter();
    const zonesOf = function* (this: LocalState, lines: Line[]): Generator<Zone> {
      for (const line of lines) {
        const json = zoneJson(line.text);
        if (json === undefined) continue;
        const zone = JSON.parse(json) as Zone;
        this.offsets.set(zone.domain.domain, line.offset);
        if (!since.has(zone.domain.domain)) yield zone;
      }
    };
    for (const { key, value } of snapshot.getRange()) {
      this.chunkStarts.push(key);
      yield* zonesOf.call(this, splitter.push(value));
    }
    yield* zonesOf.call(this, splitter.end());
    for (const json of since.values()) if (json !== '') yield JSON.parse(json) as Zone;
  }

  /** One stored zone (a node change rebuilds the zones that use node addresses). */
  zone(name: string): Zone | undefined {
    const { snapshot, changed } = this.sides[this.active];
    const json = changed.get(name);
    if (json !== undefined) return json === '' ? undefined : (JSON.parse(json) as Zone);
    const offset = this.offsets.get(name);
    if (offset === undefined) return undefined;
    // The chunk holding the line's start, then following chunks until its newline.
    let low = 0;
    let high = this.chunkStarts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (this.chunkStarts[middle]! <= offset) low = middle;
      else high = middle - 1;
    }
    let i = low;
    const parts: Buffer[] = [];
    for (; i < this.chunkStarts.length; i++) {
      const chunk = snapshot.get(this.chunkStarts[i]!);
      if (!chunk) break;
      const from = parts.length === 0 ? offset - this.chunkStarts[i]! : 0;
      const newline = chunk.indexOf(10, from);
      parts.push(chunk.subarray(from, newline === -1 ? chunk.length : newline));
      if (newline !== -1) break;
    }
    const line = zoneJson(Buffer.concat(parts).toString('utf8'));
    return line === undefined ? undefined : (JSON.parse(line) as Zone);
  }

  /** Starts storing a snapshot in the inactive side (emptied first: a cut-short load may have left data). */
  async beginSnapshot(): Promise<SnapshotWriter> {
    const target: Side = this.active === 'a' ? 'b' : 'a';
    const { snapshot, changed } = this.sides[target];
    await Promise.all([snapshot.clearAsync(), changed.clearAsync()]);
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
        void previous.changed.clearAsync();
      },
    };
  }

  /** Records one batch of changes (zone JSON, or undefined once not served) in one transaction. */
  async apply(zones: ReadonlyMap<string, string | undefined>, header: SnapshotHeader, nodesChanged: boolean): Promise<void> {
    const { changed } = this.sides[this.active];
    await this.root.transaction(() => {
      for (const [name, json] of zones) void changed.put(name, json ?? '');
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
