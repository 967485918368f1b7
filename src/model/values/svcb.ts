// SVCB and HTTPS record data (RFC 9460): the presentation form read and written, the wire form
// of the SvcParams built. A value is parsed into its wire meaning, then printed back the way NSD
// and BIND print it, so two spellings of the same data compare equal as strings:
// `1 . alpn="h2,h3" ipv4hint=192.0.2.1`. Cost is linear in the text, and the text is capped.
import { isIPv4 } from 'node:net';
import { canonicalIp, ipToBytes } from '../ip.ts';
import { normaliseTargetName, type Checked } from '../names.ts';

const ok = <T>(value: T): Checked<T> => ({ ok: true, value });
const fail = <T>(message: string): Checked<T> => ({ ok: false, message });

/** The longest canonical value kept: it must fit the API's `value` (4,096 characters) to come back unchanged. */
export const SVCB_MAX_CHARS = 4096;
/** More params than this in one record is no service description but an attack on the parser. */
export const SVCB_MAX_PARAMS = 64;

export interface SvcParam {
  key: number;
  value: Buffer;
}

export interface SvcbData {
  priority: number;
  /** Absolute, lower case, no final dot; "" is the root ("." in the presentation form). */
  target: string;
  /** Sorted by key, no key twice. */
  params: SvcParam[];
}

/** The SvcParamKeys with a name (RFC 9460 §14.3.2, RFC 9461 for dohpath). */
const KEY_NAMES = ['mandatory', 'alpn', 'no-default-alpn', 'port', 'ipv4hint', 'ech', 'ipv6hint', 'dohpath'] as const;
const KEY = { mandatory: 0, alpn: 1, noDefaultAlpn: 2, port: 3, ipv4hint: 4, ech: 5, ipv6hint: 6, dohpath: 7 } as const;
/** "Invalid key" (RFC 9460 §14.3.2): never in data. */
const INVALID_KEY = 65535;

export function keyName(key: number): string {
  return KEY_NAMES[key] ?? `key${key}`;
}

/** A key's number from its name or its keyNNNNN form; undefined for neither. */
function keyNumber(name: string): number | undefined {
  const known = (KEY_NAMES as readonly string[]).indexOf(name);
  if (known >= 0) return known;
  const generic = /^key(0|[1-9]\d{0,4})$/.exec(name);
  if (!generic) return undefined;
  const n = Number(generic[1]);
  return n < INVALID_KEY ? n : undefined;
}

// ── Presentation text → tokens ────────────────────────────────────────────────────────────────

interface ParamToken {
  key: string;
  /** The value as written (quotes removed, escapes kept); undefined for a bare key. */
  raw: string | undefined;
}

/**
 * Splits the value into whitespace-separated fields; a `key="…"` value may hold spaces. Returns
 * the plain fields before the params (priority, target) and the params.
 */
