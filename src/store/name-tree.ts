// Domain names as a tree, for the rule both adapters enforce inside their atomic step: no account
// holds a proven domain that equals, lies under or lies above another account's proven domain
// (pending claims overlap freely: issue 26).
import { StoreError } from './errors.ts';

/** The proper ancestors of a name, nearest first: "b.a.example" → ["a.example", "example"]. */
export function ancestorsOf(name: string): string[] {
  const out: string[] = [];
  for (let at = name.indexOf('.'); at !== -1; at = name.indexOf('.', at + 1)) out.push(name.slice(at + 1));
  return out;
}

/**
 * Labels reversed, each followed by a dot: "b.a.example" → "example.a.b.". A name's descendants
 * are exactly the keys that start with its reversed form, so one range read finds them all.
 */
export function reversedName(name: string): string {
  return `${name.split('.').reverse().join('.')}.`;
}

/** "example.a.b." → "b.a.example": the inverse of reversedName. */
export function nameOfReversed(reversed: string): string {
  return reversed.slice(0, -1).split('.').reverse().join('.');
}

/**
 * Where an account's pending claim of a name keeps its records while another account holds the
 * name ("#" is in no domain name, so no zone is ever called this).
 */
export const claimKey = (name: string, ownerId: number): string => `${name}#${ownerId}`;

export function overlapError(name: string, where: 'under' | 'above'): StoreError {
  const message = `lies ${where} a domain another account has registered`;
  return new StoreError('DOMAIN_OVERLAP', `${name} ${message}; a domain and the names under it belong to one account`, [
    { field: 'domain', message },
  ]);
}
