// SQL injection. Patterns look for SQL structure (keyword pairs, functions with parentheses,
// comment-split statements), not single words: "union was a great select" is prose.
import type { Rule } from './types.ts';

export const SQLI_RULES: Rule[] = [
  { id: 942100, class: 'sqli', description: 'UNION SELECT', pattern: /\bunion(?:\s|\/\*.*?\*\/)+(?:all(?:\s|\/\*.*?\*\/)+)?(?:distinct\s+)?select\b/, crs: '942190 (union select)' },
  { id: 942110, class: 'sqli', description: 'time-based functions (sleep, benchmark, pg_sleep, waitfor delay)', pattern: /\b(?:sleep|pg_sleep|benchmark)\s*\(\s*\d|\bwaitfor\s+delay\s+'/, crs: '942160 (sleep/benchmark)' },
  { id: 942120, class: 'sqli', description: 'subquery select ... from (...)', pattern: /\(\s*select\b[^)]{0,200}\bfrom\b/ },
  { id: 942130, class: 'sqli', description: 'stacked statements after a quote or number', pattern: /(?:['"\d)]|^)\s*;\s*(?:\/\*.*?\*\/\s*)*(?:declare|exec|execute|drop|insert|update|delete|create|alter|shutdown)\b/, crs: '942360 (stacked queries)' },
  { id: 942140, class: 'sqli', description: 'dangerous procedures and schema tables', pattern: /\bxp_cmdshell\b|\bsp_(?:executesql|oacreate|sys_\w+)\b|\binformation_schema\b|\bmaster\.(?:dbo|sys)\.|\bsysobjects\b|\bpg_catalog\b/, crs: '942140 (database names)', plain: true },
  { id: 942150, class: 'sqli', description: 'quote-breaking boolean tautology', pattern: /['"`)]\s*(?:or|and|\|\||&&)\s+(?:\(?\s*['"`]?\w*['"`]?\s*(?:=|<|>|like\b|!=)|\d+\s*[=<>]|not\b|\w+\s*\()/, crs: '942130 (tautologies)' },
  { id: 942160, class: 'sqli', description: 'numeric tautology inside a condition', pattern: /\b(?:and|or)\s+(\d+)\s*=\s*\1\b(?!\s*[a-z])/ },
  { id: 942170, class: 'sqli', description: 'SQL functions used for extraction', pattern: /\b(?:json_extract|json_depth|extractvalue|updatexml|load_file|group_concat|char\s*\(\s*\d+\s*,|concat_ws|fn_varbintohexstr|convert\s*\(\s*varbinary)\s*\(?/, crs: '942151 (SQL function names)', plain: true },
  { id: 942180, class: 'sqli', description: 'comment-terminated injection', pattern: /['"]\s*(?:--\s|#|\/\*)/, crs: '942440 (comment sequences)' },
  { id: 942190, class: 'sqli', description: 'select ... from with a comment or quote', pattern: /\bselect\b.{0,100}\bfrom\b.{0,100}(?:\/\*|--|#|\bwhere\b.{0,40}=)/ },
];
