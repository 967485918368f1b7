// The client's address: the TCP peer, unless the peer is one of the operator's trusted proxies
// (PALISADE_EDGE_TRUSTED_PROXIES), in which case the rightmost X-Forwarded-For entry that is not
// itself a trusted proxy. A client's own X-Forwarded-For is never believed otherwise.
import type { IncomingMessage } from 'node:http';
import { IpRanges } from './ip-ranges.ts';

export class ClientAddress {
  constructor(private readonly trusted: IpRanges) {}

  of(req: IncomingMessage): string {
    const peer = req.socket?.remoteAddress ?? '';
    if (this.trusted.size === 0 || !this.trusted.has(peer)) return plain(peer);
    const header = req.headers['x-forwarded-for'];
    if (header === undefined) return plain(peer);
    const hops = (Array.isArray(header) ? header.join(',') : header).split(',').map((h) => h.trim()).filter(Boolean);
    for (let i = hops.length - 1; i >= 0; i--) if (!this.trusted.has(hops[i]!)) return plain(hops[i]!);
    return plain(hops[0] ?? peer);
  }
}

/** IPv4-mapped IPv6 (dual-stack sockets) as plain IPv4. */
const plain = (address: string): string => (address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address);
