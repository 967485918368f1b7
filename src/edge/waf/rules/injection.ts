// Other injections: server-side includes and templates, XML external entities, LDAP and NoSQL
// operators, and CR/LF smuggled into values (header and mail injection).
import type { Rule } from './types.ts';

export const INJECTION_RULES: Rule[] = [
  { id: 934100, class: 'injection', description: 'server-side include directive', pattern: /<!--\s*#\s*(?:exec|include|echo|config|set|printenv|fsize|flastmod)\b/ },
  { id: 934110, class: 'injection', description: 'template expression', pattern: /\{\{[^}]{0,100}[*+\-/(][^}]{0,100}\}\}|\$\{[^}]{0,100}[(*][^}]{0,100}\}|#\{[^}]{0,60}[*+(][^}]{0,60}\}|<#(?:assign|include)\b|freemarker\.template/ },
  { id: 934120, class: 'injection', description: 'XML entity declarations and schema includes', pattern: /<!doctype[^>]{0,200}(?:\[|system|public)|<!entity\b|\bxsi:schemalocation\s*=|<\s*xs:include\b|<\s*xi:include\b/ },
  { id: 934130, class: 'injection', description: 'LDAP filter injection', pattern: /\(\s*[&|!]\s*\(|\*\s*\(\s*\|\s*\(|\bobjectclass\s*=\s*\*|\buserpassword\s*:?[\d.]*:?=/ },
  { id: 934140, class: 'injection', description: 'NoSQL operators and server-side JavaScript', pattern: /[{,]\s*['"]?\$(?:where|ne|gt|lt|regex|or|and|nin|exists|expr)['"]?\s*:|\bdb\.\w+\.(?:insert|find|remove|update|drop)\s*\(|\bwhile\s*\(\s*\w+\s*-\s*\w+|new\s+date\s*\(\s*\)\s*;\s*do\s*\{/ },
  { id: 921110, class: 'injection', description: 'mail protocol commands on a new line (SMTP/IMAP injection)', pattern: /[\r\n]\s*(?:rcpt to|mail from|quit\s*$|quit[\r\n]|data[\r\n]|helo|ehlo|[a-z]\d{1,4} (?:capability|fetch|login|select|logout|append))\b/ },
  { id: 921100, class: 'injection', description: 'CR/LF in a value (header or mail command injection)', pattern: /[\r\n]/, crs: '921 (protocol attacks: CRLF)', notInBody: true },
];
