// No client can exhaust the DNS server over TCP (a real `palisade serve`, its RSS read from /proc):
// clients that pipeline queries with large answers and never read are held to a small output
// bound each and a global budget; clients that trickle bytes or sit idle are evicted when a new
// client needs the room; memory held for answers returns when they close.
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dig } from '../helpers/dig.ts';
import { decode, dns2Query } from '../helpers/dns2-packets.ts';
import { frame, readFrames } from '../helpers/dns-server.ts';
import { runAdminCli, startServe, stopProcess, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';

let server: RunningServer;
let key: string;

const rssMb = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.child.pid}/status`, 'utf8'))![1]) / 1024;
const metric = async (name: string) => Number(new RegExp(`^${name} (\\d+)`, 'm').exec(await (await fetch(`${server.url}/metrics`)).text())![1]);
const call = (method: string, path: string, body?: unknown) =>
  fetch(`${server.url}${path}`, { method, headers: { 'x-auth-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });

function tcpFrom(localAddress: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: server.dnsPort, localAddress }, () => resolve(socket));
    socket.once('error', reject);
  });
}

beforeAll(async () => {
  const env = { PALISADE_DATA_DIR: tempDir(), PALISADE_DNS_TCP_MAX_CONNECTIONS: '300', PALISADE_DNS_TCP_IDLE_MS: '60000' };
  key = JSON.parse((await runAdminCli(env, ['user', 'create', '--name', 'tcp', '--email', 'tcp@example.org'])).stdout).key.api_key;
  server = await startServe(env);
  expect((await call('POST', '/domains', { domain: 'big.example', backend: '198.51.100.1', enabled: false })).status).toBe(201);
  // 15 TXT records of 4,000 bytes at one name: a ~60 KB answer over TCP.
  for (let i = 0; i < 15; i++) expect((await call('POST', '/domains/big.example/dnsrecords', { name: 'txt', type: 6, value: `${i}`.padEnd(4000, 'x') })).status).toBe(201);
  await call('GET', '/domains/big.example/activatens');
});
afterAll(async () => {
  if (server) await stopProcess(server);
  removeTempDirs();
});

describe('TCP resource limits', () => {
  it('192 connections from 3 networks pipelining 60 KB answers they never read stay within a small memory bound', async () => {
    const check = await dig(server.dnsPort, 'txt.big.example', 'TXT', ['+tcp']);
    expect(check.answer).toHaveLength(15);
    const before = rssMb();
    const queries = Buffer.concat(Array.from({ length: 2000 }, (_, i) => frame(dns2Query('txt.big.example', 16, { id: i }))));
    const attackers: Socket[] = [];
    for (const net of ['127.0.1.1', '127.0.2.1', '127.0.3.1']) {
      for (let i = 0; i < 64; i++) {
        const socket = await tcpFrom(net);
        socket.on('error', () => undefined);
        socket.pause();
        socket.write(queries);
        attackers.push(socket);
      }
    }
    await new Promise((r) => setTimeout(r, 3000));
    const during = rssMb();
    const buffered = await metric('palisade_dns_tcp_buffered_bytes');
    // Another client is still answered, over UDP and over TCP.
    expect((await dig(server.dnsPort, 'txt.big.example', 'TXT', ['+tcp'])).answer).toHaveLength(15);
    expect((await dig(server.dnsPort, 'big.example', 'SOA')).status).toBe('NOERROR');
    console.log(`TCP attack: RSS ${before.toFixed(0)} MB before, ${during.toFixed(0)} MB with 192 non-reading clients; ${(buffered / 1048576).toFixed(1)} MB answers buffered`);
    expect(buffered).toBeLessThanOrEqual(32 * 1024 * 1024 + 192 * 64 * 1024);
    expect(during - before).toBeLessThan(200);
    for (const s of attackers) s.destroy();
    await new Promise((r) => setTimeout(r, 500));
    expect(await metric('palisade_dns_tcp_buffered_bytes')).toBe(0);
    expect(await metric('palisade_dns_tcp_open')).toBe(0);
  }, 60_000);

  it('trickling clients filling every slot are evicted for a new client; one network cannot take more than its share', async () => {
    // 5 networks × 60 connections = the 300 slots, each trickling one byte of a query now and then.
    const tricklers: Socket[] = [];
    for (const net of ['127.0.11.1', '127.0.12.1', '127.0.13.1', '127.0.14.1', '127.0.15.1']) {
      for (let i = 0; i < 60; i++) {
        const socket = await tcpFrom(net);
        socket.on('error', () => undefined);
        socket.write(frame(dns2Query('big.example', 6, { id: 1 })).subarray(0, 3));
        tricklers.push(socket);
      }
    }
    const drip = setInterval(() => {
      for (const s of tricklers) if (!s.destroyed) s.write(Buffer.from([0x00]));
    }, 200);
    try {
      await new Promise((r) => setTimeout(r, 300));
      expect(await metric('palisade_dns_tcp_open')).toBe(300);
      // A new client from another network gets in and is answered.
      for (let i = 0; i < 3; i++) {
        const fresh = await tcpFrom('127.0.20.1');
        fresh.write(frame(dns2Query('big.example', 6, { id: 42 + i })));
        const [answer] = await readFrames(fresh, 1, 2000);
        expect(decode(answer!).header).toMatchObject({ id: 42 + i, rcode: 0 });
        fresh.destroy();
      }
      expect(await metric('palisade_dns_tcp_evicted_total')).toBeGreaterThanOrEqual(3);
      // One network past its 64 connections is refused, whatever room is left.
      const mine: Socket[] = [];
      for (let i = 0; i < 64; i++) mine.push(await tcpFrom('127.0.30.1'));
      const extra = await tcpFrom('127.0.30.1');
      await once(extra, 'close');
      for (const s of mine) s.destroy();
    } finally {
      clearInterval(drip);
      for (const s of tricklers) s.destroy();
    }
  }, 60_000);
});
