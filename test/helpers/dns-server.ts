// Starts the real DNS server (UDP + TCP) on a random loopback port with the given zones, and
// offers raw UDP/TCP exchanges for tests that need bytes dig cannot send.
import { createSocket } from 'node:dgram';
import { connect, type Socket } from 'node:net';
import { pino } from 'pino';
import { DnsServer } from '../../src/dns/dns-server.ts';
import type { HandlerOptions } from '../../src/dns/server/handler.ts';
import type { RateLimitOptions } from '../../src/dns/rate-limit/rate-limit.ts';
import { DEFAULT_TCP_LIMITS, type TcpLimits } from '../../src/dns/server/tcp-limits.ts';
import type { EdgeNode } from '../../src/model/node.ts';
import type { Zone } from '../../src/store/types.ts';
import { EDGE_NODES, HOSTMASTER, NAMESERVERS } from './dns-fixture.ts';

export interface TestDns {
  server: DnsServer;
  port: number;
  close(): Promise<void>;
}

export async function startDns(
  zones: Zone[],
  opts: { tcp?: Partial<TcpLimits>; handler?: HandlerOptions; nodes?: EdgeNode[]; rateLimit?: RateLimitOptions } = {},
): Promise<TestDns> {
  const server = new DnsServer({
    host: '127.0.0.1',
    port: 0,
    nameservers: NAMESERVERS,
    hostmaster: HOSTMASTER,
    tcp: { ...DEFAULT_TCP_LIMITS, ...opts.tcp },
    handler: opts.handler,
    rateLimit: opts.rateLimit,
    log: pino({ level: 'silent' }),
  });
  server.index.replaceAll(zones, opts.nodes ?? EDGE_NODES, 1);
  const port = await server.listen();
  return { server, port, close: () => server.close() };
}

/** Sends one datagram and waits for one answer (or undefined after `timeoutMs`). */
export function udpExchange(port: number, packet: Buffer, timeoutMs = 1000): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const socket = createSocket('udp4');
    const timer = setTimeout(() => {
      socket.close();
      resolve(undefined);
    }, timeoutMs);
    socket.once('message', (msg) => {
      clearTimeout(timer);
      socket.close();
      resolve(msg);
    });
    socket.send(packet, port, '127.0.0.1');
  });
}

export function tcpConnect(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1' }, () => resolve(socket));
    socket.once('error', reject);
  });
}

export function frame(message: Buffer): Buffer {
  const out = Buffer.alloc(2 + message.length);
  out.writeUInt16BE(message.length, 0);
  message.copy(out, 2);
  return out;
}

/** Collects `count` framed responses from a socket. */
export function readFrames(socket: Socket, count: number, timeoutMs = 2000): Promise<Buffer[]> {
  return new Promise((resolve, reject) => {
    const frames: Buffer[] = [];
    let pending = Buffer.alloc(0);
    const timer = setTimeout(() => reject(new Error(`got ${frames.length} of ${count} TCP answers`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 2 && pending.length >= 2 + pending.readUInt16BE(0)) {
        frames.push(pending.subarray(2, 2 + pending.readUInt16BE(0)));
        pending = pending.subarray(2 + pending.readUInt16BE(0));
      }
      if (frames.length >= count) {
        clearTimeout(timer);
        socket.off('data', onData);
        resolve(frames);
      }
    };
    socket.on('data', onData);
  });
}
