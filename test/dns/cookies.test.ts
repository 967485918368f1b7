// DNS Cookies (RFC 7873) with RFC 9018 server cookies, and response-rate limiting on by default:
// SipHash and server-cookie test vectors, validity rules, cookies on the cached and uncached
// paths, `dig +cookie` against a real `palisade serve`, and the amplification a spoofed flood
// gets with and without a cookie.
import { createSocket } from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServerCookies } from '../../src/dns/cookies/server-cookies.ts';
import { siphash24 } from '../../src/dns/cookies/siphash.ts';
import { dig } from '../helpers/dig.ts';
import { decode, queryWithCookie, responseCookie } from '../helpers/dns2-packets.ts';
import { runAdminCli, startServe, stopProcess, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';

describe('SipHash-2-4 and RFC 9018 server cookies', () => {
  it('match the published vectors', () => {
    const key = Buffer.from(Array.from({ length: 16 }, (_, i) => i));
    expect(siphash24(key, Buffer.alloc(0)).toString('hex')).toBe('310e0edd47db6f72');
    expect(siphash24(key, Buffer.from(Array.from({ length: 15 }, (_, i) => i))).toString('hex')).toBe('e545be4961ca29a1');
    // RFC 9018 Appendix A.1: a first query from 198.51.100.100.
    const cookies = new ServerCookies(Buffer.from('e5e973e5a6b2a43f48e7dc849e37bfcf', 'hex'), () => 1559731985);
    expect(cookies.reply(Buffer.from('2464c4abcf10c957', 'hex'), undefined, '198.51.100.100').data.toString('hex')).toBe('2464c4abcf10c957010000005cf79f111f8130c3eee29480');
  });

  it('accept our cookie from the address it was made for, within its hour; renew it after half an hour', () => {
    let now = 1_700_000_000;
    const cookies = new ServerCookies(Buffer.alloc(16, 7), () => now);
    const client = Buffer.from('0102030405060708', 'hex');
    const first = cookies.reply(client, undefined, '192.0.2.1');
    expect(first.valid).toBe(false);
    const server = first.data.subarray(8);
    now += 600;
    const again = cookies.reply(client, server, '192.0.2.1');
    expect(again.valid).toBe(true);
    expect(again.data.subarray(8)).toEqual(server);
    expect(cookies.reply(client, server, '192.0.2.2').valid).toBe(false);
    expect(cookies.reply(Buffer.from('0102030405060709', 'hex'), server, '192.0.2.1').valid).toBe(false);
    now += 1500;
    const renewed = cookies.reply(client, server, '192.0.2.1');
    expect(renewed.valid).toBe(true);
    expect(renewed.data.subarray(8)).not.toEqual(server);
    now += 2000;
    expect(cookies.reply(client, server, '192.0.2.1').valid).toBe(false);
    expect(new ServerCookies(Buffer.alloc(16, 8), () => now).reply(client, renewed.data.subarray(8), '192.0.2.1').valid).toBe(false);
  });
});

let server: RunningServer;
let plain: RunningServer;

/** `seconds`: how long the sending took (its pacing stretches on a loaded machine). */
function flood(port: number, packets: Buffer[]): Promise<{ sent: number; received: number; answers: number; seconds: number }> {
  return new Promise((resolve) => {
    const socket = createSocket('udp4');
    let received = 0;
    let answers = 0;
    socket.on('message', (msg) => {
      received += msg.length;
      if (decode(msg).header.tc === 0) answers++;
    });
    let sent = 0;
    // Paced (20 queries every 5 ms, 4,000/s) so the receiving socket's buffer never overflows:
    // what is counted is what the server sent.
    const send = async () => {
      const started = performance.now();
      for (let i = 0; i < packets.length; i += 20) {
        for (const p of packets.slice(i, i + 20)) {
          socket.send(p, port, '127.0.0.1');
          sent += p.length;
        }
        await new Promise((r) => setTimeout(r, 5));
      }
      const seconds = (performance.now() - started) / 1000;
      await new Promise((r) => setTimeout(r, 500));
      socket.close();
      resolve({ sent, received, answers, seconds });
    };
    socket.bind(0, '127.0.0.1', () => void send());
  });
}

beforeAll(async () => {
  // The shipped defaults for RRL and cookies (the spawn helper turns RRL off unless told).
  const env = { PALISADE_DATA_DIR: tempDir(), PALISADE_DNS_RRL_RATE: '100' };
  const key = JSON.parse((await runAdminCli(env, ['user', 'create', '--name', 'ck', '--email', 'ck@example.org'])).stdout).key.api_key;
  server = await startServe(env);
  const call = (method: string, path: string, body?: unknown) =>
    fetch(`${server.url}${path}`, { method, headers: { 'x-auth-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  await call('POST', '/domains', { domain: 'amp.example', backend: '198.51.100.1', enabled: false });
  // A ~1,100-octet answer: what a reflection attack would pick.
  for (let i = 0; i < 4; i++) await call('POST', '/domains/amp.example/dnsrecords', { name: 'big', type: 6, value: `${i}`.padEnd(250, 'a') });
  await call('GET', '/domains/amp.example/activatens');
  // The same data served with RRL off: the amplification a reflection attack got before.
  plain = await startServe({ PALISADE_DATA_DIR: env.PALISADE_DATA_DIR, PALISADE_DNS_RRL_RATE: '0' });
});
afterAll(async () => {
  if (server) await stopProcess(server);
  if (plain) await stopProcess(plain);
  removeTempDirs();
});

describe('cookies end to end', () => {
  it('dig +cookie gets a server cookie back; sending it again proves it good', async () => {
    const first = await dig(server.dnsPort, 'big.amp.example', 'TXT', ['+cookie']);
    expect(first.status).toBe('NOERROR');
    const line = /; COOKIE: ([0-9a-f]{16})([0-9a-f]{32}) \(good\)/.exec(first.raw);
    expect(line, first.raw).not.toBeNull();
    const again = await dig(server.dnsPort, 'big.amp.example', 'TXT', [`+cookie=${line![1]}${line![2]}`]);
    expect(again.raw).toMatch(/; COOKIE: [0-9a-f]{48} \(good\)/);
    // A malformed cookie (5 octets) is FORMERR.
    expect((await dig(server.dnsPort, 'big.amp.example', 'TXT', ['+cookie=0102030405'])).status).toBe('FORMERR');
  });

  it('RRL is on by default: a spoofed flood is cut to a small amplification; a client with a valid cookie is exempt', async () => {
    const client = Buffer.from('a1a2a3a4a5a6a7a8', 'hex');
    const packets = (cookie: Buffer, n: number) => Array.from({ length: n }, (_, i) => queryWithCookie('big.amp.example', 16, cookie, i));
    // Learn our server cookie (also primes the answer cache so every path below is the cached one).
    const reply = await flood(server.dnsPort, packets(client, 1));
    expect(reply.answers).toBe(1);
    const primed = await new Promise<Buffer>((resolve) => {
      const s = createSocket('udp4');
      s.on('message', (m) => {
        s.close();
        resolve(m);
      });
      s.send(queryWithCookie('big.amp.example', 16, client, 1), server.dnsPort, '127.0.0.1');
    });
    const full = responseCookie(primed)!;
    expect(full.subarray(0, 8)).toEqual(client);
    await new Promise((r) => setTimeout(r, 1100));
    const spoofed = await flood(server.dnsPort, packets(client, 2000));
    await new Promise((r) => setTimeout(r, 1100));
    const proven = await flood(server.dnsPort, packets(full, 2000));
    const unlimited = await flood(plain.dnsPort, packets(client, 2000));
    const factor = (f: { sent: number; received: number }) => f.received / f.sent;
    console.log(
      `amplification: RRL off ${factor(unlimited).toFixed(2)}×; RRL on (default), no valid cookie ${factor(spoofed).toFixed(2)}× (${spoofed.answers} full answers of 2000); valid cookie ${factor(proven).toFixed(2)}× (${proven.answers} answers, exempt)`,
    );
    expect(factor(unlimited)).toBeGreaterThan(10);
    // 100 a second, for the ~0.5 s the flood lasts (a second boundary may fall inside it); on a
    // loaded machine the pacing stretches the flood, and each second it spans allows 100 more.
    // Without the limit: all 2,000 answered, an amplification over 10.
    const seconds = Math.ceil(spoofed.seconds) + 1;
    expect(spoofed.answers, `flood of ${spoofed.seconds.toFixed(2)} s`).toBeLessThanOrEqual(100 * seconds);
    expect(factor(spoofed)).toBeLessThan(1.5 * seconds);
    expect(proven.answers).toBeGreaterThan(1900);
  });
});
