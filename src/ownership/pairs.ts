// Name-server pairs (issue 26): the operator's pool of names, all answering on the same servers,
// gives each account a stable pair, and each claim the pair its delegation must name. A name once
// delegated to a pair for one account never gets that pair for another, so a delegation left
// behind (a deleted domain, a removed account) proves nothing for a newcomer. A delegation that
// would do for two accounts' current claims of a name proves neither (issue 37). Pure.

export type Pair = [string, string];

const canonical = (name: string) => name.toLowerCase().replace(/\.$/, '');

/**
 * Every pair of the pool, in an order that appending names to the pool keeps: (0,1), (0,2),
 * (1,2), (0,3), (1,3), (2,3), …
 */
export function poolPairs(pool: readonly string[]): Pair[] {
  const out: Pair[] = [];
  for (let j = 1; j < pool.length; j++) for (let i = 0; i < j; i++) out.push([pool[i]!, pool[j]!]);
  return out;
}

/** The pair an account is given when it first needs one: accounts spread over the pairs by id. */
export function accountPair(userId: number, pool: readonly string[]): Pair {
  const pairs = poolPairs(pool);
  return pairs[(userId - 1) % pairs.length]!;
}

/** The same two names, in any order or case. */
export const samePair = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((n) => b.some((m) => canonical(m) === canonical(n)));

/**
 * The pair a new claim of a name gets: the account's own, unless the name was delegated to it for
 * another account (`usedByOthers`); then the first pair sharing no name with those, else the first
 * pair equal to none of them. Undefined when every pair was used: only the token can prove it.
 */
export function pairForClaim(own: Pair, pool: readonly string[], usedByOthers: readonly (readonly string[])[]): Pair | undefined {
  if (!usedByOthers.some((p) => samePair(p, own))) return own;
  const used = new Set(usedByOthers.flat().map(canonical));
  const pairs = poolPairs(pool);
  return pairs.find((p) => !used.has(canonical(p[0])) && !used.has(canonical(p[1]))) ?? pairs.find((p) => !usedByOthers.some((u) => samePair(u, p)));
}

/**
 * Whether an NS set seen for a name delegates to the claim's pair: at least one of the pair named,
 * and none of the service's other names (a delegation naming another account's pair, even beside
 * this one, proves nothing). A customer's own name servers beside ours are fine.
 */
export function delegatesToPair(seen: readonly string[], pair: readonly string[], ours: readonly string[]): boolean {
  const mine = new Set(pair.map(canonical));
  const service = new Set([...ours, ...pair].map(canonical));
  const named = seen.map(canonical).filter((n) => service.has(n));
  return named.length > 0 && named.every((n) => mine.has(n));
}

/**
 * Whether an NS set proves a pending claim by delegation (issue 37): it delegates to the claim's
 * pair and to no other account's claim of the name (`others`, their pairs). A delegation that
 * would do for two accounts' claims (the same pair, or a name both pairs share named alone)
 * cannot say whose it is, so it proves neither: only the token can.
 */
export function delegationProves(seen: readonly string[], pair: readonly string[], others: readonly (readonly string[])[], ours: readonly string[]): boolean {
  return delegatesToPair(seen, pair, ours) && !others.some((other) => delegatesToPair(seen, other, ours));
}

/** A pool with one pair gives every claim of a name the same pair: a delegation cannot tell two accounts' claims apart. */
export const poolSeparatesClaims = (pool: readonly string[]): boolean => poolPairs(pool).length > 1;

/**
 * The start-up warning for a pool that cannot separate claims (issue 37), or undefined. Said once
 * by each API process: with one pair, two accounts' claims of a name get the same pair, so neither
 * can be proven by a delegation and a customer who delegates as told is not proven by it.
 */
export function poolWarning(pool: readonly string[], proofRequired: boolean): string | undefined {
  if (!proofRequired || poolSeparatesClaims(pool)) return undefined;
  return (
    `ownership: the name-server pool (${pool.join(', ')}) is one name-server pair: claims of the same name by different accounts all get it, ` +
    'so a delegation cannot tell them apart and only the TXT token proves such claims (customers are told so). ' +
    'Set PALISADE_NAMESERVER_POOL to three or more names, all answering on these name servers (six give fifteen pairs), so that each claim of a name gets its own pair'
  );
}
