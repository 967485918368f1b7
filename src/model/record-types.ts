// The API's record type numbers and their DNS names and wire type codes. The first eight (1–8)
// are the service's own numbers, not DNS TYPE values (7 is SOA here, 6 in DNS); every type added
// since is numbered by its IANA TYPE code (all above 8), its value rules in ./values/.

export const RECORD_TYPES = {
  1: { name: 'A', dnsType: 1 },
  2: { name: 'AAAA', dnsType: 28 },
  3: { name: 'CNAME', dnsType: 5 },
  4: { name: 'MX', dnsType: 15 },
  5: { name: 'NS', dnsType: 2 },
  6: { name: 'TXT', dnsType: 16 },
  7: { name: 'SOA', dnsType: 6 },
  8: { name: 'SRV', dnsType: 33 },
  12: { name: 'PTR', dnsType: 12 },
  35: { name: 'NAPTR', dnsType: 35 },
  43: { name: 'DS', dnsType: 43 },
  44: { name: 'SSHFP', dnsType: 44 },
  52: { name: 'TLSA', dnsType: 52 },
  64: { name: 'SVCB', dnsType: 64 },
  65: { name: 'HTTPS', dnsType: 65 },
  257: { name: 'CAA', dnsType: 257 },
} as const;

export type RecordTypeNumber = keyof typeof RECORD_TYPES;
export type RecordTypeName = (typeof RECORD_TYPES)[RecordTypeNumber]['name'];

export const TYPE = {
  A: 1,
  AAAA: 2,
  CNAME: 3,
  MX: 4,
  NS: 5,
  TXT: 6,
  SOA: 7,
  SRV: 8,
  PTR: 12,
  NAPTR: 35,
  DS: 43,
  SSHFP: 44,
  TLSA: 52,
  SVCB: 64,
  HTTPS: 65,
  CAA: 257,
} as const satisfies Record<
  RecordTypeName,
  RecordTypeNumber
>;

export function typeName(type: number): RecordTypeName {
  const entry = RECORD_TYPES[type as RecordTypeNumber];
  if (!entry) throw new RangeError(`unknown record type ${type}`);
  return entry.name;
}

const BY_NAME = new Map<string, RecordTypeNumber>(Object.entries(RECORD_TYPES).map(([number, { name }]) => [name, Number(number) as RecordTypeNumber]));

/** The API's type numbers, in order. */
export const TYPE_NUMBERS: readonly RecordTypeNumber[] = [...BY_NAME.values()].sort((a, b) => a - b);

/** Whether a number is one of the API's type numbers. */
export const isRecordTypeNumber = (type: number): type is RecordTypeNumber => Object.hasOwn(RECORD_TYPES, type);

/** The mnemonics the API accepts for `type`, in either case ("A", "mx"). */
export const TYPE_MNEMONIC_PATTERN = `^(${[...BY_NAME.keys()].flatMap((n) => [n, n.toLowerCase()]).join('|')})$`;

/** A type as the API takes it, number or mnemonic, as the service's number. */
export function recordTypeNumber(type: number | string): RecordTypeNumber {
  return typeof type === 'number' ? (type as RecordTypeNumber) : BY_NAME.get(type.toUpperCase())!;
}

/** Types that carry a priority (MX preference, SRV priority). */
export function hasPriority(type: number): boolean {
  return type === TYPE.MX || type === TYPE.SRV;
}
