// One account's largest zone-file import must not stall another account's API (issue 43 item 11).
// A real `palisade api` per store (LMDB, Redis): account A imports 20,000 records into an empty
// zone, then 20,000 other records in their place (every record removed, as many added), while
// account B reads its records in a loop. Committed in one synchronous step (one LMDB transaction
// in the event loop's thread, one Redis script of 40,000 writes), the second import left B
// without an answer for 0.5–1 s; now B's longest wait between answers stays well below.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BULK_MAX_ITEMS } from '../../src/api/routes/records-bulk.ts';
import { generateApiKey, hashApiKey } from '../../src/model/user.ts';
import { openStore } from '../../src/store/index.ts';
import { startRedis, type TestRedis } from '../helpers/redis-server.ts';
import { START_TIMEOUT_MS, startServe, stopStarted } from '../helpers/spawn-palisade.ts';
import { largeZoneFile, startTenantProbe } from '../helpers/tenant-probe.ts';

const RECORDS = 20_000;
/**
 * The one-step commit stalled B 400–1000 ms on an idle machine: 40–50 % of the whole import's
 * time, which on a loaded machine stretches with it. B's longest wait must stay below 200 ms, or,
 * where the machine is so loaded that an idle server stalls that long, below a fifth of the
 * import's time (no single step near the one-step commit's share).
 */
const STALL_MS = 200;
const STALL_SHARE = 0.2;

const cleanups: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  await stopStarted();
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function twoAccounts(redis?: TestRedis) {
  const dataDir = mkdtempSync(join(tmpdir(), 'palisade-import-stall-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const server = await startServe({ PALISADE_DATA_DIR: dataDir, ...(redis && { REDIS_URL: redis.url }) }, START_TIMEOUT_MS, 'api');
  const store = openStore({ dataDir, redisUrl: redis?.url });
  const account = async (name: string, maxRecords?: number) => {
    const user = await store.createUser({ name, email: `${name}@example.org`, limits: maxRecords === undefined ? undefined : { max_records_per_domain: maxRecords } });
    const key = generateApiKey();
    await store.addApiKey(user.id, hashApiKey(key), 'test');
    return key;
  };
  const a = await account('a', RECORDS + 10);
  const b = await account('b');
  await store.close();
  const call = async (key: string, method: string, path: string, body: string, type = 'application/json') => {
    const res = await fetch(server.url + path, { method, headers: { 'x-auth-key': key, 'content-type': type }, body });
    const text = await res.text();
    expect(res.status, text.slice(0, 300)).toBeLessThan(300);
    return JSON.parse(text) as Record<string, unknown>;
  };
  await call(a, 'POST', '/domains', JSON.stringify({ domain: 'a.example', backend: '198.51.100.1' }));
  await call(a, 'POST', '/domains', JSON.stringify({ domain: 'bulk.example', backend: '198.51.100.1' }));
  await call(b, 'POST', '/domains', JSON.stringify({ domain: 'b.example', backend: '198.51.100.1' }));
  await call(b, 'POST', '/domains/b.example/dnsrecords', JSON.stringify({ name: 'www', type: 'A', value: '192.0.2.1' }));
  return { server, a, b, call };
}

describe.each(['lmdb', 'redis'])('a 20,000-record import and a 10,000-record bulk change by one account, %s store', (kind) => {
  it(
    "leaves another account's reads answered throughout (no wait near the one-step commit's)",
    async () => {
      const redis = kind === 'redis' ? await startRedis() : undefined;
      if (redis) cleanups.push(() => redis.stop());
      const { server, a, b, call } = await twoAccounts(redis);
      const importFile = (text: string) => call(a, 'POST', '/domains/a.example/zonefile', text, 'text/dns');
      // The first import also starts what the store needs for large changes (its commit thread).
      expect((await importFile(largeZoneFile(RECORDS, 'h'))).added).toHaveLength(RECORDS);
      const probe = startTenantProbe({ url: server.url, path: '/domains/b.example/dnsrecords', key: b, maxRequests: 20_000, maxMs: 120_000 });
      await new Promise((r) => setTimeout(r, 200));
      const at = performance.now();
      const outcome = await importFile(largeZoneFile(RECORDS, 'g'));
      const importMs = performance.now() - at;
      await new Promise((r) => setTimeout(r, 200));
      const seen = await probe.stop();
      expect(outcome.added).toHaveLength(RECORDS);
      expect(outcome.removed).toHaveLength(RECORDS);
      expect(seen.failures).toBe(0);
      expect(seen.count).toBeGreaterThan(10);
      console.log(`${kind}: B answered ${seen.count} reads during the ${importMs.toFixed(0)} ms import, longest wait between answers ${seen.largestGapMs.toFixed(0)} ms`);
      expect(seen.largestGapMs, `B's longest wait between answers during the ${importMs.toFixed(0)} ms import (${seen.count} reads)`).toBeLessThan(Math.max(STALL_MS, importMs * STALL_SHARE));
      // All or nothing still: the zone holds exactly the second file's records.
      const exported = await fetch(`${server.url}/domains/a.example/zonefile`, { headers: { 'x-auth-key': a } }).then((r) => r.text());
      expect(exported.match(/^g\d+\s/gm)).toHaveLength(RECORDS);
      expect(exported).not.toMatch(/^h\d+\s/m);

      // The largest bulk change allowed: 10,000 records changed in one revision (in the store's
      // commit step it stalled B as long as the import did, on Redis for minutes).
      const created = (await call(a, 'POST', '/domains/bulk.example/dnsrecords/bulk', JSON.stringify({ create: Array.from({ length: BULK_MAX_ITEMS }, (_, i) => ({ name: `n${i}`, type: 'A', value: `198.51.${(i >> 8) & 255}.${i & 255}` })) }))).created as Array<{ id: number }>;
      expect(created).toHaveLength(BULK_MAX_ITEMS);
      const bulkProbe = startTenantProbe({ url: server.url, path: '/domains/b.example/dnsrecords', key: b, maxRequests: 20_000, maxMs: 120_000 });
      await new Promise((r) => setTimeout(r, 200));
      const bulkAt = performance.now();
      const changed = await call(a, 'POST', '/domains/bulk.example/dnsrecords/bulk', JSON.stringify({ update: created.map(({ id }) => ({ id, ttl: 600 })) }));
      const bulkMs = performance.now() - bulkAt;
      await new Promise((r) => setTimeout(r, 200));
      const bulkSeen = await bulkProbe.stop();
      console.log(`${kind}: B answered ${bulkSeen.count} reads during the ${bulkMs.toFixed(0)} ms bulk change, longest wait between answers ${bulkSeen.largestGapMs.toFixed(0)} ms`);
      expect((changed.updated as Array<{ ttl: number }>).every((r) => r.ttl === 600)).toBe(true);
      expect(bulkSeen.failures).toBe(0);
      expect(bulkSeen.largestGapMs, `B's longest wait between answers during the ${bulkMs.toFixed(0)} ms bulk change (${bulkSeen.count} reads)`).toBeLessThan(Math.max(STALL_MS, bulkMs * STALL_SHARE));
    },
    400_000,
  );
});
