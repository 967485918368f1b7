// A request body (already decompressed) as inputs, read as what its Content-Type says a backend
// will parse it as (body-types.ts): forms, JSON, XML and text are always read, NUL bytes and
// magic numbers in them are data; multipart parts without a file name are fields, read whatever
// their bytes; only a file whose declared binary type its content matches is skipped (its name
// and headers still read, server code behind its magic number refused). JSON is recognised
// without its type too (text/plain), with or without a BOM, and read string by string, so that
// duplicate keys and \u escapes are all seen; multipart is split on its boundary with CRLF or LF
// line ends, quoted-printable and base64 parts are decoded; XML is read whole by the markup rules
// and text by text by all. What cannot be read so — a charset outside the allow-list, JSON not in
// UTF-8, an upload the server would run — is a refusal, applied after the rules (so an attack
// in it is named by its own rule).
import { allowedCharset, binaryType, mediaType, skippableBinary, unreadableEncoding } from './body-types.ts';
import { parameterInputs, pairs, type Input } from './inputs.ts';
import { codeBehindMagic, serverExecutableName } from './uploads.ts';

/** What the body's own structure refuses (after the rules, and subject to the domain's exclusions). */
export interface BodyRefusal {
  status: number;
  rule: number;
  where: string;
  /** The multipart field it is in, for exclusions limited to one parameter. */
  param?: string;
}

/** A body read: the inputs the rules read, and what it is refused for whatever the rules say. */
export interface BodyRead {
  inputs: Input[];
  refusals: BodyRefusal[];
}

/** Rule ids of the refusals (the descriptions are in rules/uploads.ts; 920480 is CRS's charset rule). */
export const CHARSET_RULE = 920480;
export const SERVER_FILE_RULE = 933110;
export const HIDDEN_CODE_RULE = 933100;

/**
 * A whole text is read in windows of at most this many characters (what one detector pass gets)…
 */
const MAX_TEXT = 256 * 1024;
/** …each after the first starting at a line start within this of the last one's end (or at it). */
const WINDOW_OVERLAP = 4096;
/** Lines are also read one by one, the first this many (the windows cover the rest). */
const MAX_LINES = 2000;

/**
 * Windows covering the whole text: a body's every byte up to the domain's limit is read (a text
 * read only up to 256 KiB let an attack on a later line through). A payload on a line that
 * straddles a window's end is whole in the next window, which starts at that line.
 */
function textWindows(t: string): string[] {
  if (t.length <= MAX_TEXT) return [t];
  const out: string[] = [];
  let start = 0;
  for (;;) {
    const end = Math.min(t.length, start + MAX_TEXT);
    out.push(t.slice(start, end));
    if (end >= t.length) return out;
    const lineStart = t.lastIndexOf('\n', end - 1) + 1;
    start = lineStart > end - WINDOW_OVERLAP && lineStart > start ? lineStart : end - WINDOW_OVERLAP;
  }
}
const MAX_PARTS = 1000;

const decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: false });
/** The single-byte charsets of the allow-list, decoded as a backend that honours them would. */
const SINGLE_BYTE: Record<string, TextDecoder> = {
  'iso-8859-1': new TextDecoder('windows-1252'),
  'windows-1252': new TextDecoder('windows-1252'),
  'iso-8859-15': new TextDecoder('iso-8859-15'),
};

const UTF16LE = new TextDecoder('utf-16le');
const UTF16BE = new TextDecoder('utf-16be');

/** UTF-16 by its BOM (the decoder drops it): what .NET and Java readers do with such bytes, so what the rules read. */
function wideDecoder(bytes: Uint8Array): TextDecoder | undefined {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return UTF16LE;
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return UTF16BE;
  return undefined;
}

/** Text without a BOM (a UTF-8 BOM is dropped by the decoder; one left as U+FEFF is removed too), in its declared charset. */
function text(bytes: Uint8Array, charset?: string): string {
  const t = (wideDecoder(bytes) ?? (charset === undefined ? undefined : SINGLE_BYTE[charset]) ?? decoder).decode(bytes);
  return t.charCodeAt(0) === 0xfeff ? t.slice(1) : t;
}

/**
 * Every string literal of a JSON text (keys and values, duplicates included, escapes decoded), and
 * what stands outside strings when it is more than JSON's own words (an unquoted injection).
 * Reads invalid JSON as far as it goes: the backend's parser may be more lenient than ours.
 */
