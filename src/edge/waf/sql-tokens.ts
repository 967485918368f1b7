// A SQL tokenizer for injection detection (the technique libinjection made standard): a value is
// read as the SQL it would become once pasted into a query, and reduced to a sequence of token
// types — its fingerprint. Classification (sqli.ts) works on those types, never on words: "union
// was a great select" and "1 union select 2" differ by what surrounds the words, not the words.
//
// Token types:
//   s string    1 number    n name (bareword, `quoted` identifier)    v @variable
//   k keyword   E statement that starts a query (select …)    U union/intersect/except
//   B clause that follows a value (order by, group by, having, limit, procedure, into)
//   T statement of procedural SQL (declare, exec, waitfor, drop, shutdown …)
//   f function (a name followed by '(')    o operator    & logic (and, or, xor, &&, ||)
//   c comment that ends the query (--, #, an unclosed /*)    ( ) , ; as themselves    ? anything else
// Comments that close (/* … */) count as space; MySQL's executable comments (/*! … */, /*!50000 …)
// count as the code inside them, and a comment's end read without its start (a reading that begins
// inside one: "union*/ /*!select") as space too.

export interface SqlToken {
  type: string;
  text: string;
}

const STATEMENTS = new Set(['select', 'insert', 'update', 'delete', 'replace', 'merge', 'values', 'with']);
const PROCEDURAL = new Set(['declare', 'exec', 'execute', 'prepare', 'do', 'perform', 'waitfor', 'drop', 'create', 'alter', 'truncate', 'shutdown', 'grant', 'revoke', 'rename', 'load', 'handler', 'call', 'begin', 'openrowset', 'opendatasource', 'bulk', 'copy']);
const UNION = new Set(['union', 'intersect', 'except', 'minus']);
const LOGIC = new Set(['and', 'or', 'xor']);
const OPERATOR_WORDS = new Set(['not', 'like', 'rlike', 'ilike', 'regexp', 'similar', 'is', 'in', 'between', 'sounds', 'div', 'mod', 'escape', 'collate', 'glob', 'match', 'against']);
const CLAUSES = new Set(['order', 'group', 'having', 'limit', 'procedure', 'into', 'offset', 'fetch', 'for']);
const KEYWORDS = new Set([
  'from', 'where', 'as', 'on', 'join', 'inner', 'outer', 'left', 'right', 'cross', 'natural', 'case', 'when', 'then', 'else', 'end', 'exists', 'all', 'distinct', 'distinctrow',
  'true', 'false', 'null', 'unknown', 'table', 'database', 'schema', 'top', 'by', 'asc', 'desc', 'set', 'outfile', 'dumpfile', 'some', 'any', 'cast', 'convert',
  'using', 'binary', 'interval', 'delay', 'time', 'if', 'elseif', 'while', 'loop', 'return', 'returns', 'varchar', 'nvarchar', 'char', 'int', 'integer', 'sysname',
]);
/** Keywords that are also functions when a '(' follows (and then are functions). */
// (Operator words before a parenthesis compare with it: "1 rlike (select 1)", "x in (…)"; but
// SQLite has a like() function.)
// (PostgreSQL's COPY is a statement, "copy (select …) to program …": no dialect has a copy().)
const NEVER_FUNCTION = new Set([...STATEMENTS, ...UNION, ...LOGIC, 'copy', 'in', 'not', 'rlike', 'ilike', 'regexp', 'similar', 'is', 'between', 'sounds', 'escape', 'collate', 'exists', 'as', 'from', 'where', 'on', 'using', 'into', 'values', 'all', 'any', 'some', 'then', 'else', 'when', 'and', 'or']);

/** Each word's type, the first set in this order that holds it (one lookup per word). */
const WORD_TYPES = new Map<string, string>();
for (const [type, words] of [['k', KEYWORDS], ['T', PROCEDURAL], ['B', CLAUSES], ['o', OPERATOR_WORDS], ['&', LOGIC], ['U', UNION], ['E', STATEMENTS]] as const) {
  for (const word of words) WORD_TYPES.set(word, type);
}

/** Anything but space from lastIndex on (sticky: only the space run before it is read). */
const MORE = /\s*\S/y;

const NUMBER = /^(?:0x[0-9a-f]+|0b[01]+|\d+\.?\d*(?:e[+-]?\d+)?|\.\d+(?:e[+-]?\d+)?)$/;

