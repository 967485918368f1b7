// Keeps each domain's health document (health-rules.ts) from the nodes' verdicts, and acts on
// its changes: the customer's events, the DNS-only failover switch (written into the domain, so
// both name servers follow through the change feed), and the index of domains to look at again
// (not up, or flapping: a node falling silent or a flap settling changes them without a report).
//
// Store documents: `health` DOMAIN (the document), `health` node|N (when node N last reported),
// `notice` watch|DOMAIN (the look-again index).
import type { Logger } from 'pino';
import type { DomainState } from '../model/domain.ts';
import type { Store } from '../store/types.ts';
import type { EventSink } from '../model/event.ts';
import { failoverWanted, healthEvents, NODE_SILENT_MS, settle, withVerdict, type HealthDoc } from './health-rules.ts';
import type { DomainHealth } from './report.ts';
import { byLabel, family, single, type MetricsSnapshot } from '../common/metrics/family.ts';

const LOOKS = family({ name: 'palisade_uptime_looks_total', type: 'counter', help: 'Domains not up (or flapping) looked at again without a report.' });
const STORE_WRITES = family({ name: 'palisade_uptime_store_writes_total', type: 'counter', help: "Store writes of the health tracker, by what they keep: a domain's health document, the look-again index, a domain's DNS failover switch, a node's heartbeat.", labels: ['doc'] });

/** A node's heartbeat is written at most this often (its reports may come every second). */
const HEARTBEAT_WRITE_MS = 30_000;

export class HealthTracker {
  /** The last verdict stored per domain and node, so that a report changing nothing writes nothing. */
  private readonly known = new Map<string, Map<number, DomainHealth>>();
  private readonly heardAt = new Map<number, number>();
  private readonly heartbeatWritten = new Map<number, number>();
  /**
   * Store writes by what they keep — `health` a domain's document, `watch` the look-again index,
   * `failover` a domain's switch (a change in the feed), `heartbeat` a node's — and the looks
   * made again: a round that changes nothing should write nothing.
   */
  readonly counts = { looks: 0, writes: { health: 0, watch: 0, failover: 0, heartbeat: 0 } };

  constructor(
    private readonly store: Store,
    private readonly events: EventSink,
    private readonly log: Logger,
  ) {}

  isKnown(domain: string, node: number, state: DomainHealth): boolean {
    return this.known.get(domain)?.get(node) === state;
  }

  /** A node reported (its heartbeat, shared through the store with other API processes). */
  async heard(node: number, now = Date.now()): Promise<void> {
    this.heardAt.set(node, now);
    if (now - (this.heartbeatWritten.get(node) ?? 0) < HEARTBEAT_WRITE_MS) return;
    this.heartbeatWritten.set(node, now);
    this.counts.writes.heartbeat++;
    await this.store.putDoc('health', `node|${node}`, { at: now });
  }

  /** Reads the nodes' heartbeats (other API processes take other nodes' reports). */
  async refreshHeartbeats(): Promise<void> {
    const page = await this.store.listDocs<{ at: number }>('health', { limit: 10_000 }, 'node|');
    for (const { id, value } of page.items) {
      const node = Number(id.slice(5));
      if (value.at > (this.heardAt.get(node) ?? 0)) this.heardAt.set(node, value.at);
    }
  }

  private readonly live = (node: number, now = Date.now()) => now - (this.heardAt.get(node) ?? 0) < NODE_SILENT_MS;

  async verdict(domain: string, node: number, state: DomainHealth): Promise<void> {
    // Most verdicts this process has not seen yet are what the store holds (after a restart, or
    // another API process took the node's earlier reports): a read, no write.
    const stored = await this.store.getDoc<HealthDoc>('health', domain);
    if (stored?.nodes[node]?.state === state) {
      this.remember(domain, node, state);
      return;
    }
    const head = await this.store.getZoneHead(domain);
    if (!head) return;
    const owner = head.domain.ownerId;
    const now = Date.now();
    this.counts.writes.health++;
    const change = await this.store.updateDoc<HealthDoc>('health', domain, (doc) => withVerdict(doc && doc.owner === owner ? doc : undefined, { domain, owner }, node, state, now, this.live));
    this.remember(domain, node, state);
    if (change.after && change.after !== change.before) await this.changed(change.before?.owner === owner ? change.before : undefined, change.after);
  }

