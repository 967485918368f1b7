// Which names a customer may register as a domain. The other half of name ownership, "no two
// accounts hold overlapping domains", needs the store's atomic view and lives there.
//
// Refused for everyone: public suffixes (ICANN and private sections of the Public Suffix List,
// bundled with `tldts`, nothing fetched at run time), names under a top-level label the list does
// not know (`localdomain`, `internal`, `local`…), special-use names (RFC 6761, RFC 7686, RFC 9476:
// `arpa` and all under it but reverse zones (reverse-zones.ts), `onion`, `localhost`, `invalid`, `alt`), and labels that mix scripts.
// `.test` and `.example` (RFC 2606) stay allowed for tests and documentation.
// Refused for customers: the operator's reserved zones, at, under and above (a zone above one of
// ours would answer for our name servers' names).
import { getDomain, parse } from 'tldts';
import { mixedScriptLabel } from './mixed-script.ts';
import { isReverseZone, reverseZoneProblem } from './reverse-zones.ts';

const SPECIAL_USE = new Set(['arpa', 'onion', 'localhost', 'invalid', 'local', 'alt', 'internal', 'localdomain']);
const TESTING = new Set(['test', 'example']);

export type RegistrationProblem =
  | { code: 'DOMAIN_NOT_REGISTRABLE'; message: string }
  | { code: 'DOMAIN_RESERVED'; message: string };

export interface RegistrationPolicy {
  /** The operator's zones (PALISADE_RESERVED_ZONES). */
  reserved: readonly string[];
  /** The operator marked this account as one that may register them. */
  mayUseReserved: boolean;
}

/** Whether `a` equals `b` or lies under it. */
export const isAtOrUnder = (a: string, b: string): boolean => a === b || a.endsWith(`.${b}`);

/** Why `name` (already lower-case ASCII, checked as a domain name) cannot be registered, or undefined. */
export function registrationProblem(name: string, policy: RegistrationPolicy): RegistrationProblem | undefined {
  const tld = name.slice(name.lastIndexOf('.') + 1);
  if (isReverseZone(name)) {
    const problem = reverseZoneProblem(name);
    if (problem) return { code: 'DOMAIN_NOT_REGISTRABLE', message: problem };
  } else if (SPECIAL_USE.has(tld)) {
    return { code: 'DOMAIN_NOT_REGISTRABLE', message: `${name} is under .${tld}, a special-use name that is never delegated on the public Internet` };
  }
  if (!TESTING.has(tld) && !isReverseZone(name)) {
    const parsed = parse(name, { allowPrivateDomains: true });
    if (!parsed.isIcann && !parsed.isPrivate) {
      return { code: 'DOMAIN_NOT_REGISTRABLE', message: `${name} is not under a known top-level domain (.${tld} is not in the Public Suffix List)` };
    }
    if (parsed.domain === null || parsed.hostname === parsed.publicSuffix) {
      return { code: 'DOMAIN_NOT_REGISTRABLE', message: `${name} is a public suffix (anyone can register names under it); register your own domain under it` };
    }
  }
  const mixed = mixedScriptLabel(name);
  if (mixed) {
    return {
      code: 'DOMAIN_NOT_REGISTRABLE',
      message: `the label "${mixed.label}" mixes the scripts ${mixed.scripts.join(' and ')} (UTS #39 highly restrictive), a common look-alike of another name`,
    };
  }
  if (!policy.mayUseReserved) {
    const reserved = policy.reserved.find((zone) => isAtOrUnder(name, zone) || isAtOrUnder(zone, name));
    if (reserved) return { code: 'DOMAIN_RESERVED', message: `${name} overlaps ${reserved}, which is reserved for the service itself` };
  }
  return undefined;
}

/** The default reserved zones: the registrable domains of the service's own names. */
export function registrableDomainOf(name: string): string {
  return getDomain(name, { allowPrivateDomains: true }) ?? name;
}
