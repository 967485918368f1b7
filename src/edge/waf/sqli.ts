// SQL injection by fingerprint: a value is tokenized as the SQL it would become in each place a
// query could put it — as a bare number or name, inside a '…' string, inside a "…" string, inside
// a MySQL `identifier` — and the token types at its start are checked against the shapes an
// injection needs: a value is closed (a number, a string, a name, closing parentheses), then the
// query is turned (a boolean condition, UNION SELECT, a second statement, a clause, a comment that
// drops the rest). A few shapes that mean SQL wherever they stand (UNION SELECT, a subquery, a
// stacked statement, a delay function, COPY … PROGRAM) are also looked for inside a value. Prose rarely closes a value and turns the
// query in the first tokens, which is what keeps "union was a great select" and "sleep (8 hours)"
// apart from "1 union select 2" and "1 and sleep(5)".
import { copyStatement, fold, isOperand, isValue, selects, stacked, subquery, unionSelect, UNARY, type Tokens } from './sql-shapes.ts';
import { sqlTokens, statementMayFollow } from './sql-tokens.ts';
import { TRIGGERS, triggerWords } from './trigger-words.ts';

/** Which detection matched (the rule id, see rules/sqli.ts). */
export const SQLI = {
  union: 942100,
  delay: 942110,
  subquery: 942120,
  stacked: 942130,
  schema: 942140,
  tautology: 942150,
  numericTautology: 942160,
  extraction: 942170,
  comment: 942180,
  clause: 942190,
  copy: 942200,
} as const;

/** The places a query may put a value: bare (a number, a name), in a '…' or "…" string, in a MySQL `identifier` (ORDER BY `$col`). */
const QUOTES = [undefined, "'", '"', '`'] as const;

/** A condition after a logic operator at t[i]: a comparison, a call, a subquery, or a value that ends the query. */
function condition(t: Tokens, i: number, weak: boolean, quoted: boolean, level: number): number | undefined {
  let j = i + 1;
  while (t[j]?.type === '(') j++;
  const a = t[j];
  if (!a) return undefined;
  if (a.type === 'E' && t[j - 1]?.type === '(') return subquery(t, j - 1) ? SQLI.subquery : undefined;
  // "' or exists(select …)", "' and not exists (select …)".
  if ((a.type === 'k' && a.text === 'exists') || (a.type === 'o' && a.text === 'not' && t[j + 1]?.text === 'exists')) {
    const open = a.text === 'not' ? j + 2 : j + 1;
    return t[open]?.type === '(' && subquery(t, open) ? SQLI.subquery : undefined;
  }
  if (a.type === 'f' && !weak) return SQLI.tautology;
  if (!isOperand(a)) return undefined;
  let k = j + 1;
  while (t[k]?.type === ')') k++;
  // "not between", "not like", "not in": the operator is the second word.
  if (t[k]?.type === 'o' && t[k]!.text === 'not' && t[k + 1]?.type === 'o') k++;
  const op = t[k];
  if (op?.type === 'o') {
    // "' or 1 in (select @@version)": compared with a subquery.
    if (t[k + 1]?.type === '(' && subquery(t, k + 1)) return SQLI.subquery;
    let m = k + 1;
    while (t[m]?.type === '(' || (t[m]?.type === 'o' && UNARY.has(t[m]!.text))) m++;
    const b = t[m];
    if (!isOperand(b) && !(b?.type === '(') && !(b?.type === 'k' && b.text === 'case')) return undefined;
    if (weak && !isValue(a) && !isValue(b) && level < 2) return undefined;
    return a.type === '1' && b?.type === '1' ? SQLI.numericTautology : SQLI.tautology;
  }
  if (weak || !isValue(a)) return undefined;
  // "' or 1--", "' or true;": a value, then the rest of the query is cut off; "or 1 group by …",
  // "or true limit 1": then a clause.
  if (op?.type === 'c' || op?.type === ';' || (op?.type === 'B' && op.text !== 'into' && op.text !== 'for')) return SQLI.tautology;
  // "' or 'x" (the query's own quote closes it): weaker, prose can look like it.
  if (!op && quoted && a.type === 's' && level >= 2) return SQLI.tautology;
  return undefined;
}

/** Spreadsheet functions that are no SQL function of any dialect. */
const SPREADSHEET_ONLY = new Set(['hyperlink', 'vlookup', 'hlookup', 'xlookup', 'sumif', 'sumifs', 'countif', 'countifs', 'averageif', 'averageifs', 'iferror', 'ifna', 'concatenate', 'textjoin', 'importxml', 'importhtml', 'importdata', 'importrange', 'image', 'sparkline', 'googlefinance', 'indirect', 'counta', 'networkdays', 'eomonth', 'datedif']);

