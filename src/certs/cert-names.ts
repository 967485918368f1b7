// Which names a domain's certificate must cover, and when a certificate needs replacing. Pure.
import { certificateCovers, type CertificateState } from '../model/certificate.ts';
import type { DomainState } from '../model/domain.ts';
import { absoluteName } from '../model/names.ts';

/** The domain and its mask's names ("*" → "*.example.org"), sorted, each once. */
export function certificateNames(domain: DomainState): string[] {
  const mask = domain.mask === '' ? [] : domain.mask.split(',');
  return [...new Set([domain.domain, ...mask.map((n) => absoluteName(n, domain.domain))])].sort();
}

/** When a certificate is renewed: at two thirds of its lifetime (Let's Encrypt's own advice for any lifetime). */
export function renewalAt(cert: Pick<CertificateState, 'notBefore' | 'notAfter'>): number {
  const from = Date.parse(cert.notBefore);
  const to = Date.parse(cert.notAfter);
  return from + ((to - from) * 2) / 3;
}

export type IssuanceReason = 'new' | 'names-changed' | 'renewal';

/**
 * Why the domain needs a certificate issued now, or undefined: ssl off, or the certificate it has
 * covers its names and is not yet two thirds through its life (never re-issued while valid).
 */
export function issuanceReason(domain: DomainState, cert: CertificateState | undefined, now: number): IssuanceReason | undefined {
  if (!domain.ssl) return undefined;
  if (!cert) return 'new';
  const wanted = certificateNames(domain);
  const have = [...cert.names].sort();
  if (wanted.length !== have.length || wanted.some((n, i) => n !== have[i])) return 'names-changed';
  if (now >= renewalAt(cert)) return 'renewal';
  return undefined;
}

/** Names one certificate may hold (Let's Encrypt's limit; a mask may name more). */
export const MAX_CERTIFICATE_NAMES = 100;

/** The DNS-01 owner of a name: "_acme-challenge." + the name without a wildcard label (RFC 8555 §8.4). */
export const dns01Owner = (name: string): string => `_acme-challenge.${name.startsWith('*.') ? name.slice(2) : name}`;

/** How far ahead of this machine's clock a certificate may start (clocks differ by a little). */
const CLOCK_SLACK_MS = 5 * 60_000;

export interface CertificateFit {
  /** Why the certificate must not be stored for the domain; empty: it may be. */
  refusals: string[];
  /** The domain's protected names it does not cover (the edge shows its own certificate for them). */
  uncovered: string[];
}

/**
 * Whether a certificate from elsewhere (`admin cert put`) may be stored for `domain`. Every name in
 * it must be the domain or a name under it (`*.` only as a whole first label): a certificate is
 * shown for names of the domain it is stored under, so one naming anything else would lend that
 * name to this domain — and the store keeps names under a domain to its account (no other account
 * holds a domain at, under or above it), so "under it" is "this account's". The apex must be
 * covered, and the certificate valid now. Other protected names it does not cover are reported:
 * a mask `*` reaches deeper than any certificate can, and the operator may mean a partial one.
 */
export function certificateFit(domain: DomainState, cert: Pick<CertificateState, 'names' | 'notBefore' | 'notAfter'>, now: number): CertificateFit {
  const apex = domain.domain;
  const refusals: string[] = [];
  const malformed = cert.names.filter((n) => n.slice(n.startsWith('*.') ? 2 : 0).includes('*'));
  if (malformed.length > 0) refusals.push(`it names ${malformed.join(', ')}: a wildcard must be a whole first label ("*.${apex}")`);
  const foreign = cert.names.filter((n) => !malformed.includes(n) && !isDomainName(n.startsWith('*.') ? n.slice(2) : n, apex));
  if (foreign.length > 0) refusals.push(`it names ${foreign.join(', ')}, which ${foreign.length === 1 ? 'is' : 'are'} not ${apex} or a name under it`);
  if (!certificateCovers(cert.names, apex)) refusals.push(`it does not cover ${apex} itself`);
  if (Date.parse(cert.notAfter) <= now) refusals.push(`it expired on ${cert.notAfter}`);
  else if (Date.parse(cert.notBefore) > now + CLOCK_SLACK_MS) refusals.push(`it is not valid before ${cert.notBefore}`);
  return { refusals, uncovered: certificateNames(domain).filter((n) => !certificateCovers(cert.names, n)) };
}

/** `name` is `apex` or under it (label by label: "evilexample.org" is not under "example.org"). */
const isDomainName = (name: string, apex: string): boolean => name === apex || name.endsWith(`.${apex}`);
