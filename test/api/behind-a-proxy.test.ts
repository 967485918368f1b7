// Behind a TLS terminator: with PALISADE_API_TRUSTED_PROXIES, the client a per-address limit counts
// is the one the proxy names in X-Forwarded-For (else every customer behind it shares one bucket);
// from any other peer, or without the setting, the header is ignored (else anyone could spread a
// flood over made-up addresses).
import { afterAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../helpers/api-server.ts';

// A bucket of 1,000 refilled at 1 a second: its `ratelimit` header's remaining count tells whose
// bucket a request was charged to (50 requests would have to take 49 s for a refill to blur it).
const LIMITS = { PALISADE_API_RATE_PER_ADDRESS: '1', PALISADE_API_BURST_PER_ADDRESS: '1000' };
const started: TestApi[] = [];
afterAll(async () => {
  for (const api of started) await api.close();
});

/** What is left in the bucket after each of `count` unauthenticated requests (charged per address) claiming to come from `forwardedFor`. */
async function remaining(api: TestApi, forwardedFor: string, count: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const res = await fetch(`${api.url}/me`, { headers: { 'x-forwarded-for': forwardedFor } });
    expect(res.status).toBe(401);
    out.push(Number(/;r=(\d+)/.exec(res.headers.get('ratelimit') ?? '')?.[1]));
  }
  return out;
}

describe('the API behind a proxy', () => {
  it('trusting the proxy: each forwarded client has its own bucket', async () => {
    const api = await startApi({ ...LIMITS, PALISADE_API_TRUSTED_PROXIES: '127.0.0.1' });
    started.push(api);
    expect((await remaining(api, '203.0.113.1', 50)).at(-1)).toBeLessThanOrEqual(951);
    expect(await remaining(api, '203.0.113.2', 1)).toEqual([999]);
  });

  it('not trusting it (the default, or another address): the header changes nothing', async () => {
    for (const env of [{}, { PALISADE_API_TRUSTED_PROXIES: '192.0.2.0/24' }] as Array<Record<string, string>>) {
      const api = await startApi({ ...LIMITS, ...env });
      started.push(api);
      await remaining(api, '203.0.113.1', 50);
      expect((await remaining(api, '203.0.113.2', 1))[0]).toBeLessThan(990);
    }
  });

  it('a bad entry is a start-up error naming it', async () => {
    await expect(startApi({ PALISADE_API_TRUSTED_PROXIES: '127.0.0.1,not-an-address' })).rejects.toThrow(/PALISADE_API_TRUSTED_PROXIES/);
  });
});
