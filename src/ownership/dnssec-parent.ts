// The parent's DS as the DNSSEC states need it (issue 40): for each domain that signs (`dnssec`
// on) or is turning it off (`signing.unsigning`), the parent zone's DS set is looked at, as
// ownership looks at delegations (parent-ds.ts; PALISADE_DELEGATION_RESOLVER,
// PALISADE_DELEGATION_CHECK): when due, by the monitor's pass every few seconds, at most
// PALISADE_OWNERSHIP_CHECKS_PER_PASS looks per pass; and at once after the domain's `dnssec`
// changes. A domain turning off whose parent holds no DS any more, for as long as the last DS
// seen there lived (its TTL: resolvers may still hold it), ends its turning off: `unsigning` goes,
// and with it the keys from the name servers (they stop signing and publishing the delete signal).
//
// State beside the store's (documents, no revision: a look changes no serial):
//   dsseen NAME|OWNER  what was last seen (model/dnssec-parent.ts), the looks made, the next one
//   dsdue  DUE|NAME|OWNER  the next look (DUE: ms, 15 digits: a pass reads only what is due)
//
// Without a resolver nothing outside the store can be seen: a domain stays `signing` (its DS
// cannot be checked) or `unsigning` (its DS may still be at the parent) until the operator ends
// the turning off (`palisade admin domain dnssec-off NAME`), unless its parent zone is served
// here (then its DS records are read in the store, as ownership reads the parent's delegation).
import { Resolver } from 'node:dns/promises';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { nextSeen, unsignedFrom, type ParentDsSeen } from '../model/dnssec-parent.ts';
import { dnssecState } from '../model/dnssec-status.ts';
import { rolloverProgress, type RolloverWaits } from '../model/dnssec-rollover.ts';
import type { DomainState } from '../model/domain.ts';
import { isProven } from '../model/domain.ts';
import type { Store } from '../store/types.ts';
import { provenAncestor } from './evidence.ts';
import { parentDs, resolverDs, type ParentDsLookup } from './parent-ds.ts';
import { advanceZoneRollover, zoneRolloverWaits } from './dnssec-rollover.ts';
import type { DnssecParentCounts } from './dnssec-metrics.ts';

interface SeenDoc {
  seen?: ParentDsSeen;
  attempts: number;
  due?: string;
}

const DS_TYPE = 43;
const seenId = (name: string, owner: number) => `${name}|${owner}`;
const dueId = (dueMs: number, name: string, owner: number) => `${String(Math.floor(dueMs)).padStart(15, '0')}|${name}|${owner}`;
/** A domain in this state is watched; others have no documents. */
const watched = (domain: DomainState) => domain.dnssec === true || domain.signing?.unsigning === true;

export class DnssecParent {
  private readonly lookup: ParentDsLookup | undefined;
  readonly counts: DnssecParentCounts = { looks: 0, noAnswer: 0, unsigned: 0, rolled: 0 };

  constructor(
    private readonly store: Store,
    private readonly config: Config,
    private readonly log: Logger,
  ) {
    const server = config.notify.resolver;
    if (server) {
      const { delegationCheck, parentPort } = config.ownership;
      if (delegationCheck === 'resolver') this.lookup = resolverDs(server, 2000);
      else {
        const resolver = new Resolver({ timeout: 2000, tries: 2 });
        resolver.setServers([server]);
        this.lookup = parentDs(resolver, { port: parentPort, timeoutMs: 2000 });
      }
    }
  }

  /** Whether parents can be looked at through a resolver. */
  get canLook(): boolean {
    return this.lookup !== undefined;
  }

  /** Our side's waits in a rollover of the domain's key (its TTLs). */
  rolloverWaits(name: string, owner: number): Promise<RolloverWaits> {
    return zoneRolloverWaits(this.store, name, owner, this.config.ownership.resolverCacheMaxSeconds);
  }

  /** What was last seen of the domain's parent. */
  async seen(name: string, owner: number): Promise<ParentDsSeen | undefined> {
    return (await this.store.getDoc<SeenDoc>('dsseen', seenId(name, owner)))?.seen;
  }

  /** The domain's `dnssec` changed: look now (the looks' backoff starts again). */
  async changed(domain: DomainState): Promise<void> {
    const id = seenId(domain.domain, domain.ownerId);
    const doc = await this.store.getDoc<SeenDoc>('dsseen', id);
    if (doc) await this.store.putDoc('dsseen', id, { ...doc, attempts: 0 });
    await this.look(domain.domain, domain.ownerId);
  }

  /** The monitor's pass: the due looks, at most `checksPerPass`. */
  async lookDue(now = Date.now()): Promise<number> {
    const page = await this.store.listDocs<{ name: string; owner: number }>('dsdue', { limit: this.config.ownership.checksPerPass });
    let looked = 0;
    for (const { id, value } of page.items) {
      if (Number(id.slice(0, 15)) > now) break;
      await this.store.deleteDoc('dsdue', id);
      await this.look(value.name, value.owner).catch((error: unknown) => this.log.warn({ err: (error as Error).message, domain: value.name }, 'dnssec: the parent\'s DS could not be looked at'));
      looked++;
    }
    return looked;
  }

