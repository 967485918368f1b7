// Name-server pairs (issue 26): the operator's pool of names, all answering on the same servers,
// gives each account a stable pair, and each claim the pair its delegation must name. A name once
// delegated to a pair for one account never gets that pair for another, so a delegation left
// behind (a deleted domain, a removed account) proves nothing for a newcomer. Pure.

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

const samePair = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((n) => b.some((m) => canonical(m) === canonical(n)));

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
