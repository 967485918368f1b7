// Whether a change to the WAF changed any verdict: every request of every corpus the repository
// has (GoTestWAF's attack and benign cases, the project's attack sets and benign sets, the cost
// bench's bodies) and every attack and benign payload placed in each place a request carries one
// (query, path, header, user agent, cookie, form, JSON, multipart, text and XML bodies), at
// levels 1 to 4, judged by this checkout and by another one in the same process, the way the
// edge judges them (protocol checks, then the body decoded and read, the rules, the body's
// refusals). Prints how many verdicts were compared and each one that differs (rule and where).
//
//   node --import tsx bench/waf-verdicts.ts --against DIR
//     DIR: another checkout of the project (its src/, e.g. a `git archive` of an earlier commit,
//     with node_modules reachable from it).
import type { IncomingHttpHeaders } from 'node:http';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { costBodies } from './waf-bodies.ts';
import { attackCases, benignCases, benignSet, multipart, ownAttacks, requestFor, type CorpusRequest } from '../test/helpers/waf-corpus.ts';
import * as bodyInspection from '../src/edge/waf/body-inspection.ts';
import * as bodyParse from '../src/edge/waf/body-parse.ts';
import * as rules from '../src/edge/waf/inspect.ts';
import * as settingsModule from '../src/edge/waf/settings.ts';
import * as uploads from '../src/edge/waf/uploads.ts';

interface Checkout {
  bodyInspection: Pick<typeof bodyInspection, 'announcesBody' | 'decodeContent'>;
  bodyParse: Pick<typeof bodyParse, 'readBody'>;
  rules: Pick<typeof rules, 'inspect' | 'protocolFinding' | 'refusalFinding'>;
  settings: Pick<typeof settingsModule, 'wafSettings'>;
  uploads: Pick<typeof uploads, 'serverExecutableHeader'>;
}

async function checkoutAt(dir: string): Promise<Checkout> {
  const at = async (file: string): Promise<unknown> => import(pathToFileURL(resolve(dir, 'src/edge/waf', file)).href);
  return {
    bodyInspection: (await at('body-inspection.ts')) as Checkout['bodyInspection'],
    bodyParse: (await at('body-parse.ts')) as Checkout['bodyParse'],
    rules: (await at('inspect.ts')) as Checkout['rules'],
    settings: (await at('settings.ts')) as Checkout['settings'],
    uploads: (await at('uploads.ts')) as Checkout['uploads'],
  };
}

type Finding = ReturnType<typeof rules.inspect>;
const show = (f: Finding) => (f ? `${f.status} ${f.rule} ${f.class} @ ${f.where}` : 'pass');

/** The verdict the edge reaches on a request (inspect-request.ts's steps, without the socket). */
function verdict(c: Checkout, req: CorpusRequest, domain: object): string {
  const headers: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(req.headers)) headers[name.toLowerCase()] = value;
  if (req.body) headers['content-length'] = String(req.body.length);
  const settings = c.settings.wafSettings(domain);
  const protocol = c.rules.protocolFinding(req.method, req.path, headers, Object.keys(headers).length);
  if (protocol) return show(protocol);
  if (!c.bodyInspection.announcesBody(headers) || !req.body) return show(c.rules.inspect(req.method, req.path, headers, undefined, domain));
  const decoded = c.bodyInspection.decodeContent(req.body, headers['content-encoding'], false);
  if ('kind' in decoded) return show(decoded.finding);
  const read = c.bodyParse.readBody(decoded.bytes, String(headers['content-type'] ?? ''));
  const refusals = [...read.refusals];
  const fileHeader = c.uploads.serverExecutableHeader(headers);
  if (fileHeader) refusals.push({ status: 403, rule: 933110, where: `header ${fileHeader}` });
  const path = req.path.split('?', 1)[0]!;
  return show(c.rules.inspect(req.method, req.path, headers, read.inputs, domain) ?? c.rules.refusalFinding(refusals, path, settings));
}

