// The service's own names (name servers, hostmaster, reserved zones) and how a domain's claim is
// proven (issue 26; docs/ownership.md).
import { registrableDomainOf } from '../model/registrable.ts';
import { choice, domain, domainList, int, readTable } from './kinds.ts';
import type { Config } from './types.ts';

export const NAME_SETTINGS = {
  PALISADE_NS1: domain('ns1.palisade.example.net', { help: 'our first name server\'s host name' }),
  PALISADE_NS2: domain('ns2.palisade.example.net', { help: 'our second name server\'s host name (not the first\'s)' }),
  PALISADE_HOSTMASTER: domain('hostmaster.palisade.example.net', { help: 'SOA RNAME of served zones' }),
};

export const OWNERSHIP_SETTINGS = {
  PALISADE_NAMESERVER_POOL: domainList({
    help:
      'the service\'s name-server names (≥ 2, all on the same servers), handed to accounts in pairs; with one pair (two names) claims of a name by different accounts share it ' +
      'and are proven by their token only (warned of at start): give six for fifteen pairs',
    shown: '`PALISADE_NS1,PALISADE_NS2`',
    unique: true,
  }),
  PALISADE_RESERVED_ZONES: domainList({
    help: 'comma-separated zones only marked accounts may register (at, under or above); empty = none',
    shown: 'registrable domains of NS1, NS2, HOSTMASTER',
  }),
  PALISADE_OWNERSHIP_PROOF: choice(['required', 'off'] as const, 'required', {
    help: '`required`: only proven claims are served, routed and certified; `off`: single tenant, first come first served',
    must: 'required or off',
  }),
  PALISADE_DELEGATION_CHECK: choice(['parent', 'resolver'] as const, 'parent', {
    help: 'how a delegation is seen: `parent` asks the parent zone\'s servers (found through the resolver) without recursion; `resolver` takes the resolver\'s answer',
    must: 'parent or resolver',
  }),
  PALISADE_DELEGATION_PARENT_PORT: int(53, 1, 65535, { help: 'the port parent zones\' servers are asked on (another only in a test lab standing for the registry)' }),
  PALISADE_OWNERSHIP_RECHECK_SECONDS: int(60, 1, 86_400, { help: 'first wait between the monitor\'s looks at a pending claim (doubling)' }),
  PALISADE_OWNERSHIP_RECHECK_MAX_SECONDS: int(21_600, 1, 30 * 86_400, { help: 'longest wait between the monitor\'s looks at a pending claim' }),
  PALISADE_OWNERSHIP_GRACE_SECONDS: int(259_200, 1, 365 * 86_400, { help: 'evidence of a proof definitely gone this long takes the proof away' }),
  PALISADE_OWNERSHIP_CHECKS_PER_PASS: int(50, 1, 10_000, { help: 'pending claims looked at per monitor pass (every 5 s)' }),
  PALISADE_DNSSEC_RESOLVER_CACHE_MAX_SECONDS: int(604_800, 1, 604_800, {
    help:
      'the longest a validating resolver asking our name servers keeps a record (its cache\'s TTL cap): a DNSSEC key rollover waits the DNSKEY TTL and the zone\'s largest TTL, each at most this. ' +
      'Lower it only where every such resolver is known to cap lower (a test lab)',
  }),
};

export function nameConfig(env: Record<string, string | undefined>, problems: string[]): Pick<Config, 'nameservers' | 'hostmaster'> {
  const v = readTable(NAME_SETTINGS, env, problems);
  if (v.PALISADE_NS1 === v.PALISADE_NS2) problems.push('PALISADE_NS1 and PALISADE_NS2 must differ');
  return { nameservers: [v.PALISADE_NS1, v.PALISADE_NS2], hostmaster: v.PALISADE_HOSTMASTER };
}

/** Ownership, and the reserved zones (by default those of our own names, pool included). */
export function ownershipConfig(
  env: Record<string, string | undefined>,
  names: Pick<Config, 'nameservers' | 'hostmaster'>,
  problems: string[],
): Pick<Config, 'ownership' | 'reservedZones'> {
  const v = readTable(OWNERSHIP_SETTINGS, env, problems);
  const pool = poolOf(env.PALISADE_NAMESERVER_POOL, v.PALISADE_NAMESERVER_POOL, names.nameservers, problems);
  const ownNames = [...names.nameservers, ...pool, names.hostmaster];
  return {
    ownership: {
      proof: v.PALISADE_OWNERSHIP_PROOF,
      pool,
      recheckMs: v.PALISADE_OWNERSHIP_RECHECK_SECONDS * 1000,
      recheckMaxMs: v.PALISADE_OWNERSHIP_RECHECK_MAX_SECONDS * 1000,
      graceMs: v.PALISADE_OWNERSHIP_GRACE_SECONDS * 1000,
      checksPerPass: v.PALISADE_OWNERSHIP_CHECKS_PER_PASS,
      delegationCheck: v.PALISADE_DELEGATION_CHECK,
      parentPort: v.PALISADE_DELEGATION_PARENT_PORT,
      resolverCacheMaxSeconds: v.PALISADE_DNSSEC_RESOLVER_CACHE_MAX_SECONDS,
    },
    // Unset: the registrable domains of our own names; empty (""): nothing reserved.
    reservedZones: v.PALISADE_RESERVED_ZONES ?? [...new Set(ownNames.map(registrableDomainOf))],
  };
}

/** Unset or blank: the default pair; else at least two distinct names. */
function poolOf(text: string | undefined, names: string[] | undefined, pair: [string, string], problems: string[]): string[] {
  if (text === undefined || text.trim() === '' || names === undefined) return [...pair];
  if (names.length < 2) problems.push('PALISADE_NAMESERVER_POOL: must name at least two name servers');
  return names;
}
