// How many connections one client may hold open on this edge, so that one address cannot take the
// process to its descriptor limit and starve every other tenant's visitors (21,000 idle sockets from
// one host did exactly that). Each client network (/32 and /64 by default) holds at most
// `perClient`; past `max - reserve` open connections in all, only clients holding fewer than
// `reservedShare` get another, so a newcomer always finds room while a flood is going on; at `max`
// nobody does. The operator's trusted proxies (a load balancer in front) are counted in the total only.
// Decided when the TCP connection arrives, before TLS or HTTP cost anything. The per-client bound
// is generous (1024) because one IPv4 address is often an office or a carrier NAT with hundreds of
// browsers behind it; the reserve is what keeps a flood from one address off everyone else.
import type { Socket } from 'node:net';
import { clientNetwork } from '../../model/client-network.ts';
import type { IpRanges } from './ip-ranges.ts';

export interface ConnectionLimitOptions {
  /** Open connections the edge accepts in all (HTTP and HTTPS together). */
  max: number;
  /** Per client network. */
  perClient: number;
  /** Connections kept for clients holding few (fewer than `reservedShare`). */
  reserve: number;
  reservedShare: number;
  prefixV4: number;
  prefixV6: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimitOptions = { max: 16_384, perClient: 1024, reserve: 1024, reservedShare: 16, prefixV4: 32, prefixV6: 64 };

export type Admission = { ok: true } | { ok: false; reason: 'client-connections' | 'edge-connections' };

export class ConnectionLimits {
  private open = 0;
  private readonly perNetwork = new Map<string, number>();

  constructor(
    private readonly options: ConnectionLimitOptions,
    private readonly trusted: IpRanges,
  ) {}

  get size(): number {
    return this.open;
  }

  /** Counts the connection in (until it closes) or says why it is refused. */
  admit(socket: Socket): Admission {
    const { max, perClient, reserve, reservedShare, prefixV4, prefixV6 } = this.options;
    const address = socket.remoteAddress ?? '';
    const exempt = this.trusted.size > 0 && this.trusted.has(address);
    const network = exempt ? undefined : clientNetwork(address, prefixV4, prefixV6);
    const held = network === undefined ? 0 : (this.perNetwork.get(network) ?? 0);
    if (this.open >= max) return { ok: false, reason: 'edge-connections' };
    if (network !== undefined && held >= perClient) return { ok: false, reason: 'client-connections' };
    if (network !== undefined && this.open >= max - reserve && held >= reservedShare) return { ok: false, reason: 'client-connections' };
    this.open++;
    if (network !== undefined) this.perNetwork.set(network, held + 1);
    socket.once('close', () => {
      this.open--;
      if (network === undefined) return;
      const left = (this.perNetwork.get(network) ?? 1) - 1;
      if (left <= 0) this.perNetwork.delete(network);
      else this.perNetwork.set(network, left);
    });
    return { ok: true };
  }
}