const inUrl = (text: string) => text.replace(/[^\x21-\x7e]|[#?&%]/g, (ch) => encodeURIComponent(ch));

/** One payload in each place a request carries a value. */
function placed(payload: string): Array<[string, CorpusRequest]> {
  const json = (type: string) => ({ method: 'POST', path: '/api', headers: { 'content-type': type }, body: Buffer.from(JSON.stringify({ q: payload, page: 1, nested: { list: [payload] } })) });
  const form = multipart({ q: payload, page: '1' });
  const out: Array<[string, CorpusRequest]> = [
    ['query', { method: 'GET', path: `/search?q=${inUrl(payload)}&page=1`, headers: {} }],
    ['query raw', { method: 'GET', path: `/search?q=${payload.replace(/[^\x21-\x7e]|[#]/g, (ch) => encodeURIComponent(ch))}`, headers: {} }],
    ['path', { method: 'GET', path: `/files/${inUrl(payload)}`, headers: {} }],
    ['cookie', { method: 'GET', path: '/', headers: { cookie: `theme=dark; q=${encodeURIComponent(payload)}` } }],
    ['form', { method: 'POST', path: '/search', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: Buffer.from(`q=${encodeURIComponent(payload)}&page=1`) }],
    ['form raw', { method: 'POST', path: '/search', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: Buffer.from(`q=${payload}`) }],
    ['json', json('application/json')],
    ['json as text', json('text/plain')],
    ['multipart', { method: 'POST', path: '/search', headers: { 'content-type': form.contentType }, body: form.body }],
    ['text', { method: 'POST', path: '/notes', headers: { 'content-type': 'text/plain' }, body: Buffer.from(`A note\n${payload}\nend`) }],
    ['xml', { method: 'POST', path: '/soap', headers: { 'content-type': 'application/xml' }, body: Buffer.from(`<r><q>${payload}</q><a v="${payload.replace(/"/g, '&quot;')}"/></r>`) }],
  ];
  // Headers cannot carry line breaks or NULs.
  if (!/[\r\n\0]/.test(payload) && !/[^\t\x20-\x7e\x80-\xff]/.test(payload)) {
    out.push(['header', { method: 'GET', path: '/', headers: { 'x-search': payload } }], ['user agent', { method: 'GET', path: '/', headers: { 'user-agent': payload } }]);
  }
  return out;
}

const ATTACK_FILES = ['attacks.jsonl', 'held-out-2.jsonl', 'held-out-3.jsonl', 'held-out-4.jsonl', 'held-out-5.jsonl', 'held-out-5-requests.jsonl'] as const;
const BENIGN_FILES = ['requests.jsonl', 'held-out-2.jsonl', 'held-out-3.jsonl', 'held-out-4.jsonl', 'held-out-5.jsonl'] as const;

/** Every request to judge, labelled. */
function requests(): Array<[string, CorpusRequest]> {
  const out: Array<[string, CorpusRequest]> = [];
  const payloads = new Set<string>();
  for (const c of attackCases()) {
    const r = requestFor(c);
    if (r) out.push([`gotestwaf ${c.file} ${c.encoder} ${c.placeholder} ${c.payload.slice(0, 60)}`, r]);
    payloads.add(c.payload);
  }
  for (const c of benignCases()) {
    const r = requestFor(c);
    if (r) out.push([`gotestwaf benign ${c.encoder} ${c.placeholder} ${c.payload.slice(0, 60)}`, r]);
    payloads.add(c.payload);
  }
  for (const file of ATTACK_FILES) {
    for (const [i, a] of ownAttacks(file).entries()) {
      out.push([`${file}:${i + 1} ${a.class}`, a]);
      payloads.add(a.payload);
    }
  }
  for (const file of BENIGN_FILES) for (const [i, r] of benignSet(file).entries()) out.push([`benign ${file}:${i + 1} ${r.kind}`, r]);
  for (const b of costBodies()) out.push([`cost body ${b.name}`, { method: 'POST', path: '/', headers: { 'content-type': b.contentType }, body: b.body }]);
  for (const payload of payloads) for (const [place, r] of placed(payload)) out.push([`placed in ${place}: ${payload.slice(0, 60)}`, r]);
  return out;
}

function argument(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at < 0 ? undefined : process.argv[at + 1];
}

async function main(): Promise<void> {
  const against = argument('--against');
  if (!against) throw new Error('usage: waf-verdicts.ts --against DIR');
  const before = await checkoutAt(against);
  const after: Checkout = { bodyInspection, bodyParse, rules, settings: settingsModule, uploads };
  const all = requests();
  const levels = [1, 2, 3, 4];
  // One domain object per level and checkout (settings are compiled per object).
  const domains = (c: Checkout) => levels.map((level) => ({ c, level, domain: { waf_level: level } }));
  const [old, now] = [domains(before), domains(after)];
  let compared = 0;
  let changed = 0;
  const refused = [0, 0];
  for (const [label, req] of all) {
    for (let k = 0; k < levels.length; k++) {
      const a = verdict(before, req, old[k]!.domain);
      const b = verdict(after, req, now[k]!.domain);
      compared++;
      if (a !== 'pass') refused[0]!++;
      if (b !== 'pass') refused[1]!++;
      if (a === b) continue;
      changed++;
      if (changed <= 200) console.log(`level ${levels[k]} ${label}\n  before: ${a}\n  after:  ${b}`);
    }
  }
  console.log(`${all.length} requests × ${levels.length} levels: ${compared} verdicts compared, ${changed} changed (refused: before ${refused[0]}, after ${refused[1]})`);
  if (changed > 0) process.exitCode = 1;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
