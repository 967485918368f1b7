// No value a customer stores can break the store or the feed: on Redis, text that looks like the
// commit script's own markers ("__REVISION__") or like JSON is stored and served exactly as sent,
// through the API, the change feed and a name server (dig), and the name server keeps syncing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dig } from '../helpers/dig.ts';
import { freePort, startRedis, type TestRedis } from '../helpers/redis-server.ts';
import { runAdminCli, START_TIMEOUT_MS, startNameServer, startServe, stopProcess, type RunningNameServer, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';

let redis: TestRedis;
let api: RunningServer;
let ns: RunningNameServer;
let key: string;

const call = (method: string, path: string, body?: unknown) =>
  fetch(`${api.url}${path}`, {
    method,
    headers: { 'x-auth-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

beforeAll(async () => {
  redis = await startRedis();
  const env = { REDIS_URL: redis.url, PALISADE_DATA_DIR: '/nonexistent-unused', PALISADE_API_PORT: String(await freePort()) };
  key = JSON.parse((await runAdminCli(env, ['user', 'create', '--name', 'text', '--email', 'text@example.org'])).stdout).key.api_key;
  const added = JSON.parse((await runAdminCli(env, ['consumer', 'add', '--name', 'ns1'])).stdout);
  api = await startServe(env, START_TIMEOUT_MS, 'api');
  ns = await startNameServer({ PALISADE_DATA_DIR: tempDir(), PALISADE_SYNC_URL: api.url, PALISADE_SYNC_TOKEN: added.token, PALISADE_SYNC_SECRET: added.secret, PALISADE_SYNC_POLL_MS: '200' });
});

afterAll(async () => {
  if (ns) await stopProcess(ns);
  if (api) await stopProcess(api);
  await redis?.stop();
  removeTempDirs();
});

async function until(name: string, check: (r: Awaited<ReturnType<typeof dig>>) => boolean) {
  let r = await dig(ns.dnsPort, name, 'TXT');
  for (let i = 0; i < 50 && !check(r); i++) {
    await new Promise((res) => setTimeout(res, 100));
    r = await dig(ns.dnsPort, name, 'TXT');
  }
  return r;
}

describe('customer text on Redis, end to end', () => {
  it('a TXT value "__REVISION__" (and other marker-like text) is stored, fed and served as sent', async () => {
    const samples = ['__REVISION__', 'x "__REVISION__"', 'revision:"__REVISION__"', '{"revision":1}', '%d %s \\\\ end'];
    expect((await call('POST', '/domains', { domain: 'text.example', backend: '198.51.100.1', enabled: false, tags: ['__REVISION__'] })).status).toBe(201);
    expect((await call('GET', '/domains/text.example/activatens')).status).toBe(200);
    for (const [i, value] of samples.entries()) {
      const res = await call('POST', '/domains/text.example/dnsrecords', { name: `t${i}`, type: 6, value });
      expect(res.status).toBe(201);
      expect(((await res.json()) as { value: string }).value).toBe(value);
    }
    const domain = (await (await call('GET', '/domains/text.example')).json()) as { tags: string[]; revision: number };
    expect(domain.tags).toEqual(['__REVISION__']);
    expect(typeof domain.revision).toBe('number');
    for (const [i, value] of samples.entries()) {
      const r = await until(`t${i}.text.example`, (a) => a.answer.length === 1);
      // dig prints TXT strings quoted, with " and \ escaped.
      expect(r.answer[0]!.data).toBe(`"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`);
    }
    // The name server keeps following the feed after those changes.
    await call('POST', '/domains/text.example/dnsrecords', { name: 'after', type: 6, value: 'still syncing' });
    expect((await until('after.text.example', (a) => a.answer.length === 1)).answer[0]!.data).toBe('"still syncing"');
  });
});