/** What may follow a value's first operand for opening() to read on (a ')' or a turn of the query). */
const TURNS = new Set([')', 'U', '&', ';', 'c', 'B', 'T', 'o']);

/**
 * Whether the value's first two tokens already rule out every opening shape: an operand, then no
 * turn (prose: "the quick …"). Tokens and fold() are read from the start, so the first two of a
 * short run are the first two of the whole: the rest need not be tokenized.
 */
function plainStart(form: string, quote: (typeof QUOTES)[number]): boolean {
  const head = fold(sqlTokens(form, quote, 2));
  const [a, b] = head;
  return head.length === 2 && (a!.type === '1' || a!.type === 's' || a!.type === 'v' || a!.type === 'n') && !TURNS.has(b!.type);
}

/** The shapes that start a value: a closed value, then a turn of the query. */
function opening(t: Tokens, quote: (typeof QUOTES)[number], level: number, form: string): number | undefined {
  const quoted = quote !== undefined;
  const first = t[0];
  if (!first) return undefined;
  if (first.type === '(' && subquery(t, 0)) return SQLI.subquery;
  if (first.type === 'E' && level >= 2 && first.text === 'select' && selects(t, 1) && t.some((x) => x.type === 'k' && x.text === 'from')) return SQLI.clause;
  if (!(first.type === '1' || first.type === 's' || first.type === 'v' || first.type === 'n')) return undefined;
  // A bare name opening a value is often prose ("john or jane"): it needs stronger evidence.
  const weak = first.type === 'n' && !quoted;
  let i = 1;
  while (t[i]?.type === ')' && i < 4) i++;
  const turn = t[i];
  if (!turn) return undefined;
  switch (turn.type) {
    case 'U':
      return unionSelect(t, i) ? SQLI.union : undefined;
    case '&':
      return condition(t, i, weak, quoted, level);
    case ';':
      if (!stacked(t, i)) return undefined;
      return t[i + 1]!.text === 'waitfor' ? SQLI.delay : SQLI.stacked;
    case 'c':
      if (weak || first.type === 'v') return undefined;
      // "#1 best seller" in quotes is a hash after an empty string, not a cut-off query; "admin'#" is.
      if (turn.text.startsWith('#') && (first.type !== 's' || first.text === '' || /^#\w/.test(turn.text))) return undefined;
      // Only MySQL quotes names with backticks, and its -- comments need a blank after them:
      // "add `--dry-run` flag" has none.
      if (quote === '`' && turn.text.startsWith('--') && turn.text.length > 2 && turn.text.trim() === turn.text) return undefined;
      return SQLI.comment;
    case 'B': {
      if (weak) return undefined;
      const by = t[i + 1]?.type === 'k' && t[i + 1]!.text === 'by' ? i + 2 : i + 1;
      const what = t[by];
      if (turn.text === 'into') return what?.type === 'k' && (what.text === 'outfile' || what.text === 'dumpfile') ? SQLI.clause : undefined;
      if ((turn.text === 'order' || turn.text === 'group') && by === i + 1) return undefined;
      if (what?.type === '(' && subquery(t, by)) return SQLI.subquery;
      return what && (what.type === '1' || what.type === 'f' || (what.type === 'n' && (t[by + 1] === undefined || t[by + 1]!.type === 'c' || t[by + 1]!.type === ',' || t[by + 1]!.type === 'B'))) ? SQLI.clause : undefined;
    }
    case 'T':
      return turn.text === 'waitfor' && t[i + 1]?.text === 'delay' ? SQLI.delay : undefined;
    case 'o': {
      if (weak) return undefined;
      const next = t[i + 1];
      if (next?.type === '(' && subquery(t, i + 1)) return SQLI.subquery;
      // "1+ascii(…)": a call glued to its parenthesis ("3+ yrs (part-time)" is prose).
      // (A spreadsheet's formula cell in a CSV — "=HYPERLINK(…)" after a field's quote — calls a
      // function no SQL dialect has.)
      if (next?.type === 'f' && first.type !== 'n' && form.includes(`${next.text}(`) && !SPREADSHEET_ONLY.has(next.text)) return SQLI.tautology;
      // '1'='1 : the query's closing quote completes a comparison of two strings.
      if (quoted && isValue(next)) {
        const after = t[i + 2];
        if (!after && next!.type === 's') return SQLI.tautology;
        if (after?.type === 'c' || after?.type === '&' || after?.type === ';') return SQLI.tautology;
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

/**
 * A later logic operator and a comparison of two literal values: out of a string, one the
 * query's own quote completes ("' or x or '1'='1", "' and 1.e(1) or 'a'='a"): the first turn
 * need not be the one that matters.
 */
function laterTautology(t: Tokens, quoted: boolean): number | undefined {
  for (let i = 2; i < t.length - 2; i++) {
    if (t[i]!.type !== '&') continue;
    const [a, op, b, after] = [t[i + 1], t[i + 2], t[i + 3], t[i + 4]];
    if (!isValue(a) || op?.type !== 'o' || !/^(?:=|<>|!=|<=>|like)$/.test(op.text) || !isValue(b)) continue;
    // Outside a string only the same literal on both sides counts ("… where id = 1 or 1=1").
    if (!quoted) {
      if (op.text === '=' && a!.type === b!.type && a!.text === b!.text && (!after || after.type === 'c' || after.type === '&' || after.type === ';' || after.type === ')')) return SQLI.tautology;
      continue;
    }
    // The query's quote completes the last string: "…'1'='1" ends inside it, or a comment cuts the rest.
    if ((!after && b!.type === 's') || after?.type === 'c' || after?.type === '&' || after?.type === ';') return SQLI.tautology;
  }
  return undefined;
}

// Plain words only: the tokenizer decides whether a call follows (comments between included).
const TIME_FUNCTIONS = /\b(?:sleep|pg_sleep|benchmark|dbms_lock\.sleep|dbms_pipe\.receive_message|randomblob)\b/g;
const EXTRACTION = /\b(?:extractvalue|updatexml|load_file|group_concat|concat_ws|make_set|export_set|fn_varbintohexstr|utl_inaddr\.get_host_\w+|utl_http\.request|dbms_xmlgen\.\w+|xp_dirtree|xp_fileexist|sys_eval|sys_exec|load_extension)\s*\(|\bchar\s*\(\s*\d+\s*,\s*\d+|\bconcat\s*\(\s*0x[0-9a-f]+/;
const SCHEMA = /\b(?:exec|execute)\s+(?:[a-z_]+\.{1,2}){0,2}(?:xp|sp)_[a-z_]+|\b(?:xp_cmdshell|xp_dirtree|xp_fileexist|xp_regread|xp_regwrite|xp_servicecontrol|xp_subdirs|sp_executesql|sp_oacreate|sp_oamethod|sp_makewebtask|sp_addextendedproc|sp_configure|sp_password)\b|\b(?:information_schema|pg_catalog|mysql|sys|master\.dbo|master\.sys)\.(?:tables|columns|schemata|user|users|objects|sysobjects|syscolumns|pg_\w+|innodb_\w+|routines|processlist)\b|\bsysobjects\b|\bsyscolumns\b|\ball_tables\b|\buser_tables\b/;
const PROBE = /['"`;()=<>!|&#@,*]|--|\/\*|\b(?:union|intersect|except|order|group|having|limit|waitfor|procedure|into|select|or|and|xor|between|rlike|regexp)\b/;

/** Something before index `at` that puts what follows in SQL (start, operator, keyword). */
function sqlBefore(text: string, at: number): boolean {
  const before = text.slice(Math.max(0, at - 24), at).trimEnd();
  if (before === '' && at - 24 <= 0) return true;
  return /[&|=<>(,+\-*/;'"!]$|\b(?:and|or|xor|select|where|from|not|if|then|when|else|having|exec|execute|perform|begin)$/.test(before);
}

const NESTABLE = ['union', 'select', 'from', 'where', 'sleep'];

/** The text with every keyword deleted once, when that makes a keyword (uniunionon → union). */
function keywordsDeletedOnce(form: string): string | undefined {
  let nested = false;
  for (const word of NESTABLE) {
    const at = form.indexOf(word);
    if (at > 0 && form.slice(Math.max(0, at - word.length), at + 2 * word.length).split(word).join('').includes(word)) nested = true;
  }
  if (!nested) return undefined;
  let out = form;
  for (const word of NESTABLE) out = out.split(word).join('');
  return out === form ? undefined : out;
}

const INNER_COMMENT = /(?<=[a-z])\/\*\*\/(?=[a-z])/;
const INNER_COMMENT_ALL = new RegExp(INNER_COMMENT.source, 'g');

const SUBQUERY_START = /\(\s*(?:\/\*|select\b)/y;

/** Shapes that mean SQL anywhere in a value: union select, subqueries, stacked statements, delays. */
function inside(text: string, level: number, words: number): number | undefined {
  // (Each reading starts at its keyword in the whole text, not a copy of the text from there: the
  // tokenizer's searches are remembered per text, which keeps the repeated readings linear.)
  if (words & TRIGGERS.union) {
    for (const m of text.matchAll(/\b(?:union|intersect|except)\b/g)) {
      if (unionSelect(fold(sqlTokens(text, undefined, 16, m.index)), 0)) return SQLI.union;
    }
  }
  if (text.includes('copy')) {
    for (const m of text.matchAll(/\bcopy\b/g)) if (copyStatement(sqlTokens(text, undefined, 24, m.index), 0)) return SQLI.copy;
  }
  // Every '(' tried in turn (a match holds no other '('): the same matches as a global search.
  for (let at = text.indexOf('('); at >= 0; at = text.indexOf('(', at + 1)) {
    SUBQUERY_START.lastIndex = at;
    if (!SUBQUERY_START.test(text)) continue;
    const t = sqlTokens(text, undefined, 20, at);
    if (subquery(t, 0) && (level >= 2 || sqlBefore(text, at))) return SQLI.subquery;
  }
  for (let at = text.indexOf(';'); at >= 0; at = text.indexOf(';', at + 1)) {
    // stacked() needs a statement right after the ';': two tokens tell (the first twelve are read
    // when they may); the next word alone tells most (prose).
    if (!statementMayFollow(text, at)) continue;
    const head = sqlTokens(text, undefined, 2, at);
    if (head.length === 2 && head[1]!.type !== 'E' && head[1]!.type !== 'T') continue;
    const t = fold(sqlTokens(text, undefined, 12, at));
    if (stacked(t, 0)) return SQLI.stacked;
  }
  if (words & TRIGGERS.delay) {
    for (const m of text.matchAll(TIME_FUNCTIONS)) {
      const t = sqlTokens(text, undefined, 6, m.index);
      // sleep(5) and benchmark(1000000,md5(1)), after something that makes it SQL: not "sleep (8 hours)".
      const call = t[0]?.type === 'f' && t[1]?.type === '(' && t[2]?.type === '1' && (t[3]?.type === ')' || t[3]?.type === ',');
      // …and SQL after it, or nothing ("sleep(5) in python" is a search).
      const after = t[3]?.type === ',' ? undefined : t[4];
      const ends = !after || after.type === 'c' || after.type === ';' || after.type === ')' || after.type === '&' || after.type === ',' || (after.type === 'o' && /^[=<>!+*/|-]/.test(after.text));
      if (call && ends && sqlBefore(text, m.index)) return SQLI.delay;
    }
    if (/\bwaitfor\s+delay\s+['"]\d/.test(text)) return SQLI.delay;
  }
  if (words & TRIGGERS.extraction && EXTRACTION.test(text)) return SQLI.extraction;
  if (words & TRIGGERS.schema && SCHEMA.test(text)) return SQLI.schema;
  return undefined;
}

/** A value that closes itself and turns the query, read in each place a query may put it. */
function openingShape(text: string, level: number): number | undefined {
  for (const quote of QUOTES) {
    if (quote && !text.includes(quote)) continue;
    if (plainStart(text, quote)) continue;
    const t = fold(sqlTokens(text, quote));
    const found = opening(t, quote, level, text) ?? laterTautology(t, quote !== undefined);
    if (found) return found;
  }
  return undefined;
}

/**
 * The SQL injection rule a decoded, lower-case form matches at `level` (1–4), if any. `words`:
 * the form's trigger words (trigger-words.ts), when the caller has them already. `whole`: the
 * text before Markdown code quoted in prose was blanked out of `form` (quoted-code.ts, bodies at
 * level 1): a query knows no Markdown, and a backtick is a character of its string (or the quote
 * of a MySQL identifier), so the shapes that open a value read the whole text; the shapes found
 * anywhere inside one (a union, a subquery, a stacked statement) read what is left of prose.
 */
export function sqlInjection(form: string, level: number, words = triggerWords(form), whole = form): number | undefined {
  // Filters that delete keywords once make UNIunionON a UNION: read it so too.
  if ((words & TRIGGERS.union) !== 0 || form.includes('select')) {
    const once = keywordsDeletedOnce(form);
    if (once !== undefined) {
      const found = sqlInjection(once, level);
      if (found) return found;
    }
  }
  // Filters that strip comments make UN/**/ION a UNION: read it so too.
  if (form.includes('/**/') && INNER_COMMENT.test(form)) {
    const joined = form.replace(INNER_COMMENT_ALL, '');
    const found = sqlInjection(joined, level);
    if (found) return found;
  }
  if (whole !== form && PROBE.test(whole)) {
    const found = openingShape(whole, level);
    if (found) return found;
  }
  if (!PROBE.test(form)) return words & TRIGGERS.extraction && EXTRACTION.test(form) ? SQLI.extraction : words & TRIGGERS.schema && SCHEMA.test(form) ? SQLI.schema : undefined;
  return openingShape(form, level) ?? inside(form, level, words);
}
