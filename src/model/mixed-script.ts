// Mixed-script labels (a Cyrillic "а" inside a Latin word) are the classic homograph attack on
// domain names. We apply UTS #39's "Highly Restrictive" level per label: every character comes
// from one script, or from one of the combinations CJK writing needs (Latin with Han and the
// Japanese kana, with Han and Bopomofo, or with Han and Hangul). Common and Inherited characters
// (digits, the hyphen, combining marks) belong to every script. Whole-script confusables (a label
// written entirely in Cyrillic that looks Latin) are not detected: they need the confusables table.
import { domainToUnicode } from 'node:url';

/** The scripts IDNs are written in; a character in none of them counts as a script of its own. */
const SCRIPTS = [
  'Latin', 'Greek', 'Cyrillic', 'Armenian', 'Hebrew', 'Arabic', 'Syriac', 'Thaana', 'Devanagari', 'Bengali',
  'Gurmukhi', 'Gujarati', 'Oriya', 'Tamil', 'Telugu', 'Kannada', 'Malayalam', 'Sinhala', 'Thai', 'Lao',
  'Tibetan', 'Myanmar', 'Georgian', 'Hangul', 'Ethiopic', 'Cherokee', 'Khmer', 'Mongolian', 'Hiragana',
  'Katakana', 'Bopomofo', 'Han', 'Tifinagh', 'Canadian_Aboriginal', 'Yi', 'Javanese', 'Balinese',
].map((name) => ({ name, re: new RegExp(`^\\p{Script=${name}}$`, 'u') }));
const SHARED = /^[\p{Script=Common}\p{Script=Inherited}]$/u;

/** Script sets UTS #39 allows together at the Highly Restrictive level. */
const ALLOWED_COMBINATIONS = [
  new Set(['Latin', 'Han', 'Hiragana', 'Katakana']),
  new Set(['Latin', 'Han', 'Bopomofo']),
  new Set(['Latin', 'Han', 'Hangul']),
];

function scriptOf(char: string): string | undefined {
  if (SHARED.test(char)) return undefined;
  for (const script of SCRIPTS) if (script.re.test(char)) return script.name;
  return `U+${char.codePointAt(0)!.toString(16).toUpperCase()}`;
}

/** The scripts a label mixes, when it mixes them in a way UTS #39 does not allow; else undefined. */
export function mixedScripts(label: string): string[] | undefined {
  const scripts = new Set<string>();
  for (const char of label) {
    const script = scriptOf(char);
    if (script) scripts.add(script);
  }
  if (scripts.size <= 1) return undefined;
  if (ALLOWED_COMBINATIONS.some((allowed) => [...scripts].every((s) => allowed.has(s)))) return undefined;
  return [...scripts];
}

/** For an ASCII (punycode) name: the first label that mixes scripts, with the scripts it mixes. */
export function mixedScriptLabel(asciiName: string): { label: string; scripts: string[] } | undefined {
  if (!asciiName.includes('xn--')) return undefined;
  for (const label of domainToUnicode(asciiName).split('.')) {
    const scripts = mixedScripts(label);
    if (scripts) return { label, scripts };
  }
  return undefined;
}
