// Other injections, by the syntax of the language each targets: server-side includes, template
// expressions (Jinja/Twig {{ }}, EL/OGNL/Spring ${ }, Ruby and Thymeleaf #{ } *{ }, ERB/JSP <%= %>,
// FreeMarker directives), Log4j lookups (${jndi:…}, however nested), XML entity declarations and
// schema includes, LDAP filter structure, NoSQL operators and server-side JavaScript, and line
// breaks that start a header or a mail command.

import { POLLUTION_RULE, pollutingValue } from './pollution.ts';
import { TRIGGERS, triggerWords } from './trigger-words.ts';

export const INJECTION = {
  ssi: 934100,
  template: 934110,
  xxe: 934120,
  ldap: 934130,
  nosql: 934140,
  jndi: 944150,
  mail: 921110,
  mailHeader: 921120,
  crlf: 921100,
} as const;

const SSI = /<!--\s*#\s*(?:exec|include|echo|config|set|printenv|fsize|flastmod|if|elif)\b/;
/** An expression does work (an operator, a call, an index, a filter, dunder access) — "{{ name }}" does not. */
const WORK = /[-*+/%(\[|`]|__|\?\w+\(|\bnew\b|@\w|\bt\(|\.class\b|\.getclass\b/;
const TEMPLATE_OPEN = /\{\{|\{%|\$\{|#\{|\*\{|@\{|~\{|<%=?|\[#(?:assign|include|list)|<#(?:assign|include|list|import|macro|attempt)\b/g;
const LOOKUP_NESTED = /\$\{(?:lower:|upper:|[a-z0-9]*:[^{}:$]{0,40}:-|[a-z0-9]*:-)([^{}$]{0,20})\}|\$\{date:\s*'([^'{}$]{0,20})'\s*\}/g;
const XXE = /<!doctype[^>[]{0,200}(?:\[|\bsystem\b|\bpublic\b)|<!entity\b|\bxsi:(?:schemalocation|nonamespaceschemalocation)\s*=|<\s*(?:xs|xsd):(?:include|import|redefine)\b|<\s*xi:include\b|\bxmlns:xi\s*=/;
const LDAP = /\(\s*[&|!]\s*\(|\)\s*\(\s*[&|!]|\*\s*\)\s*\(|\(\s*\w+\s*=\s*\*\s*\)/;
/** Extensible matches (cn:dn:=, attr:1.2.3:=): each ends in ':=' (tried only then: they start at every word). */
const LDAP_EXTENSIBLE = /\b\w+(?::dn)?:(?:\d+\.){2,}\d+:=|\b\w+:dn:=/;
const NOSQL_OPERATOR = /(?:^|[{,[\s"'])\$(?:where|ne|eq|gt|gte|lt|lte|regex|or|and|nor|not|nin|in|exists|expr|function|accumulator|elemmatch|lookup|jsonschema|text|mod|all|size|type)\b\s*['"]?\s*[\]:=]|\[\s*\$(?:where|ne|eq|gt|gte|lt|lte|regex|or|and|nor|not|nin|in|exists|expr)\s*\]/;
/** What every match of NOSQL_OPERATOR holds: '$' and an operator's name (a literal start: a quick scan). */
const NOSQL_NAME = /\$(?:where|ne|eq|gt|gte|lt|lte|regex|or|and|nor|not|nin|in|exists|expr|function|accumulator|elemmatch|lookup|jsonschema|text|mod|all|size|type)\b/;
/** Out of a string into server-side JavaScript ($where): "'; return true; var x='". */
const JS_BREAKOUT = /['"]\s*;\s*return\s+(?:true|1|this\b|!0)|['"]\s*\|\|\s*(?:true|1|'1'\s*==\s*'1')\s*(?:;|\/\/|$)/;
const SERVER_JS = /\bdb\.[\w$]+\.(?:insert|find|findone|remove|update|drop|aggregate|mapreduce|count|delete\w*)\s*\(|\bdo\s*\{[^{}]{0,200}\}\s*while\s*\(|\bwhile\s*\(\s*(?:true|1)\s*\)|\bfor\s*\(\s*;\s*;\s*\)|\bthis\.\w+\s*(?:==|!=|>|<)|\bsleep\s*\(\s*\d+\s*\)\s*(?:\|\||&&|;)/;
const HEADER_LINE = /(?:\r\n?|\n|[\u010a\u010d\u560a\u560d])[\t ]*[a-z][a-z0-9-]{1,40}\s*:/;
/**
 * A line that starts a mail header in a value a form mails (a contact form's address or subject):
 * an address header with an address, a subject, a content type or MIME version. A textarea's
 * lines of prose have none of these shapes.
 */
const MAIL_HEADER = /(?:\r\n?|\n)[\t ]*(?:(?:b?cc|to|from|reply-to|sender|return-path)[\t ]*:[^\r\n@]{0,200}@|subject[\t ]*:|content-type[\t ]*:[\t ]*[a-z]+\/|mime-version[\t ]*:|content-transfer-encoding[\t ]*:)/;
const MAIL = /(?:\r\n?|\n)[\t ]*(?:(?:rcpt\s+to|mail\s+from|helo|ehlo)\b|(?:data|quit|rset|noop)[\t ]*(?:\r|\n|$)|[a-z]\d{1,4}\s+(?:capability|fetch|login|select|logout|append|list|store|uid)\b)/;

function template(form: string): boolean {
  // The next place of each closing mark, kept while ahead of the read (-1: none further): each
  // is searched for once per occurrence, so "{{{{{{…" without a close stays linear.
  const next = new Map<string, number>();
  for (const m of form.matchAll(TEMPLATE_OPEN)) {
    const open = m[0];
    if (open.startsWith('<#') || open.startsWith('[#')) return true;
    const close = open === '{{' ? '}}' : open === '{%' ? '%}' : open.startsWith('<%') ? '%>' : '}';
    const from = m.index + open.length;
    let end = next.get(close);
    if (end === undefined || (end !== -1 && end < from)) next.set(close, (end = form.indexOf(close, from)));
    const body = form.slice(m.index + open.length, end < 0 ? m.index + open.length + 200 : Math.min(end, m.index + open.length + 400));
    if (end < 0 && !open.startsWith('<%')) continue;
    if (open === '{%') {
      if (/^\s*(?:import|include|set|for|if|macro|from|extends|raw|load|with|debug)\b/.test(body) && WORK.test(body)) return true;
      continue;
    }
    if (WORK.test(body)) return true;
  }
  return false;
}

/** A Log4j lookup after the nested ones (${lower:j}, ${::-n}, ${env:X:-d}) are resolved. */
function jndi(form: string): boolean {
  if (!form.includes('${')) return false;
  let t = form;
  for (let round = 0; round < 4 && LOOKUP_NESTED.test(t); round++) t = t.replace(LOOKUP_NESTED, (_m, plain: string | undefined, dated: string | undefined) => plain ?? dated ?? '');
  return /\$\{\s*(?:jndi|ldap|rmi|dns|nis|iiop|corba|nds|http)\s*:/.test(t);
}

/**
 * The rule of another injection `form` (decoded, lower case) matches; `inBody`: line breaks are
 * ordinary there; `words`: its trigger words (trigger-words.ts).
 */
/**
 * A JSON key that is a query operator of a document database: the ones that run code at every
 * level; from level 2 any ($ne, $gt … are how logins are bypassed, and also how admin tools filter).
 */
export function operatorKey(key: string, level: number): boolean {
  return /^\$(?:where|function|accumulator|expr)$/.test(key) || (level >= 2 && /^\$(?:ne|eq|gt|gte|lt|lte|regex|or|and|nor|not|nin|in|exists|elemmatch|lookup|jsonschema|text|mod|all|size|type)$/.test(key));
}

/**
 * Keys a login form sends a secret as: no query filters on a password, so any operator there is a
 * bypass.
 */
const SECRET_KEY = /^(?:(?:current|new|old|confirm)_?)?(?:pass(?:word|wd|phrase)?|pwd|pin|otp|secret)(?:_?(?:confirm(?:ation)?|again))?$/;
/**
 * Keys a login form sends an identity as: admin tools filter on these ({"email": {"$regex":
 * "^o'brien"}}, {"username": {"$in": [...]}}), so only the operators that match every user but
 * one, or all of them, count ({"username": {"$ne": null}}, {"$gt": ""}, {"$nin": []}).
 */
const IDENTITY_KEY = /^(?:user(?:name)?|login|e-?mail|mail|account)$/;
/** The comparison operators that make a query match any document ({"$ne": null}, {"$gt": ""}, {"$regex": ".*"}). */
const MATCHING_OPERATOR = /^\$(?:ne|eq|gt|gte|lt|lte|regex|in|nin|exists|not|or|and|nor|elemmatch|type|where|expr)$/;
const BYPASS_OPERATOR = /^\$(?:ne|gt|gte|nin|not|where|expr)$/;

/**
 * A query operator as the key of an object given for a credential ({"password": {"$ne": null}},
 * {"username": {"$ne": null}}): at level 1, since no login sends one as an object; an admin
 * tool's filter on any other field ({"status": {"$ne": "archived"}}) is read so from level 2
 * (operatorKey).
 */
export function credentialOperator(key: string, enclosingKey: string | undefined): boolean {
  if (enclosingKey === undefined || !key.startsWith('$')) return false;
  const operator = key.toLowerCase();
  return (MATCHING_OPERATOR.test(operator) && SECRET_KEY.test(enclosingKey)) || (BYPASS_OPERATOR.test(operator) && IDENTITY_KEY.test(enclosingKey));
}

export function otherInjection(form: string, inBody: boolean, level: number, words = triggerWords(form), mailHeaders = true): number | undefined {
  if (form.includes('${') && jndi(form)) return INJECTION.jndi;
  if (pollutingValue(form)) return POLLUTION_RULE;
  if (form.includes('<!--') && SSI.test(form)) return INJECTION.ssi;
  if (/[{<[]/.test(form) && template(form)) return INJECTION.template;
  if (form.includes('<') && XXE.test(form)) return INJECTION.xxe;
  if ((form.includes('(') && /[&|!*]/.test(form)) || form.includes(':=')) {
    if (LDAP.test(form) || (form.includes(':=') && LDAP_EXTENSIBLE.test(form))) return INJECTION.ldap;
  }
  if (form.includes(';') || form.includes('||') ? JS_BREAKOUT.test(form) : false) return INJECTION.nosql;
  if ((form.includes('$') && NOSQL_NAME.test(form) && NOSQL_OPERATOR.test(form)) || ((words & TRIGGERS.serverJs) !== 0 && form.includes('(') && SERVER_JS.test(form))) return INJECTION.nosql;
  if (/[\r\n]/.test(form) && MAIL.test(form)) return INJECTION.mail;
  if (mailHeaders && /[\r\n]/.test(form) && MAIL_HEADER.test(form)) return INJECTION.mailHeader;
  if (!inBody && HEADER_LINE.test(form)) return INJECTION.crlf;
  if (!inBody && level >= 3 && /[\r\n]/.test(form)) return INJECTION.crlf;
  return undefined;
}
