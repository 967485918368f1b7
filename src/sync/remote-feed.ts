// The name server's side of the change feed: keeps a zone index in step with a remote API, and
// keeps what it applied on disk (local-state.ts) so a restart serves at once, even with the API down.
//   start: local state → index (serve now) → catch up: GET /sync/changes?since=R, in order;
//   410 (too far behind) or nothing local → GET /sync/snapshot, streamed: each zone is built into
//   a staged index and written to disk as it arrives, and both are switched in only once the end
//   line has arrived. Polls every few seconds; a push notification only makes the next pull
//   happen now. Each batch of changes is fetched first and applied to the index in one
//   synchronous step (record differences patch only the names they touch), then persisted at
//   the size of each change.
import type { ZoneIndex } from '../dns/zone/index.ts';
import type { Zone } from '../store/types.ts';
import { applyBatch, type IndexBatch } from '../dns/zone/apply.ts';
import { indexBatchOf, type ChangePage } from './change-page.ts';
import { LocalState } from './local-state.ts';
import { LocalStateGuard } from './local-state-guard.ts';
import { LineSplitter, type Line } from '../common/ndjson.ts';
import { PullLoop, type PullLoopOptions } from './pull-loop.ts';
import { parseSnapshotLine, type SnapshotHeader } from './snapshot-format.ts';
import { fetchZonesNotHeld, storedChangesOf } from './stored-changes.ts';

export interface RemoteFeedOptions extends PullLoopOptions {
  /** Directory of the local state. */
  dataDir: string;
  /** Told of what reached the index, for other processes' indexes (src/roles/dns-workers). */
  onApplied?: (event: AppliedEvent) => void;
}

/**
 * A batch, with the stored zones it read (as they were before it); or the whole index replaced
 * (a snapshot, already stored when this is said).
 */
export type AppliedEvent =
  | { kind: 'batch'; since: number; revision: number; batch: IndexBatch; read: Map<string, Zone | undefined> }
  | { kind: 'reload'; revision: number };

export class RemoteFeed extends PullLoop<ChangePage> {
  private state: LocalState;
  private readonly guard: LocalStateGuard<LocalState>;
  private nodesRevision = 0;
  private readonly onApplied: RemoteFeedOptions['onApplied'];

  constructor(
    private readonly index: ZoneIndex,
    options: RemoteFeedOptions,
  ) {
    // v=2: settings changes come as the domain alone, applied to the records held here.
    super(options, { changesPath: '/sync/changes?v=2', snapshotPath: '/sync/snapshot', who: 'sync' });
    this.guard = new LocalStateGuard(options.dataDir, options.log, (dir) => new LocalState(dir, options.log));
    this.state = this.guard.open();
    this.onApplied = options.onApplied;
  }

  /** Why the local state on disk is behind what is served (a full or failing disk), for /healthz. */
  get localStateProblem(): { reason: string; since: number } | undefined {
    return this.state.problem;
  }

  /**
   * Loads the local state into the index; the caller may serve DNS as soon as this returns. Every
   * stored document is checked as it is read: damage moves the state aside and starts empty.
   */
  start(): void {
    try {
      this.loadLocalState();
    } catch (error) {
      void this.state.close().catch(() => undefined);
      this.guard.moveAside(`a stored document is unreadable (${(error as Error).message})`);
      this.state = this.guard.open();
      this.applied = 0;
      this.nodesRevision = 0;
      this.index.stage([], 0).commit();
    }
    this.guard.loaded();
    this.options.log.info({ revision: this.applied, zones: this.index.size }, 'sync: serving the local state');
    this.startPolling();
  }

  private loadLocalState(): void {
    const header = this.state.header();
    const staged = this.index.stage(header.nodes, header.nodesRevision);
    for (const zone of this.state.zones()) staged.put(checkedZone(zone));
    staged.commit();
    this.applied = header.revision;
    this.nodesRevision = header.nodesRevision;
  }

  async stop(): Promise<void> {
    await this.stopPolling();
    await this.state.close();
  }

  /**
   * Streams the snapshot: its bytes are stored as they arrive, and every zone is built into a
   * staged index. Only a complete stream (its end line, with the count) replaces what is served
   * and stored; anything less keeps the previous state.
   */
  protected async loadSnapshot(res: Response): Promise<void> {
    const started = Date.now();
    const writer = await this.state.beginSnapshot();
    let header: SnapshotHeader | undefined;
    let staged: ReturnType<ZoneIndex['stage']> | undefined;
    let count = 0;
    let complete = false;
    const take = (line: Line): void => {
      if (complete) throw new Error('snapshot: data after the end line');
      const parsed = parseSnapshotLine(line.text);
      if (!header || !staged) {
        if (parsed.kind !== 'header') throw new Error('snapshot: the first line is not the header');
        header = parsed.header;
        staged = this.index.stage(header.nodes, header.nodesRevision);
      } else if (parsed.kind === 'zone') {
        const zone = JSON.parse(parsed.json) as Zone;
        staged.put(zone);
        writer.noteZone(zone.domain.domain, line.offset);
        count++;
      } else if (parsed.kind === 'end') {
        if (parsed.zones !== count) throw new Error(`snapshot: the end line says ${parsed.zones} zones, ${count} arrived`);
        complete = true;
      } else throw new Error('snapshot: a second header');
    };
    const splitter = new LineSplitter();
    for await (const chunk of res.body!) {
      await writer.write(chunk);
      for (const line of splitter.push(chunk)) take(line);
    }
    for (const line of splitter.end()) take(line);
    if (!header || !staged || !complete) throw new Error('snapshot: the stream was cut short (no end line); keeping the previous state');
    await writer.commit(header);
    staged.commit();
    this.applied = header.revision;
    this.nodesRevision = header.nodesRevision;
    this.onApplied?.({ kind: 'reload', revision: header.revision });
    this.options.log.info({ revision: header.revision, zones: count, ms: Date.now() - started }, 'sync: snapshot loaded');
  }

  protected async apply(page: ChangePage): Promise<void> {
    const batch = indexBatchOf(page.changes, this.state.header().nodes);
    await fetchZonesNotHeld(batch, this.index, this.state, (name) => this.fetchDocument<Zone>(`/sync/zones/${encodeURIComponent(name)}`));
    if (batch.nodes) this.nodesRevision = batch.nodes.revision;
    // A zone's first difference, or a node change, rebuilds from the zone as stored here (the
    // state before this page: persisted below, after applying).
    const read = new Map<string, Zone | undefined>();
    applyBatch(this.index, batch, (name) => {
      const zone = this.state.zone(name);
      read.set(name, zone);
      return zone;
    });
    if (this.onApplied) {
      const { nodeList: _nodeList, ...indexBatch } = batch;
      this.onApplied({ kind: 'batch', since: this.applied, revision: page.revision, batch: indexBatch, read });
    }
    this.applied = page.revision;
    // Stored at the size of each change, for the zones held here.
    await this.state.apply(storedChangesOf(batch, this.index, this.state), { revision: page.revision, nodesRevision: this.nodesRevision, nodes: batch.nodeList }, batch.nodes !== undefined);
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
