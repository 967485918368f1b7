// A request body (already decompressed) as inputs, by what it is — which is decided by its
// bytes as much as by its declared type, since an attacker declares what suits them: binary
// content (by magic numbers and control bytes) is never read as text; JSON is recognised without
// its type (text/plain), with or without a BOM, and read string by string, so that duplicate keys
// and \u escapes are all seen; multipart is split on its boundary with CRLF or LF line ends,
// part names and file names are inputs, quoted-printable and base64 parts are decoded; XML is read
// whole by the markup rules and text by text by all.
import { parameterInputs, pairs, type Input } from './inputs.ts';

/** Whole text inputs longer than this are read by the markup rules' scan only up to it… */
const MAX_TEXT = 256 * 1024;
/** …and line by line, at most this many lines. */
const MAX_LINES = 2000;
const MAX_PARTS = 1000;

const MAGIC: Array<[number[], number]> = [
  [[0x89, 0x50, 0x4e, 0x47], 0], // PNG
  [[0xff, 0xd8, 0xff], 0], // JPEG
  [[0x47, 0x49, 0x46, 0x38], 0], // GIF
  [[0x25, 0x50, 0x44, 0x46, 0x2d], 0], // PDF
  [[0x50, 0x4b, 0x03, 0x04], 0], // ZIP, Office, JAR, APK
  [[0x50, 0x4b, 0x05, 0x06], 0], // empty ZIP
  [[0x1f, 0x8b], 0], // gzip
  [[0x42, 0x5a, 0x68], 0], // bzip2
  [[0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00], 0], // xz
  [[0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c], 0], // 7z
  [[0x52, 0x61, 0x72, 0x21], 0], // RAR
  [[0x28, 0xb5, 0x2f, 0xfd], 0], // zstd
  [[0x52, 0x49, 0x46, 0x46], 0], // RIFF: WebP, WAV, AVI
  [[0x66, 0x74, 0x79, 0x70], 4], // ISO media: MP4, MOV, HEIC, AVIF
  [[0x49, 0x44, 0x33], 0], // MP3 with ID3
  [[0x4f, 0x67, 0x67, 0x53], 0], // Ogg
  [[0x1a, 0x45, 0xdf, 0xa3], 0], // Matroska, WebM
  [[0x77, 0x4f, 0x46, 0x46], 0], // WOFF
  [[0x77, 0x4f, 0x46, 0x32], 0], // WOFF2
  [[0x00, 0x00, 0x01, 0x00], 0], // ICO
  [[0x49, 0x49, 0x2a, 0x00], 0], // TIFF
  [[0x4d, 0x4d, 0x00, 0x2a], 0], // TIFF
  [[0x42, 0x4d], 0], // BMP
  [[0x7f, 0x45, 0x4c, 0x46], 0], // ELF
  [[0x00, 0x61, 0x73, 0x6d], 0], // WebAssembly
  [[0xd0, 0xcf, 0x11, 0xe0], 0], // OLE (old Office)
  [[0x38, 0x42, 0x50, 0x53], 0], // PSD
];

/** Binary content, by its first bytes: a known format's magic number, or control bytes text never has. */
export function isBinary(bytes: Uint8Array): boolean {
  for (const [magic, at] of MAGIC) {
    if (bytes.length >= at + magic.length && magic.every((b, i) => bytes[at + i] === b)) return true;
  }
  const n = Math.min(bytes.length, 1024);
  let control = 0;
  for (let i = 0; i < n; i++) {
    const b = bytes[i]!;
    if (b === 0) return true;
    if (b < 32 && b !== 9 && b !== 10 && b !== 13 && b !== 12 && b !== 27) control++;
  }
  return n > 0 && control / n > 0.05;
}

const decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: false });

/** Text without a BOM (a UTF-8 BOM is dropped by the decoder; one left as U+FEFF is removed too). */
function text(bytes: Uint8Array): string {
  const t = decoder.decode(bytes);
  return t.charCodeAt(0) === 0xfeff ? t.slice(1) : t;
}

