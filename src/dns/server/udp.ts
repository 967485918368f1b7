// UDP listener: dns2's UDP server supplies the socket and its listen(); its per-packet handler,
// which fully decodes every datagram before anyone sees it, is replaced by ours, which answers
// most queries from the cache without decoding them at all.
import type { RemoteInfo } from 'node:dgram';
import dns2 from 'dns2';
import type { Logger } from 'pino';
import type { QueryHandler } from './handler.ts';

/**
 * Replies go to the address a query came from, always an IP literal. dgram resolves even those
 * through dns.lookup, which defers every send to the next tick; answering at once instead was
 * worth ~18% more queries per second here.
 */
function literalLookup(address: string, _options: unknown, callback: (error: null, address: string, family: number) => void): void {
  callback(null, address, address.includes(':') ? 6 : 4);
}

/**
 * The socket's kernel buffers: a queue for the moments the event loop is busy elsewhere (a
 * collection, a batch of zone changes). The default (~208 KiB, ~270 queries in flight as the
 * kernel counts them) overflowed within ~9 ms at 30,000 queries a second, and what overflows is
 * lost; 4 MiB (the kernel caps it at net.core.rmem_max / wmem_max) holds over 100 ms of that.
 */
const SOCKET_BUFFER_BYTES = 4 * 1024 * 1024;

export class UdpListener extends dns2.UDPServer {
  private handler!: QueryHandler;

  /** `reusePort`: SO_REUSEPORT, so that several worker processes share the port (the kernel spreads clients among them). */
  static create(handler: QueryHandler, family: 4 | 6, log: Logger, reusePort = false): UdpListener {
    // dns2 hands `type` to dgram.Socket unchanged, so it may carry dgram's full socket options.
    const socketOptions = { type: family === 4 ? 'udp4' : 'udp6', lookup: literalLookup, recvBufferSize: SOCKET_BUFFER_BYTES, sendBufferSize: SOCKET_BUFFER_BYTES, ...(reusePort && { reusePort: true }) };
    const listener = new UdpListener({ type: socketOptions as unknown as 'udp4' });
    listener.handler = handler;
    // Send failures (a client gone, a full buffer) concern one datagram; never let them escalate.
    listener.on('error', (error: Error) => log.warn({ err: error }, 'dns/udp: socket error'));
    return listener;
  }

  override handle(data: Buffer, rinfo: RemoteInfo): void {
    // The chain answers, rate limit included (../rate-limit/stage.ts).
    const response = this.handler.handle(data, 'udp', rinfo);
    if (response) this.send(response, rinfo.port, rinfo.address);
  }
}
