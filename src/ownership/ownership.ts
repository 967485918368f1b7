// Claims and their proof (issue 26). Creating a domain makes a claim; with
// PALISADE_OWNERSHIP_PROOF=required (the default) it is served, routed and certified only once
// proven, by either
//   - the parent zone delegating the name to the claim's name-server pair, or
//   - a TXT record `_palisade-verify.<name>` holding the claim's token,
// both seen through PALISADE_DELEGATION_RESOLVER — or, for a name under another account's
// proven zone served here, read in that zone itself (only its owner can add them: never first
// come). A name under the owner's own proven zone is proven at once.
// On proof, every other account's pending claim at or under the name is released (removed) and
// told; a proven claim whose evidence is seen gone for `graceMs` loses its proof.
// Issue 37: a delegation proves a pending claim only when no other account's claim of the name
// would be proven by it too. Claims of one name given the same pair (a pool of one pair gives
// every claim the same) become token-only for good, from the moment the second is made, and
// their owners are told (domain.claim_shared): otherwise a squatter's earlier claim is proven
// by the very delegation the owner makes as told.
//
// State beside the store's (documents, no revision, so checks cost consumers nothing):
//   claimseen NAME|OWNER  what was last seen, the pending checks made, when evidence went
//   claimdue  DUE|NAME|OWNER  the next check of a pending claim (DUE: ms, 15 digits, so the
//             listing is in due order and a pass reads only what is due)
//   nshist    NAME        the pairs the name was proven with, by account (a later claim of another
//             account is given another pair: an old delegation proves nothing for it)
import { randomBytes } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { isProven, type ClaimState, type DomainState, type VerificationSeen } from '../model/domain.ts';
import type { UserState } from '../model/user.ts';
import type { EventSink } from '../model/event.ts';
import type { Store, ZoneHead } from '../store/types.ts';
import { parentDelegation, resolverDelegation, type DelegationLookup } from './delegation.ts';
import { claimInstructions, type Evidence } from './instructions.ts';
import { accountPair, pairForClaim, poolSeparatesClaims, samePair, type Pair } from './pairs.ts';
import { StoreError } from '../store/errors.ts';
import { SHARED_NOTE, TOKEN_NAME, lookAtEvidence, provenAncestor, type EvidenceSources } from './evidence.ts';

export { TOKEN_NAME } from './evidence.ts';

interface SeenDoc {
  seen?: VerificationSeen;
  /** Pending checks made since the claim was made or lost its proof (the backoff's exponent). */
  attempts: number;
  /** The claimdue id of the next check. */
  due?: string;
  /** Proven: since when its evidence is seen gone (definitely: NXDOMAIN, NODATA, another NS set). */
  missingSince?: string;
}

interface History {
  entries: Array<{ owner: number; pair: string[]; at: string }>;
}

export interface VerificationJson {
  state: 'pending' | 'verified';
  token: string | null;
  method: string | null;
  verified_at: string | null;
  seen: VerificationSeen | null;
  next_check: string | null;
  accepts: Evidence[];
  instructions: string | null;
}

/** A delegation was seen, but another account's claim of the name was found sharing the pair as the proof was about to be made. */
class DelegationShared extends Error {}


export interface OwnershipHooks {
  /** A claim was proven (certificates may now be ordered). */
  proven?(domain: DomainState): Promise<void>;
  /** A claim was removed by a release; `held`: it held the name (its measures and notices go). */
  released?(domain: DomainState, held: boolean): Promise<void>;
}

const seenId = (name: string, owner: number) => `${name}|${owner}`;
const dueId = (dueMs: number, name: string, owner: number) => `${String(Math.floor(dueMs)).padStart(15, '0')}|${name}|${owner}`;

export class Ownership {
  private readonly resolver: Resolver | undefined;
  private readonly delegation: DelegationLookup | undefined;
  readonly counts = { checks: 0, proven: 0, released: 0, lost: 0, shared: 0 };

  constructor(
    private readonly store: Store,
    private readonly config: Config,
    private readonly log: Logger,
    private readonly events?: EventSink,
    private readonly hooks: OwnershipHooks = {},
  ) {
    const server = config.notify.resolver;
    if (server) {
      this.resolver = new Resolver({ timeout: 2000, tries: 2 });
      this.resolver.setServers([server]);
      const { delegationCheck, parentPort } = config.ownership;
      this.delegation = delegationCheck === 'resolver' ? resolverDelegation(this.resolver) : parentDelegation(this.resolver, { port: parentPort, timeoutMs: 2000 });
    }
  }