/**
 * Every string literal of a JSON text (keys and values, duplicates included, escapes decoded), and
 * what stands outside strings when it is more than JSON's own words (an unquoted injection).
 * Reads invalid JSON as far as it goes: the backend's parser may be more lenient than ours.
 */
export function jsonInputs(source: string, where: string): Input[] {
  const out: Input[] = [];
  const outside: string[] = [];
  const whereKey = `${where} key`;
  let i = 0;
  const n = source.length;
  // The next '"' and '\\' at or after the read position (n: none), found with indexOf and kept
  // until passed: each is searched for once per occurrence, so the whole read stays linear.
  let nextQuote = -1;
  let nextSlash = -1;
  while (i < n) {
    const q = source.indexOf('"', i);
    if (q !== i) outside.push(source.slice(i, q < 0 ? n : q));
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
    if (value !== '') out.push({ where: key ? whereKey : where, param: key ? value.slice(0, 100) : undefined, value, body: true, ...(key && { key: true }) });
    i = j + 1;
  }
  const between = outside.join('');
  const words = between.replace(/\b(?:true|false|null)\b|-?\d+(?:\.\d+)?(?:e[+-]?\d+)?|[\s{}[\]:,]/gi, '');
  if (words !== '') out.push({ where: `${where} (outside strings)`, value: between.replace(/\s+/g, ' ').slice(0, MAX_TEXT), body: true });
  return out;
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
  const out: Input[] = [{ where, value: t.slice(0, MAX_TEXT), body: true }];
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

/** A header parameter (boundary, name, filename), quoted or not, and RFC 5987's filename*=. */
function parameter(header: string, name: string): string | undefined {
  const m = new RegExp(`(?:^|[;\\s])${name}\\*?\\s*=\\s*(?:"((?:[^"\\\\]|\\\\.)*)"|([^;\\s]*))`, 'i').exec(header);
  if (!m) return undefined;
  const value = m[1] ?? m[2] ?? '';
  const extended = /^[\w-]+'[\w-]*'(.*)$/.exec(value);
  return extended ? extended[1]! : value;
}

/** Multipart: each part's headers, name, file name and (unless binary) content. */
function multipartInputs(body: Buffer, boundary: string): Input[] {
  const out: Input[] = [];
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
    const filename = parameter(disposition, 'filename');
    const type = /content-type\s*:([^\r\n]*)/i.exec(head)?.[1]?.trim() ?? '';
    const transfer = /content-transfer-encoding\s*:\s*([\w-]+)/i.exec(head)?.[1]?.toLowerCase();
    out.push({ where: 'body part name', param: name, value: name, body: true });
    if (filename !== undefined) out.push({ where: 'body file name', param: name, value: filename, body: true });
    // Headers of the part other than the ones read above carry no app data; they are read whole.
    out.push({ where: 'body part headers', param: name, value: head, body: true });
    let bytes: Buffer = part;
    if (transfer === 'base64') bytes = Buffer.from(part.toString('latin1').replace(/\s+/g, ''), 'base64');
    if (!isBinary(bytes)) {
      let t = text(bytes);
      if (transfer === 'quoted-printable') t = text(Buffer.from(quotedPrintable(t), 'latin1'));
      for (const input of structured(t, type, `body field ${name.slice(0, 40)}`)) out.push({ ...input, param: input.param ?? name });
    }
    at = next;
  }
  return out;
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

/** The inputs of a body (decompressed) of the given Content-Type. */
export function bodyInputs(body: Buffer, contentType: string): Input[] {
  if (body.length === 0) return [];
  const type = contentType.toLowerCase();
  if (type.startsWith('multipart/')) {
    const boundary = parameter(contentType, 'boundary');
    const parts = boundary ? multipartInputs(body, boundary) : [];
    // No part found: read it as what it looks like (a lenient backend might).
    if (parts.length > 0) return parts;
  }
  if (isBinary(body)) return [];
  return structured(text(body), type, 'body');
}
