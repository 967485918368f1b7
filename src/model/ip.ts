// IP address and prefix parsing. Addresses are returned in canonical text form (IPv4 dotted
// quad without leading zeros, IPv6 per RFC 5952) so that equal addresses compare equal as strings.
import { isIPv4, isIPv6, SocketAddress } from 'node:net';
import { embeddedIpv4, mappedIpv4 } from './ip-embedded.ts';

export type IpFamily = 4 | 6;

export function canonicalIp(input: string): { address: string; family: IpFamily } | undefined {
  if (isIPv4(input)) return { address: input, family: 4 };
  if (isIPv6(input) && !input.includes('%')) {
    return { address: new SocketAddress({ address: input, family: 'ipv6' }).address, family: 6 };
  }
  return undefined;
}

/** The address as bytes (4 or 16). The input must be a canonical address. */
export function ipToBytes(address: string): Uint8Array {
  if (isIPv4(address)) return Uint8Array.from(address.split('.').map(Number));
  const bytes = new Uint8Array(16);
  let text = address;
  // An embedded IPv4 tail (::ffff:1.2.3.4) becomes two hextets.
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4[1]!.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const headParts = head === '' ? [] : head.split(':');
  const tailParts = tail === undefined || tail === '' ? [] : tail.split(':');
  const parts = [...headParts, ...new Array<string>(8 - headParts.length - tailParts.length).fill('0'), ...tailParts];
  parts.forEach((p, i) => {
    const v = parseInt(p, 16);
    bytes[i * 2] = v >> 8;
    bytes[i * 2 + 1] = v & 0xff;
  });
  return bytes;
}

/** Whether `bytes` lies in the prefix given by its first bytes and length in bits. */
function inPrefix(bytes: Uint8Array, prefix: readonly number[], length: number): boolean {
  for (let bit = 0; bit < length; bit += 8) {
    const take = Math.min(8, length - bit);
    const mask = (0xff << (8 - take)) & 0xff;
    if (((bytes[bit >> 3]! ^ (prefix[bit >> 3] ?? 0)) & mask) !== 0) return false;
  }
  return true;
}

type Range = readonly [prefix: readonly number[], length: number, what: string];

const PRIVATE_V4 = 'a private address (RFC 1918)';
/**
 * IPv4 ranges an edge or a webhook must not be aimed at: they reach the operator's own host,
 * networks or cloud services, or nothing at all. The most specific first (255.255.255.255 in 240/4).
 * Accepted on purpose: the documentation ranges 192.0.2.0/24, 198.51.100.0/24 and 203.0.113.0/24
 * (routed nowhere, so a connection there reaches no network of ours; the API's own examples use
 * them), and 192.88.99.0/24 (the former 6to4 relay anycast, public).
 */
const V4_RANGES: readonly Range[] = [
  [[0], 8, 'an unspecified ("this network") address (0.0.0.0/8)'],
  [[10], 8, PRIVATE_V4],
  [[100, 64], 10, 'a shared address (CGNAT, RFC 6598)'],
  [[127], 8, 'a loopback address (127.0.0.0/8)'],
  [[169, 254], 16, 'a link-local address (169.254.0.0/16, where cloud metadata services answer)'],
  [[172, 16], 12, PRIVATE_V4],
  [[192, 0, 0], 24, 'an IETF protocol assignment (192.0.0.0/24: DS-Lite, NAT64 discovery)'],
  [[192, 168], 16, PRIVATE_V4],
  [[198, 18], 15, 'a benchmarking address (198.18.0.0/15, RFC 2544)'],
  [[224], 4, 'a multicast address (224.0.0.0/4)'],
  [[255, 255, 255, 255], 32, 'the broadcast address'],
  [[240], 4, 'a reserved address (240.0.0.0/4)'],
];

/**
 * The same for IPv6, judged before any embedded IPv4 address. Accepted on purpose: the
 * documentation prefixes 2001:db8::/32 and 3fff::/20 (RFC 9637), for the reason above.
 * Refused although nothing routes there: the discard-only 100::/64 (a backend there can never
 * answer) and site-local fec0::/10 (deprecated, yet still numbered inside some networks).
 */
