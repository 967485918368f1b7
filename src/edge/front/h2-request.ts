// An HTTP/2 request read as the HTTP/1.1 request it stands for: the stages and the backend know
// HTTP/1.1's headers (Host, Content-Length, Transfer-Encoding), so the h2 front hands them that
// view, or refuses the request (400) when it cannot be said in HTTP/1.1 without changing meaning.
// An h2 → h1 proxy that forwards what it cannot express is how requests get smuggled into a
// backend (RFC 9113 §8.2.2, §8.3; the h2 → h1 desync attacks): a CR/LF in a value becomes a new
// header line, a `transfer-encoding` beside a body framed by DATA frames becomes a second body.
// nghttp2 already refuses most of this (it resets such streams before Node sees them); these
// checks are ours too, so the guarantee does not rest on one library's defaults. Pure.
import type { IncomingHttpHeaders } from 'node:http';

/** Headers that only mean something on one HTTP/1.1 connection (RFC 9113 §8.2.2): malformed in h2. */
const CONNECTION_SPECIFIC = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade']);

/** The request pseudo-headers RFC 9113 §8.3.1 defines (`:protocol` only with extended CONNECT, which we do not offer). */
const REQUEST_PSEUDO = new Set([':method', ':scheme', ':authority', ':path']);

/** What a field value must not hold to be written on an HTTP/1.1 header line. */
const UNSAYABLE = /[\r\n\0]/;

/** Methods are tokens (RFC 9110 §9.1). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export type H2RequestView =
  | {
      ok: true;
      /** The request's headers as HTTP/1.1 would carry them: no pseudo-headers, Host from `:authority`. */
      headers: IncomingHttpHeaders;
      /** `[name, value, …]` as `rawHeaders` (one entry per value). */
      rawHeaders: string[];
    }
  | { ok: false; reason: string };

/**
 * The HTTP/1.1 view of an h2 request's header block (`headers` as Node gives it: pseudo-headers
 * among the fields, `cookie` crumbs already joined with `; `, other repeats as arrays or joined
 * with `, `). `bodyFollows`: the HEADERS frame did not end the stream (DATA frames will carry a
 * body); without a Content-Length that body is chunked in HTTP/1.1 terms.
 */
export function h2RequestView(headers: Record<string, string | string[] | undefined>, bodyFollows: boolean): H2RequestView {
  const view: IncomingHttpHeaders = {};
  const raw: string[] = [];
  let method: string | undefined;
  let path: string | undefined;
  let scheme: string | undefined;
  let authority: string | undefined;
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value === undefined) continue;
    if (name !== name.toLowerCase()) return { ok: false, reason: `upper-case header name ${JSON.stringify(name)}` };
    const values = Array.isArray(value) ? value : [value];
    for (const one of values) if (UNSAYABLE.test(one)) return { ok: false, reason: `CR, LF or NUL in ${name}` };
    if (name.startsWith(':')) {
      if (!REQUEST_PSEUDO.has(name)) return { ok: false, reason: `pseudo-header ${name} is not a request's` };
      if (values.length !== 1) return { ok: false, reason: `${name} repeated` };
      if (name === ':method') method = values[0];
      else if (name === ':path') path = values[0];
      else if (name === ':scheme') scheme = values[0];
      else authority = values[0];
      continue;
    }
    if (CONNECTION_SPECIFIC.has(name)) return { ok: false, reason: `connection-specific header ${name}` };
    if (name === 'te' && values.some((v) => v.trim().toLowerCase() !== 'trailers')) return { ok: false, reason: 'te other than trailers' };
    view[name] = value as string & string[];
    for (const one of values) raw.push(name, one);
  }
  if (method === undefined || !TOKEN.test(method)) return { ok: false, reason: 'missing or malformed :method' };
  // CONNECT has no :path or :scheme; we do not tunnel (Node answers CONNECT itself, 405).
  if (scheme !== 'https' && scheme !== 'http') return { ok: false, reason: 'missing or unknown :scheme' };
  if (path === undefined || !(path.startsWith('/') || (path === '*' && method === 'OPTIONS'))) return { ok: false, reason: ':path not starting with /' };
  const host = view.host;
  if (host !== undefined) {
    if (Array.isArray(host)) return { ok: false, reason: 'host repeated' };
    if (authority !== undefined && authority.toLowerCase() !== host.toLowerCase()) return { ok: false, reason: ':authority and host disagree' };
  } else if (authority !== undefined) {
    view.host = authority;
    raw.push('host', authority);
  }
  const length = view['content-length'];
  if (length !== undefined) {
    // One length, a decimal number: a list (even of equal values) is for HTTP/1.1's own recovery rules, not ours to pass on.
    if (typeof length !== 'string' || !/^\d{1,15}$/.test(length)) return { ok: false, reason: 'malformed content-length' };
    if (!bodyFollows && Number(length) !== 0) return { ok: false, reason: 'content-length without a body' };
  } else if (bodyFollows) {
    // The body's end is the stream's end: in HTTP/1.1 terms, chunked. The stages (body deadline,
    // the WAF's body read) and the proxy see a body announced the way they know.
    view['transfer-encoding'] = 'chunked';
    raw.push('transfer-encoding', 'chunked');
  }
  return { ok: true, headers: view, rawHeaders: raw };
}
