// Shares of a backend address's pooled connections (proxy.ts keeps one pool of 256 per address,
// whichever domain a request came through), so that slow uploads or slowly read answers cannot
// hold the connections every other visitor needs:
// - one client network holds at most `perClient` requests in flight to one backend address,
//   across all the domains naming it (five domains at one address were five shares before);
// - when several accounts name the address, each account's requests hold at most `perAccount` of
//   it, so that one account's visitors (or an attacker's many addresses through its own domains)
//   cannot take the pool from another account's site. An address only one account names is that
//   account's to share out among its clients.
// Pure bookkeeping: the caller says which backend address (backend-tenants.ts's `backendKey`).
import { boundedMemo } from '../../common/bounded-memo.ts';
import { clientNetwork } from '../../model/client-network.ts';

export interface BackendShareOptions {
  /** Requests of one client network in flight to one backend address. */
  perClient: number;
  /** Requests of one account's domains in flight to a backend address other accounts name too. */
  perAccount: number;
  prefixV4: number;
  prefixV6: number;
}

/**
 * A quarter of the 256 pooled connections per client (a NAT's many visitors fit, four clients
 * cannot fill it); half per account on a shared address (another account always keeps half).
 */
export const DEFAULT_BACKEND_SHARE: BackendShareOptions = { perClient: 64, perAccount: 128, prefixV4: 32, prefixV6: 64 };

/** A slot taken (give it back with `release`), or which share is full. */
export type ShareTaken = { release: () => void; refused?: undefined } | { refused: 'client' | 'account' };

export class BackendShares {
  private readonly byClient = new Map<string, number>();
  private readonly byAccount = new Map<string, number>();
  /** A client's network, computed once per address. */
  private readonly network: (client: string) => string;

  constructor(
    private readonly options: BackendShareOptions,
    /** Whether more than one account names the backend address (backend-tenants.ts). */
    private readonly shared: (backend: string) => boolean,
  ) {
    this.network = boundedMemo((client: string) => clientNetwork(client, options.prefixV4, options.prefixV6), 100_000);
  }

  /** Takes a slot at `backend` (its key) for `client`, whose request is for a domain of `account`. */
  take(backend: string, account: number, client: string): ShareTaken {
    const clientKey = `${backend}\n${this.network(client)}`;
    const accountKey = `${backend}\n${account}`;
    const byClient = this.byClient.get(clientKey) ?? 0;
    if (byClient >= this.options.perClient) return { refused: 'client' };
    // Counted whether or not the address is shared now: a second account may come while these are in flight.
    const byAccount = this.byAccount.get(accountKey) ?? 0;
    if (byAccount >= this.options.perAccount && this.shared(backend)) return { refused: 'account' };
    this.byClient.set(clientKey, byClient + 1);
    this.byAccount.set(accountKey, byAccount + 1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        decrement(this.byClient, clientKey);
        decrement(this.byAccount, accountKey);
      },
    };
  }
}

function decrement(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 1) - 1;
  if (left <= 0) counts.delete(key);
  else counts.set(key, left);
}
