// Issue 26's upgrade, on both stores: domains stored before claims existed (no claim in their
// document; on Redis also from before the name tree was indexed) keep being answered by the name
// server and routed by the edge of a `palisade serve` that requires ownership proof, show as
// verified ("migrated", the default pair), and another account's claim of such a name stays
// pending: the old domain is proven, so it cannot be displaced by first come.
import { createServer, request, type Server } from 'node:http';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOMAIN_DEFAULTS } from '../../src/model/domain.ts';
import { generateApiKey, hashApiKey } from '../../src/model/user.ts';
import { openStore } from '../../src/store/index.ts';
import { dig } from '../helpers/dig.ts';
import { startRedis, type TestRedis } from '../helpers/redis-server.ts';
import { startServe, stopProcess, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';

let redis: TestRedis;
let backend: Server;
let backendPort: number;

beforeAll(async () => {
  redis = await startRedis();
  backend = createServer((req, res) => res.end(`backend of ${req.headers.host}`));
  await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
  backendPort = (backend.address() as { port: number }).port;
}, 30_000);

afterAll(async () => {
  await redis?.stop();
  backend?.close();
  removeTempDirs();
});

function edge(serve: RunningServer, host: string): Promise<string> {
  const url = new URL(serve.edgeUrl!);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: '/', headers: { host } }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve(body));
    });
    req.on('error', reject);
    req.end();
  });
}

describe.each(['embedded', 'redis'] as const)('upgrade with the %s store', { timeout: 90_000 }, (kind) => {
  it('a domain stored before claims keeps serving under PALISADE_OWNERSHIP_PROOF=required, and another account cannot displace it', async () => {
    const dataDir = tempDir();
    const prefix = `{upgrade-${Date.now()}}:`;
    const storeEnv: Record<string, string> = kind === 'redis' ? { REDIS_URL: redis.url, PALISADE_REDIS_PREFIX: prefix } : {};
    // The earlier release's data: a domain without a claim.
    const store = openStore({ dataDir, redisUrl: kind === 'redis' ? redis.url : undefined, redisPrefix: prefix, changeRetention: 1000 });
    const owner = await store.createUser({ name: 'old', email: 'old@example.org' });
    const other = await store.createUser({ name: 'new', email: 'new@example.org' });
    const keys = { owner: generateApiKey(), other: generateApiKey() };
    await store.addApiKey(owner.id, hashApiKey(keys.owner), 'k');
    await store.addApiKey(other.id, hashApiKey(keys.other), 'k');
    await store.createZone((ctx) => ({
      domain: { ...DOMAIN_DEFAULTS, backend: `127.0.0.1:${backendPort}`, domain: 'kept.example', ownerId: owner.id, ns_active: true, created: ctx.now, updated: ctx.now, revision: 0 },
      records: [{ id: ctx.nextRecordId(), name: 'www', type: 1, value: '192.0.2.5', ttl: 300, priority: null, target: [] }],
    }));
    await store.close();
    if (kind === 'redis') {
      // From before the name tree was indexed: the upgrade builds it (every old domain proven).
      const raw = new Redis(redis.url);
      await raw.del(`${prefix}meta:zoneTree`, `${prefix}zoneowners`, `${prefix}zonetree`);
      await raw.quit();
    }
    const serve = await startServe({ PALISADE_DATA_DIR: dataDir, ...storeEnv, PALISADE_OWNERSHIP_PROOF: 'required', PALISADE_ALLOW_PRIVATE_BACKENDS: 'true' });
    try {
      const call = async (key: string, method: string, path: string, body?: unknown) => {
        const res = await fetch(`${serve.url}${path}`, { method, headers: { 'x-auth-key': key, ...(body !== undefined && { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });
        return { status: res.status, body: await res.json() };
      };
      const answer = await dig(serve.dnsPort, 'www.kept.example', 'A');
      expect(answer.status, serve.output()).toBe('NOERROR');
      expect(answer.answer.map((r) => r.data)).toEqual(['192.0.2.5']);
      expect(await edge(serve, 'www.kept.example')).toBe('backend of www.kept.example');
      const shown = (await call(keys.owner, 'GET', '/domains/kept.example')).body;
      expect(shown).toMatchObject({ nameservers: ['ns1.palisade.example.net', 'ns2.palisade.example.net'], verification: { state: 'verified', method: 'migrated', token: null } });
      // Another account may claim the name (pending) but not take it, nor be proven beside it.
      const claim = await call(keys.other, 'POST', '/domains', { domain: 'kept.example', backend: `127.0.0.1:${backendPort}` });
      expect(claim.status).toBe(201);
      expect(claim.body.verification.state).toBe('pending');
      expect((await call(keys.other, 'POST', '/domains/kept.example/verify')).body.verification.state).toBe('pending');
      // A claim under it is taken (pending) and changes nothing served: only kept.example's owner could prove it.
      expect((await call(keys.other, 'POST', '/domains', { domain: 'www.kept.example', backend: `127.0.0.1:${backendPort}` })).status).toBe(201);
      expect((await dig(serve.dnsPort, 'www.kept.example', 'A')).answer.map((r) => r.data)).toEqual(['192.0.2.5']);
      expect((await call(keys.owner, 'GET', '/domains/kept.example')).body.records).toBe(1);
    } finally {
      await stopProcess(serve);
    }
  });
});
