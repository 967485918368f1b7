// DNS numbers used on the wire, as small two-way tables (RFC 1035, 3596, 2782, 6891, 7871).

export const QTYPE = {
  A: 1,
  NS: 2,
  CNAME: 5,
  SOA: 6,
  HINFO: 13,
  MX: 15,
  TXT: 16,
  AAAA: 28,
  SRV: 33,
  OPT: 41,
  DS: 43,
  SVCB: 64,
  HTTPS: 65,
  AXFR: 252,
  IXFR: 251,
  ANY: 255,
} as const;

export const QTYPE_NAME: Record<number, string> = Object.fromEntries(Object.entries(QTYPE).map(([k, v]) => [v, k]));

/** A type's mnemonic, or TYPEnnn (RFC 3597) for the rest. */
export function qtypeName(type: number): string {
  return QTYPE_NAME[type] ?? `TYPE${type}`;
}

export const CLASS = { IN: 1, CH: 3, NONE: 254, ANY: 255 } as const;

export const RCODE = {
  NOERROR: 0,
  FORMERR: 1,
  SERVFAIL: 2,
  NXDOMAIN: 3,
  NOTIMP: 4,
  REFUSED: 5,
  /** Extended (EDNS) rcode 16: upper 8 bits in the OPT TTL, lower 4 in the header. */
  BADVERS: 16,
} as const;

export const RCODE_NAME: Record<number, string> = Object.fromEntries(Object.entries(RCODE).map(([k, v]) => [v, k]));

export const OPCODE_QUERY = 0;

export const EDNS_OPTION = { NSID: 3, ECS: 8, COOKIE: 10 } as const;

/** Our EDNS UDP payload size (DNS flag day 2020): fits one unfragmented packet on nearly any path. */
export const EDNS_PAYLOAD = 1232;
/** Without EDNS, UDP answers are limited to 512 octets (RFC 1035 §4.2.1). */
export const CLASSIC_UDP_LIMIT = 512;

/** RFC 7873 §5.2.2: a COOKIE option is 8 octets (client cookie only), or 16 to 40 (with a server cookie). */
export const isCookieLength = (length: number): boolean => length === 8 || (length >= 16 && length <= 40);
