// No client can exhaust the API: requests without a valid key are limited per client address,
// authenticated ones per key (higher), each answer says where the client stands (RateLimit
// fields), a refusal is a 429 problem with Retry-After, error bodies stay small whatever the
// request held, and a flood of rejected requests writes a bounded number of log lines.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.ts';
import { loadConfig } from '../../src/config.ts';
import { generateApiKey, hashApiKey } from '../../src/model/user.ts';
import { openStore } from '../../src/store/index.ts';
import type { Store } from '../../src/store/types.ts';
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
