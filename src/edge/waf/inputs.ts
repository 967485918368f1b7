// What of a request line and its headers the rules read, as named inputs: the path, each query
// parameter's name and value (and repeated parameters joined with ',' as ASP.NET does, and
// concatenated, so that a payload split across them is seen whole), cookie names and values,
// basic authentication's user and password, and every header but the ones no backend sees as
// written and the ones that keep to a grammar with no room for an injection.
import type { IncomingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';

export interface Input {
  /** Where, for the log line: "path", "query id", "header x-api", "cookie sid", "body field q". */
  where: string;
  /** The parameter name, for exclusions limited to one. */
  param?: string;
  value: string;
  /** '+' means a space (query strings and urlencoded forms). */
  plus?: boolean;
  /** The request path (traversal rules are stricter there). */
  path?: boolean;
  /** In a body: line breaks are ordinary text there. */
  body?: boolean;
  /** A whole markup document (XML): only the markup rules read it whole, its text is read apart. */
  markup?: boolean;
  /** A JSON object's key (a query operator there is an injection: {"user": {"$ne": null}}). */
  key?: boolean;
  /** A multipart part's own header lines (no mail header injected there: they are headers). */
  partHeaders?: boolean;
  /** A parameter's, multipart part's or cookie's name (prototype pollution is read in names). */
  name?: boolean;
  /** A search box's parameter (q, search …): a command line as its whole value is text at level 1. */
  search?: boolean;
}

/**
 * Headers never inspected: the ones no backend sees as the client wrote them. Host is routed on
 * (request-target.ts reads it as a DNS name and a port; anything else is refused), Content-Length
 * is digits (Node's parser refuses the rest), and the hop-by-hop ones stay on the client's hop
 * (the proxy drops them; an upgrade's Connection and Upgrade are written anew).
 */
export const EXEMPT_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'te', 'upgrade']);

/** An entity tag as servers write them: hex, base64 and version digits (RFC 9110's etagc allows quotes' contents of any kind). */
const ETAG = String.raw`(?:W/)?"[\w.:/+=~-]{0,200}"`;
const ETAG_LIST = new RegExp(String.raw`^\s*(?:\*|${ETAG}(?:\s*,\s*${ETAG})*)\s*$`);
/** An IMF-fixdate (and the obsolete RFC 850 and asctime forms). */
const HTTP_DATE = /^\s*(?:[A-Za-z]{3,9},?\s+)?(?:\d{1,2}[\s-][A-Za-z]{3}[\s-]\d{2,4}|[A-Za-z]{3}\s+\d{1,2})\s+\d{2}:\d{2}:\d{2}(?:\s+(?:GMT|\d{4}))?\s*$/;
/** Cache directives: name, or name=number or name=token or name="a list of header names". */
const DIRECTIVES = /^\s*[a-z-]{1,40}(?:=(?:\d{1,12}|[a-z-]{1,40}|"[\w\s,-]{0,200}"))?(?:\s*,\s*[a-z-]{1,40}(?:=(?:\d{1,12}|[a-z-]{1,40}|"[\w\s,-]{0,200}"))?){0,20}\s*$/i;
/** Codings with weights: gzip;q=1.0, identity; q=0.5, *;q=0. */
const CODINGS = /^\s*(?:[a-z0-9*-]{1,20}(?:\s*;\s*q=[\d.]{1,5})?(?:\s*,\s*|\s*$)){0,20}$/i;

/**
 * Headers not inspected while they keep to a grammar that has no room for an injection: the
 * validators (an entity tag as servers make them, a date), cache directives, codings, the
 * WebSocket key and version. A value outside its grammar is read like any header: a backend may
 * log, reflect or parse it (If-None-Match compared in SQL, Cache-Control echoed in a page).
 */
const HEADER_GRAMMARS: Record<string, RegExp> = {
  'if-none-match': ETAG_LIST,
  'if-match': ETAG_LIST,
  'if-modified-since': HTTP_DATE,
  'if-unmodified-since': HTTP_DATE,
  'if-range': new RegExp(`${ETAG_LIST.source}|${HTTP_DATE.source}`),
  'cache-control': DIRECTIVES,
  pragma: DIRECTIVES,
  'accept-encoding': CODINGS,
  'sec-websocket-key': /^[A-Za-z0-9+/]{22}==$/,
  'sec-websocket-version': /^\d{1,3}$/,
};

/** Whether a header is left unread: exempt by name, or keeping to its grammar (HEADER_GRAMMARS). */
export function headerUnread(name: string, value: string | string[]): boolean {
  if (EXEMPT_HEADERS.has(name)) return true;
  const grammar = HEADER_GRAMMARS[name];
  return grammar !== undefined && typeof value === 'string' && value.length <= 2048 && grammar.test(value);
}