export function jsonInputs(source: string, where: string): Input[] {
  const out: Input[] = [];
  // What stands between the literals, as [start, end) pairs: JSON's own syntax there (most
  // bodies) is no input, and the pieces are joined only when one holds something else.
  const gaps: number[] = [];
  let syntaxOnly = true;
  const whereKey = `${where} key`;
  let i = 0;
  const n = source.length;
  // The next '"' and '\\' at or after the read position (n: none), found with indexOf and kept
  // until passed: each is searched for once per occurrence, so the whole read stays linear.
  let nextQuote = -1;
  let nextSlash = -1;
  while (i < n) {
    const q = source.indexOf('"', i);
    if (q !== i) {
      const end = q < 0 ? n : q;
      gaps.push(i, end);
      if (syntaxOnly) syntaxOnly = jsonSyntax(source, i, end);
    }
    if (q < 0) break;
    // The literal's end: the first '"' not escaped by a backslash (a backslash escapes the next character).
    let j = q + 1;
    while (j < n) {
      if (nextQuote < j) nextQuote = indexOr(source, '"', j, n);
      if (nextSlash < j) nextSlash = indexOr(source, '\\', j, n);
      if (nextSlash < nextQuote) {
        j = nextSlash + 2;
        continue;
      }
      j = nextQuote;
      break;
    }
    let value = source.slice(q + 1, Math.min(j, n));
    if (value.includes('\\')) {
      try {
        value = JSON.parse(j < n ? source.slice(q, j + 1) : `${source.slice(q, n)}"`) as string;
      } catch {
        // An invalid escape: read as written.
      }
    }
    const key = followedByColon(source, j + 1, Math.min(j + 40, n));
    // (Two object literals, not a spread: every input then has one of two shapes, cheap to read.)
    if (value !== '') out.push(key ? { where: whereKey, param: value.slice(0, 100), value, body: true, key: true } : { where, param: undefined, value, body: true });
    i = j + 1;
  }
  if (syntaxOnly) return out;
  const outside: string[] = [];
  for (let k = 0; k < gaps.length; k += 2) outside.push(source.slice(gaps[k], gaps[k + 1]));
  const between = outside.join('');
  const words = between.replace(OUTSIDE_SYNTAX, '');
  if (words !== '') for (const value of textWindows(between.replace(/\s+/g, ' '))) out.push({ where: `${where} (outside strings)`, value, body: true });
  return out;
}

/** JSON's words, numbers, punctuation and white space: what outside its strings is no input. */
const OUTSIDE_SYNTAX = /\b(?:true|false|null)\b|-?\d+(?:\.\d+)?(?:e[+-]?\d+)?|[\s{}[\]:,]/gi;

