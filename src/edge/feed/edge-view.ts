// The edge's view of the feed: what a snapshot and a page do to the EdgeState it serves, whatever
// the source (edge-sources.ts). A snapshot is read whole before it replaces anything (an edge's
// share is small: settings, certificates, lists); a page is applied in one synchronous step.
//   with a local state (the edge role): kept on disk (edge-local-state.ts), served at start even
//     with the API down; a page is stored before it is applied (a crash between the two serves
//     the new state at the next start, not an old one). Names that leave come as keyed digests
//     (`secret`): the names held are kept by digest to match them;
//   without (the serve role's edge, fed by the store in this process): nothing is kept.
import type { Logger } from 'pino';
import type { AcmeChallengeState } from '../../model/acme-challenge.ts';
import type { CertificateState } from '../../model/certificate.ts';
import type { DomainState } from '../../model/domain.ts';
import { nameDigest, type EdgeChangePage, type EdgeHeader } from '../../sync/edge-feed-format.ts';
import type { FeedView, Progress } from '../../sync/feed-consumer.ts';
import { LocalStateGuard } from '../../sync/local-state-guard.ts';
import type { EdgeBatch, EdgeState } from '../edge-state.ts';
import { EdgeLocalState, type EdgeStateData } from './edge-local-state.ts';
import type { EdgeSnapshot } from './edge-sources.ts';

export interface EdgeViewOptions {
  log: Logger;
  /** The local state's directory and the consumer's HMAC secret (the key of departure digests); none: nothing kept. */
  kept?: { dataDir: string; secret: string };
}

const EMPTY: EdgeStateData = { revision: 0, node: null, domains: [], certificates: [], challenges: [], ipLists: [] };

export class EdgeView implements FeedView<EdgeChangePage, EdgeSnapshot> {
  private readonly guard: LocalStateGuard<EdgeLocalState> | undefined;
  private local: EdgeLocalState | undefined;
  /** digest → name, for every name this edge holds (departures come as digests). */
  private readonly byDigest = new Map<string, string>();

  constructor(
    private readonly state: EdgeState,
    private readonly options: EdgeViewOptions,
  ) {
    const { kept, log } = options;
    this.guard = kept && new LocalStateGuard(kept.dataDir, log, (dir) => new EdgeLocalState(dir, log), 'the edge');
    this.local = this.guard?.open();
  }

  get localStateProblem(): { reason: string; since: number } | undefined {
    return this.local?.problem;
  }

  /** Serves the local state (the caller may listen as soon as this returns). */
  resume(): number {
    if (!this.guard || !this.local) return 0;
    let data: EdgeStateData;
    try {
      data = this.local.read();
      for (const d of data.domains) checkedDomain(d);
    } catch (error) {
      void this.local.close().catch(() => undefined);
      this.guard.moveAside(`a stored document is unreadable (${(error as Error).message})`);
      this.local = this.guard.open();
      data = EMPTY;
    }
    this.replace(data);
    this.guard.loaded();
    this.options.log.info({ revision: data.revision, domains: this.state.routes.size }, 'edge sync: serving the local state');
    return data.revision;
  }

  async close(): Promise<void> {
    await this.local?.close();
  }

  async load(snapshot: EdgeSnapshot, at: Progress): Promise<void> {
    const started = Date.now();
    let header: EdgeHeader | undefined;
    const data: Omit<EdgeStateData, 'revision' | 'node'> = { domains: [], certificates: [], challenges: [], ipLists: [] };
    let count = 0;
    let complete = false;
    for await (const line of snapshot) {
      if (complete) throw new Error('edge snapshot: data after the end line');
      if (!header) {
        if (line.kind !== 'header') throw new Error('edge snapshot: the first line is not the header');
        header = line.header;
        continue;
      }
      if (line.kind === 'domain') data.domains.push(checkedDomain(line.data));
      else if (line.kind === 'certificate') data.certificates.push(line.data);
      else if (line.kind === 'challenge') data.challenges.push(line.data);
      else if (line.kind === 'iplist') data.ipLists.push(line.data);
      else if (line.kind === 'end') {
        if (line.items !== count) throw new Error(`edge snapshot: the end line says ${line.items} items, ${count} arrived`);
        complete = true;
        continue;
      } else throw new Error('edge snapshot: a second header');
      count++;
    }
    if (!header || !complete) throw new Error('edge snapshot: the stream was cut short (no end line); keeping the previous state');
    const full: EdgeStateData = { revision: header.revision, node: header.node, ...data };
    await this.local?.replace(full);
    this.replace(full);
    at.applied = full.revision;
    this.options.log.info({ revision: header.revision, domains: data.domains.length, certificates: data.certificates.length, ipLists: data.ipLists.length, ms: Date.now() - started }, 'edge sync: snapshot loaded');
  }

  async apply(page: EdgeChangePage, at: Progress): Promise<void> {
    const batch = this.batchOf(page);
    // Stored first: a crash between the two serves the new state at the next start, not an old one.
    await this.local?.apply(batch, page.revision);
    this.state.apply(batch);
    this.noteNames(batch.domains);
    at.applied = page.revision;
  }

  private batchOf(page: EdgeChangePage): EdgeBatch {
    const batch: Required<Omit<EdgeBatch, 'node'>> & Pick<EdgeBatch, 'node'> = { domains: new Map(), certificates: new Map(), challenges: new Map(), ipLists: new Map() };
    for (const change of page.changes) {
      if (change.kind === 'domain' || change.kind === 'certificate' || change.kind === 'challenge') {
        if (change.op === 'put') {
          if (change.kind === 'domain') batch.domains.set(change.key, checkedDomain(change.data as DomainState));
          else if (change.kind === 'certificate') batch.certificates.set(change.key, change.data as CertificateState);
          else batch.challenges.set(change.key, change.data as AcmeChallengeState);
        } else {
          const name = 'digest' in change ? this.byDigest.get(change.digest) : change.key;
          if (name !== undefined) (change.kind === 'domain' ? batch.domains : change.kind === 'certificate' ? batch.certificates : batch.challenges).set(name, undefined);
        }
      } else if (change.kind === 'iplist') batch.ipLists.set(Number(change.key), change.op === 'put' ? change.data : undefined);
      else if (change.kind === 'node') batch.node = change.op === 'put' ? (change.data ?? null) : null;
    }
    return batch;
  }

  private replace(data: EdgeStateData): void {
    this.state.replace(data);
    this.byDigest.clear();
    this.noteNames(new Map(data.domains.map((d) => [d.domain, d])));
  }

  /** Only a view fed by digests needs them. */
  private noteNames(domains: ReadonlyMap<string, DomainState | undefined> | undefined): void {
    const secret = this.options.kept?.secret;
    if (secret === undefined || !domains) return;
    for (const [name, domain] of domains) {
      const digest = nameDigest(secret, name);
      if (domain) this.byDigest.set(digest, name);
      else this.byDigest.delete(digest);
    }
  }
}

/** A domain document must have the fields routing reads; anything else is damage or a bad peer. */
function checkedDomain(value: DomainState): DomainState {
  const d = value as Partial<DomainState> | null;
  const fine = typeof d?.domain === 'string' && typeof d.enabled === 'boolean' && typeof d.mask === 'string' && typeof d.backend === 'string' && Array.isArray(d.bind_node) && typeof d.revision === 'number';
  if (!fine) throw new Error(`a domain document does not have a domain's shape (${JSON.stringify(value)?.slice(0, 80)})`);
  return value;
}
