// One backend address named by domains of different accounts, attacked through the attacker's own
// domains: through a real `palisade serve` and a real backend on loopback, the attacker holds
// request bodies that trickle at 1 KB/s (twice the least pace, so the pace never ends them) from
// one address across five domains, or from five addresses into one domain, while the victim's
// domain on the same backend address is asked for its page. The edge's pool to a backend address
// is 256 connections; five 64-request shares made 320 and left the victim nothing. Domains whose
// own backends are down and whose failover is the victim's address are counted there. A second edge
// with small body settings shows the body deadline: a body above the pace is still cut at its
// maximum, with 408, and the backend's request ends with it.
import { createServer, request, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCli, startServe, stopStarted, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';

/** The edge's pooled connections per backend address (proxy.ts). */
const POOL = 256;
const ATTACKER_SHARE_PER_CLIENT = 64;
const BODY_RATE = 1000;
/** A victim's request not answered within this long is given up. */
const GIVE_UP_MS = 3000;

let backend: Server;
let backendText: string;
/** Requests the backend has open (started, not yet ended or aborted), and the largest number seen. */
let backendOpen = 0;
/** Backend requests that ended without their whole body (the edge let go of them). */
let backendAborted = 0;

async function eventually(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** One account (its API key) with its domains, naming `backendText` unless they say otherwise. */
async function account(env: Record<string, string>, server: RunningServer, name: string, domains: (string | { domain: string; backend: string; failover: string })[]): Promise<void> {
  const key = JSON.parse((await runAdminCli(env, ['user', 'create', '--name', name, '--email', `${name}@example.org`])).stdout).key.api_key as string;
  for (const domain of domains) {
    const settings = typeof domain === 'string' ? { domain, backend: backendText } : domain;
    const created = await fetch(`${server.url}/domains`, { method: 'POST', headers: { 'x-auth-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ ...settings, baseprotection: false }) });
    expect(created.status, await created.text()).toBe(201);
  }
}

/** A GET through the edge from `localAddress`: its status (0: no answer within GIVE_UP_MS) and time. */
function get(port: number, host: string, localAddress: string): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/page', localAddress, agent: false, headers: { host } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, ms: performance.now() - started }));
      res.on('error', () => resolve({ status: 0, ms: performance.now() - started }));
    });
    req.setTimeout(GIVE_UP_MS, () => req.destroy());
    req.on('error', () => resolve({ status: 0, ms: performance.now() - started }));
    req.end();
  });
}

/** A POST whose body trickles at BODY_RATE bytes a second until stopped; `answer` is what the edge sent back. */
interface Trickle {
  socket: Socket;
  answer: () => string;
  closed: Promise<void>;
}

function trickle(port: number, host: string, localAddress: string, length = 10_000_000): Trickle {
  let received = '';
  const socket = connect({ host: '127.0.0.1', port, localAddress }, () => socket.write(`POST /upload HTTP/1.1\r\nHost: ${host}\r\nContent-Length: ${length}\r\n\r\n`));
  const step = BODY_RATE / 4;
  const drip = setInterval(() => socket.writable && socket.write('x'.repeat(step)), 250);
  socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) =>
    socket.on('close', () => {
      clearInterval(drip);
      resolve();
    }),
  );
  return { socket, answer: () => received, closed };
}

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;

/**
 * The victim's requests, one every 100 ms for `forMs` (none waits for another), from an address of
 * its own: how many were answered 200, and the latencies of all (one given up counts as GIVE_UP_MS).
 */
async function victimLoad(port: number, host: string, forMs: number): Promise<{ sent: number; ok: number; p50: number; p99: number; slowest: number }> {
  const answers: Promise<{ status: number; ms: number }>[] = [];
  const until = Date.now() + forMs;
  while (Date.now() < until && answers.length < 100) {
    answers.push(get(port, host, '127.0.9.1'));
    await new Promise((r) => setTimeout(r, 100));
  }
  const done = await Promise.all(answers);
  const times = done.map((a) => a.ms).sort((a, b) => a - b);
  return { sent: done.length, ok: done.filter((a) => a.status === 200).length, p50: percentile(times, 50), p99: percentile(times, 99), slowest: times.at(-1) ?? NaN };
}

/** Starts the attack (one trickling POST per entry of `from`: [domain, client address]) and waits until each is held or answered. */
async function attack(port: number, from: [string, string][]): Promise<Trickle[]> {
  const trickles = from.map(([host, address]) => trickle(port, host, address));
  // Held: the backend has them open; refused: answered at once. Every one is one or the other soon.
  await eventually(() => backendOpen + trickles.filter((t) => t.answer() !== '').length >= Math.min(from.length, POOL), 15_000, 'the attack under way');
  return trickles;
}

