// Which domain a request is for, from its Host (or SNI): the domain itself and its `mask` names
// are its protected names; a mask entry "*" (or "*.dev") covers every name under the apex (or
// under dev.<apex>). An exact name beats a wildcard, and the longest wildcard wins (so a
// customer's own nested zone takes its names from a "*" above it). Pure: no sockets.
import type { DomainState } from '../model/domain.ts';

export type Route =
  | { kind: 'domain'; domain: DomainState }
  /** `enabled: false` ("DNS only"): the edge refuses it. */
  | { kind: 'disabled'; name: string }
  /** Bound to other nodes (`bind_node`) than this one. */
  | { kind: 'not-bound'; name: string }
  | { kind: 'unknown' };

interface Entry {
  domain: DomainState;
  /** The names this domain put in the tables, to take them out again. */
  exact: string[];
  wildcards: string[];
}

/** Lower case, without a port or a final dot; undefined for what is no host name. */
export function hostName(header: string | undefined): string | undefined {
  if (!header) return undefined;
  let host = header.trim().toLowerCase();
  if (host.startsWith('[')) return undefined; // an IPv6 literal: no customer name
  const colon = host.lastIndexOf(':');
  if (colon !== -1) host = host.slice(0, colon);
  if (host.endsWith('.')) host = host.slice(0, -1);
  return host === '' || host.length > 253 ? undefined : host;
}

export class RoutingTable {
  private readonly exact = new Map<string, DomainState>();
  /** "dev.example.org" → the domain whose mask covers every name under it. */
  private readonly wildcard = new Map<string, DomainState>();
  private readonly entries = new Map<string, Entry>();

  /** `nodeId` undefined: this edge serves every domain (the all-in-one role). */
  constructor(private readonly nodeId?: number) {}

  get size(): number {
    return this.entries.size;
  }

  get(name: string): DomainState | undefined {
    return this.entries.get(name)?.domain;
  }

  names(): IterableIterator<string> {
    return this.entries.keys();
  }

  /** Adds or replaces a domain. */
  put(domain: DomainState): void {
    this.remove(domain.domain);
    const apex = domain.domain;
    const entry: Entry = { domain, exact: [apex], wildcards: [] };
    for (const name of domain.mask === '' ? [] : domain.mask.split(',')) {
      if (name === '*') entry.wildcards.push(apex);
      else if (name.startsWith('*.')) entry.wildcards.push(`${name.slice(2)}.${apex}`);
      else if (name !== '@') entry.exact.push(`${name}.${apex}`);
    }
    for (const name of entry.exact) this.exact.set(name, domain);
    for (const name of entry.wildcards) this.wildcard.set(name, domain);
    this.entries.set(apex, entry);
  }

  /**
   * The domains whose backends this edge watches: the enabled ones it serves, and the DNS-only
   * ones with a failover (whose name servers switch to it by these checks' verdict).
   */
  *watched(): Generator<DomainState> {
    for (const { domain } of this.entries.values()) {
      if (domain.enabled ? this.nodeId === undefined || domain.bind_node.length === 0 || domain.bind_node.includes(this.nodeId) : domain.failover !== null) yield domain;
    }
  }

  /** Every backend and failover the watched domains name (what active checks look at). */
  *backends(): Generator<string> {
    for (const domain of this.watched()) {
      yield domain.backend;
      if (domain.failover) yield domain.failover;
    }
  }

  remove(name: string): void {
    const entry = this.entries.get(name);
    if (!entry) return;
    for (const n of entry.exact) if (this.exact.get(n) === entry.domain) this.exact.delete(n);
    for (const n of entry.wildcards) if (this.wildcard.get(n) === entry.domain) this.wildcard.delete(n);
    this.entries.delete(name);
  }

  route(host: string): Route {
    let domain = this.exact.get(host);
    if (!domain) {
      // Ancestors longest first: the nearest wildcard covering the name.
      for (let at = host.indexOf('.'); at !== -1 && !domain; at = host.indexOf('.', at + 1)) domain = this.wildcard.get(host.slice(at + 1));
    }
    if (!domain) return { kind: 'unknown' };
    if (!domain.enabled) return { kind: 'disabled', name: host };
    if (this.nodeId !== undefined && domain.bind_node.length > 0 && !domain.bind_node.includes(this.nodeId)) return { kind: 'not-bound', name: host };
    return { kind: 'domain', domain };
  }
}
