// TXT values in two forms. Plain text (the service's original form) is sent as character-strings
// of 255 octets each, split where the bytes fall. Zone-file form, one or more quoted strings
// ("v=spf1 …" "include:…"), is sent as exactly those strings. Inside quotes (RFC 1035 §5.1):
// \" is a quote, \\ a backslash, \DDD the octet DDD (decimal, 000–255), \X any other character X.
// The canonical zone-file form escapes only ", \ and control octets (as \DDD); UTF-8 text stays as
// it is, and octets that are not UTF-8 are written \DDD.

export const TXT_STRING_MAX = 255;

export type TxtParse = { ok: true; strings: Buffer[]; canonical: string } | { ok: false; message: string };

/** Whether a value is in zone-file form (quoted strings) rather than plain text. */
export const isQuotedTxt = (value: string): boolean => value.trimStart().startsWith('"');

export function parseQuotedTxt(value: string): TxtParse {
  const bytes = Buffer.from(value.trim(), 'utf8');
  const strings: Buffer[] = [];
  let i = 0;
  while (i < bytes.length) {
    if (bytes[i] === 0x20 || bytes[i] === 0x09) {
      i++;
      continue;
    }
    if (bytes[i] !== 0x22) return { ok: false, message: `expected a quoted string at character ${i + 1} (zone-file form: "…" "…")` };
    i++;
    const out: number[] = [];
    for (;;) {
      if (i >= bytes.length) return { ok: false, message: 'a quoted string is not closed' };
      const c = bytes[i]!;
      if (c === 0x22) {
        i++;
        break;
      }
      if (c === 0x5c) {
        const next = bytes[i + 1];
        if (next === undefined) return { ok: false, message: 'a backslash ends the value' };
        if (next >= 0x30 && next <= 0x39) {
          const digits = bytes.subarray(i + 1, i + 4).toString('latin1');
          if (!/^\d{3}$/.test(digits) || Number(digits) > 255) return { ok: false, message: `\\${digits} is not \\DDD with DDD from 000 to 255` };
          out.push(Number(digits));
          i += 4;
        } else {
          out.push(next);
          i += 2;
        }
        continue;
      }
      out.push(c);
      i++;
    }
    if (out.length > TXT_STRING_MAX) return { ok: false, message: `a quoted string is ${out.length} octets; each may hold at most ${TXT_STRING_MAX}` };
    strings.push(Buffer.from(out));
    if (i < bytes.length && bytes[i] !== 0x20 && bytes[i] !== 0x09) return { ok: false, message: `quoted strings must be separated by spaces (character ${i + 1})` };
  }
  if (strings.length === 0) return { ok: false, message: 'holds no quoted string' };
  return { ok: true, strings, canonical: strings.map(quoteTxtString).join(' ') };
}

/** One character-string in canonical zone-file form (quoted; ", \\ and control octets escaped). */
export function quoteTxtString(bytes: Buffer): string {
  const text = bytes.toString('utf8');
  const utf8 = Buffer.from(text, 'utf8').equals(bytes);
  let out = '"';
  if (utf8) {
    for (const ch of text) {
      const code = ch.codePointAt(0)!;
      if (ch === '"' || ch === '\\') out += `\\${ch}`;
      else if (code < 0x20 || code === 0x7f) out += `\\${String(code).padStart(3, '0')}`;
      else out += ch;
    }
  } else {
    for (const b of bytes) {
      if (b === 0x22 || b === 0x5c) out += `\\${String.fromCharCode(b)}`;
      else if (b < 0x20 || b >= 0x7f) out += `\\${String(b).padStart(3, '0')}`;
      else out += String.fromCharCode(b);
    }
  }
  return `${out}"`;
}

/** The character-strings a stored TXT value is served as. */
export function txtStrings(value: string): Buffer[] {
  if (isQuotedTxt(value)) {
    const parsed = parseQuotedTxt(value);
    if (parsed.ok) return parsed.strings;
  }
  const bytes = Buffer.from(value, 'utf8');
  if (bytes.length === 0) return [Buffer.alloc(0)];
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += TXT_STRING_MAX) out.push(bytes.subarray(i, i + TXT_STRING_MAX));
  return out;
}
