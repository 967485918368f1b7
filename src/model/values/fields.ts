// Shared pieces of the record types whose value is several fields in zone-file presentation form
// (CAA, TLSA, SSHFP, NAPTR, DS, PTR): splitting a value into fields, numbers, hex, character-strings
// and the wire form of their names. Pure.
import type { Checked } from '../names.ts';
import { parseQuotedTxt, TXT_STRING_MAX } from '../txt-strings.ts';

export const ok = <T>(value: T): Checked<T> => ({ ok: true, value });
export const fail = <T>(message: string): Checked<T> => ({ ok: false, message });

/** One field of a value: a bare word, or a quoted string as written (quotes and escapes kept). */
export interface Field {
  text: string;
  quoted: boolean;
}

/** Splits a value at blanks; a quoted string ("…", with \" and \\ escapes) is one field. */
export function splitFields(value: string): Checked<Field[]> {
  const fields: Field[] = [];
  let i = 0;
  const text = value.trim();
  while (i < text.length) {
    const c = text[i]!;
    if (c === ' ' || c === '\t') {
      i++;
      continue;
    }
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (j >= text.length) return fail('has a quoted string that is not closed');
      fields.push({ text: text.slice(i, j + 1), quoted: true });
      i = j + 1;
      continue;
    }
    let j = i;
    while (j < text.length && text[j] !== ' ' && text[j] !== '\t' && text[j] !== '"') j++;
    fields.push({ text: text.slice(i, j), quoted: false });
    i = j;
  }
  return ok(fields);
}

/** The octets of a character-string field (RFC 1035 §5.1), quoted or bare, at most 255. */
export function characterString(field: Field): Checked<Buffer> {
  if (!field.quoted) {
    const bytes = Buffer.from(field.text, 'utf8');
    return bytes.length <= TXT_STRING_MAX ? ok(bytes) : fail(`is ${bytes.length} octets; at most ${TXT_STRING_MAX}`);
  }
  const parsed = parseQuotedTxt(field.text);
  if (!parsed.ok) return fail(parsed.message);
  return ok(parsed.strings[0]!);
}

/** A decimal integer field from 0 to `max`, or undefined. */
export function uint(field: Field | undefined, max: number): number | undefined {
  if (!field || field.quoted || !/^\d{1,10}$/.test(field.text)) return undefined;
  const n = Number(field.text);
  return n <= max ? n : undefined;
}

/**
 * Hex data from the remaining fields (zone files may split it with blanks), lower-case as NSD
 * prints it. `what` names the data in messages.
 */
export function hexData(fields: readonly Field[], what: string): Checked<string> {
  if (fields.length === 0 || fields.some((f) => f.quoted)) return fail(`${what} must be hex digits`);
  const hex = fields.map((f) => f.text).join('').toLowerCase();
  if (!/^[0-9a-f]+$/.test(hex)) return fail(`${what} must be hex digits (0-9, a-f)`);
  if (hex.length % 2 !== 0) return fail(`${what} has an odd number of hex digits`);
  return ok(hex);
}

/** The digest length a type's digest algorithm number requires, checked, in hex digits. */
export function digestLength(hex: string, lengths: Readonly<Record<number, readonly [string, number]>>, kind: string, number: number): string | undefined {
  const want = lengths[number];
  if (!want || hex.length === want[1]) return undefined;
  return `${kind} ${number} (${want[0]}) must be ${want[1]} hex digits, not ${hex.length}`;
}

/** An absolute name (no final dot; "." or "" is the root) as uncompressed wire labels (RFC 3597 §4). */
export function nameWire(name: string): Buffer {
  const labels = name === '.' || name === '' ? [] : name.split('.');
  return Buffer.concat([...labels.map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l, 'latin1')])), Buffer.from([0])]);
}

export const u8 = (n: number): Buffer => Buffer.from([n]);
export function u16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n);
  return b;
}
/** A character-string on the wire: its length octet, then its octets. */
export const wireString = (bytes: Buffer): Buffer => Buffer.concat([u8(bytes.length), bytes]);

/** A name in zone-file form: absolute, with its final dot. */
export const fqdn = (name: string): string => (name === '.' || name.endsWith('.') ? name : `${name}.`);
