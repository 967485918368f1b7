// The name server's side of the change feed: keeps a zone index in step with a remote API, and
// keeps what it applied in a local LMDB so a restart serves at once, even with the API down.
//   start: local state → index (serve now) → catch up: GET /sync/changes?since=R, in order;
//   410 (too far behind) or nothing local → GET /sync/snapshot. Polls every few seconds; a push
//   notification only makes the next pull happen now. Each batch is fetched first and applied to
//   the index in one synchronous step, then persisted.
import { open, type RootDatabase } from 'lmdb';
import type { Logger } from 'pino';
import type { ZoneIndex } from '../dns/zone/index.ts';
import type { EdgeNode } from '../model/node.ts';
import type { Zone } from '../store/types.ts';
import { applyBatch } from '../dns/zone/apply.ts';
import { coalesced } from './coalesce.ts';

export interface RemoteFeedOptions {
  /** Base URL of the API, e.g. http://api.internal:8080 */
  url: string;
  token: string;
  pollMs: number;
  /** Directory of the local state. */
  dataDir: string;
  log: Logger;
}

interface Snapshot {
  revision: number;
  nodes_revision: number;
  zones: Zone[];
  nodes: EdgeNode[];
}

interface ChangePage {
  revision: number;
  current: number;
  changes: Array<{ revision: number; kind: string; key: string; op: 'put' | 'delete'; data?: unknown }>;
}

type Key = (string | number)[];
const END = '\uffff';

export class RemoteFeed {
  private readonly db: RootDatabase<unknown, Key>;
  applied = 0;
  /** The API's revision at the last successful pull. */
  current = 0;
  lastSuccess = 0;
  private nodesRevision = 0;
  private timer: NodeJS.Timeout | undefined;
  private failing = false;

  constructor(
    private readonly index: ZoneIndex,
    private readonly options: RemoteFeedOptions,
  ) {
    this.db = open<unknown, Key>({ path: options.dataDir, compression: false, noSubdir: false });
  }

  /** Loads the local state into the index; the caller may serve DNS as soon as this returns. */
  start(): void {
    const zones = [...this.db.getRange({ start: ['zone', ''], end: ['zone', END] })].map((e) => e.value as Zone);
    this.applied = (this.db.get(['meta', 'revision']) as number | undefined) ?? 0;
    this.nodesRevision = (this.db.get(['meta', 'nodesRevision']) as number | undefined) ?? 0;
    this.index.replaceAll(zones, this.localNodes(), this.nodesRevision);
    this.options.log.info({ revision: this.applied, zones: zones.length }, 'sync: serving the local state');
    this.timer = setInterval(() => void this.catchUp(), this.options.pollMs);
    this.timer.unref();
    void this.catchUp();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.catchUp.settled();
    await this.db.close();
  }

  private localNodes(): EdgeNode[] {
    return [...this.db.getRange({ start: ['node', 0], end: ['node', Number.MAX_SAFE_INTEGER] })].map((e) => e.value as EdgeNode);
  }

  /** A GET with a deadline for the whole exchange: seconds for a page of changes, minutes for a snapshot. */
  private async get<T>(path: string, timeoutMs = 10_000): Promise<{ status: number; body: T }> {
    const res = await fetch(`${this.options.url}${path}`, { headers: { authorization: `Bearer ${this.options.token}` }, signal: AbortSignal.timeout(timeoutMs) });
    return { status: res.status, body: (await res.json()) as T };
  }

  /** Pulls until up to date; concurrent calls (polls, pushes) coalesce. */
  readonly catchUp = coalesced(async () => {
    try {
      while (await this.pull());
      if (this.failing) this.options.log.info({ revision: this.applied }, 'sync: API reachable again; caught up');
      this.failing = false;
      this.lastSuccess = Date.now();
    } catch (error) {
      if (!this.failing) {
        this.options.log.error(
          { err: (error as Error).message, url: this.options.url, revision: this.applied },
          'sync: cannot pull from the API; serving the last applied state. Check PALISADE_SYNC_URL, the network path to the API, and PALISADE_SYNC_TOKEN',
        );
      }
      this.failing = true;
    }
  });

