// Per-type rules for a record's `value`: each parser validates the text a customer sends and
// returns its canonical form, so that equal data compares equal as strings. Side by side, one
// entry per type, the way dns-packet keeps its codecs.
import { canonicalIp } from './ip.ts';
import { normaliseTargetName, type Checked } from './names.ts';
import { TYPE, type RecordTypeNumber } from './record-types.ts';
import { isQuotedTxt, parseQuotedTxt } from './txt-strings.ts';
import { VALUE_TYPES, valueType } from './values/index.ts';
import { canonicalSvcb } from './values/svcb.ts';

const ok = (value: string): Checked<string> => ({ ok: true, value });
const fail = (message: string): Checked<string> => ({ ok: false, message });

/** TXT data is split into 255-octet character-strings on the wire; this caps the whole value. */
export const TXT_MAX_BYTES = 4000;

export const SOA_LIMITS = {
  refresh: [300, 2_147_483_647],
  retry: [60, 2_147_483_647],
  expire: [3600, 2_147_483_647],
  // Negative-caching TTL: from 30 s, like record TTLs (60 s is common for zones that change often).
  minimum: [30, 86_400],
} as const;

/** The SOA a zone is served with when its SOA record does not say otherwise, and the apex NS TTL. */
export const SOA_DEFAULTS = { ttl: 3600, refresh: 7200, retry: 1800, expire: 1_209_600, minimum: 300 } as const;
export const APEX_NS_TTL = 3600;

function hostValue(text: string, zone: string): Checked<string> {
  const name = normaliseTargetName(text, zone);
  return name.ok ? name : fail(`must be a host name: ${name.message}`);
}

function uint16(text: string): number | undefined {
  return /^\d{1,5}$/.test(text) && Number(text) <= 65535 ? Number(text) : undefined;
}

// The first eight types; those added since are in ./values/, one file each.
const parsers: Partial<Record<RecordTypeNumber, (value: string, zone: string) => Checked<string>>> = {
  [TYPE.A]: (value) => {
    const ip = canonicalIp(value);
    return ip?.family === 4 ? ok(ip.address) : fail('must be an IPv4 address');
  },
  [TYPE.AAAA]: (value) => {
    const ip = canonicalIp(value);
    return ip?.family === 6 ? ok(ip.address) : fail('must be an IPv6 address');
  },
  [TYPE.CNAME]: hostValue,
  // "." is a null MX (RFC 7505): the domain accepts no mail.
  [TYPE.MX]: (value, zone) => (value.trim() === '.' ? ok('.') : hostValue(value, zone)),
  [TYPE.NS]: hostValue,
  // Plain text, or zone-file form: quoted strings served as exactly those strings (txt-strings.ts).
  [TYPE.TXT]: (value) => {
    const bytes = Buffer.byteLength(value, 'utf8');
    if (bytes > TXT_MAX_BYTES) return fail(`is ${bytes} bytes; TXT values are limited to ${TXT_MAX_BYTES}`);
    if (!isQuotedTxt(value)) return ok(value);
    const parsed = parseQuotedTxt(value);
    return parsed.ok ? ok(parsed.canonical) : fail(`in zone-file form (quoted strings) ${parsed.message}`);
  },
  // SOA: "rname refresh retry expire minimum". MNAME (our ns1) and the serial are the service's.
  [TYPE.SOA]: (value, zone) => {
    const parts = value.trim().split(/\s+/);
    if (parts.length !== 5) return fail('must be "rname refresh retry expire minimum" (mname and serial are set by the service)');
    const [rnameText, ...timers] = parts as [string, string, string, string, string];
    // Accept the mailbox spelling (hostmaster@example.org) as well as the DNS one.
    const rname = hostValue(rnameText.replace('@', '.'), zone);
    if (!rname.ok) return fail(`rname ${rname.message}`);
    const names = ['refresh', 'retry', 'expire', 'minimum'] as const;
    const numbers: number[] = [];
    for (let i = 0; i < 4; i++) {
      const [min, max] = SOA_LIMITS[names[i]!];
      const text = timers[i]!;
      const n = /^\d{1,10}$/.test(text) ? Number(text) : NaN;
      if (!(n >= min && n <= max)) return fail(`${names[i]} must be an integer from ${min} to ${max}`);
      numbers.push(n);
    }
    return ok([rname.value, ...numbers].join(' '));
  },
  // SRV: "weight port target" (priority is its own field). "." as target means "no service".
  [TYPE.SRV]: (value, zone) => {
    const parts = value.trim().split(/\s+/);
    if (parts.length !== 3) return fail('must be "weight port target"');
    const [weightText, portText, targetText] = parts as [string, string, string];
    const weight = uint16(weightText);
    const port = uint16(portText);
    if (weight === undefined) return fail('weight must be an integer from 0 to 65535');
    if (port === undefined) return fail('port must be an integer from 0 to 65535');
    if (targetText === '.') return ok(`${weight} ${port} .`);
    const target = hostValue(targetText, zone);
    return target.ok ? ok(`${weight} ${port} ${target.value}`) : target;
  },
  // SVCB and HTTPS (RFC 9460): ./values/svcb.ts.
  [TYPE.SVCB]: canonicalSvcb,
  [TYPE.HTTPS]: canonicalSvcb,
};

export function canonicalRecordValue(type: RecordTypeNumber, value: string, zone: string): Checked<string> {
  const parse = parsers[type] ?? valueType(type)?.canonical;
  if (!parse) return fail(`of type ${type} has no rules`);
  return parse(value, zone);
}

/** The value forms of the types in ./values/, in words, for the API's description. */
export const valueHelp = (): string => [...VALUE_TYPES.values()].map((t) => t.help).join(' ');

export interface SoaFields {
  rname: string;
  refresh: number;
  retry: number;
  expire: number;
  minimum: number;
}

/** Reads a canonical SOA value back into its fields. */
export function parseSoaValue(value: string): SoaFields {
  const [rname, refresh, retry, expire, minimum] = value.split(' ');
  return { rname: rname!, refresh: Number(refresh), retry: Number(retry), expire: Number(expire), minimum: Number(minimum) };
}
