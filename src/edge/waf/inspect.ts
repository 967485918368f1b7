// baseprotection's inspection, pure: protocol checks on the request line and headers, then the
// detectors over every decoded form of every input — path, query names and values (repeated ones
// joined too), cookie names and values, headers but a short exempt list, and the body's inputs
// (body-parse.ts). A detector answers with a rule id; a domain's exclusions and sensitivity level
// (settings.ts) decide what counts.
import type { IncomingHttpHeaders } from 'node:http';
import { lruByCount } from '../lru-by-count.ts';
import { structured, type BodyRefusal } from './body-parse.ts';
import { base64Text, decodedForms, percentDecode } from './decode.ts';
import { withoutQuotedCode } from './quoted-code.ts';
import { graphqlViolation } from './graphql.ts';
import { credentialOperator, INJECTION, operatorKey, otherInjection } from './injection.ts';
import { headerUnread, onlyAddresses, requestInputs, type Input } from './inputs.ts';
import { joinedAcrossPlaces } from './joined-params.ts';
import { pathAttack } from './paths.ts';
import { POLLUTION_RULE, pollutingName } from './pollution.ts';
import { GRAPHQL_RULES } from './rules/graphql.ts';
import { INJECTION_RULES } from './rules/injection.ts';
import { SSRF_RULES } from './rules/ssrf.ts';
import { LFI_RULES } from './rules/lfi.ts';
import { RCE_RULES } from './rules/rce.ts';
import { SCANNER_AGENT, SCANNER_RULE } from './rules/scanners.ts';
import { SQLI_RULES } from './rules/sqli.ts';
import { UPLOAD_RULES } from './rules/uploads.ts';
import type { Rule, RuleClass } from './rules/types.ts';
import { XSS_RULES } from './rules/xss.ts';
import { excluded, wafSettings, type WafSettings } from './settings.ts';
import { commandInjection } from './shell.ts';
import { sqlInjection } from './sqli.ts';
import { requestForgery } from './ssrf.ts';
import { triggerWords } from './trigger-words.ts';
import { crossSiteScripting } from './xss.ts';

export const ATTACK_RULES: readonly Rule[] = [...SQLI_RULES, ...XSS_RULES, ...RCE_RULES, ...LFI_RULES, ...INJECTION_RULES, ...SSRF_RULES];
const BY_ID = new Map<number, Rule>([...ATTACK_RULES, ...GRAPHQL_RULES, ...UPLOAD_RULES, SCANNER_RULE].map((r) => [r.id, r]));

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const MAX_URL = 8192;
const MAX_HEADERS = 100;

export interface Finding {
  status: number;
  rule: number;
  class: RuleClass;
  where: string;
}

/** Protocol checks: what no well-formed request does. */
export function protocolFinding(method: string, url: string, headers: IncomingHttpHeaders, rawHeaderCount: number): Finding | undefined {
  if (!METHODS.has(method)) return { status: 405, rule: 920100, class: 'protocol', where: 'method' };
  if (url.length > MAX_URL) return { status: 414, rule: 920110, class: 'protocol', where: 'url' };
  if (rawHeaderCount > MAX_HEADERS) return { status: 431, rule: 920120, class: 'protocol', where: 'headers' };
  const path = url.split('?')[0]!;
  if (/%(?![0-9a-fA-F]{2}|u[0-9a-fA-F]{4})/.test(url)) return { status: 400, rule: 920130, class: 'protocol', where: 'url (invalid percent-encoding)' };
  if (/%00|\0/.test(path)) return { status: 400, rule: 920140, class: 'protocol', where: 'path (NUL)' };
  if (headers['content-length'] !== undefined && headers['transfer-encoding'] !== undefined) return { status: 400, rule: 920150, class: 'protocol', where: 'both Content-Length and Transfer-Encoding' };
  return undefined;
}

/**
 * A body field that is HTML an editor made: it starts with a tag and closes one ("<p>…</p>…").
 * Comments and a doctype may come first: a block editor's delimiters (<!-- wp:paragraph -->),
 * an e-mail template's <!DOCTYPE html> and Outlook's <!--[if mso]>.
 */