// (An undecodable byte — U+FFFD, as %A0 becomes — separates tokens: MySQL reads 0xA0 as a blank.)
const isSpace = (c: number) => c <= 32 || c === 0xa0 || c === 0x2028 || c === 0x2029 || c === 0xfeff || c === 0xfffd;
const isWord = (c: number) => (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 95 || c === 36 || (c >= 65 && c <= 90) || (c > 127 && !isSpace(c));
const isDigit = (c: number) => c >= 48 && c <= 57;

/**
 * Where the first comment end at or after `from` stands in `text` (-1: none), remembered for the
 * last text asked about: readers that tokenize a value from each of its keywords in turn ask again
 * and again from later places, and an unclosed '/*' would otherwise be searched to the end each
 * time (quadratic on "union /*" repeated). Nothing between the last search's start and its answer
 * is a comment end, so a later start up to that answer has the same answer.
 */
let endsText = '';
let endsFrom = 0;
let endsAt = -1;
function commentEnd(text: string, from: number): number {
  if (text === endsText && from >= endsFrom && (endsAt < 0 || from <= endsAt)) return endsAt;
  endsText = text;
  endsFrom = from;
  endsAt = text.indexOf('*/', from);
  return endsAt;
}

/**
 * Tokens of `text` (lower case expected) from index `from`, at most `max`. `open`: the value starts
 * inside a string (or, with '`', a MySQL identifier) delimited by this quote (the query put it
 * there): everything up to the first such quote is that string's rest.
 */
// Long on purpose: one loop over the characters with a branch per token class; the classes share
// the cursor and the count, and it runs on every decoded input of every request (a branch moved
// out would return both a token and a new cursor, an allocation per token).
export function sqlTokens(text: string, open?: "'" | '"' | '`', max = 24, from = 0): SqlToken[] {
  const out: SqlToken[] = [];
  let i = from;
  const n = text.length;
  if (open) {
    const end = closingQuote(text, from, open);
    if (end < 0) return [];
    out.push({ type: open === '`' ? 'n' : 's', text: text.slice(from, end) });
    i = end + 1;
  }
  while (i < n && out.length < max) {
    const c = text.charCodeAt(i);
    if (isSpace(c)) {
      i++;
      continue;
    }
    const next = text.charCodeAt(i + 1);
    // Comments.
    if (c === 47 /* / */ && next === 42 /* * */) {
      if (text.charCodeAt(i + 2) === 33 /* ! */) {
        // MySQL executes /*!…*/ (and /*!50000…*/ on recent versions): the body is code.
        i += 3;
        while (i < n && isDigit(text.charCodeAt(i))) i++;
        continue;
      }
      const end = commentEnd(text, i + 2);
      if (end < 0) {
        out.push({ type: 'c', text: '/*' });
        break;
      }
      i = end + 2;
      continue;
    }
    // The end of an executable comment, or of one this reading started inside.
    if (c === 42 /* * */ && next === 47 /* / */) {
      i += 2;
      continue;
    }
    // PostgreSQL's JSON path operators #> and #>> (MySQL would read a comment: the operator is the
    // reading that keeps the query going).
    if (c === 35 /* # */ && next === 62 /* > */) {
      const end = text.charCodeAt(i + 2) === 62 ? i + 3 : i + 2;
      out.push({ type: 'o', text: text.slice(i, end) });
      i = end;
      continue;
    }
    if ((c === 45 /* - */ && next === 45) || c === 35 /* # */) {
      // A line comment with more code on the next lines is space ("1'#x\nunion#y\nselect 1");
      // one that runs to the end cuts the query off. Its first character after the marker tells
      // "admin'#" from "'#btn'".
      const end = text.indexOf('\n', i);
      if (end >= 0) {
        MORE.lastIndex = end + 1;
        if (MORE.test(text)) {
          i = end + 1;
          continue;
        }
      }
      out.push({ type: 'c', text: (c === 35 ? '#' : '--') + (text[i + (c === 35 ? 1 : 2)] ?? '') });
      break;
    }
    // Strings ('…' and "…"; a doubled quote or a backslash escapes) and `identifiers`.
    if (c === 39 || c === 34 || c === 96) {
      const quote = text[i]!;
      const end = closingQuote(text, i + 1, quote);
      const body = text.slice(i + 1, end < 0 ? n : end);
      out.push({ type: c === 96 ? 'n' : 's', text: body });
      i = end < 0 ? n : end + 1;
      continue;
    }
    // Numbers: 12, 1.5, .5, 1e3, 0x1f, 0b101; digits then letters is a name (MySQL allows that).
    if (isDigit(c) || (c === 46 && isDigit(next))) {
      let j = i;
      while (j < n && (isWord(text.charCodeAt(j)) || text.charCodeAt(j) === 46)) j++;
      // 1e+5: the sign belongs to the exponent.
      if (/^\d+(?:\.\d*)?e$/.test(text.slice(i, j)) && (text[j] === '+' || text[j] === '-') && isDigit(text.charCodeAt(j + 1))) {
        j++;
        while (j < n && isDigit(text.charCodeAt(j))) j++;
      }
      let word = text.slice(i, j);
      // MySQL ends a number in exponent form where letters follow: "1e0union" is 1e0 union.
      const exponent = /^(?:\d+\.?\d*|\.\d+)e\d+(?=[a-z_])/.exec(word);
      if (exponent) {
        word = exponent[0];
        j = i + word.length;
      }
      out.push({ type: NUMBER.test(word) ? '1' : 'n', text: word });
      i = j;
      continue;
    }
    // @name, @@name are variables; @ before anything else an operator (PostgreSQL's @> contains).
    if (c === 64 /* @ */ && (isWord(next) || (next === 64 && isWord(text.charCodeAt(i + 2))))) {
      let j = i + 1;
      if (text.charCodeAt(j) === 64) j++;
      while (j < n && (isWord(text.charCodeAt(j)) || text.charCodeAt(j) === 46)) j++;
      out.push({ type: 'v', text: text.slice(i, j) });
      i = j;
      continue;
    }
    if (isWord(c)) {
      let j = i;
      while (j < n && (isWord(text.charCodeAt(j)) || (text.charCodeAt(j) === 46 && isWord(text.charCodeAt(j + 1))))) j++;
      const word = text.slice(i, j);
      out.push({ type: wordType(word, text, j), text: word });
      i = j;
      continue;
    }
    if (c === 40 || c === 41 || c === 44 || c === 59) {
      out.push({ type: text[i]!, text: text[i]! });
      i++;
      continue;
    }
    if ((c === 124 && next === 124) || (c === 38 && next === 38)) {
      out.push({ type: '&', text: text.slice(i, i + 2) });
      i += 2;
      continue;
    }
    // PostgreSQL's cast (::jsonb, ::text) changes no shape: skipped with its type name.
    if (c === 58 /* : */ && next === 58) {
      let j = i + 2;
      while (j < n && isSpace(text.charCodeAt(j))) j++;
      while (j < n && isWord(text.charCodeAt(j))) j++;
      i = j;
      continue;
    }
    if ('=<>!|&^~+-*/%:@'.includes(text[i]!)) {
      let j = i + 1;
      while (j < n && '=<>!@'.includes(text[j]!) && j - i < 3) j++;
      out.push({ type: 'o', text: text.slice(i, j) });
      i = j;
      continue;
    }
    if (c === 46 /* . */) {
      i++;
      continue;
    }
    out.push({ type: '?', text: text[i]! });
    i++;
  }
  return out;
}

/**
 * Whether the token after the ';' at `at` may be a statement (E or T): false only when it is sure
 * not to be — a word that is neither, or a character that starts no word (a number, a string, a
 * parenthesis …). Comments, dots and casts, which the tokenizer reads past, answer true. Lets a
 * reader skip tokenizing after every ';' of prose ("items; price is …").
 */
export function statementMayFollow(text: string, at: number): boolean {
  const n = text.length;
  let i = at + 1;
  while (i < n && isSpace(text.charCodeAt(i))) i++;
  if (i >= n) return true;
  const c = text.charCodeAt(i);
  if (c >= 97 && c <= 122) {
    let j = i;
    while (j < n && (isWord(text.charCodeAt(j)) || (text.charCodeAt(j) === 46 && isWord(text.charCodeAt(j + 1))))) j++;
    const word = text.slice(i, j);
    return STATEMENTS.has(word) || PROCEDURAL.has(word);
  }
  // Digits start a number, quotes a string or name, ( ) , ; themselves; a word that starts with
  // an upper-case letter, '$', '_' or a letter past ASCII is no keyword (all are lower-case ASCII).
  if (isDigit(c) || c === 40 || c === 41 || c === 44 || c === 59 || c === 39 || c === 34 || c === 96) return false;
  return !((c >= 65 && c <= 90) || c === 36 || c === 95 || (c > 127 && !isSpace(c)));
}

/** Index of the quote that ends a string starting at `from`, or -1 (doubled quotes and backslashes escape). */
function closingQuote(text: string, from: number, quote: string): number {
  for (let i = from; i < text.length; i++) {
    const ch = text[i];
    if (ch === '\\') i++;
    else if (ch === quote) {
      if (text[i + 1] === quote) i++;
      else return i;
    }
  }
  return -1;
}

function wordType(word: string, text: string, end: number): string {
  // A name followed by '(' (spaces and closed comments between) is a function call.
  let j = end;
  for (;;) {
    while (j < text.length && isSpace(text.charCodeAt(j))) j++;
    if (text.startsWith('/*', j) && text[j + 2] !== '!') {
      const close = commentEnd(text, j + 2);
      if (close < 0) break;
      j = close + 2;
    } else break;
  }
  if (text.charCodeAt(j) === 40 /* ( */ && !NEVER_FUNCTION.has(word)) return 'f';
  return WORD_TYPES.get(word) ?? 'n';
}
