// What an edge knows, in memory: the domains it serves (as a routing table), their certificates
// and HTTP-01 challenges in flight, the IP lists on its node, and the node itself. Fed whole (a
// snapshot) or change by change, by the change feed (remote edge) or the store (all-in-one).
// Every batch is applied in one synchronous step, so no request sees half of a change. Listeners
// hear of each domain whose settings changed or that left (the cache drops what it kept for it).
import type { AcmeChallengeState } from '../model/acme-challenge.ts';
import type { CertificateState } from '../model/certificate.ts';
import { isProven, type DomainState } from '../model/domain.ts';
import type { IpListState } from '../model/iplist.ts';
import type { EdgeNode } from '../model/node.ts';
import { RoutingTable } from './routing.ts';

export interface EdgeBatch {
  domains?: Map<string, DomainState | undefined>;
  certificates?: Map<string, CertificateState | undefined>;
  challenges?: Map<string, AcmeChallengeState | undefined>;
  ipLists?: Map<number, IpListState | undefined>;
  node?: EdgeNode | null;
}

export class EdgeState {
  readonly routes: RoutingTable;
  readonly certificates = new Map<string, CertificateState>();
  readonly challenges = new Map<string, AcmeChallengeState>();
  readonly ipLists = new Map<number, IpListState>();
  node: EdgeNode | null = null;
  private readonly domainListeners = new Set<(name: string) => void>();
  private readonly domainSetListeners = new Set<(name: string, domain: DomainState | undefined) => void>();
  private readonly ipListListeners = new Set<(ownerId: number) => void>();

  /** `nodeId` undefined: every domain is served here (the all-in-one role). */
  constructor(nodeId?: number) {
    this.routes = new RoutingTable(nodeId);
  }

  /** Called with a domain's name after its settings changed or it left. */
  onDomainChange(listener: (name: string) => void): void {
    this.domainListeners.add(listener);
  }

  /** Called for every domain a batch names, new ones too: its settings as routed now (undefined: gone, or not routed). */
  onDomainSet(listener: (name: string, domain: DomainState | undefined) => void): void {
    this.domainSetListeners.add(listener);
  }

  /** Called with the owner of each IP list that changed, appeared or went. */
  onIpListChange(listener: (ownerId: number) => void): void {
    this.ipListListeners.add(listener);
  }

  /** Replaces everything (a snapshot). */
  replace(items: { domains: DomainState[]; certificates: CertificateState[]; challenges?: AcmeChallengeState[]; ipLists: IpListState[]; node?: EdgeNode | null }): void {
    const domains = new Map<string, DomainState | undefined>([...this.routes.names()].map((n) => [n, undefined]));
    for (const d of items.domains) domains.set(d.domain, d);
    const certificates = new Map<string, CertificateState | undefined>([...this.certificates.keys()].map((n) => [n, undefined]));
    for (const c of items.certificates) certificates.set(c.domain, c);
    const challenges = new Map<string, AcmeChallengeState | undefined>([...this.challenges.keys()].map((n) => [n, undefined]));
    for (const c of items.challenges ?? []) challenges.set(c.domain, c);
    const ipLists = new Map<number, IpListState | undefined>([...this.ipLists.keys()].map((id) => [id, undefined]));
    for (const l of items.ipLists) ipLists.set(l.id, l);
    this.apply({ domains, certificates, challenges, ipLists, node: items.node });
  }

  apply(batch: EdgeBatch): void {
    const changedDomains: string[] = [];
    for (const [name, domain] of batch.domains ?? []) {
      const before = this.routes.get(name);
      // A claim not proven yet (issue 26) is routed like no domain at all.
      if (domain && isProven(domain)) this.routes.put(domain);
      else this.routes.remove(name);
      if (before && (!domain || before.revision !== domain.revision)) changedDomains.push(name);
      // A domain that leaves takes its certificate and challenge with it.
      if (!domain) {
        this.certificates.delete(name);
        this.challenges.delete(name);
      }
    }
    // TLS contexts are keyed by fingerprint (tls/sni-contexts.ts): a new certificate needs no signal.
    for (const [name, cert] of batch.certificates ?? []) {
      if (cert) this.certificates.set(name, cert);
      else this.certificates.delete(name);
    }
    for (const [name, challenge] of batch.challenges ?? []) {
      if (challenge) this.challenges.set(name, challenge);
      else this.challenges.delete(name);
    }
    const changedOwners = new Set<number>();
    for (const [id, list] of batch.ipLists ?? []) {
      const before = this.ipLists.get(id);
      if (before) changedOwners.add(before.ownerId);
      if (list) {
        this.ipLists.set(id, list);
        changedOwners.add(list.ownerId);
      } else this.ipLists.delete(id);
    }
    if (batch.node !== undefined) this.node = batch.node;
    for (const name of changedDomains) for (const l of this.domainListeners) l(name);
    if (this.domainSetListeners.size > 0) for (const name of batch.domains?.keys() ?? []) for (const l of this.domainSetListeners) l(name, this.routes.get(name));
    for (const owner of changedOwners) for (const l of this.ipListListeners) l(owner);
  }

  /** The key authorization for an HTTP-01 token of the domain, while its challenge is in flight. */
  challengeAnswer(domain: string, token: string, now = Date.now()): string | undefined {
    const challenge = this.challenges.get(domain);
    if (!challenge || Date.parse(challenge.expires) < now) return undefined;
    return challenge.tokens.find((t) => t.token === token)?.keyAuthorization;
  }
}
