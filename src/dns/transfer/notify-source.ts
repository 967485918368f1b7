// Where NOTIFY leaves from. A secondary's ACL names the primary's address, so a notice sent from
// the wildcard address (the kernel picks the source by route: on loopback 127.0.0.1, on a
// multi-homed host the interface's first address) is dropped by a secondary that names the
// address the name server is bound to. Per family: the operator's source if given, else the
// listening address when it is one address (not a wildcard), else the wildcard.
import { isIP } from 'node:net';

export interface NotifySources {
  v4?: string;
  v6?: string;
}

const WILDCARDS = new Set(['0.0.0.0', '::', '0:0:0:0:0:0:0:0']);

/** `listenHost`: the DNS server's address; `configured`: the operator's sources (at most one per family). */
export function notifySources(listenHost: string, configured: readonly string[] = []): NotifySources {
  const out: NotifySources = {};
  const family = isIP(listenHost);
  if (family !== 0 && !WILDCARDS.has(listenHost)) out[family === 4 ? 'v4' : 'v6'] = listenHost;
  for (const address of configured) out[isIP(address) === 4 ? 'v4' : 'v6'] = address;
  return out;
}

/** Checks the operator's list: IP addresses, at most one per family; the first problem, if any. */
export function checkNotifySources(addresses: readonly string[]): string | undefined {
  const seen = new Set<number>();
  for (const address of addresses) {
    const family = isIP(address);
    if (family === 0) return `"${address}" is not an IP address`;
    if (seen.has(family)) return `at most one IPv${family} address`;
    seen.add(family);
  }
  return undefined;
}
