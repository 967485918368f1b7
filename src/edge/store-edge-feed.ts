// Keeps an edge's state in step with a store in the same process (the all-in-one role, which
// stands for every node): every domain, certificate, HTTP-01 challenge and IP list at start,
// then the store's change feed after every commit and by polling (commits made by other
// processes, such as the operator CLI). A remote edge takes the same from the API's change feed (feed/remote-edge-feed.ts).
import type { Logger } from 'pino';
import type { AcmeChallengeState } from '../model/acme-challenge.ts';
import type { CertificateState } from '../model/certificate.ts';
import type { DomainState } from '../model/domain.ts';
import type { IpListState } from '../model/iplist.ts';
import type { Page, PageRequest, Store } from '../store/types.ts';
import { coalesced } from '../common/coalesce.ts';
import { concernsEdges, edgeDomain } from '../sync/edge-feed-format.ts';
import { followStore } from '../sync/follow-store.ts';
import type { EdgeBatch, EdgeState } from './edge-state.ts';

async function all<T>(list: (page: PageRequest) => Promise<Page<T>>): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | undefined;
  do {
    const page = await list({ limit: 1000, cursor });
    out.push(...page.items);
    cursor = page.next;
  } while (cursor);
  return out;
}

export class StoreEdgeFeed {
  /** The last revision applied. */
  revision = 0;
  private unfollow: (() => void) | undefined;

  constructor(
    private readonly store: Store,
    private readonly state: EdgeState,
    private readonly log: Logger,
    private readonly pollMs = 1000,
    /** Gives a certificate with its private key opened (the store keeps it sealed). */
    private readonly openKey: (cert: CertificateState) => CertificateState = (c) => c,
  ) {}

  async start(): Promise<void> {
    await this.loadAll();
    this.unfollow = followStore(this.store, this.pollMs, this.catchUp);
  }

  stop(): void {
    this.unfollow?.();
  }

  private async loadAll(): Promise<void> {
    const revision = await this.store.currentRevision();
    const domains: DomainState[] = (await all((p) => this.store.listAllZones(p))).map((z) => edgeDomain(z.domain));
    const certificates: CertificateState[] = (await all((p) => this.store.listCertificates(p))).map(this.openKey);
    const challenges: AcmeChallengeState[] = await all((p) => this.store.listChallenges(p));
    const ipLists: IpListState[] = await all((p) => this.store.listAllIpLists(p));
    this.state.replace({ domains, certificates, challenges, ipLists });
    this.revision = revision;
    this.log.info({ revision, domains: domains.length, certificates: certificates.length }, 'edge: state loaded');
  }

  /** Applies what changed since the last applied revision; concurrent calls coalesce. */
  readonly catchUp = coalesced(async () => {
    try {
      for (;;) {
        const feed = await this.store.changesSince(this.revision, 1000, undefined, false);
        if ('gone' in feed) {
          await this.loadAll();
          return;
        }
        if (feed.changes.length === 0) return;
        const batch: Required<Omit<EdgeBatch, 'node'>> = { domains: new Map(), certificates: new Map(), challenges: new Map(), ipLists: new Map() };
        const reads: Promise<void>[] = [];
        // Record-only zone changes, and changes of settings no edge acts on (tags), leave the edge as it was.
        for (const change of new Map(feed.changes.filter(concernsEdges).map((c) => [`${c.kind}:${c.key}`, c])).values()) {
          if (change.kind === 'zone') reads.push(this.store.getZoneHead(change.key).then((z) => void batch.domains.set(change.key, z && edgeDomain(z.domain))));
          else if (change.kind === 'certificate') reads.push(this.store.getCertificate(change.key).then((c) => void batch.certificates.set(change.key, c && this.openKey(c))));
          else if (change.kind === 'challenge') reads.push(this.store.getChallenge(change.key).then((c) => void batch.challenges.set(change.key, c)));
          else if (change.kind === 'iplist') reads.push(this.store.getIpList(Number(change.key)).then((l) => void batch.ipLists.set(Number(change.key), l)));
        }
        await Promise.all(reads);
        this.state.apply(batch);
        this.revision = feed.changes[feed.changes.length - 1]!.revision;
      }
    } catch (error) {
      this.log.error({ err: error }, 'edge: applying store changes failed; retrying at the next poll');
    }
  });
}
