// Reads zone-file text into resource records: $ORIGIN, $TTL, relative names, "@", an owner
// carried from the line before, TTL and class in either order (class IN optional), multi-line
// "( … )", comments, escapes. $INCLUDE is refused (the file may name only itself: a path on our
// side is none of its business), and so is every other directive. Pure: no I/O.
import { Slices } from './slices.ts';
import { GEO_COMMENT, tokenize, ZoneFileSyntaxError, type LogicalLine, type Token } from './tokens.ts';

export interface ZoneFileRecord {
  line: number;
  /** Absolute, lower-case, no final dot. */
  owner: string;
  ttl: number;
  /** The type mnemonic in upper case ("A", "TYPE65"). */
  type: string;
  rdata: Token[];
  /** GeoNames IDs from a `;palisade-geo` comment: a variant the zone-file form cannot express. */
  target?: number[];
}

export interface LineError {
  line: number;
  message: string;
}

export interface ParsedZoneFile {
  records: ZoneFileRecord[];
  errors: LineError[];
}

export interface ParseOptions {
  /** The zone's apex, the initial $ORIGIN. */
  origin: string;
  /** TTL for records before any $TTL or explicit TTL. */
  defaultTtl: number;
  /** Parsing stops with an error past this many records. */
  maxRecords: number;
}

/** At most this many errors are reported; the file is refused either way. */
const MAX_ERRORS = 100;
const CLASSES = new Set(['IN', 'CH', 'HS', 'CS', 'ANY', 'NONE']);
const TTL_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 };

/** A TTL as BIND writes it: seconds, or units ("1h30m", "2d"). undefined when not one. */
export function parseTtl(text: string): number | undefined {
  if (/^\d{1,10}$/.test(text)) {
    const n = Number(text);
    return n <= 2_147_483_647 ? n : undefined;
  }
  const lower = text.toLowerCase();
  if (!/^(\d{1,10}[smhdw])+$/.test(lower)) return undefined;
  let total = 0;
  for (const [, digits, unit] of lower.matchAll(/(\d+)([smhdw])/g)) total += Number(digits) * TTL_UNITS[unit!]!;
  return total <= 2_147_483_647 ? total : undefined;
}

/**
 * A name as written in a zone file, made absolute against `origin`: "@" is the origin, a name
 * without a final dot is relative. Escapes: \X is X, \DDD the octet DDD. A label holding a dot
 * (an escaped one) is refused: no name the service serves has one.
 */
export function absoluteZoneName(text: string, origin: string): string | { error: string } {
  if (text === '@') return origin;
  let decoded = '';
  let absolute = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\') {
      const digits = text.slice(i + 1, i + 4);
      let ch: string;
      if (/^\d{3}$/.test(digits)) {
        if (Number(digits) > 255) return { error: `\\${digits} is not an octet` };
        ch = String.fromCharCode(Number(digits));
        i += 3;
      } else {
        if (i + 1 >= text.length) return { error: 'a name ends in a backslash' };
        ch = text[i + 1]!;
        i += 1;
      }
      if (ch === '.') return { error: `"${text}" has a label holding a dot` };
      decoded += ch;
      continue;
    }
    if (c === '.' && i === text.length - 1) {
      absolute = true;
      break;
    }
    decoded += c;
  }
  if (decoded === '' && absolute) return '';
  const name = absolute ? decoded : origin === '' ? decoded : `${decoded}.${origin}`;
  return name.toLowerCase();
}

/** What reading carries from one line to the next. */
interface ReadState {
  origin: string;
  /** From $TTL. */
  defaultTtl: number | undefined;
  /** The last record's explicit TTL (BIND's rule where no $TTL was given). */
  lastTtl: number | undefined;
  /** The last record's owner: an indented line's. */
  lastOwner: string | undefined;
}

/** Parses a zone file in slices; never throws on bad input (every problem is a line error). */
export async function parseZoneFile(text: string, options: ParseOptions): Promise<ParsedZoneFile> {
  const errors: LineError[] = [];
  const records: ZoneFileRecord[] = [];
  const slices = new Slices();
  const state: ReadState = { origin: options.origin, defaultTtl: undefined, lastTtl: undefined, lastOwner: undefined };
  try {
    for (const logical of tokenize(text)) {
      if (slices.due()) await slices.pause();
      if (errors.length >= MAX_ERRORS) break;
      const read = readLine(logical, state, options.defaultTtl);
      if (typeof read === 'string') errors.push({ line: logical.line, message: read });
      else if (read && records.length >= options.maxRecords) {
        errors.push({ line: logical.line, message: `the file holds more than ${options.maxRecords} records` });
        break;
      } else if (read) records.push(read);
    }
  } catch (error) {
    if (error instanceof ZoneFileSyntaxError) return { records, errors: [...errors, { line: error.line, message: error.message }] };
    throw error;
  }
  return { records, errors };
}

