// What each record type beyond the first eight supplies, in its own file (caa.ts, ds.ts…): the
// canonical form of its value, its zone-file data, and its RDATA on the wire. The tables that list
// the types (../record-types.ts, index.ts) take one line per type.
import type { Checked } from '../names.ts';

export interface ValueType {
  /** The DNS mnemonic. */
  readonly name: string;
  /** The IANA TYPE code, which is also the API's number for it. */
  readonly code: number;
  /** The value's form, for the API's description of `value`. */
  readonly help: string;
  /** Zone-file data fields (0-based) that hold a domain name, made absolute on import. */
  readonly nameFields: readonly number[];
  /** The customer's value (or zone-file data with absolute names) in canonical form, or why not. */
  canonical(value: string, zone: string): Checked<string>;
  /** The canonical value as zone-file data (names absolute, with their final dot). */
  zoneData(value: string): string;
  /** The canonical value's RDATA (names uncompressed, RFC 3597 §4). */
  rdata(value: string): Buffer;
}
