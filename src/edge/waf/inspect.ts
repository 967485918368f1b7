// The WAF's inspection, pure: protocol checks on the request line and headers, then every rule
// against every decoded input — path, query names and values, cookies, non-structural headers,
// and bodies up to a bound (urlencoded, JSON string values, multipart fields, XML and text as
// they are). Inputs are decoded the ways attackers encode them: percent-decoding (twice, for
// double encoding), HTML entities, NUL bytes removed, base64 that decodes to text, case folded.
import type { IncomingHttpHeaders } from 'node:http';
import { LRUCache } from 'lru-cache';
import { INJECTION_RULES } from './rules/injection.ts';
import { LFI_RULES } from './rules/lfi.ts';
import { RCE_RULES } from './rules/rce.ts';
import { SCANNER_RULES } from './rules/scanners.ts';
import { SQLI_RULES } from './rules/sqli.ts';
import type { Rule } from './rules/types.ts';
import { XSS_RULES } from './rules/xss.ts';

export const ATTACK_RULES: readonly Rule[] = [...SQLI_RULES, ...XSS_RULES, ...RCE_RULES, ...LFI_RULES, ...INJECTION_RULES];
export { SCANNER_RULES };

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
/** Headers whose values are structure the server parses itself (not free text an app echoes). */
const STRUCTURAL = new Set([
  'host', 'accept', 'accept-encoding', 'accept-language', 'accept-charset', 'connection', 'content-length', 'content-type', 'cookie', 'authorization',
  'if-none-match', 'if-modified-since', 'if-match', 'if-unmodified-since', 'if-range', 'range', 'cache-control', 'pragma', 'upgrade-insecure-requests',
  'te', 'x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host', 'x-real-ip', 'via', 'dnt', 'priority', 'origin', 'content-encoding', 'transfer-encoding',
  'upgrade', 'sec-websocket-key', 'sec-websocket-version', 'sec-websocket-extensions', 'sec-websocket-protocol', 'user-agent', 'traceparent', 'tracestate',
]);
const MAX_URL = 8192;
const MAX_HEADERS = 100;
export const MAX_INSPECTED_BODY = 64 * 1024;

export interface Finding {
  status: number;
  rule: number;
  class: Rule['class'];
  where: string;
}

function percentDecode(text: string): string | undefined {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

const ENTITIES: Record<string, string> = { lt: '<', gt: '>', quot: '"', apos: "'", amp: '&', equals: '=', colon: ':', lpar: '(', rpar: ')', sol: '/', bsol: '\\', semi: ';', tab: '\t', newline: '\n' };

function entityDecode(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(/&(?:#x([0-9a-f]+)|#(\d+)|([a-z]+));?/gi, (whole, hex: string | undefined, dec: string | undefined, name: string | undefined) => {
    const code = hex !== undefined ? parseInt(hex, 16) : dec !== undefined ? Number(dec) : undefined;
    if (code !== undefined) return code > 0 && code < 0x110000 ? String.fromCodePoint(code) : '';
    return ENTITIES[name!.toLowerCase()] ?? whole;
  });
}

/** Base64 (standard or URL alphabet) that decodes to mostly printable text. */
function base64Text(text: string): string | undefined {
  if (text.length < 8 || text.length > 16_384 || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) return undefined;
  const decoded = Buffer.from(text, /[-_]/.test(text) ? 'base64url' : 'base64').toString('latin1');
  let printable = 0;
  for (let i = 0; i < decoded.length; i++) {
    const c = decoded.charCodeAt(i);
    if ((c >= 32 && c < 127) || c === 9 || c === 10 || c === 13) printable++;
  }
  return decoded.length > 0 && printable / decoded.length > 0.9 ? decoded : undefined;
}

/** The forms of a value the rules look at. */
export function decodedForms(value: string): string[] {
  const forms = new Set<string>();
  const add = (text: string) => forms.add(entityDecode(text.replace(/\0/g, '')).toLowerCase().replace(/[ \t\v\f]+/g, ' '));
  add(value);
  const once = percentDecode(value);
  if (once !== undefined && once !== value) {
    add(once);
    const twice = percentDecode(once);
    if (twice !== undefined && twice !== once) add(twice);
  }
  const b64 = base64Text(value);
  if (b64) add(b64);
  return [...forms];
}

function pairs(text: string): Array<[string, string]> {
  if (text === '') return [];
  return text.split('&').map((part) => {
    const eq = part.indexOf('=');
    return eq === -1 ? [part, ''] : [part.slice(0, eq), part.slice(eq + 1)];
  });
}

function jsonStrings(value: unknown, out: string[], depth = 0): void {
  if (depth > 32 || out.length > 1000) return;
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) jsonStrings(v, out, depth + 1);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      out.push(k);
      jsonStrings(v, out, depth + 1);
    }
  }
}

