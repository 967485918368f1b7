// Before ordering: would the CA's validation reach us? Let's Encrypt allows 5 failed validations
// per name per hour, so an order that cannot succeed is never placed; the task says precisely why.
// The decision is pure (judgeHttp01); looking names up is the caller's (resolveAddresses).
import { Resolver } from 'node:dns/promises';
import type { DomainState } from '../model/domain.ts';
import type { EdgeNode } from '../model/node.ts';
import type { ChallengeKind, NameProblem } from '../model/task.ts';

/** DNS-01 when our name servers serve the domain (any name, wildcards too), HTTP-01 otherwise. */
export const challengeFor = (domain: DomainState): ChallengeKind => (domain.ns_active ? 'dns-01' : 'http-01');

/** The active edge nodes that serve the domain (its `bind_node`, or all). */
export function servingNodes(domain: DomainState, nodes: readonly EdgeNode[]): EdgeNode[] {
  const bound = new Set(domain.bind_node);
  return nodes.filter((n) => n.status === 'active' && (bound.size === 0 || bound.has(n.id)));
}

export type Lookup = { addresses: string[] } | { error: string };

/**
 * What stands in the way of HTTP-01 for each name, given where each name resolves: the CA fetches
 * the token from every address of the name, so every address must be an edge serving the domain.
 */
export function judgeHttp01(domain: DomainState, names: readonly string[], nodes: readonly EdgeNode[], lookups: ReadonlyMap<string, Lookup>): NameProblem[] {
  const problems: NameProblem[] = [];
  if (!domain.enabled) {
    const detail = 'protection is off (DNS only), so our edges do not serve the domain and cannot answer the CA; turn protection on, or activate our name servers for DNS-01';
    return names.map((name) => ({ name, type: 'palisade:dns-only', detail }));
  }
  const serving = servingNodes(domain, nodes);
  const ours = new Set(serving.flatMap((n) => [n.ipv4, n.ipv6].filter((a): a is string => a !== null)));
  for (const name of names) {
    if (name.startsWith('*.')) {
      problems.push({ name, type: 'palisade:wildcard-needs-dns01', detail: 'a wildcard can only be validated by DNS-01: activate our name servers for the domain' });
      continue;
    }
    if (serving.length === 0) {
      problems.push({ name, type: 'palisade:no-edge', detail: 'no active edge node serves the domain (see bind_node and the nodes list)' });
      continue;
    }
    const found = lookups.get(name);
    if (!found || 'error' in found) {
      problems.push({ name, type: 'palisade:lookup-failed', detail: `looking up ${name} failed${found ? ` (${found.error})` : ''}` });
      continue;
    }
    if (found.addresses.length === 0) {
      problems.push({ name, type: 'palisade:no-address', detail: `${name} has no A or AAAA record; point it at our edge nodes (${[...ours].join(', ')})` });
      continue;
    }
    const foreign = found.addresses.filter((a) => !ours.has(a));
    if (foreign.length > 0) {
      problems.push({
        name,
        type: 'palisade:points-elsewhere',
        detail: `${name} resolves to ${foreign.join(', ')}, which ${foreign.length === 1 ? 'is not an edge node' : 'are not edge nodes'} serving the domain (${[...ours].join(', ')}); the CA would fetch the token there`,
      });
    }
  }
  return problems;
}

/** A and AAAA of each name through `server` (host:port) or the system's resolver. */
export async function resolveAddresses(names: readonly string[], server: string | undefined): Promise<Map<string, Lookup>> {
  const resolver = new Resolver({ timeout: 2000, tries: 2 });
  if (server) resolver.setServers([server]);
  const none = (error: NodeJS.ErrnoException): string[] => {
    if (error.code === 'ENODATA' || error.code === 'ENOTFOUND') return [];
    throw error;
  };
  const out = new Map<string, Lookup>();
  await Promise.all(
    names
      .filter((n) => !n.startsWith('*.'))
      .map(async (name) => {
        try {
          const [v4, v6] = await Promise.all([resolver.resolve4(name).catch(none), resolver.resolve6(name).catch(none)]);
          out.set(name, { addresses: [...v4, ...v6] });
        } catch (error) {
          out.set(name, { error: (error as NodeJS.ErrnoException).code ?? (error as Error).message });
        }
      }),
  );
  return out;
}
