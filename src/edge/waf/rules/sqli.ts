// SQL injection rules: what sqli.ts's fingerprints (a tokenizer over four quoting contexts)
// answer with.
import type { Rule } from './types.ts';

export const SQLI_RULES: Rule[] = [
  { id: 942100, class: 'sqli', description: 'UNION SELECT after a closed value or inside one', crs: '942190 (union select)' },
  { id: 942110, class: 'sqli', description: 'time delay: a delay function called with a number in SQL position, waitfor delay', crs: '942160 (sleep/benchmark)' },
  { id: 942120, class: 'sqli', description: 'subquery: ( SELECT … FROM or a call … ) where SQL continues' },
  { id: 942130, class: 'sqli', description: 'stacked statement after ; (declare @v, exec, drop table, shutdown, select …)', crs: '942360 (stacked queries)' },
  { id: 942140, class: 'sqli', description: 'dangerous procedures and catalogue tables', crs: '942140 (database names)' },
  { id: 942150, class: 'sqli', description: 'boolean condition after a closed value (comparison, call, value and cut-off)', crs: '942130 (tautologies)' },
  { id: 942160, class: 'sqli', description: 'numeric comparison after a closed value (1 or 2>1)' },
  { id: 942170, class: 'sqli', description: 'functions used to extract data through errors or out of band', crs: '942151 (SQL function names)' },
  { id: 942180, class: 'sqli', description: 'comment that cuts the query off right after a closed value', crs: '942440 (comment sequences)' },
  { id: 942190, class: 'sqli', description: 'clause after a closed value (order by N, group by, having, limit, into outfile)' },
  { id: 942200, class: 'sqli', description: 'a command or file through the database: PostgreSQL COPY … TO/FROM PROGRAM (CVE-2019-9193), COPY (SELECT …) TO a file', crs: '942350 (data and structure manipulation)' },
];
