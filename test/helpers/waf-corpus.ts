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

const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));
/** Characters a request line cannot carry raw, escaped (as clients do); the rest as written. */
const inUrl = (text: string) => text.replace(/[^\x21-\x7e]|[#?&]/g, (ch) => encodeURIComponent(ch));

export function multipart(fields: Record<string, string>, file?: { field: string; name: string; type: string; bytes: Buffer }): { body: Buffer; contentType: string } {
  const boundary = '----palisadeformboundary7MA4YWxkTrZu0gW';
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  if (file) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${file.field}"; filename="${file.name}"\r\n${file.type ? `Content-Type: ${file.type}\r\n` : ''}\r\n`), file.bytes, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

export interface BenignRequest extends CorpusRequest {
  kind: string;
}

/**
 * The realistic benign sets (test/fixtures/waf-benign): `requests.jsonl` (forms, searches, APIs,
 * GraphQL, forum posts, uploads of real files) and `held-out-2.jsonl` (written independently of
 * the detectors: base64 tokens and documents, prose, code, APIs, browser headers, real paths).
 */
export function benignSet(file: 'requests.jsonl' | 'held-out-2.jsonl' | 'held-out-3.jsonl' | 'held-out-4.jsonl' | 'held-out-5.jsonl' | 'held-out-6.jsonl' = 'requests.jsonl'): BenignRequest[] {
  const dir = join(FIXTURES, 'waf-benign');
  return readFileSync(join(dir, file), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const item = JSON.parse(line) as { kind: string; method: string; path: string; headers: Record<string, string>; body?: string; file?: string; upload?: { fields: Record<string, string>; field: string; file: string; type: string } };
      const headers = { ...item.headers };
      let body: Buffer | undefined;
      if (item.body !== undefined) body = Buffer.from(item.body);
      if (item.file) body = readFileSync(join(dir, 'files', item.file));
      if (item.upload) {
        const form = multipart(item.upload.fields, { field: item.upload.field, name: item.upload.file, type: item.upload.type, bytes: readFileSync(join(dir, 'files', item.upload.file)) });
        body = form.body;
        headers['content-type'] = form.contentType;
      }
      return { kind: item.kind, method: item.method, path: item.path, headers, body };
    });
}

export interface OwnAttack extends CorpusRequest {
  class: string;
  payload: string;
}

/** One line of an attack file; `upload` and `request` only where `place` names them. */
interface AttackLine {
  class: string;
  payload: string;
  place: string;
  /** One file part (with extra text fields), its bytes in base64. */
  upload?: { fields: Record<string, string>; field: string; filename: string; type: string; content_b64: string };
  /**
   * The whole request as written, its body as UTF-8 text, or as base64 in `body_b64` where the
   * bytes are not UTF-8 text (a UTF-16 body, a NUL).
   */
  request?: { method: string; path: string; headers: Record<string, string>; body?: string; body_b64?: string };
}

type AttackFile = 'attacks.jsonl' | 'held-out-2.jsonl' | 'held-out-3.jsonl' | 'held-out-4.jsonl' | 'held-out-5.jsonl' | 'held-out-5-requests.jsonl' | 'held-out-6.jsonl';

/**
 * Attacks written for this project (test/fixtures/waf-attacks), each placed where its line says:
 * `attacks.jsonl` by the detectors' authors, `held-out-*.jsonl` independently of them. A line
 * whose place is `upload` or `request` carries the file part or the whole request itself (attacks
 * that live in a request's structure, not in one value).
 */
export function ownAttacks(file: AttackFile = 'attacks.jsonl'): OwnAttack[] {
  return readFileSync(join(FIXTURES, 'waf-attacks', file), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line): OwnAttack => {
      const { class: cls, payload, place, upload, request } = JSON.parse(line) as AttackLine;
      const base = { class: cls, payload, headers: {} as Record<string, string> };
      switch (place) {
        case 'form':
          return { ...base, method: 'POST', path: '/search', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: Buffer.from(`q=${encodeURIComponent(payload)}&page=1`) };
        case 'json':
          return { ...base, method: 'POST', path: '/api/search', headers: { 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify({ q: payload, page: 1 })) };
        case 'header':
          return { ...base, method: 'GET', path: '/', headers: { 'x-search': payload.replace(/[\r\n]/g, ' ') } };
        case 'cookie':
          return { ...base, method: 'GET', path: '/', headers: { cookie: `theme=dark; q=${encodeURIComponent(payload)}` } };
        case 'multipart': {
          const form = multipart({ q: payload, page: '1' });
          return { ...base, method: 'POST', path: '/search', headers: { 'content-type': form.contentType }, body: form.body };
        }
        case 'ua':
          return { ...base, method: 'GET', path: '/', headers: { 'user-agent': payload } };
        case 'path':
          return { ...base, method: 'GET', path: `/files/${inUrl(payload)}`, headers: {} };
        case 'upload': {
          if (!upload) throw new Error(`${file}: place upload without an upload: ${line.slice(0, 80)}`);
          const form = multipart(upload.fields, { field: upload.field, name: upload.filename, type: upload.type, bytes: Buffer.from(upload.content_b64, 'base64') });
          return { ...base, method: 'POST', path: '/upload', headers: { 'content-type': form.contentType }, body: form.body };
        }
        case 'request':
          if (!request) throw new Error(`${file}: place request without a request: ${line.slice(0, 80)}`);
          if (request.body !== undefined && request.body_b64 !== undefined) throw new Error(`${file}: a request with both body and body_b64: ${line.slice(0, 80)}`);
          return { ...base, method: request.method, path: request.path, headers: { ...request.headers }, body: request.body_b64 !== undefined ? Buffer.from(request.body_b64, 'base64') : request.body === undefined ? undefined : Buffer.from(request.body) };
        default:
          return { ...base, method: 'GET', path: `/search?q=${inUrl(payload)}`, headers: {} };
      }
    });
}
