// Which accounts name each backend address, on this edge. The edge's pool to a backend is one per
// address (proxy.ts), whichever domain a request came through, so any account can point its
// domains at another's backend and compete with that account's visitors for the same pooled
// connections: a backend that several accounts name has each account's share of it bounded
// (protect/backend-shares.ts). Kept in step with the edge's domain state, domain by domain.
import { boundedMemo } from '../common/bounded-memo.ts';
import { unmapped } from '../model/ip.ts';
import { formatBackend, parseBackend } from '../model/backend.ts';
import type { DomainState } from '../model/domain.ts';
import type { EdgeState } from './edge-state.ts';

/**
 * One spelling per backend address (host:port, the address canonical, IPv4-mapped IPv6 as IPv4,
 * port 80 implied): what shares are counted by. A text that is no backend stays itself (the proxy
 * answers 502 for it).
 */
export const backendKey = boundedMemo((text: string): string => {
  const backend = parseBackend(text);
  if (!backend) return text;
  const { address, family } = unmapped(backend);
  return formatBackend({ address, family, port: backend.port });
}, 10_000);

interface Naming {
  owner: number;
  /** The backend keys the domain names (its backend and failover). */
  keys: string[];
}

export class BackendTenants {
  private readonly byDomain = new Map<string, Naming>();
  /** Backend key → account → how many of its domains name it. */
  private readonly owners = new Map<string, Map<number, number>>();

  /** Follows `state` from now on, starting from what it holds. */
  static following(state: EdgeState): BackendTenants {
    const tenants = new BackendTenants();
    for (const name of state.routes.names()) tenants.set(name, state.routes.get(name));
    state.onDomainSet((name, domain) => tenants.set(name, domain));
    return tenants;
  }

  /** A domain's settings as the edge now has them (undefined: it left). */
  set(name: string, domain: DomainState | undefined): void {
    const before = this.byDomain.get(name);
    if (before) for (const key of before.keys) this.forget(key, before.owner);
    if (!domain) {
      this.byDomain.delete(name);
      return;
    }
    const keys = [backendKey(domain.backend)];
    if (domain.failover) {
      const failover = backendKey(domain.failover);
      if (failover !== keys[0]) keys.push(failover);
    }
    for (const key of keys) {
      let accounts = this.owners.get(key);
      if (!accounts) this.owners.set(key, (accounts = new Map()));
      accounts.set(domain.ownerId, (accounts.get(domain.ownerId) ?? 0) + 1);
    }
    this.byDomain.set(name, { owner: domain.ownerId, keys });
  }

  /** How many accounts name the backend address (by its key), as backend or failover. */
  accounts(key: string): number {
    return this.owners.get(key)?.size ?? 0;
  }

  private forget(key: string, owner: number): void {
    const accounts = this.owners.get(key);
    if (!accounts) return;
    const left = (accounts.get(owner) ?? 1) - 1;
    if (left > 0) accounts.set(owner, left);
    else accounts.delete(owner);
    if (accounts.size === 0) this.owners.delete(key);
  }
}
