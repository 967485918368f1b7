// The name server's view of the feed: what a snapshot and a page do to the zone index it serves,
// whatever the source (name-server-sources.ts). Each page is read first (the zones it needs whole)
// and applied to the index in one synchronous step, so a query sees all of it or none; record
// differences patch only the names they touch. Where the records a page builds from are kept:
//   with a local state (the dns role): on disk (local-state.ts), so a restart serves at once,
//     even with the API down; each page is stored after applying, at the size of each change;
//   without (the serve role, fed by the store itself): nothing is kept, the zones a page needs
//     are read from the source as it applies.
import type { Logger } from 'pino';
import type { ZoneIndex } from '../dns/zone/index.ts';
import type { Zone } from '../store/types.ts';
import { applyBatch, type IndexBatch } from '../dns/zone/apply.ts';
import type { EdgeNode } from '../model/node.ts';
import { indexBatchOf, type ChangePage } from './change-page.ts';
import type { FeedView, Progress } from './feed-consumer.ts';
import { LocalState } from './local-state.ts';
import { LocalStateGuard } from './local-state-guard.ts';
import type { NameServerSource, ZoneSnapshot } from './name-server-sources.ts';
import type { SnapshotHeader } from './snapshot-format.ts';
import { fetchZonesNotHeld, storedChangesOf } from './stored-changes.ts';

/**
 * A batch, with the stored zones it read (as they were before it); or the whole index replaced
 * (a snapshot, already stored when this is said).
 */
export type AppliedEvent =
  | { kind: 'batch'; since: number; revision: number; batch: IndexBatch; read: Map<string, Zone | undefined> }
  | { kind: 'reload'; revision: number };

export interface NameServerViewOptions {
  log: Logger;
  /** Directory of the local state; none: nothing is kept (fed by a store in this process). */
  dataDir?: string;
  /** Told of what reached the index, for other processes' indexes (src/roles/dns-workers). */
  onApplied?: (event: AppliedEvent) => void;
}

export class NameServerView implements FeedView<ChangePage, ZoneSnapshot> {
  private readonly guard: LocalStateGuard<LocalState> | undefined;
  private state: LocalState | undefined;
  /** The node list the last page left (kept in the local state's header when there is one). */
  private nodes: EdgeNode[] = [];
  private nodesRevision = 0;

  constructor(
    private readonly index: ZoneIndex,
    private readonly source: NameServerSource,
    private readonly options: NameServerViewOptions,
  ) {
    const { dataDir, log } = options;
    this.guard = dataDir === undefined ? undefined : new LocalStateGuard(dataDir, log, (dir) => new LocalState(dir, log));
    this.state = this.guard?.open();
  }

  get localStateProblem(): { reason: string; since: number } | undefined {
    return this.state?.problem;
  }

  /**
   * Loads the local state into the index. Every stored document is checked as it is read: damage
   * moves the state aside and starts empty.
   */
  resume(): number {
    if (!this.guard || !this.state) return 0;
    let revision = 0;
    try {
      const header = this.state.header();
      const staged = this.index.stage(header.nodes, header.nodesRevision);
      for (const zone of this.state.zones()) staged.put(checkedZone(zone));
      staged.commit();
      revision = header.revision;
      this.nodesRevision = header.nodesRevision;
    } catch (error) {
      void this.state.close().catch(() => undefined);
      this.guard.moveAside(`a stored document is unreadable (${(error as Error).message})`);
      this.state = this.guard.open();
      this.nodesRevision = 0;
      this.index.stage([], 0).commit();
    }
    this.guard.loaded();
    this.options.log.info({ revision, zones: this.index.size }, 'sync: serving the local state');
    return revision;
  }

  async close(): Promise<void> {
    await this.state?.close();
  }