async function endAttack(trickles: Trickle[]): Promise<void> {
  for (const t of trickles) t.socket.destroy();
  await Promise.all(trickles.map((t) => t.closed));
  await eventually(() => backendOpen === 0, 10_000, 'the backend let go of the attack');
}

beforeAll(async () => {
  backend = createServer((req, res) => {
    if (req.method !== 'POST') return void res.end('the victim’s page');
    backendOpen++;
    let done = false;
    const end = (aborted: boolean) => {
      if (done) return;
      done = true;
      backendOpen--;
      if (aborted) backendAborted++;
    };
    req.resume();
    req.on('end', () => {
      end(false);
      res.end('stored');
    });
    req.on('close', () => end(!req.complete));
  });
  // The backend itself takes whatever comes: what is measured is the edge's pool.
  backend.requestTimeout = 0;
  backend.headersTimeout = 60_000;
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
  backendText = `127.0.0.1:${(backend.address() as { port: number }).port}`;
});

afterAll(async () => {
  await stopStarted();
  await new Promise<void>((r) => backend.close(() => r()));
  removeTempDirs();
});

describe('a backend address shared by accounts', () => {
  let server: RunningServer;
  let port: number;
  const attackerDomains = ['a1.test', 'a2.test', 'a3.test', 'a4.test', 'a5.test'];
  const failoverDomains = ['f1.test', 'f2.test', 'f3.test', 'f4.test', 'f5.test'];

  beforeAll(async () => {
    // A short grace, so that the attack is judged by the pace (and passes it) while it lasts.
    // Checks often, so that the dead backend of the failover domains is seen down soon.
    const env = { PALISADE_DATA_DIR: tempDir(), PALISADE_ALLOW_PRIVATE_BACKENDS: 'true', PALISADE_EDGE_BODY_GRACE_MS: '1500', PALISADE_EDGE_BODY_MIN_RATE: '500', PALISADE_EDGE_CHECK_INTERVAL_MS: '200' };
    server = await startServe(env);
    port = Number(new URL(server.edgeUrl!).port);
    // Ports nothing listens on, one each: the backends of domains whose failover is the victim's address.
    const dead: string[] = [];
    for (const _ of failoverDomains) {
      const closed = createServer();
      await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
      dead.push(`127.0.0.1:${(closed.address() as { port: number }).port}`);
      await new Promise<void>((r) => closed.close(() => r()));
    }
    await account(env, server, 'attacker', [...attackerDomains, ...failoverDomains.map((domain, i) => ({ domain, backend: dead[i]!, failover: backendText }))]);
    await account(env, server, 'victim', ['victim.test']);
    await eventually(async () => (await get(port, 'victim.test', '127.0.9.1')).status === 200 && (await get(port, 'a5.test', '127.0.9.1')).status === 200, 10_000, 'domains at the edge');
  });

  it('one client address across five domains of one account leaves the victim’s site on the same backend served', async () => {
    const baseline = await victimLoad(port, 'victim.test', 1000);
    const from = attackerDomains.flatMap((d) => Array.from({ length: ATTACKER_SHARE_PER_CLIENT }, () => [d, '127.0.7.1'] as [string, string]));
    const trickles = await attack(port, from);
    // Past the grace: the pace has judged every held body, and let it be.
    await new Promise((r) => setTimeout(r, 2000));
    const during = await victimLoad(port, 'victim.test', 4000);
    const held = backendOpen;
    const refused = trickles.filter((t) => /^HTTP\/1\.1 429/.test(t.answer())).length;
    await endAttack(trickles);
    console.log(`one address, five domains: baseline p50 ${baseline.p50.toFixed(1)} ms p99 ${baseline.p99.toFixed(1)} ms; under attack ${during.ok}/${during.sent} served, p50 ${during.p50.toFixed(1)} ms, p99 ${during.p99.toFixed(1)} ms, slowest ${during.slowest.toFixed(0)} ms; attack held ${held}, refused ${refused}`);
    expect(during.ok).toBe(during.sent);
    // The bug left every request waiting until given up; a queue of the pool's size, much less.
    expect(during.slowest).toBeLessThan(2000);
    // The measure, p99 within twice the baseline, with a floor for a loaded machine's noise at a few ms.
    expect(during.p99).toBeLessThan(Math.max(2 * baseline.p99, 500));
    // The client's share of the backend address, whichever of its domains it came through.
    expect(held).toBeLessThanOrEqual(ATTACKER_SHARE_PER_CLIENT);
    expect(refused).toBeGreaterThanOrEqual(from.length - ATTACKER_SHARE_PER_CLIENT);
  }, 90_000);

  it('five client addresses in one domain cannot take the shared backend’s pool from another account', async () => {
    const baseline = await victimLoad(port, 'victim.test', 1000);
    const from = [1, 2, 3, 4, 5].flatMap((i) => Array.from({ length: ATTACKER_SHARE_PER_CLIENT }, () => ['a1.test', `127.0.8.${i}`] as [string, string]));
    const trickles = await attack(port, from);
    await new Promise((r) => setTimeout(r, 2000));
    const during = await victimLoad(port, 'victim.test', 4000);
    const held = backendOpen;
    await endAttack(trickles);
    console.log(`five addresses, one domain: baseline p50 ${baseline.p50.toFixed(1)} ms p99 ${baseline.p99.toFixed(1)} ms; under attack ${during.ok}/${during.sent} served, p50 ${during.p50.toFixed(1)} ms, p99 ${during.p99.toFixed(1)} ms, slowest ${during.slowest.toFixed(0)} ms; attack held ${held}`);
    expect(during.ok).toBe(during.sent);
    expect(during.slowest).toBeLessThan(2000);
    // The measure, p99 within twice the baseline, with a floor for a loaded machine's noise at a few ms.
    expect(during.p99).toBeLessThan(Math.max(2 * baseline.p99, 500));
    // At most the account's share of a backend address that other accounts name too.
    expect(held).toBeLessThanOrEqual(POOL / 2);
  }, 90_000);

  it('counts requests at the address they go to: the failover’s, while the backend is down', async () => {
    await eventually(() => (server.output().match(/edge: backend down/g) ?? []).length >= failoverDomains.length, 15_000, 'the dead backends seen down');
    const from = failoverDomains.flatMap((d) => Array.from({ length: ATTACKER_SHARE_PER_CLIENT }, () => [d, '127.0.7.2'] as [string, string]));
    const trickles = await attack(port, from);
    await new Promise((r) => setTimeout(r, 2000));
    const during = await victimLoad(port, 'victim.test', 3000);
    const held = backendOpen;
    await endAttack(trickles);
    console.log(`one address, five failover domains: under attack ${during.ok}/${during.sent} served, p50 ${during.p50.toFixed(1)} ms, p99 ${during.p99.toFixed(1)} ms; attack held ${held}`);
    expect(during.ok).toBe(during.sent);
    expect(during.slowest).toBeLessThan(2000);
    expect(held).toBeLessThanOrEqual(ATTACKER_SHARE_PER_CLIENT);
  }, 90_000);
});

