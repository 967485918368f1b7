// Splits zone-file text (RFC 1035 §5.1, BIND's master-file form) into logical lines of tokens:
// comments dropped, "( … )" joined across physical lines, quoted strings kept as written (with
// their quotes, escapes untouched) so each record type decides what they mean. Every logical
// line carries the physical line it starts on, and whether it starts with blank space (the
// owner of the previous record then applies).

export interface Token {
  text: string;
  quoted: boolean;
}

export interface LogicalLine {
  /** 1-based physical line where the logical line starts. */
  line: number;
  /** Began with a space or tab: no owner field. */
  indented: boolean;
  tokens: Token[];
  /** The text of a `;palisade-geo` comment on the line (see write.ts), if any. */
  geo?: string;
}

export class ZoneFileSyntaxError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The longest physical line and token read. A record's data is at most 65,535 bytes, and no field
 * of one is longer than a TXT record's 255-byte strings written as \DDD escapes; past these a file
 * is not a zone file, and stopping at once keeps a 7 MB "name" from holding the API for seconds.
 */
export const MAX_LINE_CHARS = 65_536;
export const MAX_TOKEN_CHARS = 16_384;

/** The comment form geo-targeted variants are exported in: `;palisade-geo TARGETS RECORD`. */
export const GEO_COMMENT = ';palisade-geo ';

/**
 * The logical lines of a zone file, one by one (a caller may pause between them). Throws
 * ZoneFileSyntaxError on an unclosed quote or parenthesis. Linear in the text; never recursive.
 */
export function* tokenize(text: string): Generator<LogicalLine, void, undefined> {
  let line = 1;
  let i = 0;
  const n = text.length;
  let current: LogicalLine | undefined;
  let depth = 0;
  let openedAt = 0;
  let atLineStart = true;
  let lineStart = 0;
  // The line just finished, if it held anything.
  const finish = (): LogicalLine | undefined => {
    const done = current && (current.tokens.length > 0 || current.geo !== undefined) ? current : undefined;
    current = undefined;
    return done;
  };
  while (i < n) {
    const c = text[i]!;
    if (c === '\n') {
      line++;
      i++;
      lineStart = i;
      if (depth === 0) {
        const done = finish();
        if (done) yield done;
        atLineStart = true;
      }
      continue;
    }
    if (i - lineStart > MAX_LINE_CHARS) throw tooLong(line, 'line');
    if (atLineStart && depth === 0) {
      current = { line, indented: c === ' ' || c === '\t', tokens: [] };
      atLineStart = false;
    }
    if (c === ' ' || c === '\t' || c === '\r') {
      i++;
      continue;
    }
    if (c === ';') {
      const end = text.indexOf('\n', i);
      const comment = text.slice(i, end === -1 ? n : end);
      // A geo comment standing alone on its line is a record the zone-file form cannot hold.
      if (depth === 0 && current && current.tokens.length === 0 && comment.startsWith(GEO_COMMENT)) current.geo = comment.slice(GEO_COMMENT.length);
      i = end === -1 ? n : end;
      continue;
    }
    if (c === '(') {
      if (depth === 0) openedAt = line;
      depth++;
      if (depth > 1) throw new ZoneFileSyntaxError(line, 'nested parentheses');
      i++;
      continue;
    }
    if (c === ')') {
      if (depth === 0) throw new ZoneFileSyntaxError(line, '")" without "("');
      depth--;
      i++;
      continue;
    }
    if (c === '"') {
      const start = i;
      i = quotedEnd(text, i, line);
      current!.tokens.push({ text: text.slice(start, i), quoted: true });
      continue;
    }
    const start = i;
    i = fieldEnd(text, i, line);
    current!.tokens.push({ text: text.slice(start, Math.min(i, n)), quoted: false });
  }
  if (depth > 0) throw new ZoneFileSyntaxError(openedAt, '"(" is not closed');
  const done = finish();
  if (done) yield done;
}

/** Where the quoted string opened at `start` ends (past its closing quote); it must close on its line. */
function quotedEnd(text: string, start: number, line: number): number {
  const n = text.length;
  let i = start + 1;
  for (;;) {
    if (i >= n || text[i] === '\n') throw new ZoneFileSyntaxError(line, 'a quoted string is not closed on its line');
    if (text[i] === '\\') {
      i += 2;
      continue;
    }
    if (text[i] === '"') break;
    i++;
    if (i - start > MAX_TOKEN_CHARS) throw tooLong(line, 'token');
  }
  return i + 1;
}

/** Where the unquoted field at `start` ends: at a blank, a comment, a parenthesis or a quote (a backslash escapes the next character). */
function fieldEnd(text: string, start: number, line: number): number {
  const n = text.length;
  let i = start;
  while (i < n) {
    const d = text[i]!;
    if (d === '\\') {
      i += 2;
      continue;
    }
    if (d === ' ' || d === '\t' || d === '\r' || d === '\n' || d === ';' || d === '(' || d === ')' || d === '"') break;
    i++;
    if (i - start > MAX_TOKEN_CHARS) throw tooLong(line, 'token');
  }
  return i;
}

function tooLong(line: number, what: 'line' | 'token'): ZoneFileSyntaxError {
  return new ZoneFileSyntaxError(line, what === 'line' ? `a line longer than ${MAX_LINE_CHARS.toLocaleString('en-US')} characters` : `a field longer than ${MAX_TOKEN_CHARS.toLocaleString('en-US')} characters`);
}
