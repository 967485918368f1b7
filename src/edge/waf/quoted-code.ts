// Code quoted in prose: a forum post, a comment or a question shows code in Markdown — `spans` and
// ```fenced blocks``` — that no one runs. At level 1 the detectors read such a text without its
// quoted code (blanked, so positions keep their meaning); text that is mostly code, or a value
// that merely contains a backtick, is read whole. Level 2 reads everything.

/** Words of prose: letters only, not glued to a path, a dot or a hyphen. */
const WORD = /(?<![\w/.-])[a-z]{2,}(?![\w/.-])/g;
/** A fenced block (its fence to the next) or a code span (a backtick run to the same run). */
const CODE = /```[\s\S]*?(?:```|$)|(`+)(?!`)[^`]*?(?<!`)\1(?!`)/g;

/** `text` with its quoted code blanked, when it is prose (three words or more outside the code); undefined when there is no quoted code in prose. */
export function withoutQuotedCode(text: string): string | undefined {
  if (!text.includes('`')) return undefined;
  let found = false;
  const outside = text.replace(CODE, (code) => {
    found = true;
    return ' '.repeat(code.length);
  });
  if (!found) return undefined;
  let words = 0;
  WORD.lastIndex = 0;
  while (WORD.exec(outside) !== null) if (++words >= 3) return outside;
  return undefined;
}
