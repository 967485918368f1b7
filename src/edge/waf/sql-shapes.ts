// The grammar the SQL injection shapes (sqli.ts) are read with: over a value's tokens
// (sql-tokens.ts), what a query's parts look like — an operand, a select list and its first
// column, UNION SELECT, a subquery, a second statement after ';', PostgreSQL's COPY. Each answers
// yes or no at a token index; which rule a value matches is sqli.ts's to say.
import type { SqlToken } from './sql-tokens.ts';

export type Tokens = SqlToken[];
export const UNARY = new Set(['-', '+', '~', '!', 'not']);

/** Drops unary operators where an operand is expected (so "-1", "not 1", "!x" are operands). */
export function fold(tokens: Tokens): Tokens {
  const out: Tokens = [];
  for (const t of tokens) {
    const prev = out[out.length - 1];
    const operandExpected = !prev || prev.type === '&' || prev.type === 'o' || prev.type === '(' || prev.type === ',';
    if (t.type === 'o' && UNARY.has(t.text) && operandExpected) continue;
    out.push(t);
  }
  return out;
}

export const isOperand = (t?: SqlToken) => !!t && (t.type === '1' || t.type === 's' || t.type === 'n' || t.type === 'v' || t.type === 'f' || (t.type === 'k' && (t.text === 'true' || t.text === 'false' || t.text === 'null')));
export const isValue = (t?: SqlToken) => !!t && (t.type === '1' || t.type === 's' || t.type === 'v' || t.type === 'f' || (t.type === 'k' && (t.text === 'true' || t.text === 'false' || t.text === 'null')));

/** After a statement keyword: something a query selects (a column list, a value, a call), not prose. */
export function selects(t: Tokens, i: number): boolean {
  while (t[i]?.type === 'k' && (t[i]!.text === 'all' || t[i]!.text === 'distinct' || t[i]!.text === 'distinctrow' || t[i]!.text === 'top')) i++;
  const a = t[i];
  if (!a) return false;
  if (a.type === '1' || a.type === 'v' || a.type === 'f' || a.type === '(' || a.type === 's' || (a.type === 'o' && a.text === '*') || (a.type === 'k' && a.text === 'null')) return true;
  // SELECT CASE WHEN … THEN (a conditional column: blind injection's favourite).
  if (a.type === 'k' && a.text === 'case') return t[i + 1]?.text === 'when' && t.slice(i + 2, i + 12).some((x) => x.type === 'k' && x.text === 'then');
  return a.type === 'n' && firstColumn(t, i);
}

/** A symbol operator between operands of a column: || concatenates, -> and ->> read JSON, + - * / compute (not words: "cheese or wine"). */
const joins = (x?: SqlToken) => !!x && ((x.type === 'o' && !/^[a-z]/.test(x.text)) || (x.type === '&' && (x.text === '||' || x.text === '&&')));

/** The index past the parenthesis opened at t[i] (t.length when it does not close among the tokens). */
export function pastParentheses(t: Tokens, i: number): number {
  let depth = 0;
  for (let j = i; j < t.length; j++) {
    if (t[j]!.type === '(') depth++;
    else if (t[j]!.type === ')' && --depth === 0) return j + 1;
  }
  return t.length;
}

/**
 * A select list's first column when it starts with a name, read as a parser reads it: an
 * expression (operands joined by symbol operators — a || '~' || b, doc->>'$.pw' — calls and
 * parentheses whole), an alias (AS x), then what ends a column: ',', FROM, a comment, a clause,
 * another UNION. The value may also end there (the query's own rest follows) when the column has
 * a shape prose lacks (an operator, AS): "select committee members" is no column, "select
 * username || '~' || password from" and "select name as n, …" are. (An alias without AS, "select
 * login l, pass p from", reads like "select an option from the menu": not read.)
 */
function firstColumn(t: Tokens, i: number): boolean {
  let j = i;
  let shaped = false;
  for (;;) {
    const x = t[j];
    if (!x || !(isOperand(x) || x.type === '(' || (x.type === 'o' && x.text === '*'))) return false;
    j = x.type === '(' ? pastParentheses(t, j) : x.type === 'f' && t[j + 1]?.type === '(' ? pastParentheses(t, j + 1) : j + 1;
    if (!joins(t[j]) || t[j + 1] === undefined) break;
    j++;
    shaped = true;
  }
  if (t[j]?.type === 'k' && t[j]!.text === 'as') {
    if (t[j + 1]?.type !== 'n' && t[j + 1]?.type !== 's') return false;
    j += 2;
    shaped = true;
  }
  const end = t[j];
  if (!end) return shaped;
  return end.type === ',' || (end.type === 'k' && end.text === 'from') || end.type === 'c' || end.type === 'B' || end.type === 'U';
}

/** UNION [ALL|DISTINCT] [(] SELECT …, with t[i] the union. */
export function unionSelect(t: Tokens, i: number): boolean {
  let j = i + 1;
  while (t[j] && ((t[j]!.type === 'k' && (t[j]!.text === 'all' || t[j]!.text === 'distinct' || t[j]!.text === 'distinctrow')) || t[j]!.type === '(')) j++;
  return t[j]?.type === 'E' && selects(t, j + 1);
}

