// Domain-name rules shared by the API, the store and the DNS server: lower-case, IDNA to
// punycode, labels ≤ 63 octets, names ≤ 253 octets (RFC 1035 §2.3.4, RFC 5890).
import { domainToASCII } from 'node:url';

export type Checked<T> = { ok: true; value: T } | { ok: false; message: string };
const ok = <T>(value: T): Checked<T> => ({ ok: true, value });
const fail = <T>(message: string): Checked<T> => ({ ok: false, message });

const LDH = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
// Record owners and targets may carry underscore labels (_dmarc, _sip._tcp) per RFC 8552.
const HOST_LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

function toAscii(input: string): Checked<string> {
  if (input.length === 0) return fail('must not be empty');
  if (input.length > 1024) return fail('is too long');
  if (/[\s/\\@:]/.test(input)) return fail('contains characters not allowed in a domain name');
  const name = input.endsWith('.') ? input.slice(0, -1) : input;
  // Plain ASCII needs no IDNA, and must not get it: the URL host parser reads all-numeric names
  // as IPv4 addresses ("10" → "0.0.0.10"), the very owners of reverse zones. A-labels ("xn--")
  // still go through it, which checks their Punycode.
  if (/^[\x21-\x7e]*$/.test(name) && !/(^|\.)xn--/i.test(name)) return ok(name.toLowerCase());
  const ascii = domainToASCII(name);
  if (ascii === '') return fail('is not a valid domain name (IDNA conversion failed)');
  return ok(ascii);
}

function checkLabels(name: string, labelRe: RegExp, allowLeadingWildcard: boolean): Checked<string> {
  if (name.length > 253) return fail('is longer than 253 characters');
  const labels = name.split('.');
  for (let i = 0; i < labels.length; i++) {
    const label = labels[i]!;
    if (label === '') return fail('has an empty label');
    if (label.length > 63) return fail(`has a label longer than 63 characters (${label.slice(0, 20)}…)`);
    if (label === '*' && allowLeadingWildcard && i === 0) continue;
    if (!labelRe.test(label)) return fail(`has an invalid label "${label}"`);
  }
  return ok(name);
}

/** A registrable domain: at least two LDH labels, a non-numeric top-level label. */
export function normaliseDomainName(input: string): Checked<string> {
  const ascii = toAscii(input);
  if (!ascii.ok) return ascii;
  const checked = checkLabels(ascii.value, LDH, false);
  if (!checked.ok) return checked;
  const labels = ascii.value.split('.');
  if (labels.length < 2) return fail('must have at least two labels (e.g. example.org)');
  if (/^[0-9]+$/.test(labels[labels.length - 1]!)) return fail('has a numeric top-level label');
  return ok(ascii.value);
}

/**
 * A record owner, stored relative to the zone: "@" for the apex, "www", "_sip._tcp", "*.dev".
 * A fully qualified name inside the zone ("www.example.org" or with a trailing dot) is accepted
 * and made relative; a name ending in a dot outside the zone is rejected.
 */
export function normaliseOwnerName(input: string, zone: string): Checked<string> {
  if (input === '@' || input === `${zone}.` || input.toLowerCase() === zone) return ok('@');
  const ascii = toAscii(input);
  if (!ascii.ok) return ascii;
  let relative = ascii.value;
  if (relative === zone) return ok('@');
  if (relative.endsWith(`.${zone}`)) relative = relative.slice(0, -(zone.length + 1));
  else if (input.endsWith('.')) return fail(`is outside the zone ${zone}`);
  if (relative.length + 1 + zone.length > 253) return fail('makes a name longer than 253 characters');
  return checkLabels(relative, HOST_LABEL, true);
}

/** The absolute owner name of a relative one. */
export function absoluteName(owner: string, zone: string): string {
  return owner === '@' ? zone : `${owner}.${zone}`;
}

/**
 * A host name in record data (CNAME/MX/NS targets, SRV targets): always absolute, stored
 * without the trailing dot; "@" stands for the zone apex.
 */
export function normaliseTargetName(input: string, zone: string): Checked<string> {
  if (input === '@') return ok(zone);
  const ascii = toAscii(input);
  if (!ascii.ok) return ascii;
  return checkLabels(ascii.value, HOST_LABEL, false);
}