/** The body's inputs by its type (up to MAX_INSPECTED_BODY bytes). */
function bodyInputs(body: Buffer, contentType: string): string[] {
  const text = body.subarray(0, MAX_INSPECTED_BODY).toString('utf8');
  const type = contentType.toLowerCase();
  if (type.startsWith('application/x-www-form-urlencoded')) return pairs(text).flat();
  if (type.includes('json')) {
    try {
      const out: string[] = [];
      jsonStrings(JSON.parse(text), out);
      return out;
    } catch {
      return [text];
    }
  }
  if (type.startsWith('multipart/form-data')) {
    const boundary = /boundary="?([^";]+)"?/.exec(contentType)?.[1];
    if (!boundary) return [text];
    return text
      .split(`--${boundary}`)
      .map((part) => {
        const split = part.indexOf('\r\n\r\n');
        return split === -1 ? '' : part.slice(split + 4).replace(/\r\n$/, '');
      })
      .filter(Boolean);
  }
  return [text];
}

/** Protocol checks: what no well-formed request does. */
export function protocolFinding(method: string, url: string, headers: IncomingHttpHeaders, rawHeaderCount: number): Finding | undefined {
  if (!METHODS.has(method)) return { status: 405, rule: 920100, class: 'protocol', where: 'method' };
  if (url.length > MAX_URL) return { status: 414, rule: 920110, class: 'protocol', where: 'url' };
  if (rawHeaderCount > MAX_HEADERS) return { status: 431, rule: 920120, class: 'protocol', where: 'headers' };
  const path = url.split('?')[0]!;
  if (/%(?![0-9a-fA-F]{2})/.test(url)) return { status: 400, rule: 920130, class: 'protocol', where: 'url (invalid percent-encoding)' };
  const decoded = percentDecode(path) ?? path;
  if (decoded.includes('\0')) return { status: 400, rule: 920140, class: 'protocol', where: 'path (NUL)' };
  if (headers['content-length'] !== undefined && headers['transfer-encoding'] !== undefined) return { status: 400, rule: 920150, class: 'protocol', where: 'both Content-Length and Transfer-Encoding' };
  return undefined;
}

/** A form with nothing but letters, digits and - _ . / (the plain rules are the only ones that can match). */
const PLAIN = /^[a-z0-9\-_./]*$/;

function firstMatch(rules: readonly Rule[], inputs: Array<[string, string]>): Finding | undefined {
  for (const [where, value] of inputs) {
    if (value === '') continue;
    for (const form of decodedForms(value)) {
      const plain = PLAIN.test(form);
      for (const rule of rules) {
        if (plain && !rule.plain) continue;
        if (rule.notInBody && where === 'body') continue;
        if (rule.pattern.test(form)) return { status: 403, rule: rule.id, class: rule.class, where };
      }
    }
  }
  return undefined;
}

/**
 * Verdicts on bodyless requests, by everything the rules read of them: most traffic repeats the
 * same URLs with the same headers, and a string key costs far less than the rules. An attacker
 * varying requests only fills it (bounded).
 */
const verdicts = new LRUCache<string, { finding: Finding | null }>({ max: 50_000 });

/** The first rule any input of the request matches, or undefined. */
export function inspect(method: string, url: string, headers: IncomingHttpHeaders, body?: Buffer): Finding | undefined {
  if (body && body.length > 0) return inspectNow(method, url, headers, body);
  let key = `${method} ${url}`;
  for (const name in headers) {
    if (name !== 'cookie' && name !== 'user-agent' && (STRUCTURAL.has(name) || name.startsWith('sec-'))) continue;
    key += `\n${name}:${String(headers[name])}`;
  }
  if (key.length > 4096) return inspectNow(method, url, headers);
  const known = verdicts.get(key);
  if (known) return known.finding ?? undefined;
  const finding = inspectNow(method, url, headers);
  verdicts.set(key, { finding: finding ?? null });
  return finding;
}

function inspectNow(method: string, url: string, headers: IncomingHttpHeaders, body?: Buffer): Finding | undefined {
  const ua = headers['user-agent'];
  const scanner = ua ? firstMatch(SCANNER_RULES, [['user-agent', ua]]) : undefined;
  if (scanner) return scanner;
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  // The path whole, and without its leading slash (so that an encoded segment is seen as one value).
  const inputs: Array<[string, string]> = [['path', path], ['path', path.slice(1)]];
  for (const [name, value] of pairs(q === -1 ? '' : url.slice(q + 1))) inputs.push(['query name', name], [`query ${name.slice(0, 40)}`, value]);
  const cookie = headers.cookie;
  if (cookie) for (const part of cookie.split(';')) inputs.push(['cookie', part.slice(part.indexOf('=') + 1).trim()]);
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || STRUCTURAL.has(name) || name.startsWith('sec-')) continue;
    for (const one of Array.isArray(value) ? value : [value]) inputs.push([`header ${name}`, one]);
  }
  if (ua) inputs.push(['user-agent', ua]);
  if (body && body.length > 0) for (const value of bodyInputs(body, String(headers['content-type'] ?? ''))) inputs.push(['body', value]);
  return firstMatch(ATTACK_RULES, inputs);
}
