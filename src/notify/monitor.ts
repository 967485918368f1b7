// The notification work that no report brings, in the process holding the "notifications" lease:
// - every few seconds, the domains that are not up (or flap) are looked at again: a node may
//   have fallen silent, a flap may have settled (health-tracker.ts);
// - every `sweepMs`, every domain is looked at for the conditions a customer is told of
//   (conditions.ts): served by no active node, name servers active but the parent not
//   delegating to ours (asked of the configured resolver), its certificate near its end.
//   A condition is told when it begins and (but expiry) when it ends; its state is kept in the
//   store (`notice` cond|KIND|DOMAIN), so that a restart or another process does not tell it again.
// The sweep reads the domains in pages and yields between them: its cost grows with the
// domains, spread over the interval, never holding the event loop.
import { Resolver } from 'node:dns/promises';
import type { Logger } from 'pino';
import { isProven, type DomainState } from '../model/domain.ts';
import type { EdgeNode } from '../model/node.ts';
import type { Store } from '../store/types.ts';
import type { HealthTracker } from '../uptime/health-tracker.ts';
import { CONDITION_EVENTS, delegatesToUs, isExpiring, isUnserved, type ConditionKind } from './conditions.ts';
import type { EventBook } from './event-book.ts';
import type { Ownership } from '../ownership/ownership.ts';
import type { DnssecParent } from '../ownership/dnssec-parent.ts';

const PAGE = 200;
const DNS_CONCURRENCY = 8;

export interface MonitorOptions {
  store: Store;
  events: EventBook;
  tracker: HealthTracker;
  log: Logger;
  /** Whether this process holds the notifications lease. */
  leader: () => boolean;
  sweepMs: number;
  /** How often the short pass runs (unhealthy domains, claims and DNSSEC parents due); 5 s unless set. */
  watchMs?: number;
  /** The resolver (address:port) asked for the domains' NS sets; unset: delegation is not checked. */
  resolver?: string;
  nameservers: readonly [string, string];
  expiringMs: number;
  /** Claims (issue 26): pending ones looked at when due (a bounded number each pass), proven ones for their evidence as the sweep meets them. */
  ownership?: Ownership;
  /** DNSSEC (issue 40): the parent's DS looked at for signing domains and those turning off, when due (a bounded number each pass). */
  dnssecParent?: DnssecParent;
}

export class Monitor {
  private watchTimer: NodeJS.Timeout | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  private watching: Promise<void> | undefined;
  private sweeping: Promise<void> | undefined;
  private readonly resolver: Resolver | undefined;
  private stopped = false;
  readonly counts = { sweeps: 0, domains: 0 };

  constructor(private readonly options: MonitorOptions) {
    if (options.resolver) {
      this.resolver = new Resolver({ timeout: 2000, tries: 2 });
      this.resolver.setServers([options.resolver]);
    }
  }

  start(): void {
    this.watchTimer = setInterval(() => void this.watchOnce(), this.options.watchMs ?? 5000);
    this.watchTimer.unref();
    this.sweepTimer = setInterval(() => void this.sweepOnce(), this.options.sweepMs);
    this.sweepTimer.unref();
  }

  watchOnce(): Promise<void> {
    if (!this.options.leader() || this.stopped) return Promise.resolve();
    this.watching ??= this.watch()
      .catch((error: unknown) => this.options.log.warn({ err: (error as Error).message }, 'notify: looking at unhealthy domains failed'))
      .finally(() => (this.watching = undefined));
    return this.watching;
  }

