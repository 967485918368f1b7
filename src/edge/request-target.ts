// What a request names, checked before anything looks at it: the authority (RFC 9110 §7.2, the
// Host header, or the authority of an absolute-form target, which RFC 9112 §3.2.2 says wins) and
// the target in origin form. Routing, the cache key, the backend's Host and every redirect are
// built from this one reading, so a Host that parses one way here and another way at the backend
// (`alpha.test:@evil.example`, a port holding markup) cannot reach anyone: it is refused with 400.
// Pure: no sockets.

import { boundedMemo } from '../common/bounded-memo.ts';

export type RequestTarget =
  /** A customer name: lower case, no final dot; `port` as the client gave it, when it did. */
  | { kind: 'name'; host: string; port?: number; path: string; url: string }
  /** An IP literal or no Host at all (the node's own status page); `url` in origin form. */
  | { kind: 'address'; url: string; path: string }
  | { kind: 'invalid'; reason: string };

/** A DNS name as browsers send it: LDH labels (and `_`, which some hosts use), 1–63 octets each. */
const NAME = /^(?=.{1,253}$)(?:[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*$/;
const IPV4 = /^\d{1,3}(?:\.\d{1,3}){3}$/;
const PORT = /^\d{1,5}$/;

type Authority = { kind: 'name'; host: string; port?: number } | { kind: 'address' } | { kind: 'invalid'; reason: string };

/** Reads `host[:port]`; an IPv6 literal in brackets or an IPv4 literal is an address. */
export function parseAuthority(text: string | undefined): Authority {
  if (text === undefined || text === '') return { kind: 'address' };
  const value = text.toLowerCase();
  let host = value;
  let portText: string | undefined;
  if (value.startsWith('[')) {
    const close = value.indexOf(']');
    if (close === -1 || !/^\[[0-9a-f:.]+\]$/.test(value.slice(0, close + 1))) return { kind: 'invalid', reason: 'malformed IPv6 literal in Host' };
    const rest = value.slice(close + 1);
    if (rest !== '' && !(rest.startsWith(':') && PORT.test(rest.slice(1)))) return { kind: 'invalid', reason: 'malformed port in Host' };
    return { kind: 'address' };
  }
  const colon = value.indexOf(':');
  if (colon !== -1) {
    host = value.slice(0, colon);
    portText = value.slice(colon + 1);
    if (!PORT.test(portText) || Number(portText) < 1 || Number(portText) > 65535) return { kind: 'invalid', reason: 'malformed port in Host' };
  }
  if (host.endsWith('.')) host = host.slice(0, -1);
  if (IPV4.test(host)) return { kind: 'address' };
  if (!NAME.test(host)) return { kind: 'invalid', reason: 'malformed host name in Host' };
  return portText === undefined ? { kind: 'name', host } : { kind: 'name', host, port: Number(portText) };
}

/**
 * The request's authority and origin-form target. `rawUrl` is the request line's target; an
 * absolute-form one (`http://name/path`, a client talking to us as to a forward proxy) gives
 * both the authority and the path.
 */
export function requestTarget(rawUrl: string | undefined, hostHeader: string | undefined): RequestTarget {
  let url = rawUrl ?? '/';
  let authority = hostHeader;
  if (!url.startsWith('/') && url !== '*') {
    // Absolute form: only http(s) with an authority; its path and query become the target.
    const match = /^(https?):\/\/([^/?#]*)([^#]*)/i.exec(url);
    if (!match || match[2] === '' || match[2]!.includes('@')) return { kind: 'invalid', reason: 'malformed request target' };
    authority = match[2];
    url = match[3] === '' ? '/' : match[3]!;
    if (!url.startsWith('/')) url = `/${url}`;
  }
  if (/[\u0000-\u0020\u007f]/.test(url)) return { kind: 'invalid', reason: 'control character in request target' };
  const parsed = authorityOf(authority);
  if (parsed.kind === 'invalid') return parsed;
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  if (parsed.kind === 'address') return { kind: 'address', url, path };
  return { kind: 'name', host: parsed.host, port: parsed.port, path, url };
}

/** Authorities as read, by their text: a few names carry nearly all requests. */
const authorityByText = boundedMemo(parseAuthority, 10_000);

const authorityOf = (text: string | undefined): Authority => (text === undefined ? parseAuthority(text) : authorityByText(text));

/** The Host header the backend receives: the canonical name, and the port only as a number. */
export function canonicalHost(host: string, port: number | undefined): string {
  return port === undefined ? host : `${host}:${port}`;
}
