// NSEC RDATA for compact denial of existence (RFC 9824): the next name is the immediate successor
// of the owner ("\000.owner"), so a signed denial reveals nothing about other names.
import { nameWire } from './canonical.ts';

export const RRSIG_TYPE = 46;
export const NSEC_TYPE = 47;
/** RFC 9824 §5: the pseudo-type marking a name that does not exist. */
export const NXNAME_TYPE = 128;

/** The type bitmap (RFC 4034 §4.1.2): per 256-type window, its number, length and bits. */
export function typeBitmap(types: Iterable<number>): Buffer {
  const sorted = [...new Set(types)].sort((a, b) => a - b);
  const parts: Buffer[] = [];
  for (let i = 0; i < sorted.length; ) {
    const window = sorted[i]! >> 8;
    const bits = Buffer.alloc(32);
    let length = 0;
    for (; i < sorted.length && sorted[i]! >> 8 === window; i++) {
      const low = sorted[i]! & 0xff;
      bits[low >> 3]! |= 0x80 >> (low & 7);
      length = (low >> 3) + 1;
    }
    parts.push(Buffer.from([window, length]), bits.subarray(0, length));
  }
  return Buffer.concat(parts);
}

/** The immediate successor of a name in canonical order: "\000." prepended. */
export const successor = (name: string): string => (name === '' ? '\u0000' : `\u0000.${name}`);

/** NSEC RDATA: the next owner name (uncompressed), then the bitmap. */
export function nsecRdata(next: string, types: Iterable<number>): Buffer {
  return Buffer.concat([nameWire(next), typeBitmap(types)]);
}

/**
 * A name just before `name` in canonical order, sharing its parent (RFC 4470 §4.1, simplified):
 * the first label's last octet lowered by one and "\255" appended. Used as the owner of the NSEC
 * that proves a wildcard-synthesised name does not exist; only names with such octets could lie
 * between it and `name`. Undefined when no such label fits (the caller then sends no proof).
 */
export function predecessor(name: string): string | undefined {
  const dot = name.indexOf('.');
  const label = dot === -1 ? name : name.slice(0, dot);
  const rest = dot === -1 ? '' : name.slice(dot);
  if (label.length === 0 || label.length >= 63) return undefined;
  let last = label.charCodeAt(label.length - 1) - 1;
  // Upper-case letters sort as lower case in canonical order: keep below 'A'.
  if (last >= 0x41 && last <= 0x5a) last = 0x40;
  // A last octet of 0: the label without it sorts before (names below it lie between: rare).
  if (last < 0) return label.length > 1 ? `${label.slice(0, -1)}${rest}` : undefined;
  const before = `${label.slice(0, -1)}${String.fromCharCode(last)}\u00ff${rest}`;
  return nameWire(before).length <= 255 ? before : undefined;
}
