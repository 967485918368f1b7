// Hostile input: tens of thousands of random, mutated and crafted packets over UDP and TCP.
// Afterwards the server must answer a normal query, must not have hit its catch-all, and its
// memory must not have grown without bound.
import { createSocket } from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dig } from '../helpers/dig.ts';
import { fixtureZone } from '../helpers/dns-fixture.ts';
import { dns2Query } from '../helpers/dns2-packets.ts';
import { frame, startDns, tcpConnect, type TestDns } from '../helpers/dns-server.ts';

let dns: TestDns;

// A seeded generator keeps a failure reproducible.
let seed = 0x5eed;
const random = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 0x100000000);
const randomBytes = (n: number) => Buffer.from(Array.from({ length: n }, () => Math.floor(random() * 256)));

function validQuery(): Buffer {
  const name = ['www.example.org', 'nx.example.org', 'blog.example.org', 'x.sub.example.org'][Math.floor(random() * 4)]!;
  const type = [1, 28, 15, 255, 6][Math.floor(random() * 5)]!;
  return dns2Query(name, type, { id: Math.floor(random() * 65536), ecs: random() < 0.5 ? '192.0.2.0/24' : undefined });
}

function crafted(): Buffer[] {
  const header = (qd: number, an: number, ns: number, ar: number) => {
    const b = Buffer.alloc(12);
    b.writeUInt16BE(qd, 4);
    b.writeUInt16BE(an, 6);
    b.writeUInt16BE(ns, 8);
    b.writeUInt16BE(ar, 10);
    return b;
  };
  const q = Buffer.from('03777777076578616d706c65036f7267000001000100', 'hex').subarray(0, 21);
  return [
    Buffer.alloc(0),
    Buffer.alloc(11),
    header(65535, 65535, 65535, 65535),
    Buffer.concat([header(1, 0, 0, 65535), q]),
    Buffer.concat([header(1, 0, 0, 1), q, Buffer.from([0xc0, 33, 0, 41, 4, 0, 0, 0, 0, 0, 0xff, 0xff])]),
    Buffer.concat([header(1, 0, 0, 0), Buffer.from([0xc0, 12, 0, 1, 0, 1])]),
    Buffer.concat([header(1, 0, 0, 0), Buffer.from([255]), Buffer.alloc(255, 0x61), Buffer.from([0, 0, 1, 0, 1])]),
    Buffer.concat([header(1, 0, 0, 0), ...Array.from({ length: 130 }, () => Buffer.from([1, 0x61])), Buffer.from([0, 0, 1, 0, 1])]),
    Buffer.concat([header(1, 0, 0, 2), q, Buffer.from([0, 0, 41, 4, 0, 0, 0, 0, 0, 0, 0]), Buffer.from([0, 0, 41, 4, 0, 0, 0, 0, 0, 0, 0])]),
    Buffer.concat([header(1, 0, 0, 1), q, Buffer.from([0, 0, 41, 4, 0, 0, 0, 0, 0, 0, 8, 0, 8, 0, 4, 0, 9, 33, 0])]),
  ];
}

function hostilePacket(i: number): Buffer {
  const kind = i % 3;
  if (kind === 0) return randomBytes(Math.floor(random() * 600));
  if (kind === 1) {
    const packet = validQuery();
    const flips = 1 + Math.floor(random() * 4);
    for (let f = 0; f < flips; f++) packet[Math.floor(random() * packet.length)] = Math.floor(random() * 256);
    return random() < 0.3 ? packet.subarray(0, Math.floor(random() * packet.length)) : packet;
  }
  const set = crafted();
  return set[i % set.length]!;
}

beforeAll(async () => {
  dns = await startDns([fixtureZone()], { tcp: { idleTimeoutMs: 2000 } });
});
afterAll(() => dns.close());

describe('hostile input', () => {
  it('survives 30,000 hostile UDP datagrams and 3,000 hostile TCP frames', async () => {
    const before = process.memoryUsage().heapUsed;
    const socket = createSocket('udp4');
    socket.on('message', () => undefined);
    const m = dns.server.metrics;
    const seen = () => m.answered + m.dropped;
    for (let i = 0; i < 30_000; i++) {
      socket.send(hostilePacket(i), dns.port, '127.0.0.1');
      // Let the server keep up (bounded wait): the point is hostile content, not a flood.
      if (i % 100 === 99) {
        const deadline = Date.now() + 200;
        while (seen() < i - 200 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 1));
      }
    }
    await new Promise((r) => setTimeout(r, 200));
    socket.close();

    const tcp = await Promise.all(Array.from({ length: 10 }, () => tcpConnect(dns.port)));
    tcp.forEach((s) => s.on('error', () => undefined));
    for (let i = 0; i < 3000; i++) {
      const s = tcp[i % tcp.length]!;
      if (s.destroyed) continue;
      s.write(i % 50 === 0 ? randomBytes(Math.floor(random() * 100)) : frame(hostilePacket(i)));
    }
    await new Promise((r) => setTimeout(r, 300));
    tcp.forEach((s) => s.destroy());

    const r = await dig(dns.port, 'www.example.org');
    expect(r.answer).toEqual([expect.objectContaining({ data: '192.0.2.1' })]);
    expect((await dig(dns.port, 'www.example.org', 'A', ['+tcp'])).answer).toHaveLength(1);
    expect(dns.server.metrics.internalErrors).toBe(0);
    // The server really saw the flood (a few datagrams may be lost in socket buffers).
    expect(seen()).toBeGreaterThan(25_000);
    expect(m.malformed).toBeGreaterThan(1000);
    const grown = (process.memoryUsage().heapUsed - before) / 1024 / 1024;
    expect(grown).toBeLessThan(64);
  });
});