/**
 * The words a data statement cannot run without, within its first tokens: "; update the roadmap"
 * and "; delete removes them" are prose, "; update users set …" and "; delete from users" are not.
 */
const STATEMENT_NEEDS: Record<string, readonly string[]> = {
  update: ['set'],
  delete: ['from', 'where'],
  insert: ['into', 'values', 'select', 'set'],
  replace: ['into', 'values', 'select', 'set'],
  merge: ['into', 'using'],
  with: ['as'],
};

/** Whether the statement at t[at] has, within its next four tokens, a word it cannot run without ("values" needs its list). */
function statementShape(t: Tokens, at: number): boolean {
  const word = t[at]!.text;
  if (word === 'values') return t[at + 1]?.type === '(';
  const needs = STATEMENT_NEEDS[word];
  if (!needs) return true;
  for (let j = at + 1; j <= at + 4 && j < t.length; j++) if (needs.includes(t[j]!.text)) return true;
  return false;
}

/** A second statement after ';' at t[i] (the ';'). */
export function stacked(t: Tokens, i: number): boolean {
  const a = t[i + 1];
  const b = t[i + 2];
  if (!a) return false;
  if (a.type === 'E') return a.text === 'select' ? selects(t, i + 2) : !!b && (b.type === 'n' || b.type === 'k' || b.type === 'B') && statementShape(t, i + 1);
  // "; set @q = …" (MySQL's variables, then PREPARE/EXECUTE).
  if (a.type === 'k' && a.text === 'set') return b?.type === 'v' && t[i + 3]?.type === 'o';
  if (a.type !== 'T') return false;
  switch (a.text) {
    case 'prepare':
      return b?.type === 'n' && t[i + 3]?.type === 'k' && t[i + 3]!.text === 'from';
    case 'do':
    case 'perform':
      return !!b && (b.type === 'f' || b.type === '?');
    case 'declare':
      return b?.type === 'v';
    case 'exec':
    case 'execute':
      return !!b && (b.type === 'v' || b.type === 'f' || b.type === '(' || (b.type === 'n' && /^(?:xp_|sp_|master\.|dbo\.|sys\.)/.test(b.text)));
    case 'waitfor':
      return b?.type === 'k' && (b.text === 'delay' || b.text === 'time');
    case 'copy':
      return copyStatement(t, i + 1);
    case 'shutdown':
      return !b || b.type === 'c' || b.type === ';' || b.text === 'with';
    case 'drop':
    case 'create':
    case 'alter':
    case 'truncate':
      return !!b && /^(?:table|database|schema|view|index|user|login|function|procedure|trigger)$/.test(b.text);
    default:
      return b?.type === '(' || b?.type === 'n' && t[i + 3]?.type === '(';
  }
}

/**
 * PostgreSQL's COPY that runs a command or writes a file, with t[i] the copy: COPY (SELECT …) TO
 * PROGRAM or TO '/file', COPY name [(columns)] FROM|TO PROGRAM '…' (CVE-2019-9193: any superuser
 * or pg_execute_server_program member runs a shell). "copy the report to program folder" has no
 * command string; COPY t FROM '/tmp/x.csv' (a server-side import) is left to the other shapes.
 */
export function copyStatement(t: Tokens, i: number): boolean {
  let j = i + 1;
  const query = t[j]?.type === '(' && t[j + 1]?.type === 'E';
  if (query) j = pastParentheses(t, j);
  else {
    if (t[j]?.type !== 'n' && t[j]?.type !== 'f') return false;
    j = t[j + 1]?.type === '(' ? pastParentheses(t, j + 1) : j + 1;
  }
  const direction = t[j]?.text;
  if (direction !== 'to' && direction !== 'from') return false;
  const target = t[j + 1];
  if (target?.type === 'n' && target.text === 'program') return t[j + 2]?.type === 's' && (query || statementEnd(t[j + 3]));
  return query && direction === 'to' && target?.type === 's';
}

/** What may follow COPY's source or target: the statement's end, or its options (WITH (…), CSV, …). "…to program 'settings' and restart" goes on as prose. */
const statementEnd = (x?: SqlToken) => !x || x.type === ';' || x.type === 'c' || x.type === '(' || x.text === 'with' || x.text === 'csv' || x.text === 'binary' || x.text === 'delimiter';

/** '(' SELECT … FROM/call … inside the parentheses, with t[i] the '('. */
export function subquery(t: Tokens, i: number): boolean {
  if (t[i + 1]?.type !== 'E' || t[i + 1]!.text !== 'select') return false;
  let depth = 1;
  for (let j = i + 2; j < t.length && j < i + 16; j++) {
    const x = t[j]!;
    if (x.type === '(') depth++;
    else if (x.type === ')' && --depth === 0) return j === i + 3 && isValue(t[i + 2]);
    else if ((x.type === 'k' && (x.text === 'from' || x.text === 'where' || x.text === 'case')) || x.type === 'f') return selects(t, i + 2) || x.type === 'f' || x.text === 'case';
  }
  return false;
}
