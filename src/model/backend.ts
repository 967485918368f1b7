// A domain's `backend` and `failover`: an IP address with an optional port ("192.0.2.1",
// "192.0.2.1:8080", "2001:db8::1", "[2001:db8::1]:8443"); port 80 when none is given. Stored
// canonically: the address in its canonical form, the port only when it is not 80, IPv6 with a
// port in brackets. Loopback, unspecified, multicast, link-local and private (RFC 1918, RFC 4193,
// CGNAT) addresses are refused unless the operator allows private backends (tests, a laptop).
import { isIP } from 'node:net';
import { canonicalIp, ipToBytes, isSpecialPurpose, type IpFamily } from './ip.ts';
import type { Checked } from './names.ts';

export const DEFAULT_BACKEND_PORT = 80;

export interface Backend {
  address: string;
  family: IpFamily;
  port: number;
}

/** Parses a stored or submitted backend; undefined when it is neither "ip" nor "ip:port". */
export function parseBackend(text: string): Backend | undefined {
  let host = text;
  let port = DEFAULT_BACKEND_PORT;
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(text);
  const v4WithPort = /^(\d{1,3}(?:\.\d{1,3}){3}):(\d{1,5})$/.exec(text);
  if (bracketed) {
    host = bracketed[1]!;
    if (bracketed[2] !== undefined) port = Number(bracketed[2]);
  } else if (v4WithPort) {
    host = v4WithPort[1]!;
    port = Number(v4WithPort[2]);
  }
  const ip = canonicalIp(host);
  if (!ip || port < 1 || port > 65535) return undefined;
  if (bracketed && ip.family !== 6) return undefined;
  return { address: ip.address, family: ip.family, port };
}

export function formatBackend({ address, family, port }: Backend): string {
  if (port === DEFAULT_BACKEND_PORT) return address;
  return family === 6 ? `[${address}]:${port}` : `${address}:${port}`;
}

/** Private ranges a public edge must not be pointed at (they would reach our own networks). */
function isPrivate(address: string, family: IpFamily): string | undefined {
  const b = ipToBytes(address);
  if (family === 4) {
    if (b[0] === 10 || (b[0] === 172 && (b[1]! & 0xf0) === 16) || (b[0] === 192 && b[1] === 168)) return 'is a private (RFC 1918) address';
    if (b[0] === 100 && (b[1]! & 0xc0) === 64) return 'is a shared (CGNAT, RFC 6598) address';
    return undefined;
  }
  if ((b[0]! & 0xfe) === 0xfc) return 'is a unique local (RFC 4193) address';
  return undefined;
}

/** Checks and canonicalises a backend text; `allowPrivate` lets loopback and private addresses through. */
export function checkBackend(text: string, allowPrivate: boolean): Checked<string> {
  const backend = parseBackend(text);
  if (!backend) return { ok: false, message: `"${text}" is not an IP address, optionally with a port ("192.0.2.1:8080", "[2001:db8::1]:8443")` };
  if (!allowPrivate) {
    const special = isSpecialPurpose(backend.address, backend.family) ?? isPrivate(backend.address, backend.family);
    if (special) return { ok: false, message: `${backend.address} ${special}; a backend must be reachable from the edge (PALISADE_ALLOW_PRIVATE_BACKENDS lets an operator allow it)` };
  }
  return { ok: true, value: formatBackend(backend) };
}

/** Why an address is no public one (loopback, private, link-local, …); undefined for a public address. */
export function nonPublicReason(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return 'is not an IP address';
  return isSpecialPurpose(address, family as IpFamily) ?? isPrivate(address, family as IpFamily);
}
