// A client's share of a domain's backend: at most `perClient` requests of one client network in
// flight to one domain's backend at a time, so that one visitor (slow uploads, a scraper with a
// thousand sockets) cannot hold the pooled connections every other visitor of the site needs. The
// backend pool itself is shared by every domain naming that backend; this bounds one client's
// part of it. Pure bookkeeping.
import { boundedMemo } from '../../common/bounded-memo.ts';
import { clientNetwork } from '../../model/client-network.ts';

/** A quarter of the 256 pooled connections per backend (proxy.ts): a NAT's many visitors fit, four clients cannot fill it. */
export const DEFAULT_BACKEND_SHARE = { perClient: 64, prefixV4: 32, prefixV6: 64 };

export class BackendShares {
  private readonly inFlight = new Map<string, number>();
  /** A client's network, computed once per address. */
  private readonly network: (client: string) => string;

  constructor(private readonly options = DEFAULT_BACKEND_SHARE) {
    this.network = boundedMemo((client: string) => clientNetwork(client, options.prefixV4, options.prefixV6), 100_000);
  }

  /** Takes a slot for the client at the domain; undefined when the client holds its whole share. */
  take(domain: string, client: string): (() => void) | undefined {
    const key = `${domain}\n${this.network(client)}`;
    const held = this.inFlight.get(key) ?? 0;
    if (held >= this.options.perClient) return undefined;
    this.inFlight.set(key, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.inFlight.get(key) ?? 1) - 1;
      if (left <= 0) this.inFlight.delete(key);
      else this.inFlight.set(key, left);
    };
  }
}