function htmlFragment(form: string): boolean {
  let at = 0;
  // Each comment is skipped with one indexOf from where the last ended: linear.
  for (let n = 0; n < 1000; n++) {
    while (at < form.length && /\s/.test(form[at]!)) at++;
    if (form.startsWith('<!--', at)) {
      const end = form.indexOf('-->', at + 4);
      if (end < 0) return false;
      at = end + 3;
    } else if (form.startsWith('<!doctype', at)) {
      const end = form.indexOf('>', at);
      if (end < 0) return false;
      at = end + 1;
    } else break;
  }
  return /^<[a-z][a-z0-9]*[\s>/]/.test(form.slice(at, at + 64)) && /<\/[a-z][a-z0-9]*>/.test(form);
}

/**
 * The detectors, in order; each answers with a rule id or undefined. They share one scan for
 * trigger words. `whole`: the form before quoted code was blanked (SQL reads it: sqli.ts).
 */
function detect(form: string, input: Input, level: number, skip: (rule: number) => boolean, whole = form): number | undefined {
  const words = triggerWords(form);
  let rule: number | undefined;
  if (input.markup) {
    if ((rule = otherInjection(form, true, level, words)) !== undefined && !skip(rule)) return rule;
    if ((rule = crossSiteScripting(form, level, words, true)) !== undefined && !skip(rule)) return rule;
    if ((rule = pathAttack(form, false, level, words)) !== undefined && !skip(rule)) return rule;
    return undefined;
  }
  if (input.key && form.startsWith('$') && operatorKey(form, level) && !skip(INJECTION.nosql)) return INJECTION.nosql;
  if ((rule = sqlInjection(form, level, words, whole)) !== undefined && !skip(rule)) return rule;
  if ((rule = crossSiteScripting(form, level, words, input.body === true && htmlFragment(form))) !== undefined && !skip(rule)) return rule;
  if ((rule = commandInjection(form, level, words, input.body === true, input.search === true)) !== undefined && !skip(rule)) return rule;
  if ((rule = otherInjection(form, input.body === true, level, words, input.partHeaders !== true)) !== undefined && !skip(rule)) return rule;
  if ((rule = pathAttack(form, input.path === true, level, words)) !== undefined && !skip(rule)) return rule;
  if ((rule = requestForgery(form, level, !fromHeader(input))) !== undefined && !skip(rule)) return rule;
  return undefined;
}

/** A header's value (Referer, Origin name the site's own URLs, a local one in development). */
function fromHeader(input: Input): boolean {
  return input.where.startsWith('header ') || input.where === 'user-agent';
}

/** A name or key that walks to a prototype (pollution.ts), in any decoded form; JSON's constructor → prototype across two keys. */
function pollutionFinding(input: Input, previousKey: string | undefined, skip: (rule: number) => boolean): Finding | undefined {
  if ((!input.name && !input.key) || !/proto|[%\\&]/i.test(input.value)) return undefined;
  for (const form of decodedForms(input.value, input.plus === true)) {
    if ((pollutingName(form) || (input.key && form === 'prototype' && previousKey === 'constructor')) && !skip(POLLUTION_RULE)) return { status: 403, rule: POLLUTION_RULE, class: 'injection', where: input.where };
  }
  return undefined;
}

/** A NUL, raw or percent-encoded (once or twice). */
const NUL = /\0|%(?:25)?00/;

/** The single words a detector does match: Spring's class loader path, Java serialisation (shell.ts's gadgets), a path to a prototype (pollution.ts). */
const GADGET_WORD = /classloader|^ro0ab|^aced0005|__proto__|constructor\.prototype/i;

/** A single word (letters, digits, _ . @, single hyphens): no detector but the gadgets' can match it as it is. */
const WORD = /^[\w.@]*(?:-[\w.@]+)*$/;

