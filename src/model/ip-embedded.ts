// Where an IPv6 address carries an IPv4 address. A dual-stack host, a NAT64 gateway, a 6to4 relay
// or a Teredo relay turns such an address into a connection to the IPv4 address inside, so an
// address is only as public as what it embeds: ::ffff:127.0.0.1 is the loopback, whatever its
// spelling. Pure: bytes in, dotted quads out.

export interface EmbeddedIpv4 {
  /** The IPv4 address inside, as a dotted quad. */
  address: string;
  /** How it is embedded, for messages. */
  form: string;
}

const zero = (bytes: Uint8Array, from: number, to: number): boolean => {
  for (let i = from; i < to; i++) if (bytes[i] !== 0) return false;
  return true;
};

const dotted = (bytes: Uint8Array, at: number, invert = false): string =>
  [0, 1, 2, 3].map((i) => (invert ? ~bytes[at + i]! & 0xff : bytes[at + i]!)).join('.');

/** The IPv4 mapped address of ::ffff:0:0/96 (what a dual-stack socket reports), else undefined. */
export function mappedIpv4(bytes: Uint8Array): string | undefined {
  if (bytes.length !== 16 || !zero(bytes, 0, 10) || bytes[10] !== 0xff || bytes[11] !== 0xff) return undefined;
  return dotted(bytes, 12);
}

/**
 * Every IPv4 address embedded in a 16-byte IPv6 address, by the forms that reach IPv4:
 * - IPv4-mapped ::ffff:0:0/96 (RFC 4291): the same host as the IPv4 address;
 * - IPv4-compatible ::/96 (RFC 4291, deprecated), which includes :: and ::1 — callers judge those first;
 * - SIIT IPv4-translated ::ffff:0:0:0/96 (RFC 2765, obsolete);
 * - NAT64 well-known prefix 64:ff9b::/96 (RFC 6052);
 * - 6to4 2002::/16 (RFC 3056): the IPv4 address in bits 16–47;
 * - Teredo 2001::/32 (RFC 4380): the server in bits 32–63, and the client in the last 32 bits,
 *   stored obfuscated (every bit inverted).
 * The NAT64 local-use prefix 64:ff9b:1::/48 (RFC 8215) places the IPv4 address where the
 * operator's prefix length says, which cannot be read off the address: it is judged as a whole.
 */
export function embeddedIpv4(bytes: Uint8Array): EmbeddedIpv4[] {
  if (bytes.length !== 16) return [];
  const mapped = mappedIpv4(bytes);
  if (mapped) return [{ address: mapped, form: 'IPv4-mapped' }];
  if (zero(bytes, 0, 12)) return [{ address: dotted(bytes, 12), form: 'IPv4-compatible' }];
  if (zero(bytes, 0, 8) && bytes[8] === 0xff && bytes[9] === 0xff && zero(bytes, 10, 12)) return [{ address: dotted(bytes, 12), form: 'SIIT IPv4-translated' }];
  if (bytes[0] === 0x00 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && zero(bytes, 4, 12)) return [{ address: dotted(bytes, 12), form: 'NAT64' }];
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return [{ address: dotted(bytes, 2), form: '6to4' }];
  if (bytes[0] === 0x20 && bytes[1] === 0x01 && bytes[2] === 0x00 && bytes[3] === 0x00) {
    return [
      { address: dotted(bytes, 12, true), form: 'Teredo client' },
      { address: dotted(bytes, 4), form: 'Teredo server' },
    ];
  }
  return [];
}
