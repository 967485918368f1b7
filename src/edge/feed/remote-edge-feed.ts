// The edge's side of the change feed, as the name servers' (../../sync/remote-feed.ts) but for
// one node's share: local state served at start; then GET /sync/edge/changes?since=R in order;
// nothing local or 410 → GET /sync/edge/snapshot, read whole before it replaces anything (an
// edge's share is small: settings, certificates, lists). Polls; a verified push makes the next
// pull happen now. Each page is applied to the in-memory state in one synchronous step, then
// stored.
import type { AcmeChallengeState } from '../../model/acme-challenge.ts';
import type { CertificateState } from '../../model/certificate.ts';
import type { DomainState } from '../../model/domain.ts';
import { PullLoop, type PullLoopOptions } from '../../sync/pull-loop.ts';
import { nameDigest, parseEdgeLine, type EdgeChangePage, type EdgeHeader } from '../../sync/edge-feed-format.ts';
import { LocalStateGuard } from '../../sync/local-state-guard.ts';
import { LineSplitter } from '../../common/ndjson.ts';
import type { EdgeBatch, EdgeState } from '../edge-state.ts';
import { EdgeLocalState, type EdgeStateData } from './edge-local-state.ts';

export interface RemoteEdgeFeedOptions extends PullLoopOptions {
  /** The consumer's HMAC secret: also the key of the digests that announce departed names. */
  secret: string;
  dataDir: string;
}

export class RemoteEdgeFeed extends PullLoop<EdgeChangePage> {
  private local: EdgeLocalState;
  private readonly guard: LocalStateGuard<EdgeLocalState>;
  /** digest → name, for every name this edge holds (departures come as digests). */
  private readonly byDigest = new Map<string, string>();

  constructor(
    private readonly state: EdgeState,
    private readonly edgeOptions: RemoteEdgeFeedOptions,
  ) {
    super(edgeOptions, { changesPath: '/sync/edge/changes', snapshotPath: '/sync/edge/snapshot', who: 'edge sync' });
    this.guard = new LocalStateGuard(edgeOptions.dataDir, edgeOptions.log, (dir) => new EdgeLocalState(dir, edgeOptions.log), 'the edge');
    this.local = this.guard.open();
  }

  /** Why the local state on disk is behind what is served (a full or failing disk), for /healthz. */
  get localStateProblem(): { reason: string; since: number } | undefined {
    return this.local.problem;
  }

  /** Serves the local state (the caller may listen as soon as this returns), then catches up. */
  start(): void {
    try {
      const data = this.local.read();
      for (const d of data.domains) checkedDomain(d);
      this.replace(data);
    } catch (error) {
      void this.local.close().catch(() => undefined);
      this.guard.moveAside(`a stored document is unreadable (${(error as Error).message})`);
      this.local = this.guard.open();
      this.replace({ revision: 0, node: null, domains: [], certificates: [], challenges: [], ipLists: [] });
    }
    this.guard.loaded();
    this.options.log.info({ revision: this.applied, domains: this.state.routes.size }, 'edge sync: serving the local state');
    this.startPolling();
  }

  async stop(): Promise<void> {
    await this.stopPolling();
    await this.local.close();
  }

  private replace(data: EdgeStateData): void {
    this.state.replace(data);
    this.byDigest.clear();
    for (const d of data.domains) this.byDigest.set(nameDigest(this.edgeOptions.secret, d.domain), d.domain);
    this.applied = data.revision;
  }

  protected async loadSnapshot(res: Response): Promise<void> {
    const started = Date.now();
    let header: EdgeHeader | undefined;
    const data: Omit<EdgeStateData, 'revision' | 'node'> = { domains: [], certificates: [], challenges: [], ipLists: [] };
    let count = 0;
    let complete = false;
    const splitter = new LineSplitter();
    const take = (text: string): void => {
      if (complete) throw new Error('edge snapshot: data after the end line');
      const line = parseEdgeLine(text);
      if (!header) {
        if (line.kind !== 'header') throw new Error('edge snapshot: the first line is not the header');
        header = line.header;
      } else if (line.kind === 'domain') data.domains.push(checkedDomain(line.data));
      else if (line.kind === 'certificate') data.certificates.push(line.data);
      else if (line.kind === 'challenge') data.challenges.push(line.data);
      else if (line.kind === 'iplist') data.ipLists.push(line.data);
      else if (line.kind === 'end') {
        if (line.items !== count) throw new Error(`edge snapshot: the end line says ${line.items} items, ${count} arrived`);
        complete = true;
        return;
      } else throw new Error('edge snapshot: a second header');
      if (line.kind !== 'header') count++;
    };
    for await (const chunk of res.body!) for (const line of splitter.push(chunk)) take(line.text);
    for (const line of splitter.end()) take(line.text);
    if (!header || !complete) throw new Error('edge snapshot: the stream was cut short (no end line); keeping the previous state');
    const full: EdgeStateData = { revision: header.revision, node: header.node, ...data };
    await this.local.replace(full);
    this.replace(full);
    this.options.log.info({ revision: header.revision, domains: data.domains.length, certificates: data.certificates.length, ipLists: data.ipLists.length, ms: Date.now() - started }, 'edge sync: snapshot loaded');
  }

  protected async apply(page: EdgeChangePage): Promise<void> {
    const batch: Required<Omit<EdgeBatch, 'node'>> & Pick<EdgeBatch, 'node'> = { domains: new Map(), certificates: new Map(), challenges: new Map(), ipLists: new Map() };
    for (const change of page.changes) {
      if (change.kind === 'domain' || change.kind === 'certificate' || change.kind === 'challenge') {
        if (change.op === 'put') {
          if (change.kind === 'domain') batch.domains.set(change.key, checkedDomain(change.data as DomainState));
          else if (change.kind === 'certificate') batch.certificates.set(change.key, change.data as CertificateState);
          else batch.challenges.set(change.key, change.data as AcmeChallengeState);
        } else {
          const name = this.byDigest.get(change.digest);
          if (name !== undefined) (change.kind === 'domain' ? batch.domains : change.kind === 'certificate' ? batch.certificates : batch.challenges).set(name, undefined);
        }
      } else if (change.kind === 'iplist') batch.ipLists.set(Number(change.key), change.op === 'put' ? change.data : undefined);
      else if (change.kind === 'node') batch.node = change.op === 'put' ? (change.data ?? null) : null;
    }
    // Stored first: a crash between the two serves the new state at the next start, not an old one.
    await this.local.apply(batch, page.revision);
    this.state.apply(batch);
    for (const [name, domain] of batch.domains) {
      const digest = nameDigest(this.edgeOptions.secret, name);
      if (domain) this.byDigest.set(digest, name);
      else this.byDigest.delete(digest);
    }
    this.applied = page.revision;
  }
}

/** A domain document must have the fields routing reads; anything else is damage or a bad peer. */
function checkedDomain(value: DomainState): DomainState {
  const d = value as Partial<DomainState> | null;
  const fine = typeof d?.domain === 'string' && typeof d.enabled === 'boolean' && typeof d.mask === 'string' && typeof d.backend === 'string' && Array.isArray(d.bind_node) && typeof d.revision === 'number';
  if (!fine) throw new Error(`a domain document does not have a domain's shape (${JSON.stringify(value)?.slice(0, 80)})`);
  return value;
}