const V6_RANGES: readonly Range[] = [
  [[], 128, 'the unspecified address (::)'],
  [[...new Array<number>(15).fill(0), 1], 128, 'the loopback address (::1)'],
  [[0x00, 0x64, 0xff, 0x9b, 0x00, 0x01], 48, "in the NAT64 local-use prefix (64:ff9b:1::/48, RFC 8215), which translates to IPv4 networks of the operator's choosing"],
  [[0x01, 0x00], 64, 'a discard-only address (100::/64, RFC 6666)'],
  [[0x20, 0x01, 0x00, 0x02, 0x00, 0x00], 48, 'a benchmarking address (2001:2::/48, RFC 5180)'],
  [[0xfc], 7, 'a unique local address (fc00::/7, RFC 4193)'],
  [[0xfe, 0x80], 10, 'a link-local address (fe80::/10)'],
  [[0xfe, 0xc0], 10, 'a site-local address (fec0::/10, deprecated by RFC 3879)'],
  [[0xff], 8, 'a multicast address (ff00::/8)'],
];

/** Embeddings no public host is numbered in any more: refused whatever they embed. */
const DEPRECATED_FORMS = new Set(['IPv4-compatible', 'SIIT IPv4-translated']);

const within = (bytes: Uint8Array, ranges: readonly Range[]): string | undefined => ranges.find(([prefix, length]) => inPrefix(bytes, prefix, length))?.[2];

/**
 * Why a connection to `address` could reach something other than the public internet — loopback,
 * private, link-local, metadata, multicast, reserved — judged on the IPv6 address itself and on
 * every IPv4 address it embeds (see ip-embedded.ts); undefined for a public address. Any spelling
 * is accepted; what is no IP address (a zone index included) is refused.
 */
export function nonPublicReason(address: string): string | undefined {
  const ip = canonicalIp(address);
  if (!ip) return 'is not an IP address';
  const bytes = ipToBytes(ip.address);
  if (ip.family === 4) {
    const what = within(bytes, V4_RANGES);
    return what && `is ${what}`;
  }
  const own = within(bytes, V6_RANGES);
  if (own) return `is ${own}`;
  const embedded = embeddedIpv4(bytes);
  for (const { address: inner, form } of embedded) {
    const what = within(ipToBytes(inner), V4_RANGES);
    if (what) return `embeds ${inner} (${form}), ${what}`;
  }
  const deprecated = embedded.find((e) => DEPRECATED_FORMS.has(e.form));
  if (deprecated) return `is an ${deprecated.form} address (deprecated; it embeds ${deprecated.address}): give the IPv4 address itself`;
  return undefined;
}

/** An IPv4-mapped address (::ffff:192.0.2.1) as the IPv4 address it is; any other address as it is. */
export function unmapped(ip: { address: string; family: IpFamily }): { address: string; family: IpFamily } {
  if (ip.family === 4) return ip;
  const v4 = mappedIpv4(ipToBytes(ip.address));
  return v4 ? { address: v4, family: 4 } : ip;
}

/**
 * An IP list entry: an address or a CIDR prefix ("192.0.2.0/24", "2001:db8::/32").
 * Prefixes must have no bits set past the prefix length, so one network has one spelling.
 * A full-length prefix (/32, /128) is the plain address. IPv4-mapped entries become IPv4 ones
 * (::ffff:192.0.2.1 → 192.0.2.1, ::ffff:192.0.2.0/120 → 192.0.2.0/24): IPv4 clients are judged as
 * IPv4 addresses, so a list entry in mapped form must be one to match them.
 */
export function canonicalIpOrPrefix(input: string): { value: string } | { error: string } {
  const slash = input.indexOf('/');
  const addressText = slash === -1 ? input : input.slice(0, slash);
  const ip = canonicalIp(addressText);
  if (!ip) return { error: `"${input}" is not an IPv4 or IPv6 address or prefix` };
  if (slash === -1) return { value: unmapped(ip).address };
  const lengthText = input.slice(slash + 1);
  const max = ip.family === 4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(lengthText) || Number(lengthText) > max) {
    return { error: `"${input}" has an invalid prefix length (0–${max})` };
  }
  const length = Number(lengthText);
  if (length === max) return { value: unmapped(ip).address };
  const bytes = ipToBytes(ip.address);
  for (let bit = length; bit < max; bit++) {
    if (bytes[bit >> 3]! & (0x80 >> (bit & 7))) {
      return { error: `"${input}" has bits set past the /${length} prefix` };
    }
  }
  const v4 = length >= 96 ? mappedIpv4(bytes) : undefined;
  if (v4) return { value: `${v4}/${length - 96}` };
  return { value: `${ip.address}/${length}` };
}