const structural = (c: number) => c === 32 || (c >= 9 && c <= 13) || c === 123 || c === 125 || c === 91 || c === 93 || c === 58 || c === 44;
const digit = (c: number) => c >= 48 && c <= 57;
const wordChar = (c: number) => digit(c) || (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95;
const LITERALS: Record<number, string> = { 116: 'true', 102: 'false', 110: 'null' };

/**
 * Whether source[from, to) is nothing OUTSIDE_SYNTAX would leave in place, whatever stands beside
 * it in the joined text: it starts with punctuation or white space (so no number or word runs
 * into it from the piece before), then holds only punctuation, white space, numbers and JSON's
 * words. False when unsure: the pieces are then joined and read by the pattern itself.
 */
function jsonSyntax(source: string, from: number, to: number): boolean {
  if (!structural(source.charCodeAt(from))) return false;
  let k = from;
  while (k < to) {
    const c = source.charCodeAt(k);
    if (structural(c)) {
      k++;
    } else if (c === 45 || digit(c)) {
      // A number as the pattern reads it: -?\d+(?:\.\d+)?(?:e[+-]?\d+)?
      if (c === 45) k++;
      if (k >= to || !digit(source.charCodeAt(k))) return false;
      while (k < to && digit(source.charCodeAt(k))) k++;
      if (source.charCodeAt(k) === 46 && k + 1 < to && digit(source.charCodeAt(k + 1))) for (k += 2; k < to && digit(source.charCodeAt(k)); k++);
      if ((source.charCodeAt(k) | 32) === 101) {
        let e = k + 1;
        if (source.charCodeAt(e) === 43 || source.charCodeAt(e) === 45) e++;
        if (e < to && digit(source.charCodeAt(e))) for (k = e + 1; k < to && digit(source.charCodeAt(k)); k++);
      }
    } else {
      // true, false, null between word boundaries (a number or word right before it is no boundary).
      const word = LITERALS[c];
      if (word === undefined || k + word.length > to || !source.startsWith(word, k) || wordChar(source.charCodeAt(k - 1))) return false;
      k += word.length;
      if (k < to && wordChar(source.charCodeAt(k))) return false;
    }
  }
  return true;
}

function indexOr(source: string, char: string, from: number, none: number): number {
  const at = source.indexOf(char, from);
  return at < 0 ? none : at;
}

/** Whether source[from, end) is white space (as String.prototype.trim reads it), then ':'. */
function followedByColon(source: string, from: number, end: number): boolean {
  for (let k = from; k < end; k++) {
    const c = source.charCodeAt(k);
    if (c === 58 /* : */) return true;
    if (c === 32 || (c >= 9 && c <= 13)) continue;
    if (c < 128 || !/\s/.test(source[k]!)) return false;
  }
  return false;
}

/** Text of unknown structure: whole (bounded) and line by line. */
function textInputs(t: string, where: string): Input[] {
  const out: Input[] = textWindows(t).map((value) => ({ where, value, body: true }));
  if (t.includes('\n')) {
    const lines = t.split('\n', MAX_LINES);
    for (const line of lines) if (line.trim() !== '') out.push({ where, value: line, body: true });
  }
  return out;
}

/** XML: the document for the markup rules, its text and attribute values for all. */
function xmlInputs(t: string, where: string): Input[] {
  const out: Input[] = [{ where, value: t.slice(0, MAX_TEXT), body: true, markup: true }];
  for (const m of t.matchAll(/>([^<]+)</g)) if (m[1]!.trim() !== '') out.push({ where: `${where} text`, value: m[1]!, body: true });
  for (const m of t.matchAll(/=\s*(?:"([^"]*)"|'([^']*)')/g)) {
    const value = m[1] ?? m[2] ?? '';
    if (value !== '') out.push({ where: `${where} attribute`, value, body: true });
  }
  for (const m of t.matchAll(/<!\[cdata\[([\s\S]*?)\]\]>/gi)) out.push({ where: `${where} cdata`, value: m[1]!, body: true });
  return out;
}

function quotedPrintable(t: string): string {
  return t.replace(/=\r?\n/g, '').replace(/=([0-9a-fA-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
}

/** A header parameter (boundary, name, filename), quoted or not, and RFC 5987's filename*= (decoded). */
function parameter(header: string, name: string): string | undefined {
  return parameters(header, name)[0];
}

/** Every value of a header parameter given more than once (filename= and filename*=: backends differ on which wins). */
function parameters(header: string, name: string): string[] {
  const out: string[] = [];
  for (const m of header.matchAll(new RegExp(`(?:^|[;\\s])${name}\\*?\\s*=\\s*(?:"((?:[^"\\\\]|\\\\.)*)"|([^;\\s]*))`, 'gi'))) {
    const value = m[1] ?? m[2] ?? '';
    const extended = /^[\w-]+'[\w-]*'(.*)$/.exec(value);
    out.push(extended ? percentDecoded(extended[1]!) : value);
  }
  return out;
}

function percentDecoded(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/**
 * Multipart: each part's headers, name and file names, and its content — a field's always, a
 * file's unless its declared binary type is what its bytes are.
 */
function readMultipart(body: Buffer, boundary: string): BodyRead {
  const inputs: Input[] = [];
  const refusals: BodyRefusal[] = [];
  const delimiter = Buffer.from(`--${boundary}`);
  let at = body.indexOf(delimiter);
  for (let parts = 0; at >= 0 && parts < MAX_PARTS; parts++) {
    const start = at + delimiter.length;
    if (body[start] === 0x2d && body[start + 1] === 0x2d) break; // the closing delimiter
    const next = body.indexOf(delimiter, start);
    let part = body.subarray(start, next < 0 ? body.length : next);
    // The part's own line ends: CRLF or a bare LF (servers differ; attackers use the difference).
    const headEnd = indexOfBlankLine(part);
    const head = part.subarray(0, headEnd < 0 ? part.length : headEnd).toString('latin1');
    let content = headEnd < 0 ? Buffer.alloc(0) : part.subarray(headEnd + (part[headEnd] === 0x0d ? 4 : 2));
    if (content.length >= 2 && content[content.length - 2] === 0x0d && content[content.length - 1] === 0x0a) content = content.subarray(0, -2);
    else if (content.length >= 1 && content[content.length - 1] === 0x0a) content = content.subarray(0, -1);
    part = content;
    const disposition = /content-disposition\s*:([^\r\n]*)/i.exec(head)?.[1] ?? '';
    const name = parameter(disposition, 'name') ?? '';
    const filenames = parameters(disposition, 'filename');
    const declared = /content-type\s*:([^\r\n]*)/i.exec(head)?.[1]?.trim() ?? '';
    const transfer = /content-transfer-encoding\s*:\s*([\w-]+)/i.exec(head)?.[1]?.toLowerCase();
    inputs.push({ where: 'body part name', param: name, value: name, body: true, name: true });
    for (const filename of filenames) {
      inputs.push({ where: 'body file name', param: name, value: filename, body: true });
      if (serverExecutableName(filename)) refusals.push({ status: 403, rule: SERVER_FILE_RULE, where: 'body file name (a file the server would run)', param: name });
    }
    // Headers of the part other than the ones read above carry no app data; they are read whole.
    inputs.push({ where: 'body part headers', param: name, value: head, body: true, partHeaders: true });
    let bytes: Buffer = part;
    if (transfer === 'base64') bytes = Buffer.from(part.toString('latin1').replace(/\s+/g, ''), 'base64');
    const { type, charset } = mediaType(declared);
    // A file without a declared type is what browsers send as application/octet-stream.
    const fileType = type === '' ? 'application/octet-stream' : type;
    if (filenames.length > 0 && binaryType(fileType) && skippableBinary(fileType, bytes)) {
      if (codeBehindMagic(bytes, fileType.startsWith('image/'))) refusals.push({ status: 403, rule: HIDDEN_CODE_RULE, where: 'body file content (server code behind a magic number)', param: name });
    } else {
      // (A file in UTF-16 with its BOM — a spreadsheet's "Unicode text" export — is read decoded, not refused.)
      const why = unreadableEncoding(type, charset, bytes, filenames.length > 0);
      if (why) refusals.push({ status: 415, rule: CHARSET_RULE, where: `body part: ${why}`, param: name });
      let t = text(bytes, charset);
      if (transfer === 'quoted-printable') t = text(Buffer.from(quotedPrintable(t), 'latin1'), charset);
      // HTML forms' _charset_ field names the charset the other fields are in.
      if (name === '_charset_' && !allowedCharset(t.trim().toLowerCase())) refusals.push({ status: 415, rule: CHARSET_RULE, where: 'body field _charset_ (not allowed)', param: name });
      for (const input of structured(t, type, `body field ${name.slice(0, 40)}`)) inputs.push({ ...input, param: input.param ?? name });
    }
    at = next;
  }
  return { inputs, refusals };
}

function indexOfBlankLine(part: Buffer): number {
  const crlf = part.indexOf('\r\n\r\n');
  const lf = part.indexOf('\n\n');
  if (crlf < 0) return lf;
  if (lf < 0) return crlf;
  return Math.min(crlf, lf);
}

/** Text read by its declared type and by its look (JSON and forms are recognised whatever they are called). */
export function structured(t: string, type: string, where: string): Input[] {
  const lower = type.toLowerCase();
  const head = t.trimStart().slice(0, 1);
  if (lower.includes('json') || head === '{' || head === '[') return jsonInputs(t, where);
  if (lower.startsWith('application/x-www-form-urlencoded') || (lower === '' && /^[\w.[\]%-]+=[^\s]*$/.test(t.slice(0, 4096)) && !/\s/.test(t))) {
    return parameterInputs(pairs(t), where === 'body' ? 'body field' : where, true, true);
  }
  if (lower.includes('xml') || head === '<') return xmlInputs(t, where);
  return textInputs(t, where);
}

/**
 * A body (decompressed) of the given Content-Type, read as the backend will parse it: its inputs,
 * and its refusals (a charset outside the allow-list, JSON not in UTF-8, an upload the server
 * would run, server code behind a file's magic number).
 */
export function readBody(body: Buffer, contentType: string): BodyRead {
  if (body.length === 0) return { inputs: [], refusals: [] };
  const { type, charset } = mediaType(contentType);
  if (type.startsWith('multipart/')) {
    const boundary = parameter(contentType, 'boundary');
    const read = boundary ? readMultipart(body, boundary) : { inputs: [], refusals: [] };
    if (!allowedCharset(charset)) read.refusals.push({ status: 415, rule: CHARSET_RULE, where: `body: charset ${charset!.slice(0, 30)} (not allowed)` });
    // No part found: read it as what it looks like (a lenient backend might).
    if (read.inputs.length > 0) return read;
  }
  const refusals: BodyRefusal[] = [];
  const why = unreadableEncoding(type, charset, body);
  if (why) refusals.push({ status: 415, rule: CHARSET_RULE, where: `body: ${why}` });
  if (binaryType(type) && skippableBinary(type, body)) {
    if (codeBehindMagic(body, type.startsWith('image/'))) refusals.push({ status: 403, rule: HIDDEN_CODE_RULE, where: 'body (server code behind a magic number)' });
    return { inputs: [], refusals };
  }
  return { inputs: structured(text(body, charset), type, 'body'), refusals };
}

/** A piece of a text body (its end, past the inspection limit), read by its declared type without refusals. */
export function textBodyInputs(bytes: Buffer, contentType: string): Input[] {
  const { type, charset } = mediaType(contentType);
  return structured(text(bytes, charset), type, 'body');
}
