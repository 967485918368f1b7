// A look at a claim's evidence: the parent's delegation and the `_palisade-verify` token, read in
// a parent zone served here when there is one (only its owner can write there), else through the
// delegation resolver. Pure reading: what the look proves is decided and stored by ownership.ts.
import type { Resolver } from 'node:dns/promises';
import type { Config } from '../config.ts';
import type { DomainState, VerificationSeen } from '../model/domain.ts';
import { isProven } from '../model/domain.ts';
import { TYPE } from '../model/record-types.ts';
import { txtStrings } from '../model/txt-strings.ts';
import { ancestorsOf } from '../store/name-tree.ts';
import type { Store, ZoneHead } from '../store/types.ts';
import type { DelegationLookup } from './delegation.ts';
import { delegatesToPair, delegationProves } from './pairs.ts';

export const TOKEN_NAME = '_palisade-verify';

export const SHARED_NOTE = 'another account claims this name with the same name servers: a delegation cannot tell the claims apart, so only the TXT token proves it';
export const HISTORY_NOTE = 'every pair of name servers was once this name\'s for another account: only the token proves this claim';

export interface EvidenceSources {
  store: Store;
  config: Config;
  /** Absent: no PALISADE_DELEGATION_RESOLVER, nothing outside the store can be seen. */
  resolver: Resolver | undefined;
  delegation: DelegationLookup | undefined;
}

export /** What a look found, and whether it proves the claim (and how). */
interface Look {
  seen: VerificationSeen;
  method?: 'delegation' | 'token' | 'parent';
  /** Nothing definite was answered (a timeout, SERVFAIL, no resolver): says nothing either way. */
  unknown: boolean;
}

const canonical = (name: string) => name.toLowerCase().replace(/\.$/, '');

/** The nearest proven domain above the name (whoever holds it). */
export async function provenAncestor(store: Store, name: string): Promise<ZoneHead | undefined> {
  for (const ancestor of ancestorsOf(name)) {
    const head = await store.getZoneHead(ancestor);
    if (head && isProven(head.domain)) return head;
  }
  return undefined;
}

/** What can be seen now of the claim's evidence. */
export async function lookAtEvidence(domain: DomainState, sources: EvidenceSources): Promise<Look> {
const { store, config, resolver, delegation: lookup } = sources;
  const name = domain.domain;
  const claim = domain.claim!;
  const at = new Date().toISOString();
  const parent = await provenAncestor(store, name);
  if (parent?.domain.ownerId === domain.ownerId) {
    return { seen: { at, nameservers: [], txt: [], delegation: false, token: false, from: 'parent', note: `under ${parent.domain.domain}, your own proven domain` }, method: 'parent', unknown: false };
  }
  let ns: string[] | undefined;
  let txt: string[] | undefined;
  let from: 'resolver' | 'parent' = 'resolver';
  let note: string | undefined;
  if (parent?.domain.ns_active) {
    // The parent zone is served here: what it says is what its owner put there.
    from = 'parent';
    const zone = parent.domain.domain;
    const relative = name.slice(0, name.length - zone.length - 1);
    ns = (await store.getRecordsAt(zone, relative)).filter((r) => r.type === TYPE.NS).map((r) => canonical(r.value));
    txt = (await store.getRecordsAt(zone, `${TOKEN_NAME}.${relative}`)).filter((r) => r.type === TYPE.TXT).map((r) => Buffer.concat(txtStrings(r.value)).toString());
  } else if (resolver && lookup) {
    const gone = (error: NodeJS.ErrnoException) => (error.code === 'ENOTFOUND' || error.code === 'ENODATA' ? [] : undefined);
    [ns, txt] = await Promise.all([
      lookup(name).catch(() => undefined),
      resolver.resolveTxt(`${TOKEN_NAME}.${name}`).then((records) => records.map((chunks) => chunks.join('')), gone),
    ]);
    if (!ns && !txt) note = 'the resolver gave no answer';
  } else note = 'PALISADE_DELEGATION_RESOLVER is not set: neither a delegation nor a token can be seen';
  const ours = [...new Set([...config.ownership.pool, ...config.nameservers])];
  const toPair = ns !== undefined && delegatesToPair(ns, claim.nameservers, ours);
  // A proven claim keeps its proof by a delegation to its pair (no claim beside it can be proven
  // meanwhile); a pending one is proven by it only when no other account's claim would be too.
  let delegation = toPair && claim.verified;
  if (toPair && !claim.verified && !claim.noDelegation) {
    const others = (await store.listClaims(name)).filter((h) => h.domain.ownerId !== domain.ownerId).map((h) => h.domain.claim?.nameservers ?? config.nameservers);
    delegation = delegationProves(ns!, claim.nameservers, others, ours);
  }
  if (toPair && !delegation) note = claim.noDelegation && !claim.shared ? HISTORY_NOTE : SHARED_NOTE;
  const token = txt !== undefined && txt.includes(claim.token);
  const seen: VerificationSeen = { at, nameservers: ns ?? [], txt: (txt ?? []).slice(0, 20), delegation, token, from, ...(note && { note }) };
  return { seen, method: delegation ? 'delegation' : token ? 'token' : undefined, unknown: ns === undefined && txt === undefined };
}
