// Whether a change to the WAF changed any verdict: every request of every corpus the repository
// has (GoTestWAF's attack and benign cases, the project's attack sets and benign sets, the cost
// bench's bodies) and every attack and benign payload placed in each place a request carries one
// (query, path, header, user agent, cookie, form, JSON, multipart, text and XML bodies), at
// levels 1 to 4, judged by this checkout and by another one in the same process, the way the
// edge judges them (protocol checks, then the body decoded and read, the rules, the body's
// refusals). Prints how many verdicts were compared and each one that differs (rule and where).
// A verdict stops at the first rule; so that a change behind it shows too, every detector's own
// answer is also compared on every decoded form of every value those requests carry (each
// payload, and each input a benign request's body is read into), in every mode it is called in.
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
import * as decode from '../src/edge/waf/decode.ts';
import * as injection from '../src/edge/waf/injection.ts';
import * as paths from '../src/edge/waf/paths.ts';
import * as shell from '../src/edge/waf/shell.ts';
import * as sqli from '../src/edge/waf/sqli.ts';
import * as ssrf from '../src/edge/waf/ssrf.ts';
import * as xss from '../src/edge/waf/xss.ts';
import * as rules from '../src/edge/waf/inspect.ts';
import * as settingsModule from '../src/edge/waf/settings.ts';
import * as uploads from '../src/edge/waf/uploads.ts';

interface Checkout {
  bodyInspection: Pick<typeof bodyInspection, 'announcesBody' | 'decodeContent'>;
  bodyParse: Pick<typeof bodyParse, 'readBody'>;
  rules: Pick<typeof rules, 'inspect' | 'protocolFinding' | 'refusalFinding'>;
  settings: Pick<typeof settingsModule, 'wafSettings'>;
  uploads: Pick<typeof uploads, 'serverExecutableHeader'>;
  decode: Pick<typeof decode, 'decodedForms'>;
  detectors: {
    sqli: Pick<typeof sqli, 'sqlInjection'>;
    xss: Pick<typeof xss, 'crossSiteScripting'>;
    shell: Pick<typeof shell, 'commandInjection'>;
    injection: Pick<typeof injection, 'otherInjection'>;
    paths: Pick<typeof paths, 'pathAttack'>;
    ssrf: Pick<typeof ssrf, 'requestForgery'>;
  };
}

async function checkoutAt(dir: string): Promise<Checkout> {
  const at = async (file: string): Promise<unknown> => import(pathToFileURL(resolve(dir, 'src/edge/waf', file)).href);
  return {
    bodyInspection: (await at('body-inspection.ts')) as Checkout['bodyInspection'],
    bodyParse: (await at('body-parse.ts')) as Checkout['bodyParse'],
    rules: (await at('inspect.ts')) as Checkout['rules'],
    settings: (await at('settings.ts')) as Checkout['settings'],
    uploads: (await at('uploads.ts')) as Checkout['uploads'],
    decode: (await at('decode.ts')) as Checkout['decode'],
    detectors: {
      sqli: (await at('sqli.ts')) as Checkout['detectors']['sqli'],
      xss: (await at('xss.ts')) as Checkout['detectors']['xss'],
      shell: (await at('shell.ts')) as Checkout['detectors']['shell'],
      injection: (await at('injection.ts')) as Checkout['detectors']['injection'],
      paths: (await at('paths.ts')) as Checkout['detectors']['paths'],
      ssrf: (await at('ssrf.ts')) as Checkout['detectors']['ssrf'],
    },
  };
}

/** Every detector's answer on one decoded form at one level, in each mode it is called in. */
function answers(c: Checkout, form: string, level: number): string {
  const d = c.detectors;
  return [
    d.sqli.sqlInjection(form, level),
    d.xss.crossSiteScripting(form, level, undefined, false),
    d.xss.crossSiteScripting(form, level, undefined, true),
    d.shell.commandInjection(form, level, undefined, true),
    d.shell.commandInjection(form, level, undefined, false),
    d.injection.otherInjection(form, true, level, undefined, true),
    d.injection.otherInjection(form, false, level, undefined, false),
    d.paths.pathAttack(form, true, level),
    d.paths.pathAttack(form, false, level),
    d.ssrf.requestForgery(form, level, true),
    d.ssrf.requestForgery(form, level, false),
  ].join(',');
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

/** Every payload of the corpora (attack and benign), filled in by requests(). */
const payloads = new Set<string>();

/** Every request to judge, labelled. */
function requests(): Array<[string, CorpusRequest]> {
  const out: Array<[string, CorpusRequest]> = [];
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
  const after: Checkout = { bodyInspection, bodyParse, rules, settings: settingsModule, uploads, decode, detectors: { sqli, xss, shell, injection, paths, ssrf } };
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

  // The detectors one by one: each payload, and each input the requests' bodies are read into.
  const values = new Set(payloads);
  for (const [, req] of all) if (req.body) for (const input of bodyParse.readBody(req.body, String(req.headers['content-type'] ?? '')).inputs) values.add(input.value);
  let forms = 0;
  let differ = 0;
  for (const value of values) {
    for (const plus of [false, true]) {
      const a = before.decode.decodedForms(value, plus);
      const b = decode.decodedForms(value, plus);
      if (a.join('\0') !== b.join('\0')) {
        differ++;
        if (differ <= 50) console.log(`decoded forms of ${JSON.stringify(value.slice(0, 80))} (plus ${plus}) differ`);
        continue;
      }
      for (const form of b) {
        forms++;
        for (const level of levels) {
          const x = answers(before, form, level);
          const y = answers(after, form, level);
          if (x === y) continue;
          differ++;
          if (differ <= 50) console.log(`level ${level} ${JSON.stringify(form.slice(0, 80))}\n  before: ${x}\n  after:  ${y}`);
        }
      }
    }
  }
  console.log(`${values.size} values, ${forms} decoded forms × ${levels.length} levels × 11 detector calls: ${differ} answers differ`);
  if (changed > 0 || differ > 0) process.exitCode = 1;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
