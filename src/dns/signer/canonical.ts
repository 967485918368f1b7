// The DNSSEC canonical forms (RFC 4034 §6): a name as uncompressed lower-case wire octets, an
// RRset's records in canonical order (by their RDATA octets), and the data a signature covers.
import { writeRdata } from '../wire/rdata.ts';
import { WireWriter } from '../wire/writer.ts';
import type { RRset } from '../zone/types.ts';

/** A lower-case absolute name ("" = root) as wire octets, uncompressed. */
export function nameWire(name: string): Buffer {
  if (name === '') return Buffer.from([0]);
  const labels = name.split('.');
  const out = Buffer.allocUnsafe(name.length + 2);
  let at = 0;
  for (const label of labels) {
    out[at++] = label.length;
    at += out.write(label, at, 'latin1');
  }
  out[at++] = 0;
  return out.subarray(0, at);
}

/** Labels of a name, the root not counted (the RRSIG Labels field, RFC 4034 §3.1.3). */
export const labelCount = (name: string): number => (name === '' ? 0 : name.split('.').length);

/** Each record's RDATA in canonical form (names whole; ours are lower case), sorted, duplicates dropped (RFC 4034 §6.3). */
export function canonicalRdata(set: RRset): Buffer[] {
  const out: Buffer[] = [];
  for (const r of set.rdata) {
    if (r.type === 0) {
      out.push(r.data);
      continue;
    }
    const w = new WireWriter(false);
    writeRdata(w, r);
    out.push(w.finish());
  }
  out.sort(Buffer.compare);
  return out.filter((b, i) => i === 0 || !b.equals(out[i - 1]!));
}

/**
 * The octets an RRSIG signs (RFC 4034 §3.1.8.1): its RDATA without the signature, then every
 * record as owner | type | class | original TTL | RDLENGTH | RDATA. `owner` is the name signed
 * for: the wildcard's ("*.encloser") when the answer was synthesised from one.
 */
export function signedData(header: Buffer, owner: string, type: number, ttl: number, rdata: readonly Buffer[]): Buffer {
  const ownerWire = nameWire(owner);
  const parts: Buffer[] = [header];
  for (const data of rdata) {
    const fixed = Buffer.allocUnsafe(10);
    fixed.writeUInt16BE(type, 0);
    fixed.writeUInt16BE(1, 2);
    fixed.writeUInt32BE(ttl >>> 0, 4);
    fixed.writeUInt16BE(data.length, 8);
    parts.push(ownerWire, fixed, data);
  }
  return Buffer.concat(parts);
}