  /** One look at the parent's DS, what follows from it, and the next look. */
  async look(name: string, owner: number): Promise<void> {
    const id = seenId(name, owner);
    const head = await this.store.getZoneHead(name, owner);
    const doc = (await this.store.getDoc<SeenDoc>('dsseen', id)) ?? { attempts: 0 };
    if (doc.due) await this.store.deleteDoc('dsdue', doc.due);
    if (!head || !watched(head.domain)) {
      await this.store.deleteDoc('dsseen', id);
      return;
    }
    this.counts.looks++;
    const at = new Date().toISOString();
    const inStore = await this.fromStore(head.domain);
    let seen: ParentDsSeen;
    if (inStore) seen = nextSeen(doc.seen, inStore, at, 'store');
    else if (this.lookup) {
      const found = await this.lookup(name).catch(() => undefined);
      if (!found) this.counts.noAnswer++;
      seen = nextSeen(doc.seen, found, at, this.config.ownership.delegationCheck, found ? undefined : 'the parent zone gave no definite answer');
    } else seen = nextSeen(doc.seen, undefined, at, undefined, 'PALISADE_DELEGATION_RESOLVER is not set: the parent zone cannot be looked at');
    const before = dnssecState(name, head.domain, doc.seen);
    if (head.domain.signing?.unsigning && head.domain.dnssec !== true) {
      const from = unsignedFrom(seen);
      if (from !== undefined && Date.now() >= from) {
        await this.endUnsigning(name, owner, 'the parent holds no DS and the last one seen there has had its TTL');
        await this.store.deleteDoc('dsseen', id);
        return;
      }
    }
    const after = dnssecState(name, head.domain, seen);
    const attempts = before === after ? doc.attempts + 1 : 0;
    const { recheckMs, recheckMaxMs } = this.config.ownership;
    let delay = after === 'secure' ? recheckMaxMs : Math.min(recheckMs * 2 ** Math.min(attempts, 30), recheckMaxMs);
    // Turning off, the DS gone: the next look when its TTL is over.
    const from = after === 'unsigning' ? unsignedFrom(seen) : undefined;
    if (from !== undefined) delay = Math.max(Math.min(delay, from - Date.now()), 0);
    if (after === 'rolling_over') delay = await this.rolloverStep(head.domain, seen);
    const due = dueId(Date.now() + delay, name, owner);
    await this.store.putDoc('dsdue', due, { name, owner });
    await this.store.putDoc('dsseen', id, { seen, attempts, due } satisfies SeenDoc);
  }

  /**
   * Ends a domain's turning off: `unsigning` goes (its name servers stop signing and get no keys).
   * The monitor's, once the parent's DS is gone; the operator's (`admin domain dnssec-off`) when
   * the parent cannot be looked at. Resolves to whether the domain was turning off.
   */
  async endUnsigning(name: string, owner: number, reason: string): Promise<boolean> {
    let ended = false;
    await this.store.updateZone(name, owner, (h) => {
      const signing = h.domain.signing;
      ended = h.domain.dnssec !== true && signing?.unsigning === true;
      if (!ended) return undefined;
      const { unsigning: _done, ...kept } = signing!;
      return { domain: { ...h.domain, signing: kept } };
    });
    if (ended) {
      this.counts.unsigned++;
      this.log.info({ domain: name, reason }, 'dnssec: turned off (answers no longer signed)');
    }
    return ended;
  }

  /**
   * A key rollover's look: the phase ends once its waits are over (our TTLs since the phase began,
   * the parent's DS as the phase needs it for its TTL); never on a look without a definite answer.
   * Resolves to the wait until the next look: the first recheck, or sooner when only time is left.
   */
  private async rolloverStep(domain: DomainState, seen: ParentDsSeen): Promise<number> {
    const { recheckMs, resolverCacheMaxSeconds } = this.config.ownership;
    const waits = await zoneRolloverWaits(this.store, domain.domain, domain.ownerId, resolverCacheMaxSeconds);
    const progress = rolloverProgress(domain.domain, domain.signing, seen, Date.now(), waits);
    if (!progress) return recheckMs;
    if (progress.waiting.length > 0) return progress.parentReady ? Math.max(Math.min(recheckMs, progress.timeReadyAt - Date.now()), 0) : recheckMs;
    const ended = await advanceZoneRollover(this.store, domain.domain, domain.ownerId, progress.phase);
    if (ended) {
      this.counts.rolled++;
      this.log.info({ domain: domain.domain, phase: ended }, ended === 'publish' ? 'dnssec: rollover: the new key signs, the old one retires' : 'dnssec: rollover: the old key is removed');
    }
    return 0;
  }

  /** The DS records of the domain in its parent zone, when that zone is a proven domain served here. */
  private async fromStore(domain: DomainState): Promise<{ ds: string[]; ttl: number } | undefined> {
    const parent = await provenAncestor(this.store, domain.domain);
    if (!parent?.domain.ns_active || !isProven(parent.domain)) return undefined;
    const zone = parent.domain.domain;
    const relative = domain.domain.slice(0, domain.domain.length - zone.length - 1);
    const ds = (await this.store.getRecordsAt(zone, relative)).filter((r) => r.type === DS_TYPE);
    return { ds: ds.map((r) => r.value), ttl: Math.max(0, ...ds.map((r) => r.ttl ?? 3600)) };
  }
}