  get required(): boolean {
    return this.config.ownership.proof === 'required';
  }

  /** Every name the service's name servers answer as (the pool and the default pair). */
  /** What a look at a claim's evidence reads through. */
  private evidence(): EvidenceSources {
    return { store: this.store, config: this.config, resolver: this.resolver, delegation: this.delegation };
  }

  /** The account's pair: kept once its first claim is made (keepAccountPair), until then what the pool gives it. */
  accountPair(user: UserState): Pair {
    return user.nameservers ?? accountPair(user.id, this.config.ownership.pool);
  }

  /** Keeps the account's pair, so that a pool grown later does not change it. */
  async keepAccountPair(user: UserState): Promise<void> {
    if (!user.nameservers) await this.store.updateUser(user.id, { nameservers: this.accountPair(user) });
  }

  /** The claim a new domain of `user` starts with. */
  async newClaim(user: UserState, name: string): Promise<ClaimState> {
    const own = this.accountPair(user);
    const history = await this.store.getDoc<History>('nshist', name);
    const others = (await this.store.listClaims(name)).filter((h) => h.domain.ownerId !== user.id);
    const used = [...(history?.entries ?? []).filter((e) => e.owner !== user.id).map((e) => e.pair), ...others.map((h) => h.domain.claim?.nameservers ?? this.config.nameservers)];
    const pair = pairForClaim(own, this.config.ownership.pool, used);
    const claim: ClaimState = { verified: false, token: `palisade-verify=${randomBytes(16).toString('hex')}`, nameservers: pair ?? own, ...(pair === undefined && { noDelegation: true }) };
    const now = new Date().toISOString();
    return this.required ? claim : { ...claim, verified: true, method: 'unchecked', at: now };
  }

  /**
   * After a domain was created: a proven one is remembered; a pending one under the owner's own
   * proven zone is proven now (another account's pending claim of the name gives way), any other
   * is looked at soon. Resolves to the domain as it is then.
   */
  async created(head: ZoneHead): Promise<ZoneHead> {
    const { domain } = head;
    if (isProven(domain)) {
      await this.remember(domain);
      return head;
    }
    if ((await provenAncestor(this.store, domain.domain))?.domain.ownerId === domain.ownerId) return (await this.check(domain.domain, domain.ownerId)) ?? head;
    await this.schedule(domain.domain, domain.ownerId, { attempts: 0 });
    // Another account's claim of the name with the same pair: both become token-only now.
    if (await this.separate(domain.domain, domain.ownerId)) return (await this.store.getZoneHead(domain.domain, domain.ownerId)) ?? head;
    return head;
  }

  /**
   * Every pending claim of the name whose pair another account's claim of it has too becomes
   * token-only (noDelegation, shared), for good, and its owner is told (domain.claim_shared):
   * a delegation to that pair could not say whose it is. Proven claims keep their proof (no
   * claim beside them can be proven while they are). Resolves to whether `owner`'s claim changed.
   */
  private async separate(name: string, owner?: number): Promise<boolean> {
    const claims = await this.store.listClaims(name);
    const pairOf = (d: DomainState) => d.claim?.nameservers ?? this.config.nameservers;
    let mine = false;
    for (const { domain } of claims) {
      const claim = domain.claim;
      if (!claim || claim.verified || claim.shared) continue;
      if (!claims.some((other) => other.domain.ownerId !== domain.ownerId && samePair(pairOf(other.domain), claim.nameservers))) continue;
      let switched = false;
      await this.store
        .updateZone(name, domain.ownerId, (h) => {
          const current = h.domain.claim;
          switched = current !== undefined && !current.verified && !current.shared;
          return switched ? { domain: { ...h.domain, claim: { ...current!, noDelegation: true, shared: true } } } : undefined;
        })
        .catch((error: unknown) => {
          switched = false;
          this.log.warn({ err: (error as Error).message, domain: name, owner: domain.ownerId }, 'ownership: a claim sharing its pair could not be made token-only (a delegation still cannot prove it)');
        });
      if (!switched) continue;
      this.counts.shared++;
      if (domain.ownerId === owner) mine = true;
      const facts = { ...claim, noDelegation: true, shared: true };
      await this.tell(domain.ownerId, 'domain.claim_shared', name, {
        nameservers: [...claim.nameservers],
        accepts: ['txt'],
        reason: SHARED_NOTE,
        instructions: this.instructions(name, facts),
      });
    }
    return mine;
  }