function splitFields(text: string): Checked<{ head: string[]; params: ParamToken[] }> {
  const head: string[] = [];
  const params: ParamToken[] = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    const start = i;
    let eq = -1;
    while (i < n && !/[\s"]/.test(text[i]!)) {
      if (text[i] === '\\') i++;
      else if (text[i] === '=' && eq === -1) eq = i;
      i++;
    }
    const field = text.slice(start, Math.min(i, n));
    if (head.length < 2) {
      if (i < n && text[i] === '"') return fail(`"${field}${text.slice(i, i + 10)}…" is not a ${head.length === 0 ? 'SvcPriority' : 'TargetName'}`);
      head.push(field);
      continue;
    }
    if (eq === -1) {
      if (i < n && text[i] === '"') return fail(`a quoted value must follow "key=" (at "${field}")`);
      params.push({ key: field, raw: undefined });
      continue;
    }
    const key = text.slice(start, eq);
    let raw = text.slice(eq + 1, Math.min(i, n));
    if (raw === '' && i < n && text[i] === '"') {
      // key="quoted value": up to the closing quote, escapes kept for the char-string decoding.
      const open = i;
      i++;
      while (i < n && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
      if (i >= n) return fail(`the quoted value of ${key} is not closed`);
      raw = text.slice(open + 1, i);
      i++;
      if (i < n && !/\s/.test(text[i]!)) return fail(`a space must follow the quoted value of ${key}`);
    } else if (i < n && text[i] === '"') return fail(`a quote inside the value of ${key}: quote the whole value (${key}="…")`);
    params.push({ key, raw });
  }
  return ok({ head, params });
}

/** A char-string's octets (RFC 1035 §5.1): \DDD is the octet DDD, \X is X; the rest as UTF-8. */
function decodeCharString(raw: string): Checked<Buffer> {
  const out: number[] = [];
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c !== '\\') {
      const code = c.charCodeAt(0);
      if (code < 0x80) out.push(code);
      else {
        const ch = String.fromCodePoint(raw.codePointAt(i)!);
        out.push(...Buffer.from(ch, 'utf8'));
        i += ch.length - 1;
      }
      continue;
    }
    const digits = raw.slice(i + 1, i + 4);
    if (/^\d{3}$/.test(digits)) {
      const octet = Number(digits);
      if (octet > 255) return fail(`\\${digits} is not an octet`);
      out.push(octet);
      i += 3;
    } else if (i + 1 < raw.length) {
      i++;
      const ch = String.fromCodePoint(raw.codePointAt(i)!);
      out.push(...Buffer.from(ch, 'utf8'));
      i += ch.length - 1;
    } else return fail('a value ends in a backslash');
  }
  return ok(Buffer.from(out));
}

/**
 * A value-list (RFC 9460 Appendix A.1): items split at commas, a comma or backslash inside an
 * item escaped with a backslash (after the char-string decoding: `alpn="a\\,b"` is one item "a,b").
 */
function splitValueList(bytes: Buffer): Buffer[] {
  const items: Buffer[] = [];
  let current: number[] = [];
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b === 0x5c && i + 1 < bytes.length) {
      current.push(bytes[++i]!);
    } else if (b === 0x2c) {
      items.push(Buffer.from(current));
      current = [];
    } else current.push(b);
  }
  items.push(Buffer.from(current));
  return items;
}

// ── Each key's value → wire ───────────────────────────────────────────────────────────────────

const u16 = (n: number) => Buffer.from([n >> 8, n & 0xff]);
const STRICT_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function valueWire(key: number, raw: string | undefined): Checked<Buffer> {
  const name = keyName(key);
  if (key === KEY.noDefaultAlpn) return raw === undefined || raw === '' ? ok(Buffer.alloc(0)) : fail('no-default-alpn takes no value');
  if (raw === undefined) {
    if (key >= KEY_NAMES.length) return ok(Buffer.alloc(0));
    return fail(`${name} needs a value (${name}=…)`);
  }
  const decoded = decodeCharString(raw);
  if (!decoded.ok) return fail(`${name}: ${decoded.message}`);
  const bytes = decoded.value;
  const text = bytes.toString('latin1');
  switch (key) {
    case KEY.mandatory: {
      const keys: number[] = [];
      for (const item of splitValueList(bytes)) {
        const k = keyNumber(item.toString('latin1'));
        if (k === undefined) return fail(`mandatory lists "${item.toString('latin1')}", which is no SvcParamKey`);
        if (k === KEY.mandatory) return fail('mandatory may not list itself (RFC 9460 §8)');
        if (keys.includes(k)) return fail(`mandatory lists ${keyName(k)} twice`);
        keys.push(k);
      }
      keys.sort((a, b) => a - b);
      return ok(Buffer.concat(keys.map(u16)));
    }
    case KEY.alpn: {
      const ids = splitValueList(bytes);
      const parts: Buffer[] = [];
      for (const id of ids) {
        if (id.length === 0) return fail('alpn has an empty protocol identifier');
        if (id.length > 255) return fail('alpn has a protocol identifier longer than 255 octets');
        parts.push(Buffer.from([id.length]), id);
      }
      return ok(Buffer.concat(parts));
    }
    case KEY.port: {
      if (!/^\d{1,5}$/.test(text) || Number(text) > 65535) return fail(`port must be an integer from 0 to 65535, not "${text.slice(0, 20)}"`);
      return ok(u16(Number(text)));
    }
    case KEY.ipv4hint:
    case KEY.ipv6hint: {
      const family = key === KEY.ipv4hint ? 4 : 6;
      const parts: Buffer[] = [];
      for (const item of text.split(',')) {
        const ip = family === 4 ? (isIPv4(item) ? { address: item, family: 4 } : undefined) : canonicalIp(item);
        if (!ip || ip.family !== family) return fail(`${name}: "${item.slice(0, 45)}" is not an IPv${family} address`);
        parts.push(Buffer.from(ipToBytes(ip.address)));
      }
      return ok(Buffer.concat(parts));
    }
    case KEY.ech: {
      if (text === '' || !STRICT_BASE64.test(text)) return fail('ech must be an ECHConfigList in base64 (RFC 4648, with padding)');
      return ok(Buffer.from(text, 'base64'));
    }
    case KEY.dohpath: {
      // RFC 9461 §5: a relative URI template, UTF-8, with the "dns" variable.
      const path = bytes.toString('utf8');
      if (!Buffer.from(path, 'utf8').equals(bytes)) return fail('dohpath must be UTF-8');
      if (!path.startsWith('/') || !/\{[?&]?dns\}/.test(path)) return fail('dohpath must be a relative URI template starting with "/" and holding the "dns" variable ("/dns-query{?dns}")');
      return ok(bytes);
    }
    default:
      return ok(bytes);
  }
}

