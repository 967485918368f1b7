// No client can exhaust the API: requests without a valid key (to any route, whatever credential
// headers they carry) are limited per client address, authenticated ones per key and per account
// (higher), each answer says where the client stands (RateLimit fields), a refusal is a 429
// problem with Retry-After, error bodies stay small whatever the request held, and a flood of
// rejected requests writes a bounded number of log lines.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.ts';
import { loadConfig } from '../../src/config.ts';
import { generateApiKey, hashApiKey } from '../../src/model/user.ts';
import { openStore } from '../../src/store/index.ts';
import type { Store } from '../../src/store/types.ts';
import { startApi } from '../helpers/api-server.ts';
import { tempDir } from '../helpers/temp.ts';
import type { FastifyInstance } from 'fastify';

let app: FastifyInstance;
let store: Store;
let url: string;
let key: string;
const lines: string[] = [];

const get = (path: string, headers: Record<string, string> = {}) => fetch(url + path, { headers });

beforeAll(async () => {
  const dataDir = tempDir();
  // The shipped defaults (per address 2/s, burst 30; per key 100/s, burst 300), nothing overridden.
  const config = loadConfig({ PALISADE_DATA_DIR: dataDir, PALISADE_API_PORT: '0' });
  store = openStore({ dataDir });
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  app = await buildApp({ store, config, logger: pino({ level: 'info' }, sink) });
  await app.listen({ host: '127.0.0.1', port: 0 });
  url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  const user = await store.createUser({ name: 'rl', email: 'rl@example.org', limits: { max_ips_per_list: 200_000 } });
  key = generateApiKey();
  await store.addApiKey(user.id, hashApiKey(key), 'test');
});
afterAll(async () => {
  await app.close();
  await store.close();
});

