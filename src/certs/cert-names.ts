// Which names a domain's certificate must cover, and when a certificate needs replacing. Pure.
import type { CertificateState } from '../model/certificate.ts';
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
