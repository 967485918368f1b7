import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.ts';
import { openStore } from '../../src/store/index.ts';
import { startApi, type TestApi } from '../helpers/api-server.ts';
import { testConfig } from '../helpers/config.ts';
import { tempDir } from '../helpers/temp.ts';
import { ENDPOINTS } from './endpoints.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startApi();
});
afterAll(() => api.close());

describe('authentication', () => {
  it('every endpoint answers 401 problem+json without a key, with an unknown key and with a revoked key', async () => {
    const { user, key } = await api.user();
    const revokedKey = 'pk_revoked_test_key_000000000000000000000000';
    const stored = await api.store.addApiKey(user.id, (await import('../../src/model/user.ts')).hashApiKey(revokedKey), 'r');
    await api.store.revokeApiKey(stored.id);
    expect((await api.request('GET', '/me', { key })).status).toBe(200);
    for (const { method, path, body } of ENDPOINTS) {
      for (const k of [undefined, 'pk_unknown_key_0000000000000000000000000000', revokedKey, 'x']) {
        const res = await api.request(method, path, { key: k, body });
        expect(res.status, `${method} ${path} key=${k}`).toBe(401);
        expect(res.contentType).toContain('application/problem+json');
        expect(res.body.code).toBe('UNAUTHORIZED');
      }
    }
  });

  it('never writes the key into the logs', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const dataDir = tempDir();
    const store = openStore({ dataDir });
    const app = await buildApp({ store, config: testConfig(dataDir), logger: pino({ level: 'trace' }, sink) });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as { port: number };
    const secret = 'pk_this_key_must_never_be_logged_0000000000000';
    await fetch(`http://127.0.0.1:${port}/me`, { headers: { 'x-auth-key': secret } });
    await fetch(`http://127.0.0.1:${port}/domains/x.example/dnsrecords`, { method: 'POST', headers: { 'x-auth-key': secret } });
    await app.close();
    await store.close();
    expect(lines.length).toBeGreaterThan(2);
    expect(lines.join('')).not.toContain(secret);
  });
});
