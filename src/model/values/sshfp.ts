// SSHFP (RFC 4255, RFC 6594, RFC 7479, RFC 8709): "algorithm fingerprint-type fingerprint", the
// fingerprint in hex, lower-case as NSD prints it: SHA-1 is 40 hex digits, SHA-256 64.
import { digestLength, fail, hexData, ok, splitFields, u8, uint } from './fields.ts';
import type { ValueType } from './value-type.ts';

const ALGORITHMS = new Set([1, 2, 3, 4, 6]);
const FINGERPRINTS: Record<number, readonly [string, number]> = { 1: ['SHA-1', 40], 2: ['SHA-256', 64] };

export const SSHFP: ValueType = {
  name: 'SSHFP',
  code: 44,
  help: 'SSHFP: "algorithm fingerprint-type fingerprint" (RFC 4255): algorithm 1 RSA, 2 DSA, 3 ECDSA, 4 Ed25519, 6 Ed448; type 1 SHA-1 (40 hex digits) or 2 SHA-256 (64).',
  nameFields: [],
  canonical(value) {
    const fields = splitFields(value);
    if (!fields.ok) return fields;
    const f = fields.value;
    if (f.length < 3) return fail('must be "algorithm fingerprint-type fingerprint", e.g. 4 2 <64 hex digits>');
    const algorithm = uint(f[0], 255);
    if (algorithm === undefined || !ALGORITHMS.has(algorithm)) return fail('algorithm must be 1 (RSA), 2 (DSA), 3 (ECDSA), 4 (Ed25519) or 6 (Ed448)');
    const type = uint(f[1], 255);
    if (type === undefined || !FINGERPRINTS[type]) return fail('fingerprint type must be 1 (SHA-1) or 2 (SHA-256)');
    const data = hexData(f.slice(2), 'fingerprint');
    if (!data.ok) return data;
    const wrong = digestLength(data.value, FINGERPRINTS, 'a fingerprint of type', type);
    return wrong ? fail(wrong) : ok(`${algorithm} ${type} ${data.value}`);
  },
  zoneData: (value) => value,
  rdata(value) {
    const [algorithm, type, data] = value.split(' ');
    return Buffer.concat([u8(Number(algorithm)), u8(Number(type)), Buffer.from(data!, 'hex')]);
  },
};
