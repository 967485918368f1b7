// IP address and prefix parsing. Addresses are returned in canonical text form (IPv4 dotted
// quad without leading zeros, IPv6 per RFC 5952) so that equal addresses compare equal as strings.
import { isIPv4, isIPv6, SocketAddress } from 'node:net';

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

export function isSpecialPurpose(address: string, family: IpFamily): string | undefined {
  const b = ipToBytes(address);
  if (family === 4) {
    if (b[0] === 0) return 'is an unspecified ("this network") address';
    if (b[0] === 127) return 'is a loopback address';
    if (b[0]! >= 224) return 'is a multicast or reserved address';
    if (b[0] === 169 && b[1] === 254) return 'is a link-local address';
    return undefined;
  }
  if (b.every((x) => x === 0)) return 'is the unspecified address';
  if (b.slice(0, 15).every((x) => x === 0) && b[15] === 1) return 'is the loopback address';
  if (b[0] === 0xff) return 'is a multicast address';
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0x80) return 'is a link-local address';
  return undefined;
}

/**
 * An IP list entry: an address or a CIDR prefix ("192.0.2.0/24", "2001:db8::/32").
 * Prefixes must have no bits set past the prefix length, so one network has one spelling.
 * A full-length prefix (/32, /128) is the plain address.
 */
export function canonicalIpOrPrefix(input: string): { value: string } | { error: string } {
  const slash = input.indexOf('/');
  const addressText = slash === -1 ? input : input.slice(0, slash);
  const ip = canonicalIp(addressText);
  if (!ip) return { error: `"${input}" is not an IPv4 or IPv6 address or prefix` };
  if (slash === -1) return { value: ip.address };
  const lengthText = input.slice(slash + 1);
  const max = ip.family === 4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(lengthText) || Number(lengthText) > max) {
    return { error: `"${input}" has an invalid prefix length (0–${max})` };
  }
  const length = Number(lengthText);
  if (length === max) return { value: ip.address };
  const bytes = ipToBytes(ip.address);
  for (let bit = length; bit < max; bit++) {
    if (bytes[bit >> 3]! & (0x80 >> (bit & 7))) {
      return { error: `"${input}" has bits set past the /${length} prefix` };
    }
  }
  return { value: `${ip.address}/${length}` };
}