  /** One page of changes (or a snapshot); true when more may be waiting. */
  private async pull(): Promise<boolean> {
    if (this.applied === 0) {
      await this.loadSnapshot();
      return true;
    }
    const page = await this.get<ChangePage>(`/sync/changes?since=${this.applied}&limit=1000`);
    if (page.status === 410) {
      this.options.log.warn({ revision: this.applied }, 'sync: our revision is older than the API keeps; loading a fresh snapshot');
      await this.loadSnapshot();
      return true;
    }
    if (page.status !== 200) throw new Error(`GET /sync/changes answered ${page.status}`);
    this.current = page.body.current;
    if (page.body.changes.length === 0) return false;
    await this.apply(page.body);
    return page.body.revision < page.body.current;
  }

  private async loadSnapshot(): Promise<void> {
    const snap = await this.get<Snapshot>('/sync/snapshot', 300_000);
    if (snap.status !== 200) throw new Error(`GET /sync/snapshot answered ${snap.status}`);
    const { revision, nodes_revision: nodesRevision, zones, nodes } = snap.body;
    this.index.replaceAll(zones, nodes, nodesRevision);
    this.applied = revision;
    this.current = Math.max(this.current, revision);
    this.nodesRevision = nodesRevision;
    await this.db.transaction(() => {
      for (const { key } of this.db.getRange({ start: ['zone', ''], end: ['zone', END] })) void this.db.remove(key);
      for (const { key } of this.db.getRange({ start: ['node', 0], end: ['node', Number.MAX_SAFE_INTEGER] })) void this.db.remove(key);
      for (const zone of zones) void this.db.put(['zone', zone.domain.domain], zone);
      for (const node of nodes) void this.db.put(['node', node.id], node);
      void this.db.put(['meta', 'revision'], revision);
      void this.db.put(['meta', 'nodesRevision'], nodesRevision);
    });
    this.options.log.info({ revision, zones: zones.length }, 'sync: snapshot loaded');
  }

  private async apply(page: ChangePage): Promise<void> {
    const zones = new Map<string, Zone | undefined>();
    const nodes = new Map(this.localNodes().map((n) => [n.id, n]));
    let nodeRevision = 0;
    for (const change of page.changes) {
      if (change.kind === 'zone') {
        const zone = change.op === 'put' ? (change.data as Zone) : undefined;
        zones.set(change.key, zone?.domain.ns_active ? zone : undefined);
      } else if (change.kind === 'node') {
        nodeRevision = change.revision;
        if (change.op === 'put') nodes.set(Number(change.key), change.data as EdgeNode);
        else nodes.delete(Number(change.key));
      }
    }
    // Node changes rebuild every zone whose answers use node addresses: take their documents from
    // the local state (those also changed in this batch come from the batch).
    const dependent = nodeRevision > 0 ? this.index.nodeDependentZones().filter((n) => !zones.has(n)).map((n) => this.db.get(['zone', n]) as Zone | undefined) : [];
    if (nodeRevision > 0) this.nodesRevision = nodeRevision;
    applyBatch(this.index, { zones, nodes: nodeRevision > 0 ? { list: [...nodes.values()], revision: nodeRevision } : undefined, dependent });
    this.applied = page.revision;
    await this.db.transaction(() => {
      for (const [name, zone] of zones) {
        if (zone) void this.db.put(['zone', name], zone);
        else void this.db.remove(['zone', name]);
      }
      if (nodeRevision > 0) {
        for (const { key } of this.db.getRange({ start: ['node', 0], end: ['node', Number.MAX_SAFE_INTEGER] })) void this.db.remove(key);
        for (const node of nodes.values()) void this.db.put(['node', node.id], node);
        void this.db.put(['meta', 'nodesRevision'], nodeRevision);
      }
      void this.db.put(['meta', 'revision'], page.revision);
    });
  }
}
