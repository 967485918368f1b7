// UDP listener: dns2's UDP server supplies the socket and its listen(); its per-packet handler,
// which fully decodes every datagram before anyone sees it, is replaced by ours, which answers
// most queries from the cache without decoding them at all.
import type { RemoteInfo } from 'node:dgram';
import dns2 from 'dns2';
import type { Logger } from 'pino';
import type { QueryHandler } from './handler.ts';

export class UdpListener extends dns2.UDPServer {
  private handler!: QueryHandler;

  static create(handler: QueryHandler, family: 4 | 6, log: Logger): UdpListener {
    const listener = new UdpListener({ type: family === 4 ? 'udp4' : 'udp6' });
    listener.handler = handler;
    // Send failures (a client gone, a full buffer) concern one datagram; never let them escalate.
    listener.on('error', (error: Error) => log.warn({ err: error }, 'dns/udp: socket error'));
    return listener;
  }

  override handle(data: Buffer, rinfo: RemoteInfo): void {
    const response = this.handler.handle(data, 'udp', rinfo);
    if (response) this.send(response, rinfo.port, rinfo.address);
  }
}
