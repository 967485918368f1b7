// Server-side request forgery: a value that names a cloud metadata service — the address every
// cloud answers credentials on, in any spelling a URL parser accepts (decimal, hex, octal, short
// forms, IPv4-mapped IPv6), behind a wildcard DNS name that resolves to the address it spells
// (169.254.169.254.nip.io), or by the provider's own host name — as a URL's host or as the whole
// value (level 1). Loopback and private addresses as a URL's host are level 2 (a local dev URL in
// a form is ordinary); written in a spelling only a bypass uses (hex, decimal, octal, short) they
// are level 1. And the callback hosts of the public out-of-band testing services anywhere (level 1).

export const SSRF = {
  metadata: 934160,
  internal: 934170,
  callback: 934180,
} as const;

/**
 * The out-of-band callback hosts of the public testing services (interactsh's, Burp
 * Collaborator's, DNS loggers, request bins, canary tokens): a blind injection proves itself by
 * making the server look one up. A host under them has a label of its own before the service's
 * name (c59d1b2xq.oast.fun), which nothing but such a test sends; the service's name alone is
 * prose ("interact.sh", a script's name). Canary tokens' web bugs are URLs on the service's own host.
 */
const CALLBACK_HOST = /(?:[a-z0-9_-]\.|\/\/(?=canarytokens))(?:interact\.sh|interactsh\.com|oast\.(?:pro|live|site|online|fun|me)|burpcollaborator\.net|oastify\.com|dnslog\.(?:cn|link)|ceye\.io|requestbin\.net|requestrepo\.com|canarytokens\.(?:com|net|org)|bxss\.me|xss\.ht)(?![a-z0-9_-]|\.[a-z0-9])/i;

/** Whether a decoded form names a callback host of a public testing service (CALLBACK_HOST). */
export function callbackHost(form: string): boolean {
  return form.includes('.') && CALLBACK_HOST.test(form);
}

/** Metadata services: AWS/Azure/GCP/Oracle/OpenStack, AWS ECS task credentials, Alibaba. */
const METADATA_V4 = new Set([0xa9fea9fe, 0xa9feaa02, 0x646464c8]);
const METADATA_NAMES = new Set(['metadata.google.internal', 'metadata.goog', 'metadata', 'instance-data', 'instance-data.ec2.internal']);
/** Wildcard DNS services: a name under them resolves to the address its labels spell. */
const WILDCARD_DNS = /(?:^|[.-])((?:\d{1,3}[.-]){3}\d{1,3}|[0-9a-f]{8})\.(?:nip\.io|sslip\.io|xip\.io|nip\.direct|traefik\.me|localtest\.me)$/;
/** Four labels that spell the metadata address inside any longer name (a custom wildcard zone). */
const EMBEDDED_METADATA = /(?:^|\.)(?:169\.254\.169\.254|100\.100\.100\.200)\./;

type Kind = 'metadata' | 'internal' | undefined;

function v4Kind(n: number): Kind {
  if (METADATA_V4.has(n)) return 'metadata';
  const a = n >>> 24;
  const b = (n >>> 16) & 255;
  if (a === 127 || a === 10 || a === 0 || (a === 172 && b >= 16 && b < 32) || (a === 192 && b === 168) || (a === 169 && b === 254)) return 'internal';
  return undefined;
}

function dottedV4(text: string): number | undefined {
  const parts = text.split(/[.-]/);
  if (parts.length !== 4) return undefined;
  let n = 0;
  for (const p of parts) {
    const v = Number(p);
    if (!(v >= 0 && v <= 255)) return undefined;
    n = n * 256 + v;
  }
  return n;
}

