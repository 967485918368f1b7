// A domain's DNSSEC from the customer's side: when its settings call for a new signing key, and
// what GET /domains/{domain}/dnssec shows (the state, and per key its DNSKEY and DS, never the
// private key).
import { Type, type Static } from 'typebox';
import type { DnssecAlgorithm, ZoneSigning } from './dnssec.ts';
import { dnskeyText, dsText } from './dnssec-keys.ts';

export const DEFAULT_DNSSEC_ALGORITHM: DnssecAlgorithm = 13;

/** The DNSSEC side of a domain's state. */
export interface DnssecFields {
  dnssec?: boolean;
  dnssec_algorithm?: DnssecAlgorithm;
  signing?: ZoneSigning;
}

/**
 * What a change of a domain's settings (`before` → `after`, before keys are seen to) asks of its
 * keys: nothing (off, or a key of the wanted algorithm is there — one kept from an earlier
 * turning on included), a new key (replacing any kept of another algorithm), or a refusal: a
 * signed zone's algorithm cannot change (an algorithm rollover is not offered).
 */
export function keysWanted(before: DnssecFields | undefined, after: DnssecFields): { make: DnssecAlgorithm } | { refuse: string } | undefined {
  if (after.dnssec !== true) return undefined;
  const algorithm = after.dnssec_algorithm ?? DEFAULT_DNSSEC_ALGORITHM;
  const keys = after.signing?.keys ?? [];
  if (keys.some((k) => k.active && k.algorithm === algorithm)) return undefined;
  if (before?.dnssec === true && keys.length > 0) {
    return {
      refuse: `the zone is signed with algorithm ${keys[0]!.algorithm}; changing the algorithm of a signed zone (an algorithm rollover) is not offered: turn dnssec off (after removing the DS at the registrar), then turn it on with the new dnssec_algorithm (a new key, a new DS)`,
    };
  }
  return { make: algorithm };
}

export const DnssecKeyView = Type.Object({
  key_tag: Type.Integer({ description: 'RFC 4034 Appendix B key tag' }),
  flags: Type.Integer({ description: '257: a combined signing key (zone key and secure entry point)' }),
  algorithm: Type.Integer({ description: '13 ECDSA P-256/SHA-256, 15 Ed25519' }),
  dnskey: Type.String({ description: 'The DNSKEY RDATA in presentation form: `257 3 13 <base64>`' }),
  ds: Type.String({ description: 'The DS RDATA (SHA-256 digest) in presentation form, to paste at the registrar: `<key tag> <algorithm> 2 <hex>`' }),
});

export const DnssecStatus = Type.Object(
  {
    state: Type.Union([Type.Literal('off'), Type.Literal('signing')], {
      description:
        '`off`: answers are not signed. `signing`: both name servers sign every answer with the keys below; publish their DS at the registrar to make the domain secure. (Whether the parent holds the DS — `waiting_for_ds`, `secure` — needs a monitor of the parent zone this release does not have.)',
    }),
    algorithm: Type.Integer({ description: 'The signing algorithm: the key\'s while signing, else the one the next turning on uses (`dnssec_algorithm`)' }),
    keys: Type.Array(DnssecKeyView, { description: 'The keys answers are signed with (none while off: a DS published for a zone that is not signed makes it fail validation)' }),
  },
  { examples: [{ state: 'signing', algorithm: 13, keys: [{ key_tag: 55648, flags: 257, algorithm: 13, dnskey: '257 3 13 GojIhhXUN/u4v54ZQqGSnyhWJwaubCvTmeexv7bR6edbkrSqQpF64cYbcB7wNcP+e+MAnLr+Wi9xMWyQLc8NAA==', ds: '55648 13 2 B4C8C1FE2E7477127B27115656AD6256F424625BF5C1E2770CE6D6E37DF61D17' }] }] },
);
export type DnssecStatus = Static<typeof DnssecStatus>;

/** The domain's DNSSEC as its owner sees it. */
export function dnssecStatus(zone: string, domain: DnssecFields): DnssecStatus {
  if (domain.dnssec !== true) return { state: 'off', algorithm: domain.dnssec_algorithm ?? DEFAULT_DNSSEC_ALGORITHM, keys: [] };
  const keys = (domain.signing?.keys ?? []).filter((k) => k.active);
  return {
    state: 'signing',
    algorithm: keys[0]?.algorithm ?? domain.dnssec_algorithm ?? DEFAULT_DNSSEC_ALGORITHM,
    keys: keys.map((k) => ({ key_tag: k.key_tag, flags: k.flags, algorithm: k.algorithm, dnskey: dnskeyText(k), ds: dsText(zone, k) })),
  };
}