  /**
   * Looks at a domain again without a new verdict (nodes fallen silent, a flap that settled, a
   * failover switch the store could not take before).
   */
  async resettle(domain: string): Promise<void> {
    this.counts.looks++;
    const now = Date.now();
    // Most looks change nothing (the nodes still say what they said): a read tells, and only a
    // change is written — in one atomic step that decides again on what the store holds then.
    const stored = await this.store.getDoc<HealthDoc>('health', domain);
    if (!stored) return this.unwatch(domain);
    if (settle(stored, now, this.live) === undefined) return this.switchStill(stored);
    this.counts.writes.health++;
    const change = await this.store.updateDoc<HealthDoc>('health', domain, (doc) => (doc ? settle(doc, now, this.live) : undefined));
    const doc = change.after;
    if (!doc) return this.unwatch(domain);
    if (doc !== change.before) return this.changed(change.before, doc);
    return this.switchStill(doc);
  }

  /** An unchanged domain: its failover switch made if still owed (the store refused it before); no longer watched once up and switched. */
  private async switchStill(doc: HealthDoc): Promise<void> {
    if ((await this.switchFailover(doc)) && doc.state === 'up' && !doc.flapping) await this.unwatch(doc.domain);
  }

  /** Domains to look at again. */
  async watched(): Promise<string[]> {
    const page = await this.store.listDocs<number>('notice', { limit: 10_000 }, 'watch|');
    return page.items.map((i) => i.id.slice(6));
  }

  /** Forgets a removed domain's health. */
  async forget(domain: string): Promise<void> {
    await this.store.deleteDoc('health', domain);
    await this.store.deleteDoc('notice', `watch|${domain}`);
    this.known.delete(domain);
  }

  private async watch(domain: string): Promise<void> {
    this.counts.writes.watch++;
    await this.store.putDoc('notice', `watch|${domain}`, 1);
  }

  private async unwatch(domain: string): Promise<void> {
    this.counts.writes.watch++;
    await this.store.deleteDoc('notice', `watch|${domain}`);
  }

  private remember(domain: string, node: number, state: DomainHealth): void {
    const nodes = this.known.get(domain);
    if (nodes) nodes.set(node, state);
    else this.known.set(domain, new Map([[node, state]]));
  }

  private async changed(before: HealthDoc | undefined, after: HealthDoc): Promise<void> {
    // Switched (or nothing to switch) and up: nothing to look at again; otherwise the periodic look does.
    const switched = (before?.state === after.state && before.flapping === after.flapping) || (await this.switchFailover(after));
    if (after.state !== 'up' || after.flapping || !switched) await this.watch(after.domain);
    else if (before && (before.state !== 'up' || before.flapping)) await this.unwatch(after.domain);
    const nodes = Object.fromEntries(Object.entries(after.nodes).map(([n, v]) => [n, v.state]));
    for (const type of healthEvents(before, after)) {
      await this.events.emit(after.owner, type, after.domain, { state: after.state, since: new Date(after.since).toISOString(), nodes });
    }
  }

  /**
   * DNS only with a failover: the name servers answer the failover while the backend is down.
   * False when the domain could not be switched (the store refused the write): looked at again.
   */
  private async switchFailover(doc: HealthDoc): Promise<boolean> {
    // Also cleared when the domain no longer qualifies (protection turned on, failover removed),
    // so that a failover added again later does not start switched on.
    const wanted = (domain: DomainState) => failoverWanted(doc) && !domain.enabled && domain.failover !== null;
    const want = failoverWanted(doc);
    try {
      const head = await this.store.getZoneHead(doc.domain);
      if (!head || head.domain.ownerId !== doc.owner) return true;
      if ((head.domain.failover_active ?? false) === wanted(head.domain)) return true;
      this.counts.writes.failover++;
      await this.store.updateZone(doc.domain, doc.owner, (zone) => {
        const next = wanted(zone.domain);
        return (zone.domain.failover_active ?? false) === next ? undefined : { domain: { ...zone.domain, failover_active: next } };
      });
      this.log.info({ domain: doc.domain, failover: want }, want ? 'dns failover engaged' : 'dns failover released');
      return true;
    } catch (error) {
      this.log.warn({ err: (error as Error).message, domain: doc.domain, failover: want }, 'dns failover could not be switched; trying again shortly');
      return false;
    }
  }

  metrics(): MetricsSnapshot {
    const { looks, writes } = this.counts;
    return [single(LOOKS, looks), byLabel(STORE_WRITES, Object.entries(writes))];
  }
}
