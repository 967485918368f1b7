// The client's address: the TCP peer, unless the peer is one of the operator's trusted proxies
// (PALISADE_EDGE_TRUSTED_PROXIES), in which case the rightmost X-Forwarded-For entry that is not
// itself a trusted proxy. A client's own X-Forwarded-For is never believed otherwise.
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { IpRanges } from './ip-ranges.ts';

/** What a connection's peer is, read once per connection (its address does not change). */
const PEER = Symbol('palisade.peer');
type Peered = Socket & { [PEER]?: { address: string; trusted: boolean } };

export class ClientAddress {
  constructor(private readonly trusted: IpRanges) {}

  /** Whether a connection's peer is one of the trusted proxies (whose connections carry many clients). */
  trustsPeer(address: string): boolean {
    return this.trusted.size > 0 && this.trusted.has(address);
  }

  of(req: IncomingMessage): string {
    const socket = req.socket as Peered | undefined;
    let peer = socket?.[PEER];
    if (!peer) {
      const address = socket?.remoteAddress ?? '';
      peer = { address: plain(address), trusted: this.trusted.size > 0 && this.trusted.has(address) };
      // A socket closed before its first request has no address yet: not remembered.
      if (socket && address !== '') socket[PEER] = peer;
    }
    if (!peer.trusted) return peer.address;
    const header = req.headers['x-forwarded-for'];
    if (header === undefined) return peer.address;
    // One hop (a front proxy naming its client): no list to build.
    if (typeof header === 'string' && !header.includes(',')) {
      const hop = header.trim();
      if (hop !== '' && !this.trusted.has(hop)) return plain(hop);
    }
    const hops = (Array.isArray(header) ? header.join(',') : header).split(',').map((h) => h.trim()).filter(Boolean);
    for (let i = hops.length - 1; i >= 0; i--) if (!this.trusted.has(hops[i]!)) return plain(hops[i]!);
    return hops[0] === undefined ? peer.address : plain(hops[0]);
  }
}

/** IPv4-mapped IPv6 (dual-stack sockets) as plain IPv4. */
const plain = (address: string): string => (address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address);
