// A domain's `backend` and `failover`: an IP address with an optional port ("192.0.2.1",
// "192.0.2.1:8080", "2001:db8::1", "[2001:db8::1]:8443"); port 80 when none is given. Stored
// canonically: the address in its canonical form (IPv4-mapped IPv6 as IPv4), the port only when
// it is not 80, IPv6 with a port in brackets. Addresses that are not public (loopback, private,
// link-local, CGNAT, multicast, reserved — ip.ts has the list — also when embedded in IPv6) are
// refused unless the operator allows private backends (tests, a laptop).
import { canonicalIp, nonPublicReason, unmapped, type IpFamily } from './ip.ts';
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

/** Checks and canonicalises a backend text; `allowPrivate` lets loopback and private addresses through. */
export function checkBackend(text: string, allowPrivate: boolean): Checked<string> {
  const backend = parseBackend(text);
  if (!backend) return { ok: false, message: `"${text}" is not an IP address, optionally with a port ("192.0.2.1:8080", "[2001:db8::1]:8443")` };
  const refusal = backendRefusal(backend, allowPrivate);
  if (refusal) return { ok: false, message: `${refusal}; a backend must be reachable from the edge (PALISADE_ALLOW_PRIVATE_BACKENDS lets an operator allow it)` };
  // [::ffff:192.0.2.1]:8080 is 192.0.2.1:8080 on a dual-stack edge: stored as such, one spelling.
  const { address, family } = unmapped(backend);
  return { ok: true, value: formatBackend({ address, family, port: backend.port }) };
}

/**
 * Why the edge must not connect to `backend` (loopback, private, metadata, … — also when embedded
 * in an IPv6 address: ::ffff:127.0.0.1, 64:ff9b::7f00:1, 2002:7f00:1::), or undefined. Checked
 * when a backend is submitted and again before each connection, for values stored before a rule
 * existed or written past the API.
 */
export function backendRefusal(backend: Backend, allowPrivate: boolean): string | undefined {
  if (allowPrivate) return undefined;
  const reason = nonPublicReason(backend.address);
  return reason && `${backend.address} ${reason}`;
}
