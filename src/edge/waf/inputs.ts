// What of a request line and its headers the rules read, as named inputs: the path, each query
// parameter's name and value (and repeated parameters joined with ',' as ASP.NET does, and
// concatenated, so that a payload split across them is seen whole), cookie names and values,
// and every header but a short list of ones the edge or the client library parses itself.
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
}

/**
 * Headers not inspected: framing and connection management the edge handles itself, validators
 * and cache directives whose syntax the edge or Node checks, and the WebSocket key. Everything
 * else is read, Sec-* and X-* included.
 */
export const EXEMPT_HEADERS = new Set([
  'host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'te', 'upgrade', 'accept-encoding',
  'if-none-match', 'if-match', 'if-modified-since', 'if-unmodified-since', 'if-range', 'cache-control', 'pragma',
  'sec-websocket-key', 'sec-websocket-version',
]);

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
    out.push({ where: `${label} ${param.slice(0, 40)}`, param, value, plus, body });
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
    if (value === undefined || EXEMPT_HEADERS.has(name)) continue;
    if (name === 'x-forwarded-for' && onlyAddresses(value)) continue;
    if (name === 'cookie') {
      for (const part of String(value).split(';')) {
        const eq = part.indexOf('=');
        const cookie = (eq === -1 ? part : part.slice(0, eq)).trim();
        inputs.push({ where: 'cookie name', param: cookie, value: cookie, name: true });
        if (eq !== -1) inputs.push({ where: `cookie ${cookie.slice(0, 40)}`, param: cookie, value: part.slice(eq + 1).trim() });
      }
      continue;
    }
    for (const one of Array.isArray(value) ? value : [value]) inputs.push({ where: name === 'user-agent' ? 'user-agent' : `header ${name}`, value: one });
  }
  return inputs;
}