/** One logical line read: its record, the message of its error, or nothing (a directive taken). */
function readLine(logical: LogicalLine, state: ReadState, fallbackTtl: number): ZoneFileRecord | string | undefined {
  const geo = logical.geo === undefined ? undefined : geoLine(logical.geo);
  if (typeof geo === 'string') return geo;
  const tokens = geo ? geo.tokens : logical.tokens;
  const indented = geo ? false : logical.indented;
  const head = tokens[0]!;
  if (!head.quoted && head.text.startsWith('$') && !indented) return directive(tokens, state);
  const owner = indented ? state.lastOwner : absoluteZoneName(head.text, state.origin);
  if (owner === undefined) return 'the first record needs an owner name';
  if (typeof owner !== 'string') return owner.error;
  const { ttl, klass, at } = ttlAndClass(tokens, indented ? 0 : 1);
  if (klass !== undefined && klass !== 'IN') return `class ${klass}: only IN is served`;
  const typeToken = tokens[at];
  if (!typeToken || typeToken.quoted || !/^[A-Za-z][A-Za-z0-9-]*$/.test(typeToken.text)) return typeToken ? `"${typeToken.text}" is not a record type` : 'the record has no type';
  if (ttl !== undefined) state.lastTtl = ttl;
  state.lastOwner = owner;
  return {
    line: logical.line,
    owner,
    ttl: ttl ?? state.defaultTtl ?? state.lastTtl ?? fallbackTtl,
    type: typeToken.text.toUpperCase(),
    rdata: tokens.slice(at + 1),
    ...(geo && { target: geo.target }),
  };
}

/** ";palisade-geo 2921044,6255148 shop 300 IN A 192.0.2.2": the targets, then a record line's tokens. */
function geoLine(comment: string): { target: number[]; tokens: Token[] } | string {
  let inner: LogicalLine[];
  try {
    inner = [...tokenize(comment)];
  } catch (error) {
    return `${GEO_COMMENT.trim()} comment: ${(error as Error).message}`;
  }
  const [first, ...rest] = inner[0]?.tokens ?? [];
  if (!first || !/^\d+(,\d+)*$/.test(first.text) || rest.length === 0) return `${GEO_COMMENT.trim()} comment must be "${GEO_COMMENT}ID[,ID…] OWNER [TTL] [IN] TYPE DATA"`;
  return { target: first.text.split(',').map(Number), tokens: rest };
}

/** $ORIGIN and $TTL change the state; any other directive is refused (its message returned). */
function directive(tokens: Token[], state: ReadState): string | undefined {
  const name = tokens[0]!.text;
  switch (name.toUpperCase()) {
    case '$ORIGIN': {
      const origin = tokens[1] && absoluteZoneName(tokens[1].text, state.origin);
      if (!tokens[1] || tokens.length > 2 || !tokens[1].text.endsWith('.') || typeof origin !== 'string') return '$ORIGIN takes one absolute name (ending in ".")';
      state.origin = origin;
      return undefined;
    }
    case '$TTL': {
      const ttl = tokens[1] && parseTtl(tokens[1].text);
      if (ttl === undefined || tokens.length > 2) return '$TTL takes one TTL (seconds, or units such as 1h30m)';
      state.defaultTtl = ttl;
      return undefined;
    }
    case '$INCLUDE':
      return '$INCLUDE is not accepted: send the whole zone in one file';
    default:
      return `${name} is not a directive this service takes ($ORIGIN and $TTL are)`;
  }
}

/** The TTL and class after the owner, in either order, and the index of the type that follows them. */
function ttlAndClass(tokens: Token[], from: number): { ttl: number | undefined; klass: string | undefined; at: number } {
  let at = from;
  let ttl: number | undefined;
  let klass: string | undefined;
  for (let k = 0; k < 2 && at < tokens.length; k++) {
    const t = tokens[at]!;
    if (t.quoted) break;
    const maybeTtl = ttl === undefined ? parseTtl(t.text) : undefined;
    if (maybeTtl !== undefined) {
      ttl = maybeTtl;
      at++;
    } else if (klass === undefined && CLASSES.has(t.text.toUpperCase())) {
      klass = t.text.toUpperCase();
      at++;
    } else break;
  }
  return { ttl, klass, at };
}