  /** What proves the claim while pending (a proven one keeps its proof by either). */
  private accepts(claim: ClaimState): Evidence[] {
    return claim.verified || !claim.noDelegation ? ['delegation', 'txt'] : ['txt'];
  }

  private instructions(name: string, claim: ClaimState): string {
    return claimInstructions({
      name,
      tokenAt: `${TOKEN_NAME}.${name}`,
      nameservers: claim.nameservers,
      token: claim.token,
      accepts: this.accepts(claim),
      shared: claim.shared === true,
      onePairPool: !poolSeparatesClaims(this.config.ownership.pool),
    });
  }

  /** Before (or after) a domain goes: a proven one's pair is remembered for the name; its documents go. */
  async forget(domain: DomainState): Promise<void> {
    if (isProven(domain)) await this.remember(domain);
    const id = seenId(domain.domain, domain.ownerId);
    const doc = await this.store.getDoc<SeenDoc>('claimseen', id);
    if (doc?.due) await this.store.deleteDoc('claimdue', doc.due);
    await this.store.deleteDoc('claimseen', id);
  }

  /** The domain's `verification` as the API shows it. */
  async verification(domain: DomainState): Promise<VerificationJson> {
    const claim = domain.claim;
    if (!claim) return { state: 'verified', token: null, method: 'migrated', verified_at: null, seen: null, next_check: null, accepts: ['delegation', 'txt'], instructions: null };
    const doc = await this.store.getDoc<SeenDoc>('claimseen', seenId(domain.domain, domain.ownerId));
    const due = !claim.verified && doc?.due ? Number(doc.due.slice(0, 15)) : undefined;
    return {
      state: claim.verified ? 'verified' : 'pending',
      token: claim.token,
      method: claim.verified ? (claim.method ?? null) : null,
      verified_at: claim.verified ? (claim.at ?? null) : null,
      seen: doc?.seen ?? null,
      next_check: due === undefined ? null : new Date(due).toISOString(),
      accepts: this.accepts(claim),
      instructions: claim.verified ? null : this.instructions(domain.domain, claim),
    };
  }

  /**
   * Looks at the owner's claim now and proves it when the evidence is there (releasing the
   * claims it displaces). Undefined when the owner has no claim of the name.
   */
  async check(name: string, ownerId: number): Promise<ZoneHead | undefined> {
    const head = await this.store.getZoneHead(name, ownerId);
    const id = seenId(name, ownerId);
    if (!head) {
      const doc = await this.store.getDoc<SeenDoc>('claimseen', id);
      if (doc?.due) await this.store.deleteDoc('claimdue', doc.due);
      if (doc) await this.store.deleteDoc('claimseen', id);
      return undefined;
    }
    const claim = head.domain.claim;
    if (!claim) return head;
    this.counts.checks++;
    const look = await lookAtEvidence(head.domain, this.evidence());
    // Read after the look: a look begun before another one that is already recorded (the
    // monitor's and a request's at once) is stale, and must not replace what was seen since (nor
    // act on it: the later look did).
    const doc = (await this.store.getDoc<SeenDoc>('claimseen', id)) ?? { attempts: 0 };
    if (doc.seen && doc.seen.at > look.seen.at) return (await this.store.getZoneHead(name, ownerId)) ?? head;
    doc.seen = look.seen;
    if (claim.verified) {
      if (look.method) doc.missingSince = undefined;
      await this.recordSeen(name, ownerId, () => doc);
      return head;
    }
    if (!this.required || look.method) {
      const method = look.method ?? 'unchecked';
      try {
        const proven = await this.store.proveClaim(name, ownerId, (h) => {
          // Made token-only since the look (another account's claim of the name with the same pair).
          if (method === 'delegation' && h.domain.claim?.noDelegation) throw new DelegationShared();
          return { ...h.domain, claim: { ...h.domain.claim!, verified: true, method, at: new Date().toISOString() } };
        });
        await this.afterProof(proven.head, proven.released, doc);
        return proven.head;
      } catch (error) {
        if (error instanceof DelegationShared) doc.seen = { ...look.seen, delegation: false, note: SHARED_NOTE };
        else if (error instanceof StoreError && error.code === 'CONFLICT') doc.seen = { ...look.seen, note: `${look.seen.note ? `${look.seen.note}; ` : ''}another account holds ${name}, proven: its proof must lapse first` };
        else throw error;
      }
    }
    await this.schedule(name, ownerId, doc);
    return head;
  }