// ── Presentation text → data ──────────────────────────────────────────────────────────────────

/** Reads `SvcPriority TargetName SvcParams…`; names in `zone` ("@" is the apex). */
export function parseSvcb(text: string, zone: string): Checked<SvcbData> {
  if (text.length > SVCB_MAX_CHARS * 4) return fail(`is ${text.length} characters; far past the ${SVCB_MAX_CHARS} its canonical form may have`);
  const fields = splitFields(text);
  if (!fields.ok) return fields;
  const { head, params } = fields.value;
  if (head.length < 2) return fail('must be "SvcPriority TargetName [SvcParams…]" ("1 . alpn=h2")');
  const [priorityText, targetText] = head as [string, string];
  if (!/^\d{1,5}$/.test(priorityText) || Number(priorityText) > 65535) return fail(`SvcPriority must be an integer from 0 to 65535, not "${priorityText.slice(0, 20)}"`);
  const priority = Number(priorityText);
  let target = '';
  if (targetText !== '.') {
    const name = normaliseTargetName(targetText, zone);
    if (!name.ok) return fail(`TargetName "${targetText.slice(0, 60)}" ${name.message}`);
    target = name.value;
  }
  if (priority === 0 && params.length > 0) return fail('AliasMode (SvcPriority 0) carries no SvcParams (RFC 9460 §2.4.2)');
  if (params.length > SVCB_MAX_PARAMS) return fail(`has ${params.length} SvcParams; at most ${SVCB_MAX_PARAMS} are taken`);
  const out: SvcParam[] = [];
  const seen = new Set<number>();
  for (const p of params) {
    const key = keyNumber(p.key.toLowerCase());
    if (key === undefined) return fail(`"${p.key.slice(0, 30)}" is not a SvcParamKey (${KEY_NAMES.join(', ')}, or keyNNNNN below 65535)`);
    if (seen.has(key)) return fail(`${keyName(key)} is given twice (RFC 9460 §2.2)`);
    seen.add(key);
    const value = valueWire(key, p.raw);
    if (!value.ok) return value;
    if (value.value.length > 65535) return fail(`${keyName(key)} is longer than 65,535 octets`);
    out.push({ key, value: value.value });
  }
  out.sort((a, b) => a.key - b.key);
  const mandatory = out.find((p) => p.key === KEY.mandatory);
  if (mandatory) {
    for (let i = 0; i < mandatory.value.length; i += 2) {
      const k = mandatory.value.readUInt16BE(i);
      if (!seen.has(k)) return fail(`mandatory lists ${keyName(k)}, which the record does not have (RFC 9460 §8)`);
    }
  }
  if (seen.has(KEY.noDefaultAlpn) && !seen.has(KEY.alpn)) return fail('no-default-alpn needs alpn beside it (RFC 9460 §7.1.1)');
  const data: SvcbData = { priority, target, params: out };
  const wire = rdataLength(data);
  if (wire > 65535) return fail(`is ${wire} octets on the wire; record data is at most 65,535`);
  return ok(data);
}