  sweepOnce(): Promise<void> {
    if (!this.options.leader() || this.stopped) return Promise.resolve();
    this.sweeping ??= this.sweep()
      .catch((error: unknown) => this.options.log.warn({ err: (error as Error).message }, 'notify: the sweep of domains failed'))
      .finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  private async watch(): Promise<void> {
    const { tracker, ownership } = this.options;
    await tracker.refreshHeartbeats();
    for (const domain of await tracker.watched()) await tracker.resettle(domain);
    if (ownership?.required) await ownership.checkDue();
    await this.options.dnssecParent?.lookDue();
  }

  private async sweep(): Promise<void> {
    const { store } = this.options;
    const nodes = await store.listNodes();
    let cursor: string | undefined;
    do {
      const page = await store.listAllZones({ limit: PAGE, cursor });
      const domains = page.items.map((h) => h.domain);
      let next = 0;
      const worker = async () => {
        while (next < domains.length && !this.stopped) await this.look(domains[next++]!, nodes);
      };
      await Promise.all(Array.from({ length: DNS_CONCURRENCY }, worker));
      this.counts.domains += domains.length;
      cursor = page.next;
      await new Promise<void>((resolve) => setImmediate(resolve));
    } while (cursor && !this.stopped);
    this.counts.sweeps++;
  }

  private async look(domain: DomainState, nodes: readonly EdgeNode[]): Promise<void> {
    const { store, expiringMs, ownership } = this.options;
    if (!isProven(domain)) {
      // A pending claim is served by nothing yet: none of these conditions applies to it.
      for (const kind of ['unserved', 'delegation', 'expiring'] as const) await this.condition(domain, kind, false, {}, '1', true);
      return;
    }
    await ownership?.recheckProven(domain).catch((error: unknown) => this.options.log.warn({ err: (error as Error).message, domain: domain.domain }, 'ownership: a proven domain could not be looked at'));
    await this.condition(domain, 'unserved', isUnserved(domain, nodes), {});
    const expected = domain.claim?.nameservers ?? this.options.nameservers;
    if (domain.ns_active && this.resolver) {
      const seen = await this.resolver.resolveNs(domain.domain).catch((error: NodeJS.ErrnoException) => (error.code === 'ENOTFOUND' || error.code === 'ENODATA' ? [] : undefined));
      // No answer at all (timeout, SERVFAIL) says nothing either way: the state stays.
      if (seen) await this.condition(domain, 'delegation', !delegatesToUs(seen, expected), { seen, expected: [...expected] });
    } else await this.condition(domain, 'delegation', false, {}, '1', true);
    if (domain.ssl) {
      const cert = await store.getCertificate(domain.domain);
      // Told once per certificate: the notice remembers which one.
      if (cert && isExpiring(cert.notAfter, Date.now(), expiringMs)) await this.condition(domain, 'expiring', true, { not_after: cert.notAfter, fingerprint: cert.fingerprint }, cert.fingerprint);
      else await this.condition(domain, 'expiring', false, {});
    } else await this.condition(domain, 'expiring', false, {}, '1', true);
  }

  /**
   * Tells the start or end of a condition once; `which` tells apart instances of a condition (a
   * certificate); `quiet` ends it without telling (the question no longer applies).
   */
  private async condition(domain: DomainState, kind: ConditionKind, holds: boolean, data: Record<string, unknown>, which = '1', quiet = false): Promise<void> {
    const { store, events } = this.options;
    const id = `cond|${kind}|${domain.domain}`;
    const current = await store.getDoc<{ owner: number; which: string }>('notice', id);
    // A notice of an earlier owner of the name is not this customer's.
    const told = current && current.owner === domain.ownerId ? current.which : undefined;
    if (holds && told !== which) {
      await store.putDoc('notice', id, { owner: domain.ownerId, which });
      await events.emit(domain.ownerId, CONDITION_EVENTS[kind].start, domain.domain, data);
    } else if (!holds && current) {
      await store.deleteDoc('notice', id);
      const end = CONDITION_EVENTS[kind].end;
      if (told !== undefined && end && !quiet) await events.emit(domain.ownerId, end, domain.domain, data);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.watchTimer);
    clearInterval(this.sweepTimer);
    await this.watching;
    await this.sweeping;
  }
}