/** A domain without exclusions skips no rule (one function, not one made for every input). */
const NO_EXCLUSIONS = (): boolean => false;

/** The first rule any input matches, given the domain's settings. */
export function firstFinding(inputs: Input[], path: string, settings: WafSettings): Finding | undefined {
  // Short values repeat (JSON keys of every object in an array, flags): each is read once, per
  // way of reading it (plus, path, body).
  const seen: Array<Set<string> | undefined> = [];
  let previousKey: string | undefined;
  if (settings.graphql === 'block') {
    const violation = graphqlViolation(inputs);
    if (violation && !excluded(settings, violation.rule, path, undefined)) return { status: 403, rule: violation.rule, class: 'injection', where: violation.where };
  }
  for (const input of inputs) {
    // Names and keys first: "__proto__" is a single word the skip below would pass.
    const skipRule = settings.exclusions.length === 0 ? NO_EXCLUSIONS : (rule: number) => excluded(settings, rule, path, input.param);
    const polluting = pollutionFinding(input, previousKey, skipRule);
    if (polluting) return polluting;
    // A query operator given for a credential ({"password": {"$ne": null}}): level 1 (injection.ts).
    if (input.key && credentialOperator(input.value, previousKey) && !skipRule(INJECTION.nosql)) return { status: 403, rule: INJECTION.nosql, class: 'injection', where: input.where };
    if (input.key) previousKey = input.value.toLowerCase();
    // A metadata address is a single word too (169.254.169.254, 0xa9fea9fe, 169.254.169.254.nip.io).
    if (input.value.length < 300 && /^[\w.:[\]-]+$/.test(input.value)) {
      const rule = requestForgery(input.value.toLowerCase(), settings.level, !fromHeader(input));
      if (rule !== undefined && !skipRule(rule)) return { status: 403, rule, class: BY_ID.get(rule)?.class ?? 'injection', where: input.where };
    }
    // (A word may be base64 of an attack: it is read when it decodes to text; from level 2 any word is.)
    if (input.value === '' || (settings.level < 2 && input.value.length < 64 && WORD.test(input.value) && !GADGET_WORD.test(input.value) && (input.value.length < 8 || base64Text(input.value) === undefined))) continue;
    if (input.value.length < 256 && !input.markup && settings.exclusions.length === 0) {
      const way = (input.plus ? 4 : 0) + (input.path ? 2 : 0) + (input.body ? 1 : 0);
      const values = (seen[way] ??= new Set<string>());
      if (values.has(input.value)) continue;
      values.add(input.value);
    }
    // A NUL byte in a URL, header or cookie value truncates strings in C-backed code (file.php%00.jpg).
    if (!input.body && NUL.test(input.value) && !excluded(settings, 920140, path, input.param)) return { status: 400, rule: 920140, class: 'protocol', where: `${input.where} (NUL)` };
    const skip = skipRule;
    const found = inputFinding(input, settings.level, skip);
    if (found) return found;
    // Base64 that decodes to text is read as what it is: a document (SAML's XML, a JSON
    // cookie) by its structure, anything else as text.
    const b64 = base64Text(input.value) ?? (input.value.includes('%') && ENCODED_BASE64.test(input.value) ? base64Text(percentDecode(input.value, input.plus === true)) : undefined) ?? (input.value.includes('base64') ? dataUrlText(input.value.includes('%') ? percentDecode(input.value, input.plus === true) : input.value) : undefined);
    if (b64 === undefined) continue;
    for (const inner of structured(b64, '', `${input.where} (base64)`)) {
      const deeper = inputFinding({ ...inner, param: input.param }, settings.level, skip);
      if (deeper) return deeper;
    }
  }
  return undefined;
}

/** The first of a body's refusals (body-parse.ts) the domain's exclusions leave in force. */
export function refusalFinding(refusals: readonly BodyRefusal[], path: string, settings: WafSettings): Finding | undefined {
  for (const r of refusals) {
    if (excluded(settings, r.rule, path, r.param)) continue;
    return { status: r.status, rule: r.rule, class: BY_ID.get(r.rule)?.class ?? 'protocol', where: r.where };
  }
  return undefined;
}