  /**
   * Every zone is built into a staged index (and its bytes stored as they arrive, with a local
   * state). Only a complete snapshot (its end line, with the count) replaces what is served and
   * stored; anything less keeps the previous state.
   */
  async load(snapshot: ZoneSnapshot, at: Progress): Promise<void> {
    const started = Date.now();
    const writer = await this.state?.beginSnapshot();
    let header: SnapshotHeader | undefined;
    // Streamed in (the API's): built into a staged index as it arrives. Read whole (a store in this
    // process already holds it in memory): replaced in one synchronous step at the end.
    let staged: ReturnType<ZoneIndex['stage']> | undefined;
    const whole: Zone[] = [];
    let count = 0;
    let complete = false;
    for await (const part of snapshot) {
      if (part.kind === 'bytes') {
        await writer?.write(part.chunk);
        continue;
      }
      if (complete) throw new Error('snapshot: data after the end line');
      if (!header) {
        if (part.kind !== 'header') throw new Error('snapshot: the first line is not the header');
        header = part.header;
        staged = this.state && this.index.stage(header.nodes, header.nodesRevision);
      } else if (part.kind === 'zone') {
        if (staged) staged.put(part.zone);
        else whole.push(part.zone);
        if (part.offset !== undefined) writer?.noteZone(part.zone.domain.domain, part.offset);
        count++;
      } else if (part.kind === 'end') {
        if (part.zones !== count) throw new Error(`snapshot: the end line says ${part.zones} zones, ${count} arrived`);
        complete = true;
      } else throw new Error('snapshot: a second header');
    }
    if (!header || !complete) throw new Error('snapshot: the stream was cut short (no end line); keeping the previous state');
    await writer?.commit(header);
    if (staged) staged.commit();
    else this.index.replaceAll(whole, header.nodes, header.nodesRevision);
    at.applied = header.revision;
    this.nodes = header.nodes;
    this.nodesRevision = header.nodesRevision;
    this.options.onApplied?.({ kind: 'reload', revision: header.revision });
    this.options.log.info({ revision: header.revision, zones: count, ms: Date.now() - started }, 'sync: snapshot loaded');
  }

  apply(page: ChangePage, at: Progress): Promise<void> {
    return this.state ? this.applyKept(page, at, this.state) : this.applyRead(page, at);
  }

  /** With a local state: zones to serve that it does not hold are fetched whole; the rest read from it. */
  private async applyKept(page: ChangePage, at: Progress, state: LocalState): Promise<void> {
    const batch = indexBatchOf(page.changes, state.header().nodes);
    await fetchZonesNotHeld(batch, this.index, state, (name) => this.source.zone(name));
    if (batch.nodes) this.nodesRevision = batch.nodes.revision;
    // A zone's first difference, or a node change, rebuilds from the zone as stored here (the
    // state before this page: persisted below, after applying).
    const read = new Map<string, Zone | undefined>();
    applyBatch(this.index, batch, (name) => {
      const zone = state.zone(name);
      read.set(name, zone);
      return zone;
    });
    if (this.options.onApplied) {
      const { nodeList: _nodeList, ...indexBatch } = batch;
      this.options.onApplied({ kind: 'batch', since: at.applied, revision: page.revision, batch: indexBatch, read });
    }
    at.applied = page.revision;
    // Stored at the size of each change, for the zones held here.
    await state.apply(storedChangesOf(batch, this.index, state), { revision: page.revision, nodesRevision: this.nodesRevision, nodes: batch.nodeList }, batch.nodes !== undefined);
  }

  /** Without: every zone whose records the index wants is read from the source first. */
  private async applyRead(page: ChangePage, at: Progress): Promise<void> {
    // Records read now may be newer than the page: differences apply by id, so the zone
    // converges on the store's as the feed catches up.
    const batch = indexBatchOf(page.changes, this.nodes);
    const zones = new Map<string, Zone | undefined>();
    // Asked again after reading: a deferred settings change the index built meanwhile (on its
    // timer) no longer answers for a zone's records.
    for (;;) {
      const wanted = new Set(batch.zones.flatMap((c) => (this.index.wantsRecords(c) ? [c.name] : [])));
      if (batch.nodes) for (const name of this.index.nodeDependentWithoutRecords()) wanted.add(name);
      const missing = [...wanted].filter((name) => !zones.has(name));
      if (missing.length === 0) break;
      for (const [name, zone] of await Promise.all(missing.map(async (name) => [name, await this.source.zone(name)] as const))) zones.set(name, zone);
    }
    applyBatch(this.index, batch, (name) => zones.get(name));
    this.nodes = batch.nodeList;
    at.applied = page.revision;
  }
}

/** A zone document as stored must have the shape the index builds from; anything else is damage. */
function checkedZone(value: unknown): Zone {
  const zone = value as Partial<Zone> | null;
  const domain = zone?.domain as Partial<Zone['domain']> | undefined;
  const fine =
    typeof domain?.domain === 'string' &&
    typeof domain.revision === 'number' &&
    typeof domain.ns_active === 'boolean' &&
    Array.isArray(zone?.records) &&
    zone.records.every((r) => typeof r?.name === 'string' && typeof r.type === 'number' && typeof r.value === 'string' && typeof r.ttl === 'number' && Array.isArray(r.target));
  if (!fine) throw new Error(`a stored zone does not have a zone's shape (${JSON.stringify(value)?.slice(0, 80)})`);
  return value as Zone;
}
