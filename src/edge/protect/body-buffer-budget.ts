// The bytes of request bodies the WAF may hold in memory at once, on the node and per client
// network. baseprotection reads a body (up to the domain's `waf_body_limit`) before it decides, so
// without a bound 600 connections from one address, each sending 1 MB of a form and then a byte
// every few seconds, held ~600 MB for as long as they trickled — and a domain with a 16 MiB limit
// needed only 40. A request takes its part before its body is read (its announced length, or the
// inspection limit when it announces none or more) and gives it back exactly once when its
// exchange ends; one that does not fit is refused (429 past the client's share, 503 past the
// node's), so a flood costs its sender refusals, never everyone memory. Pure bookkeeping.
import { boundedMemo } from '../../common/bounded-memo.ts';
import { clientNetwork } from '../../model/client-network.ts';

export interface BodyBufferOptions {
  /** Bytes held on this node (this process) at once. */
  nodeBytes: number;
  /** Bytes one client network holds at once. */
  perClientBytes: number;
  prefixV4: number;
  prefixV6: number;
}

export const DEFAULT_BODY_BUFFER: BodyBufferOptions = { nodeBytes: 256 * 1_048_576, perClientBytes: 32 * 1_048_576, prefixV4: 32, prefixV6: 64 };

export type BodyReservation = { ok: true; release: () => void } | { ok: false; reason: 'client' | 'node' };

export class BodyBufferBudget {
  private held = 0;
  private readonly perNetwork = new Map<string, number>();
  /** A client's network, computed once per address. */
  private readonly network: (client: string) => string;

  constructor(private readonly options: BodyBufferOptions = DEFAULT_BODY_BUFFER) {
    this.network = boundedMemo((client: string) => clientNetwork(client, options.prefixV4, options.prefixV6), 100_000);
  }

  /** Bytes reserved now, on this node. */
  get reserved(): number {
    return this.held;
  }

  /** Bytes one client (its network) holds now. */
  heldBy(client: string): number {
    return this.perNetwork.get(this.network(client)) ?? 0;
  }

  /**
   * Takes `bytes` for `client`, or says whose budget it would overrun. A single body larger than
   * a whole share is still let in while its holder holds nothing else (a domain may inspect more
   * than the per-client share), so the bound is never a ban on one large legitimate form.
   */
  reserve(client: string, bytes: number): BodyReservation {
    const network = this.network(client);
    const mine = this.perNetwork.get(network) ?? 0;
    if (mine > 0 && mine + bytes > this.options.perClientBytes) return { ok: false, reason: 'client' };
    if (this.held > 0 && this.held + bytes > this.options.nodeBytes) return { ok: false, reason: 'node' };
    this.held += bytes;
    this.perNetwork.set(network, mine + bytes);
    let released = false;
    return {
      ok: true,
      release: () => {
        if (released) return;
        released = true;
        this.held -= bytes;
        const left = (this.perNetwork.get(network) ?? bytes) - bytes;
        if (left <= 0) this.perNetwork.delete(network);
        else this.perNetwork.set(network, left);
      },
    };
  }
}
