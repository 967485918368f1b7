// What a customer is told to do to prove a pending claim (issue 37), in plain words: what
// `verification.instructions` says and `domain.claim_shared` carries. Pure.
export type Evidence = 'delegation' | 'txt';

export interface ClaimFacts {
  name: string;
  /** Where the token goes (`_palisade-verify.<name>`). */
  tokenAt: string;
  nameservers: readonly string[];
  token: string;
  accepts: readonly Evidence[];
  /** Why a delegation does not prove it: another account's claim has the same pair, or the name's history. */
  shared: boolean;
  /** The pool has one pair: any later claim of the name by another account will share it. */
  onePairPool: boolean;
}

export function claimInstructions(c: ClaimFacts): string {
  const pair = c.nameservers.join(' and ');
  const record = `a TXT record at ${c.tokenAt} holding "${c.token}"`;
  const look = `then ask for a look (POST /domains/${c.name}/verify); the service also looks by itself, less and less often.`;
  if (c.accepts.includes('delegation')) {
    const both = `Prove that ${c.name} is yours: delegate it at your registrar to ${pair}, or publish ${record} where ${c.name}'s DNS is hosted now; ${look}`;
    if (!c.onePairPool) return both;
    return `${both} This service gives every claim of a name the same two name servers: should another account claim ${c.name} too, a delegation would prove neither claim and only the TXT record would. Publishing the TXT record first is the proof that always works.`;
  }
  const why = c.shared
    ? `Another account has claimed ${c.name} too, and this service can give both claims only the same name servers (${pair}): a delegation to them cannot tell the claims apart and proves neither.`
    : `${c.name} was delegated before to each pair of this service's name servers for another account: a delegation to ${pair} proves nothing for this claim.`;
  return `${why} Only the token proves it: publish ${record} at the DNS host that answers for ${c.name} now, ${look} If ${c.name} is already delegated to ${pair}, they do not answer for it until your claim is proven: delegate it back to a DNS host where you can publish the record, and move the delegation here once proven.`;
}