/**
 * Parameters a site's search box sends (a docs search for "ls -la /var/log" is text): at level 1
 * a command line as the whole value of one of these is not read as a command (shell.ts).
 */
const SEARCH_PARAMETERS = new Set(['q', 's', 'query', 'search', 'search_query', 'searchterm', 'search_term', 'searchtext', 'term', 'terms', 'keyword', 'keywords', 'kw', 'text', 'find', 'phrase']);

/** HTTP basic authentication's user and password (RFC 7617), decoded: a backend checks them against its store. */
function basicCredentials(value: string): Input[] {
  const m = /^\s*basic\s+([A-Za-z0-9+/_-]{4,8192}={0,2})\s*$/i.exec(value);
  if (!m) return [];
  const pair = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = pair.indexOf(':');
  const user = colon === -1 ? pair : pair.slice(0, colon);
  const out: Input[] = [{ where: 'authorization user', param: 'authorization', value: user }];
  if (colon !== -1) out.push({ where: 'authorization password', param: 'authorization', value: pair.slice(colon + 1) });
  return out;
}

export function pairs(text: string): Array<[string, string]> {
  if (text === '') return [];
  const out: Array<[string, string]> = [];
  for (const part of text.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    out.push(eq === -1 ? [part, ''] : [part.slice(0, eq), part.slice(eq + 1)]);
  }
  return out;
}

/** Parameters as inputs; a name given more than once also yields its values joined. */
export function parameterInputs(list: Array<[string, string]>, label: string, plus: boolean, body = false): Input[] {
  const out: Input[] = [];
  const seen = new Map<string, string[]>();
  for (const [name, value] of list) {
    const param = name.slice(0, 100);
    out.push({ where: `${label} name`, param, value: name, plus, body, name: true });
    out.push({ where: `${label} ${param.slice(0, 40)}`, param, value, plus, body, ...(SEARCH_PARAMETERS.has(param.toLowerCase()) && { search: true }) });
    const values = seen.get(name);
    if (values) values.push(value);
    else seen.set(name, [value]);
  }
  for (const [name, values] of seen) {
    if (values.length < 2) continue;
    const where = `${label} ${name.slice(0, 40)} (repeated)`;
    out.push({ where, param: name, value: values.join(','), plus, body }, { where, param: name, value: values.join(''), plus, body });
  }
  return out;
}

/** The inputs of the request line and headers. */
/**
 * An X-Forwarded-For that is nothing but IP addresses (what front proxies write): no rule can
 * match digits, dots, colons and hex groups, so it is not read — and not part of the verdict
 * cache's key, which would otherwise hold one entry per client for the same request. Anything
 * else in it (a client's own claim carrying a payload) is read like any header.
 */
export function onlyAddresses(value: string | string[]): boolean {
  if (typeof value !== 'string') return false;
  if (!value.includes(',')) return isIP(value.trim()) !== 0;
  for (const hop of value.split(',')) if (isIP(hop.trim()) === 0) return false;
  return true;
}

export function requestInputs(url: string, headers: IncomingHttpHeaders): Input[] {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const inputs: Input[] = [{ where: 'path', value: path, path: true }];
  // Each segment alone too: an app routes segments to parameters (/items/{id}), so a segment is a value.
  // A long segment of word characters only may be base64 of an attack (firstFinding decides).
  for (const segment of path.split('/')) if (/[^\w.~-]/.test(segment) || segment.length >= 8) inputs.push({ where: 'path segment', value: segment });
  if (q !== -1) inputs.push(...parameterInputs(pairs(url.slice(q + 1)), 'query', true));
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || headerUnread(name, value)) continue;
    if (name === 'x-forwarded-for' && onlyAddresses(value)) continue;
    if (name === 'cookie') {
      for (const part of String(value).split(';')) {
        const eq = part.indexOf('=');
        const cookie = (eq === -1 ? part : part.slice(0, eq)).trim();
        // PHP decodes a cookie's name and value as a form's (urldecode): '+' is a space there.
        inputs.push({ where: 'cookie name', param: cookie, value: cookie, name: true, plus: true });
        if (eq !== -1) inputs.push({ where: `cookie ${cookie.slice(0, 40)}`, param: cookie, value: part.slice(eq + 1).trim(), plus: true });
      }
      continue;
    }
    // Basic's pair is read decoded, besides the header as sent; other schemes' tokens (a JWT, a
    // Digest answer) are read as sent, not decoded.
    if (name === 'authorization' && typeof value === 'string') inputs.push(...basicCredentials(value));
    for (const one of Array.isArray(value) ? value : [value]) inputs.push({ where: name === 'user-agent' ? 'user-agent' : `header ${name}`, value: one });
  }
  return inputs;
}