  /** The operator's word for a claim (a dispute settled outside): proven at once, as any proof. */
  async proveByOperator(name: string, ownerId: number): Promise<ZoneHead> {
    const doc = (await this.store.getDoc<SeenDoc>('claimseen', seenId(name, ownerId))) ?? { attempts: 0 };
    const proven = await this.store.proveClaim(name, ownerId, (h) => ({ ...h.domain, claim: { ...(h.domain.claim ?? { token: '', nameservers: this.config.nameservers }), verified: true, method: 'operator', at: new Date().toISOString() } }));
    await this.afterProof(proven.head, proven.released, doc);
    return proven.head;
  }

  /** The monitor's pass over pending claims: the due ones, at most `checksPerPass`. */
  async checkDue(now = Date.now()): Promise<number> {
    const page = await this.store.listDocs<{ name: string; owner: number }>('claimdue', { limit: this.config.ownership.checksPerPass });
    let checked = 0;
    for (const { id, value } of page.items) {
      if (Number(id.slice(0, 15)) > now) break;
      await this.store.deleteDoc('claimdue', id);
      await this.check(value.name, value.owner).catch((error: unknown) => this.log.warn({ err: (error as Error).message, domain: value.name, owner: value.owner }, 'ownership: a pending claim could not be looked at'));
      checked++;
    }
    return checked;
  }

  /**
   * The monitor's look at a proven domain (as it sweeps every domain): evidence seen gone for
   * `graceMs` takes the proof away. Proofs by delegation or token only: a domain proven under
   * its owner's own zone, by the operator, unchecked or registered before claims, keeps it.
   */
  async recheckProven(domain: DomainState, now = Date.now()): Promise<void> {
    const claim = domain.claim;
    if (!this.required || !claim?.verified || (claim.method !== 'delegation' && claim.method !== 'token')) return;
    const id = seenId(domain.domain, domain.ownerId);
    const doc = (await this.store.getDoc<SeenDoc>('claimseen', id)) ?? { attempts: 0 };
    const every = Math.min(this.config.ownership.graceMs / 4, 3600_000);
    if (doc.seen && now - Date.parse(doc.seen.at) < every) return;
    this.counts.checks++;
    const look = await lookAtEvidence(domain, this.evidence());
    doc.seen = look.seen;
    if (look.method) doc.missingSince = undefined;
    else if (!look.unknown) doc.missingSince ??= new Date(now).toISOString();
    if (doc.missingSince && now - Date.parse(doc.missingSince) >= this.config.ownership.graceMs) {
      const lost = await this.store
        .updateZone(domain.domain, domain.ownerId, (h) =>
          h.domain.claim?.verified ? { domain: { ...h.domain, claim: { ...h.domain.claim, verified: false, method: undefined, at: undefined } } } : undefined,
        )
        .catch(() => undefined);
      if (lost && !isProven(lost.domain)) {
        this.counts.lost++;
        const missingSince = doc.missingSince;
        await this.schedule(domain.domain, domain.ownerId, { seen: doc.seen, attempts: 0 });
        await this.tell(domain.ownerId, 'domain.verification_lost', domain.domain, { seen: doc.seen, missing_since: missingSince, nameservers: claim.nameservers });
        // Pending again beside other accounts' claims with its pair: token-only like theirs.
        await this.separate(domain.domain);
        return;
      }
    }
    await this.store.putDoc('claimseen', id, doc);
  }

  /**
   * Removes a claim (the operator's `admin domain release`, or a proof that displaces it: then
   * `pendingOnly`, a claim proven meanwhile stays, and so does one made after the proof,
   * `madeBefore`: it is judged by the proven zone, not displaced by it) and tells its owner.
   */
  async release(name: string, ownerId: number, data: Record<string, unknown>, pendingOnly = false, madeBefore?: string): Promise<ZoneHead | undefined> {
    const head = await this.store.getZoneHead(name, ownerId);
    if (!head || (pendingOnly && isProven(head.domain)) || (madeBefore !== undefined && head.domain.created > madeBefore)) return undefined;
    const held = (await this.store.getZoneHead(name))?.domain.ownerId === ownerId;
    if (!(await this.store.deleteZone(name, ownerId))) return undefined;
    await this.afterRelease(head.domain, held, data);
    return head;
  }

  private async afterRelease(domain: DomainState, held: boolean, data: Record<string, unknown>): Promise<void> {
    this.counts.released++;
    await this.forget(domain);
    await this.hooks.released?.(domain, held).catch((error: unknown) => this.log.warn({ err: (error as Error).message, domain: domain.domain }, 'ownership: cleaning up after a release failed'));
    await this.tell(domain.ownerId, 'domain.claim_released', domain.domain, data);
  }

