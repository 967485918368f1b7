// How a name is delegated, as its parent zone says (issue 26). A recursive resolver asked for a
// name's NS set answers what the name's own servers say: for a name delegated to our servers
// that they do not serve yet (a pending claim) that is nothing (SERVFAIL), and for one they
// serve it is what we say ourselves. So the parent is asked: the resolver
// (PALISADE_DELEGATION_RESOLVER) finds the nearest zone above the name and its servers'
// addresses, and those servers are asked without recursion for the name's NS set, following
// referrals down (a few hops at most) — the delegation as the registry (or the parent zone's
// owner) has it. `resolver` mode takes the resolver's answer instead (a resolver that reports the
// registry's view, as a test lab's does).
import { Resolver } from 'node:dns/promises';
import dns2 from 'dns2';
import { ancestorsOf } from '../store/name-tree.ts';

const { Packet, UDPClient } = dns2;

/** The NS names of a delegation; [] when there is none (NXDOMAIN, NODATA); undefined when nothing definite was answered. */
export type DelegationLookup = (name: string) => Promise<string[] | undefined>;

const canonical = (name: string) => name.toLowerCase().replace(/\.$/, '');
const HOPS = 4;
const SERVERS_ASKED = 3;

/** Errors that mean "there is no such data" rather than "no answer". */
const none = (error: NodeJS.ErrnoException) => (error.code === 'ENOTFOUND' || error.code === 'ENODATA' ? [] : undefined);

export function resolverDelegation(resolver: Resolver): DelegationLookup {
  return (name) => resolver.resolveNs(name).then((names) => names.map(canonical), none);
}

interface NsRecord {
  name: string;
  type: number;
  ns?: string;
}

/** The addresses of a parent zone's servers (IPv4, else IPv6 per server), the first SERVERS_ASKED of them. */
export async function serverAddresses(resolver: Resolver, servers: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  for (const server of servers) {
    if (found.length >= SERVERS_ASKED) break;
    const v4 = await resolver.resolve4(server).catch(() => [] as string[]);
    found.push(...(v4.length > 0 ? v4 : await resolver.resolve6(server).catch(() => [] as string[])));
  }
  return found.slice(0, SERVERS_ASKED);
}

export function parentDelegation(resolver: Resolver, options: { port: number; timeoutMs: number }): DelegationLookup {
  const addressesOf = (servers: readonly string[]) => serverAddresses(resolver, servers);
  /** Asks one server, without recursion, for the name's NS set. */
  const ask = async (address: string, name: string) => {
    const query = UDPClient({ dns: address, port: options.port, timeout: options.timeoutMs, socketType: address.includes(':') ? 'udp6' : 'udp4' });
    return query(name, 'NS', Packet.CLASS.IN, { recursive: false }).catch(() => undefined);
  };

  return async (name) => {
    // The nearest zone above the name the resolver knows of, and its servers.
    let servers: string[] | undefined;
    let zone: string | undefined;
    for (const ancestor of ancestorsOf(name)) {
      const found = await resolver.resolveNs(ancestor).then((names) => names.map(canonical), none);
      if (found === undefined) return undefined;
      if (found.length > 0) {
        servers = found;
        zone = ancestor;
        break;
      }
    }
    if (!servers || !zone) return undefined;
    for (let hop = 0; hop < HOPS; hop++) {
      let referral: { owner: string; servers: string[] } | undefined;
      let answered = false;
      for (const address of await addressesOf(servers)) {
        const response = await ask(address, name);
        if (!response) continue;
        const rcode = response.header.rcode;
        if (rcode === 3) return []; // NXDOMAIN in the parent: no delegation
        if (rcode !== 0) continue;
        answered = true;
        const records = [...(response.answers as NsRecord[]), ...(response.authorities as NsRecord[])].filter((r) => r.type === Packet.TYPE.NS && r.ns);
        const exact = records.filter((r) => canonical(r.name) === name).map((r) => canonical(r.ns!));
        if (exact.length > 0) return exact;
        // A cut between the zone asked and the name: ask that zone's servers.
        const deeper = records.find((r) => {
          const owner = canonical(r.name);
          return owner !== zone && name.endsWith(`.${owner}`) && (owner.endsWith(`.${zone}`) || zone === '');
        });
        if (deeper) {
          const owner = canonical(deeper.name);
          referral = { owner, servers: records.filter((r) => canonical(r.name) === owner).map((r) => canonical(r.ns!)) };
        }
        break;
      }
      if (!answered) return undefined;
      // Answered without a delegation of the name (NODATA, or a referral elsewhere): none.
      if (!referral) return [];
      zone = referral.owner;
      servers = referral.servers;
    }
    return undefined;
  };
}