/** Base64 as it travels in a URL or form: its digits, and '+', '/', '=' percent-encoded. */
const ENCODED_BASE64 = /^(?:[A-Za-z0-9_-]|%2[bBfF]|%3[dD])+$/;

const DATA_URL = /data:[\w.+-]+\/[\w.+-]+(?:;[\w.+-]+=[\w.+-]+)*;base64,([A-Za-z0-9+/_-]{8,16384}=*)/i;

/** The base64 content of the first data: URL in a value as text (an SVG image's script is in there), if it is text. */
function dataUrlText(value: string): string | undefined {
  if (!value.includes(';base64,')) return undefined;
  const m = DATA_URL.exec(value.length > 65_536 ? value.slice(0, 65_536) : value);
  return m ? base64Text(m[1]!) : undefined;
}

/** The first rule one input matches in any of its decoded forms. */
function inputFinding(input: Input, level: number, skip: (rule: number) => boolean): Finding | undefined {
  for (const decoded of decodedForms(input.value, input.plus === true)) {
    // Code quoted in prose (a forum post's Markdown) is read from level 2 (quoted-code.ts).
    const form = (input.body === true && level < 2 && withoutQuotedCode(decoded)) || decoded;
    const rule = detect(form, input, level, skip, decoded);
    if (rule !== undefined) return { status: 403, rule, class: BY_ID.get(rule)?.class ?? 'injection', where: input.where };
  }
  return undefined;
}

/** A scanner's user agent. */
function scannerFinding(headers: IncomingHttpHeaders, path: string, settings: WafSettings): Finding | undefined {
  const ua = headers['user-agent'];
  if (!ua || !SCANNER_AGENT.test(ua.toLowerCase()) || excluded(settings, SCANNER_RULE.id, path, undefined)) return undefined;
  return { status: 403, rule: SCANNER_RULE.id, class: 'scanner', where: 'user-agent' };
}

/**
 * Verdicts on bodyless requests, by everything the rules read of them and the settings that
 * change verdicts: most traffic repeats the same URLs with the same headers, and a string key
 * costs far less than the detectors. An attacker varying requests only fills it (bounded).
 */
const verdicts = lruByCount<string, { finding: Finding | null }>(50_000);

/**
 * The first rule the request matches, or undefined. `body`: the body's inputs (body-parse.ts),
 * when it has one. `domain`: the domain's WAF fields (defaults when absent).
 */
export function inspect(method: string, url: string, headers: IncomingHttpHeaders, body?: Input[], domain?: Parameters<typeof wafSettings>[0]): Finding | undefined {
  const settings = wafSettings(domain);
  if (body && body.length > 0) return inspectNow(url, headers, settings, body);
  let key = `${settings.key} ${method} ${url}`;
  for (const name in headers) {
    const value = headers[name]!;
    // (Headers the rules do not read — inputs.ts's headerUnread — are no part of the verdict either.)
    if (headerUnread(name, value)) continue;
    // (Addresses only: not read by the rules, so not a part of the verdict.)
    if (name === 'x-forwarded-for' && onlyAddresses(value)) continue;
    key += `\n${name}:${String(value)}`;
  }
  if (key.length > 4096) return inspectNow(url, headers, settings);
  const known = verdicts.get(key);
  if (known) return known.finding ?? undefined;
  const finding = inspectNow(url, headers, settings);
  verdicts.set(key, { finding: finding ?? null });
  return finding;
}

function inspectNow(url: string, headers: IncomingHttpHeaders, settings: WafSettings, body?: Input[]): Finding | undefined {
  const path = url.split('?', 1)[0]!;
  const scanner = scannerFinding(headers, path, settings);
  if (scanner) return scanner;
  const inputs = requestInputs(url, headers);
  if (body) inputs.push(...body, ...joinedAcrossPlaces(url, body));
  return firstFinding(inputs, path, settings);
}