  private async afterProof(head: ZoneHead, displaced: ZoneHead | undefined, doc: SeenDoc): Promise<void> {
    const { domain } = head;
    this.counts.proven++;
    if (doc.due) await this.store.deleteDoc('claimdue', doc.due);
    await this.store.putDoc('claimseen', seenId(domain.domain, domain.ownerId), { seen: doc.seen, attempts: 0 } satisfies SeenDoc);
    await this.remember(domain);
    const by = { by: 'proof', proven: domain.domain, reason: `${domain.domain} was proven by another account` };
    const released: string[] = [];
    if (displaced) {
      await this.afterRelease(displaced.domain, true, by);
      released.push(displaced.domain.domain);
    }
    // Every other account's pending claim at or under the name goes — those made before the proof:
    // this runs a few store steps after it, and a claim made meanwhile under the proven zone is
    // proven (or not) by that zone's content, as any later one.
    const provenAt = domain.claim?.at;
    for (const claim of await this.store.pendingClaimsUnder(domain.domain)) {
      if (claim.ownerId === domain.ownerId) continue;
      const gone = await this.release(claim.name, claim.ownerId, by, true, provenAt).catch((error: unknown) => {
        this.log.warn({ err: (error as Error).message, domain: claim.name, owner: claim.ownerId }, 'ownership: a displaced claim could not be released');
        return undefined;
      });
      if (gone) released.push(claim.name);
    }
    await this.tell(domain.ownerId, 'domain.verified', domain.domain, { method: domain.claim?.method ?? null, seen: doc.seen ?? null, released });
    await this.hooks.proven?.(domain).catch((error: unknown) => this.log.warn({ err: (error as Error).message, domain: domain.domain }, 'ownership: the follow-up of a proof failed'));
  }

  private async tell(owner: number, type: 'domain.verified' | 'domain.claim_released' | 'domain.verification_lost' | 'domain.claim_shared', domain: string, data: Record<string, unknown>): Promise<void> {
    await this.events?.emit(owner, type, domain, data).catch((error: unknown) => this.log.warn({ err: (error as Error).message, domain, type }, 'ownership: an event could not be recorded'));
  }

  /** The pair a proven domain was delegated to, kept for its name. */
  private async remember(domain: DomainState): Promise<void> {
    const pair = domain.claim?.nameservers ?? this.config.nameservers;
    await this.store.updateDoc<History>('nshist', domain.domain, (current) => {
      const entries = current?.entries ?? [];
      if (entries.some((e) => e.owner === domain.ownerId && e.pair.join() === pair.join())) return undefined;
      return { entries: [...entries, { owner: domain.ownerId, pair: [...pair], at: new Date().toISOString() }].slice(-100) };
    });
  }

  /** The next look at a pending claim: each one waits twice as long as the one before, up to recheckMaxMs. */
  private async schedule(name: string, owner: number, doc: SeenDoc): Promise<void> {
    const { recheckMs, recheckMaxMs } = this.config.ownership;
    const delay = Math.min(recheckMs * 2 ** Math.min(doc.attempts, 30), recheckMaxMs) * (0.9 + 0.2 * Math.random());
    const due = dueId(Date.now() + delay, name, owner);
    // The new check is written first and the old one removed last: a process that stops between
    // any two steps leaves at least one check due (a spare one only costs a look), never none.
    await this.store.putDoc('claimdue', due, { name, owner });
    if (!(await this.recordSeen(name, owner, () => ({ ...doc, due, attempts: doc.attempts + 1 })))) {
      await this.store.deleteDoc('claimdue', due);
      return;
    }
    if (doc.due) await this.store.deleteDoc('claimdue', doc.due);
  }

  /**
   * Writes what a look saw, unless a later look's is recorded meanwhile: two looks at once (the
   * monitor's and a request's) finish in any order, and the one begun first must not replace what
   * the other saw — nor schedule a next look for a claim the other proved. False when it did not write.
   */
  private async recordSeen(name: string, owner: number, next: () => SeenDoc): Promise<boolean> {
    let written = false;
    // (The store may run this more than once: the last run decides.)
    await this.store.updateDoc<SeenDoc>('claimseen', seenId(name, owner), (current) => {
      const doc = next();
      written = !(current?.seen && doc.seen && current.seen.at > doc.seen.at);
      return written ? doc : undefined;
    });
    return written;
  }
}
