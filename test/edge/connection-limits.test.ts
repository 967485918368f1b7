// Connections per client network with a reserve for newcomers (protect/connection-limits.ts), on
// real loopback sockets from chosen source addresses: the per-client bound, the reserve that only
// clients holding few may use, the hard total, trusted proxies counted in the total only, and a
// place given back when its connection closes.
import { createServer, connect, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectionLimits } from '../../src/edge/protect/connection-limits.ts';
import { IpRanges } from '../../src/edge/protect/ip-ranges.ts';

let server: Server;
let port: number;
let limits: ConnectionLimits;
const verdicts: string[] = [];
const clients: Socket[] = [];

beforeAll(async () => {
  limits = new ConnectionLimits({ max: 20, perClient: 12, reserve: 6, reservedShare: 2, prefixV4: 32, prefixV6: 64 }, IpRanges.compile(['127.0.8.9']));
  server = createServer((socket) => {
    const admitted = limits.admit(socket);
    verdicts.push(admitted.ok ? 'ok' : admitted.reason);
    if (!admitted.ok) socket.destroy();
    socket.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as { port: number }).port;
});

afterAll(() => {
  for (const socket of clients) socket.destroy();
  server.close();
});

/** Opens `count` connections from `localAddress`; resolves with the verdicts they got, in order. */
async function open(localAddress: string, count: number): Promise<string[]> {
  const before = verdicts.length;
  for (let i = 0; i < count; i++) {
    const socket = connect({ host: '127.0.0.1', port, localAddress });
    socket.on('error', () => undefined);
    clients.push(socket);
    await new Promise((r) => socket.once('connect', r));
    while (verdicts.length < before + i + 1) await new Promise((r) => setTimeout(r, 1));
  }
  return verdicts.slice(before);
}

describe('edge connection limits', () => {
  it('bounds one client, keeps the reserve for clients holding few, and stops at the total', async () => {
    // 12 for the first client, then its own bound (the reserve starts at 14 = 20 − 6).
    expect(await open('127.0.8.1', 13)).toEqual([...Array(12).fill('ok'), 'client-connections']);
    // A second client gets 2 before the reserve (12 + 2 = 14), then only its reserved share (2 in all).
    expect(await open('127.0.8.2', 3)).toEqual(['ok', 'ok', 'client-connections']);
    // Newcomers still find room in the reserve, each up to its share, until the total is reached.
    expect(await open('127.0.8.3', 3)).toEqual(['ok', 'ok', 'client-connections']);
    expect(await open('127.0.8.4', 3)).toEqual(['ok', 'ok', 'client-connections']);
    expect(limits.size).toBe(18);
    expect(await open('127.0.8.5', 3)).toEqual(['ok', 'ok', 'edge-connections']);
    expect(limits.size).toBe(20);
    // A trusted proxy is held to the total only; a closed connection gives its place back.
    expect(await open('127.0.8.9', 1)).toEqual(['edge-connections']);
    clients[0]!.destroy();
    while (limits.size > 19) await new Promise((r) => setTimeout(r, 5));
    expect(await open('127.0.8.9', 1)).toEqual(['ok']);
  });
});
