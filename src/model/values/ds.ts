// DS (RFC 4034 §5, digest types RFC 4509, RFC 6605): "key-tag algorithm digest-type digest", the
// digest in hex, lower-case as NSD prints it: SHA-1 (1) 40 hex digits, SHA-256 (2) 64, SHA-384
// (4) 96. Where a DS may stand (only at a delegation, never at the apex) is a zone rule: ../record.ts.
import { digestLength, fail, hexData, ok, splitFields, u16, u8, uint } from './fields.ts';
import type { ValueType } from './value-type.ts';

const DIGESTS: Record<number, readonly [string, number]> = { 1: ['SHA-1', 40], 2: ['SHA-256', 64], 4: ['SHA-384', 96] };

/**
 * The DNSSEC algorithms IANA lists as able to sign a zone, less RSAMD5 (1), which RFC 8624
 * forbids: a DS naming any other number points at a key no validator could ever use.
 */
const ALGORITHMS = new Map<number, string>([
  [3, 'DSA'],
  [5, 'RSASHA1'],
  [6, 'DSA-NSEC3-SHA1'],
  [7, 'RSASHA1-NSEC3-SHA1'],
  [8, 'RSASHA256'],
  [10, 'RSASHA512'],
  [12, 'ECC-GOST'],
  [13, 'ECDSAP256SHA256'],
  [14, 'ECDSAP384SHA384'],
  [15, 'ED25519'],
  [16, 'ED448'],
  [17, 'SM2SM3'],
  [23, 'ECC-GOST12'],
  [253, 'PRIVATEDNS'],
  [254, 'PRIVATEOID'],
]);
const ALGORITHM_LIST = [...ALGORITHMS].map(([n, name]) => `${n} ${name}`).join(', ');

export const DS: ValueType = {
  name: 'DS',
  code: 43,
  help: 'DS: "key-tag algorithm digest-type digest" (RFC 4034), only at a delegated name (beside its NS records): key tag 0–65535, algorithm a zone-signing one (8 RSASHA256, 13 ECDSA P-256, 15 Ed25519; 1, 2, 252 and unassigned numbers refused), digest type 1 SHA-1 (40 hex digits), 2 SHA-256 (64) or 4 SHA-384 (96).',
  nameFields: [],
  canonical(value) {
    const fields = splitFields(value);
    if (!fields.ok) return fields;
    const f = fields.value;
    if (f.length < 4) return fail('must be "key-tag algorithm digest-type digest", e.g. 12345 13 2 <64 hex digits>');
    const keyTag = uint(f[0], 65535);
    if (keyTag === undefined) return fail('key tag must be an integer from 0 to 65535');
    const algorithm = uint(f[1], 255);
    if (algorithm === undefined || !ALGORITHMS.has(algorithm)) return fail(`algorithm must be a DNSSEC signing algorithm: ${ALGORITHM_LIST}`);
    const type = uint(f[2], 255);
    if (type === undefined || !DIGESTS[type]) return fail('digest type must be 1 (SHA-1), 2 (SHA-256) or 4 (SHA-384)');
    const data = hexData(f.slice(3), 'digest');
    if (!data.ok) return data;
    const wrong = digestLength(data.value, DIGESTS, 'a digest of digest type', type);
    return wrong ? fail(wrong) : ok(`${keyTag} ${algorithm} ${type} ${data.value}`);
  },
  zoneData: (value) => value,
  rdata(value) {
    const [keyTag, algorithm, type, data] = value.split(' ');
    return Buffer.concat([u16(Number(keyTag)), u8(Number(algorithm)), u8(Number(type)), Buffer.from(data!, 'hex')]);
  },
};