/** The RDATA's length on the wire (priority, uncompressed target, params). */
export function rdataLength(d: SvcbData): number {
  const target = d.target === '' ? 1 : d.target.length + 2;
  return 2 + target + d.params.reduce((sum, p) => sum + 4 + p.value.length, 0);
}

/** The SvcParams as sent: key, length, value, keys in increasing order. */
export function paramsWire(params: readonly SvcParam[]): Buffer {
  const parts: Buffer[] = [];
  for (const p of params) parts.push(u16(p.key), u16(p.value.length), p.value);
  return Buffer.concat(parts);
}

// ── Data → canonical presentation ─────────────────────────────────────────────────────────────

/** Octets as the inside of a quoted char-string: `"` and `\` escaped, others outside ASCII print range as \DDD. */
function escapeOctets(bytes: Buffer, extra?: (b: number) => boolean): string {
  let out = '';
  for (const b of bytes) {
    if (b === 0x22 || b === 0x5c) out += `\\${String.fromCharCode(b)}`;
    else if (b < 0x20 || b >= 0x7f) out += `\\${String(b).padStart(3, '0')}`;
    else if (extra?.(b)) out += `\\${String.fromCharCode(b)}`;
    else out += String.fromCharCode(b);
  }
  return out;
}

/** A value-list item's octets, its own commas and backslashes escaped (a second level, doubled by the quoting). */
const listItem = (item: Buffer): string => escapeOctets(Buffer.from([...item].flatMap((b) => (b === 0x2c || b === 0x5c ? [0x5c, b] : [b]))));

function ipList(value: Buffer, size: 4 | 16): string {
  const out: string[] = [];
  for (let i = 0; i < value.length; i += size) {
    const b = value.subarray(i, i + size);
    out.push(size === 4 ? [...b].join('.') : canonicalIp([...Array(8).keys()].map((k) => b.readUInt16BE(k * 2).toString(16)).join(':'))!.address);
  }
  return out.join(',');
}

function paramText(p: SvcParam): string {
  const name = keyName(p.key);
  const v = p.value;
  switch (p.key) {
    case KEY.mandatory:
      return `${name}=${[...Array(v.length / 2).keys()].map((i) => keyName(v.readUInt16BE(i * 2))).join(',')}`;
    case KEY.alpn: {
      const ids: string[] = [];
      for (let i = 0; i < v.length; i += 1 + v[i]!) ids.push(listItem(v.subarray(i + 1, i + 1 + v[i]!)));
      return `${name}="${ids.join(',')}"`;
    }
    case KEY.noDefaultAlpn:
      return name;
    case KEY.port:
      return `${name}=${v.readUInt16BE(0)}`;
    case KEY.ipv4hint:
      return `${name}=${ipList(v, 4)}`;
    case KEY.ipv6hint:
      return `${name}=${ipList(v, 16)}`;
    case KEY.ech:
      return `${name}=${v.toString('base64')}`;
    default:
      return v.length === 0 ? name : `${name}="${escapeOctets(v)}"`;
  }
}

/** The form NSD and BIND print: `1 svc.example.org. alpn="h2,h3" port=8443`. */
export function svcbPresentation(d: SvcbData): string {
  return [String(d.priority), d.target === '' ? '.' : `${d.target}.`, ...d.params.map(paramText)].join(' ');
}

/** A value as the API takes it → its canonical form, or why it is refused. */
export function canonicalSvcb(text: string, zone: string): Checked<string> {
  const data = parseSvcb(text, zone);
  if (!data.ok) return data;
  const canonical = svcbPresentation(data.value);
  if (canonical.length > SVCB_MAX_CHARS) return fail(`is ${canonical.length} characters in canonical form; at most ${SVCB_MAX_CHARS}`);
  return ok(canonical);
}
