// TLSA (RFC 6698 §2, RFC 7218 names): "usage selector matching-type data", data in hex,
// lower-case as NSD prints it. A SHA-256 match is 64 hex digits, SHA-512 128; a full match (0)
// is the whole certificate or key.
import { digestLength, fail, hexData, ok, splitFields, u8, uint } from './fields.ts';
import type { ValueType } from './value-type.ts';

const MATCHING: Record<number, readonly [string, number]> = { 1: ['SHA-256', 64], 2: ['SHA-512', 128] };

export const TLSA: ValueType = {
  name: 'TLSA',
  code: 52,
  help: 'TLSA: "usage selector matching-type data" (RFC 6698): usage 0–3 (PKIX-TA, PKIX-EE, DANE-TA, DANE-EE), selector 0 (certificate) or 1 (public key), matching type 0 (full), 1 (SHA-256: 64 hex digits) or 2 (SHA-512: 128), data in hex.',
  nameFields: [],
  canonical(value) {
    const fields = splitFields(value);
    if (!fields.ok) return fields;
    const f = fields.value;
    if (f.length < 4) return fail('must be "usage selector matching-type data", e.g. 3 1 1 <64 hex digits>');
    const usage = uint(f[0], 3);
    if (usage === undefined) return fail('usage must be 0, 1, 2 or 3 (PKIX-TA, PKIX-EE, DANE-TA, DANE-EE)');
    const selector = uint(f[1], 1);
    if (selector === undefined) return fail('selector must be 0 (whole certificate) or 1 (public key)');
    const matching = uint(f[2], 2);
    if (matching === undefined) return fail('matching type must be 0 (full), 1 (SHA-256) or 2 (SHA-512)');
    const data = hexData(f.slice(3), 'certificate association data');
    if (!data.ok) return data;
    const wrong = digestLength(data.value, MATCHING, 'certificate association data for matching type', matching);
    return wrong ? fail(wrong) : ok(`${usage} ${selector} ${matching} ${data.value}`);
  },
  zoneData: (value) => value,
  rdata(value) {
    const [usage, selector, matching, data] = value.split(' ');
    return Buffer.concat([u8(Number(usage)), u8(Number(selector)), u8(Number(matching)), Buffer.from(data!, 'hex')]);
  },
};