/** An IPv6 host (WHATWG-normalised, no brackets): the metadata one, loopback, ULA, link-local, or an IPv4 mapped into it. */
function v6Kind(host: string): Kind {
  if (host === 'fd00:ec2::254') return 'metadata';
  const mapped = /^(?:::ffff:|::|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(host);
  if (mapped) return v4Kind(parseInt(mapped[1]!, 16) * 65536 + parseInt(mapped[2]!, 16));
  if (host === '::1' || host === '::' || /^f[cd][0-9a-f]{0,2}:/.test(host) || /^fe[89ab][0-9a-f]?:/.test(host)) return 'internal';
  return undefined;
}

/** What a host (as written, lower case) names, and whether it is written as no one writes an address but to hide it. */
function hostKind(written: string): { kind: Kind; disguised: boolean } {
  // Bodies name the same few hosts over and over (a site's own, a CDN's): each is parsed once.
  const known = HOST_KINDS.get(written);
  if (known) return known;
  if (HOST_KINDS.size >= 1024) HOST_KINDS.clear();
  const kind = parsedHostKind(written);
  HOST_KINDS.set(written, kind);
  return kind;
}

const HOST_KINDS = new Map<string, { kind: Kind; disguised: boolean }>();

function parsedHostKind(written: string): { kind: Kind; disguised: boolean } {
  let host: string;
  try {
    host = new URL(`http://${written.includes(':') && !written.startsWith('[') && written.indexOf(':') !== written.lastIndexOf(':') ? `[${written}]` : written}/`).hostname;
  } catch {
    return { kind: undefined, disguised: false };
  }
  if (host.startsWith('[')) {
    const inner = host.slice(1, -1);
    return { kind: v6Kind(inner), disguised: inner.includes('ffff') || (inner.startsWith('::') && inner !== '::1') };
  }
  const v4 = /^\d+\.\d+\.\d+\.\d+$/.test(host) ? dottedV4(host) : undefined;
  if (v4 !== undefined) {
    const bare = written.replace(/:\d*$/, '').replace(/\.$/, '');
    return { kind: v4Kind(v4), disguised: bare !== host };
  }
  if (METADATA_NAMES.has(host.replace(/\.$/, ''))) return { kind: 'metadata', disguised: false };
  if (host === 'localhost' || host.endsWith('.localhost')) return { kind: 'internal', disguised: false };
  const wild = WILDCARD_DNS.exec(host);
  if (wild) {
    const spelled = wild[1]!;
    const n = /^[0-9a-f]{8}$/.test(spelled) ? parseInt(spelled, 16) : dottedV4(spelled);
    const kind = n === undefined ? undefined : v4Kind(n);
    return { kind, disguised: kind !== undefined };
  }
  if (EMBEDDED_METADATA.test(`${host}.`) && host.split('.').length > 4) return { kind: 'metadata', disguised: true };
  return { kind: undefined, disguised: false };
}

/** A URL's authority after "scheme://" (or "scheme:\\", which URL parsers read alike): host and port, userinfo dropped. */
const URL_AUTHORITY = /[a-z][a-z0-9+.-]{0,20}:[/\\]{2}([^/\\?#\s"'<>`]{1,300})/y;

const schemeChar = (c: number) => (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 46 || c === 45;
const slash = (c: number) => c === 47 || c === 92;

/**
 * The next match of URL_AUTHORITY in `form` at or after `from`, as a global search would find it,
 * found from the colons followed by two slashes (a search from every letter costs ~7 ns a
 * character): the leftmost start is within the run of scheme characters before such a colon.
 */
function nextAuthority(form: string, from: number): RegExpExecArray | null {
  for (let colon = form.indexOf(':', from); colon >= 0; colon = form.indexOf(':', colon + 1)) {
    if (!slash(form.charCodeAt(colon + 1)) || !slash(form.charCodeAt(colon + 2))) continue;
    let start = colon;
    while (start > from && start > colon - 21 && schemeChar(form.charCodeAt(start - 1))) start--;
    while (start < colon && !(form.charCodeAt(start) >= 97 && form.charCodeAt(start) <= 122)) start++;
    if (start === colon) continue;
    URL_AUTHORITY.lastIndex = start;
    const m = URL_AUTHORITY.exec(form);
    if (m) return m;
  }
  return null;
}

const HEX_START = /^\s*0x/;

/** A value that is a host by itself (optionally with a port): name, dotted or bracketed address, one number in hex. */
const BARE_HOST = /^\s*(\[[0-9a-f:.]+\]|[0-9a-f]*:[0-9a-f:.]*:[0-9a-f:.]*|[a-z0-9.-]{1,253})(?::\d{1,5})?\.?\s*$/;

/**
 * The SSRF rule a decoded, lower-case form matches at `level`; `urlInternal`: whether a
 * loopback or private URL counts here (not in headers such as Referer and Origin).
 */
export function requestForgery(form: string, level: number, urlInternal: boolean): number | undefined {
  if (callbackHost(form)) return SSRF.callback;
  if (form.includes(':')) {
    let seen = 0;
    for (let m = nextAuthority(form, 0); m !== null && seen < 20; m = nextAuthority(form, m.index + m[0].length), seen++) {
      const authority = m[1]!;
      const at = authority.lastIndexOf('@');
      const { kind, disguised } = hostKind(at < 0 ? authority : authority.slice(at + 1));
      if (kind === 'metadata') return SSRF.metadata;
      if (kind === 'internal' && urlInternal && (disguised || level >= 2)) return SSRF.internal;
    }
  }
  // (A bare decimal number is an id, not a host: only a URL's host is read so. Only a host with
  // '.', ':' or '[', or one hex number, is read: a quick test of the form goes first.)
  const bare = form.length <= 300 && (form.includes('.') || form.includes(':') || form.includes('[') || HEX_START.test(form)) ? BARE_HOST.exec(form) : null;
  if (bare && ((!/^\d+$/.test(bare[1]!) && /[.:[]/.test(bare[1]!)) || /^0x[0-9a-f]{1,8}$/.test(bare[1]!))) {
    const { kind } = hostKind(bare[1]!);
    if (kind === 'metadata') return SSRF.metadata;
  }
  return undefined;
}