describe('the body deadline', () => {
  let port: number;

  beforeAll(async () => {
    const env = { PALISADE_DATA_DIR: tempDir(), PALISADE_ALLOW_PRIVATE_BACKENDS: 'true', PALISADE_EDGE_BODY_GRACE_MS: '1000', PALISADE_EDGE_BODY_MIN_RATE: '500', PALISADE_EDGE_BODY_MAX_MS: '4000' };
    const server = await startServe(env);
    port = Number(new URL(server.edgeUrl!).port);
    await account(env, server, 'uploader', ['upload.test']);
    await eventually(async () => (await get(port, 'upload.test', '127.0.9.2')).status === 200, 10_000, 'domain at the edge');
  });

  it('cuts a body that keeps above the least pace at its maximum (408) and ends the backend’s request', async () => {
    const abortedBefore = backendAborted;
    const started = Date.now();
    const t = trickle(port, 'upload.test', '127.0.9.3');
    await eventually(() => backendOpen === 1, 5000, 'the upload reaching the backend');
    await Promise.race([t.closed, new Promise((r) => setTimeout(r, 12_000))]);
    const tookMs = Date.now() - started;
    t.socket.destroy();
    // Twice the pace the whole way, so only the maximum (4 s, checked each second) could end it.
    expect(t.answer()).toMatch(/^HTTP\/1\.1 408/);
    expect(tookMs).toBeGreaterThanOrEqual(3500);
    expect(tookMs).toBeLessThan(9000);
    await eventually(() => backendOpen === 0, 5000, 'the backend’s request ended');
    expect(backendAborted).toBe(abortedBefore + 1);
  }, 30_000);
});
