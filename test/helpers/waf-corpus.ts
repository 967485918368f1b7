// The WAF corpus (GoTestWAF's test cases, kept in test/fixtures/waf-corpus/) as requests: each
// payload × encoder × placeholder becomes one request, built as GoTestWAF places them. The files
// use a small YAML subset (lists of plain, single- or double-quoted scalars), read here without a
// YAML library. The attack payloads are split by a hash of their text into a tuning part (what
// the detectors may be looked at against) and a held-out part (only measured).
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CORPUS = fileURLToPath(new URL('../fixtures/waf-corpus/gotestwaf/', import.meta.url));

export type CorpusPart = 'tuning' | 'held-out';

/** Which part a payload is in: stable (a hash of the text), and every encoding of it goes along. */
export function corpusPart(payload: string): CorpusPart {
  return createHash('sha256').update(payload).digest()[0]! % 2 === 0 ? 'tuning' : 'held-out';
}

export interface CorpusCase {
  file: string;
  type: string;
  payload: string;
  encoder: string;
  placeholder: string;
}

export interface CorpusRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

function scalar(text: string): string {
  if (text.startsWith("'")) return text.slice(1, -1).replace(/''/g, "'");
  if (text.startsWith('"')) {
    return text.slice(1, -1).replace(/\\(u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|.)/g, (_, e: string) => {
      if (e[0] === 'u' || e[0] === 'x') return String.fromCharCode(parseInt(e.slice(1), 16));
      return ({ n: '\n', r: '\r', t: '\t', '0': '\0', '"': '"', '\\': '\\', "'": "'", '/': '/' } as Record<string, string>)[e] ?? e;
    });
  }
  return text;
}

export function readCorpusFile(path: string): CorpusCase[] {
  const lists: Record<string, string[]> = {};
  let type = '';
  let key = '';
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const item = /^\s+-\s(.*)$/.exec(line);
    if (item) lists[key]!.push(scalar(item[1]!.trim()));
    else if (/^\w+:\s*$/.test(line)) lists[(key = line.split(':')[0]!)] = [];
    else if (line.startsWith('type:')) type = scalar(line.slice(5).trim());
  }
  const out: CorpusCase[] = [];
  for (const payload of lists.payload ?? []) for (const encoder of lists.encoder ?? []) for (const placeholder of lists.placeholder ?? []) out.push({ file: path.split('/').pop()!, type, payload, encoder, placeholder });
  return out;
}

/** The attack cases, all or one part's. */
export function attackCases(part?: CorpusPart): CorpusCase[] {
  const all = readdirSync(join(CORPUS, 'owasp')).sort().flatMap((f) => readCorpusFile(join(CORPUS, 'owasp', f)));
  return part === undefined ? all : all.filter((c) => corpusPart(c.payload) === part);
}
export const benignCases = (): CorpusCase[] => readCorpusFile(join(CORPUS, 'false-pos', 'texts.yml'));

function encode(payload: string, encoder: string): string {
  if (encoder === 'URL') return encodeURIComponent(payload);
  if (encoder === 'Base64Flat') return Buffer.from(payload).toString('base64').replace(/=+$/, '');
  if (encoder === 'Base64') return Buffer.from(payload).toString('base64');
  return payload;
}

/** The request GoTestWAF would send for a case; undefined where HTTP cannot carry it (CR/LF in a header). */
export function requestFor(c: CorpusCase): CorpusRequest | undefined {
  const value = encode(c.payload, c.encoder);
  // Characters a request line cannot carry raw are escaped (GoTestWAF's client does the same).
  const inUrl = (text: string) => text.replace(/[^\x21-\x7e]|[#?]/g, (ch) => encodeURIComponent(ch));
  switch (c.placeholder) {
    case 'URLPath':
      return { method: 'GET', path: `/${inUrl(value)}`, headers: {} };
    case 'URLParam':
      return { method: 'GET', path: `/?q=${inUrl(value).replace(/&/g, '%26')}`, headers: {} };
    case 'Header':
    case 'UserAgent':
      if (/[\r\n\0]/.test(value) || /[^\t\x20-\x7e\x80-\xff]/.test(value)) return undefined;
      return { method: 'GET', path: '/', headers: c.placeholder === 'Header' ? { 'x-payload': value } : { 'user-agent': value } };
    case 'JSONRequest':
    case 'JSONBody':
      return { method: 'POST', path: '/', headers: { 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify({ test: value })) };
    case 'HTMLForm':
      return { method: 'POST', path: '/', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: Buffer.from(`a=${encodeURIComponent(value)}`) };
    case 'HTMLMultipartForm': {
      const boundary = 'palisadecorpusboundary';
      return {
        method: 'POST',
        path: '/',
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
        body: Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="a"\r\n\r\n${value}\r\n--${boundary}--\r\n`),
      };
    }
    case 'XMLBody':
    case 'SOAPBody':
      return { method: 'POST', path: '/', headers: { 'content-type': 'text/xml' }, body: Buffer.from(value) };
    default:
      return { method: 'POST', path: '/', headers: { 'content-type': 'text/plain' }, body: Buffer.from(value) };
  }
}