describe('API rate limits', () => {
  it('a valid key keeps working while bad keys from the same address are refused with 429 and Retry-After', async () => {
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 60; i++) {
      last = await get('/me', { 'x-auth-key': `pk_wrong_${i}_000000000000000000000000000000` });
      statuses.push(last.status);
    }
    expect(statuses.slice(0, 25).every((s) => s === 401)).toBe(true);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(25);
    expect(last!.headers.get('content-type')).toContain('application/problem+json');
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(((await last!.json()) as { code: string }).code).toBe('RATE_LIMITED');
    expect(last!.headers.get('ratelimit')).toMatch(/^"address";r=0;t=\d+$/);
    // Requests without any key from that address are refused too, and probing routes as well…
    expect((await get('/me')).status).toBe(429);
    expect((await get('/no/such/route', { 'x-auth-key': 'pk_whatever_0000000000' })).status).toBe(429);
    // …but the customer's own key is unaffected, and /healthz is never limited.
    const mine = await get('/me', { 'x-auth-key': key });
    expect(mine.status).toBe(200);
    expect(mine.headers.get('ratelimit-policy')).toBe('"key";q=300;w=3');
    expect(mine.headers.get('ratelimit')).toMatch(/^"key";r=299;t=\d+$/);
    for (let i = 0; i < 20; i++) expect((await get('/healthz')).status).toBe(200);
  });

  it('limits a key at its higher rate: past a burst of 300 and 100/s, 429s; then the bucket refills', async () => {
    const started = performance.now();
    const results = await Promise.all(Array.from({ length: 700 }, () => get('/me', { 'x-auth-key': key }).then((r) => r.status)));
    const seconds = (performance.now() - started) / 1000;
    const ok = results.filter((s) => s === 200).length;
    // The burst, plus what refilled at 100/s while the requests arrived (slower on a loaded machine).
    expect(ok).toBeGreaterThanOrEqual(299);
    expect(ok).toBeLessThanOrEqual(300 + Math.ceil(100 * seconds) + 1);
    expect(results.filter((s) => s === 429).length).toBe(700 - ok);
    expect(ok).toBeLessThan(700);
    await new Promise((r) => setTimeout(r, 1100));
    expect((await get('/me', { 'x-auth-key': key })).status).toBe(200);
  });

  it('bounds error bodies: 100,000 invalid IPs answer a short 400 that lists 100 and counts the rest', async () => {
    await new Promise((r) => setTimeout(r, 1000));
    const ips = Array.from({ length: 100_000 }, (_, i) => `x${i}`);
    const res = await fetch(`${url}/security/iplist`, { method: 'POST', headers: { 'x-auth-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'huge', ips }) });
    const text = await res.text();
    expect(res.status).toBe(400);
    expect(text.length).toBeLessThan(20_000);
    const body = JSON.parse(text) as { errors: unknown[]; errors_omitted: number; detail: string };
    expect(body.errors).toHaveLength(100);
    expect(body.errors_omitted).toBe(99_900);
    expect(body.detail).toContain('100000 errors in all');
  });

  it('a flood of rejected requests writes a bounded number of log lines', async () => {
    const before = lines.length;
    await Promise.all(Array.from({ length: 2000 }, (_, i) => get(`/domains?i=${i}`, { 'x-auth-key': 'pk_flood_000000000000000000000000' }).then((r) => r.arrayBuffer())));
    const written = lines.length - before;
    expect(written).toBeLessThanOrEqual(10);
    await app.close();
    // On close the window's count is reported in one line.
    const summary = lines.slice(before).map((l) => JSON.parse(l) as { msg: string; rejected?: number }).find((l) => l.msg.startsWith('rejected requests from one address'));
    expect(summary?.rejected).toBeGreaterThanOrEqual(2000);
  });
});

// Issue 25 §3: a credential header, valid or not, no longer exempts a route that checks none
// from the per-address limit, and an account's keys share one allowance.
describe('the front door', () => {
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

  it('counts requests to key-free routes against the address whatever credential headers they carry', async () => {
    const cases: [string, (key: string) => Record<string, string>][] = [
      ['/readyz', () => ({ 'x-auth-key': 'pk_bogus_0000000000000000000000000000' })],
      ['/openapi.json', () => ({ authorization: 'Bearer whatever-at-all' })],
      ['/docs/', () => ({ 'x-auth-key': 'x' })],
      ['/metrics', () => ({ authorization: 'Basic Zm9vOmJhcg==' })],
      // A valid key is not checked on a route that needs none: it is counted like any request.
      ['/docs/json', (key) => ({ 'x-auth-key': key })],
    ];
    for (const [path, headersFor] of cases) {
      // A fresh server (and allowance) for each route: 2 a second, bursts of 30.
      const api = await startApi({ PALISADE_API_RATE_PER_ADDRESS: '2', PALISADE_API_BURST_PER_ADDRESS: '30', PALISADE_API_RATE_PER_KEY: '100' });
      try {
        const { key } = await api.user();
        const headers = headersFor(key);
        const statuses: number[] = [];
        for (let i = 0; i < 50; i++) {
          const res = await fetch(api.url + path, { headers });
          await res.arrayBuffer();
          statuses.push(res.status);
        }
        const refused = statuses.filter((s) => s === 429).length;
        console.log(`${path} with ${Object.keys(headers)[0]}: ${refused} of 50 refused`);
        expect(refused, path).toBeGreaterThanOrEqual(15);
        expect(statuses.slice(0, 25).every((s) => s !== 429), path).toBe(true);
        // The key itself still works on its own routes, counted against the key.
        const mine = await fetch(`${api.url}/me`, { headers: { 'x-auth-key': key } });
        expect(mine.status).toBe(200);
        expect(mine.headers.get('ratelimit')).toMatch(/^"key";/);
      } finally {
        await api.close();
      }
    }
  });

  it('a flood of /openapi.json with a bogus key from one address is refused, and another customer is barely slowed', async () => {
    const api = await startApi({ PALISADE_API_RATE_PER_ADDRESS: '2', PALISADE_API_BURST_PER_ADDRESS: '30', PALISADE_API_RATE_PER_KEY: '100', PALISADE_API_BURST_PER_KEY: '300' });
    try {
      const { key } = await api.user();
      const other = async (until: () => boolean, max: number) => {
        const times: number[] = [];
        while (times.length < max && !until()) {
          const t0 = performance.now();
          const res = await fetch(`${api.url}/me`, { headers: { 'x-auth-key': key } });
          await res.arrayBuffer();
          expect(res.status).toBe(200);
          times.push(performance.now() - t0);
          // 20 requests a second: well inside the key's limit.
          await new Promise((r) => setTimeout(r, 50));
        }
        return times;
      };
      const before = await other(() => false, 40);
      // The flood: 16 connections, at most 4000 requests or 8 s.
      const started = performance.now();
      const statuses = new Map<number, number>();
      let sent = 0;
      let bytes = 0;
      let flooding = true;
      const flood = Promise.all(
        Array.from({ length: 16 }, async () => {
          while (sent < 4000 && performance.now() - started < 8000) {
            sent++;
            const res = await fetch(`${api.url}/openapi.json`, { headers: { 'x-auth-key': 'pk_bogus_0000000000000000000000000000', 'accept-encoding': 'identity' } });
            bytes += (await res.arrayBuffer()).byteLength;
            statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          }
        }),
      ).finally(() => (flooding = false));
      const during = await other(() => !flooding, 1000);
      await flood;
      const seconds = (performance.now() - started) / 1000;
      const refused = statuses.get(429) ?? 0;
      console.log(
        `/openapi.json flood: ${sent} requests in ${seconds.toFixed(1)} s (${Math.round(sent / seconds)}/s), ${refused} refused (429), ` +
          `${(bytes / seconds / 1e6).toFixed(2)} MB/s out; other customer's GET /me p50 ${median(before).toFixed(2)} ms before, ${median(during).toFixed(2)} ms during (${during.length} requests)`,
      );
      expect(refused).toBeGreaterThan(sent * 0.9);
    } finally {
      await api.close();
    }
  }, 60_000);

  it("limits an account's keys together: five keys do not get five times one key's allowance", async () => {
    // Per key 10/s, bursts of 20; the account's limit is left to its default (twice the key's).
    const api = await startApi({ PALISADE_API_RATE_PER_KEY: '10', PALISADE_API_BURST_PER_KEY: '20' });
    try {
      const { user, key } = await api.user();
      const keys = [key];
      for (let i = 0; i < 4; i++) {
        const k = generateApiKey();
        await api.store.addApiKey(user.id, hashApiKey(k), `k${i}`);
        keys.push(k);
      }
      const started = performance.now();
      const results = await Promise.all(keys.flatMap((k) => Array.from({ length: 20 }, () => fetch(`${api.url}/me`, { headers: { 'x-auth-key': k } }).then(async (r) => ({ status: r.status, limit: r.headers.get('ratelimit') })))));
      const seconds = (performance.now() - started) / 1000;
      const ok = results.filter((r) => r.status === 200).length;
      console.log(`5 keys × 20 requests: ${ok} answered (one key alone: 20; the account: 40 plus ${Math.ceil(20 * seconds)} refilled in ${seconds.toFixed(2)} s)`);
      expect(ok).toBeGreaterThanOrEqual(39);
      expect(ok).toBeLessThanOrEqual(40 + Math.ceil(20 * seconds) + 1);
      const refusal = results.find((r) => r.status === 429)!;
      expect(refusal.limit).toMatch(/^"account";r=0;t=\d+$/);
      // Another account is not affected.
      const { key: another } = await api.user();
      expect((await fetch(`${api.url}/me`, { headers: { 'x-auth-key': another } })).status).toBe(200);
      // A key alone is still held to its own limit.
      await new Promise((r) => setTimeout(r, 2100));
      const alone = await Promise.all(Array.from({ length: 40 }, () => fetch(`${api.url}/me`, { headers: { 'x-auth-key': key } }).then((r) => r.status)));
      expect(alone.filter((s) => s === 200).length).toBeLessThanOrEqual(20 + 3);
    } finally {
      await api.close();
    }
  }, 30_000);
});
