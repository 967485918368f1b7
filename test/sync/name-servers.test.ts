// ns1 and ns2 as separate processes fed by one API process, queried with dig: propagation,
// identical serials, the API going away and coming back, restarts from local state, signed
// pushes (forged, stale and replayed ones refused), and recovery past the retained history.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signNotification } from '../../src/sync/notifier.ts';
import { dig } from '../helpers/dig.ts';
import { freePort } from '../helpers/redis-server.ts';
import { runAdminCli, START_TIMEOUT_MS, startNameServer, startServe, stopProcess, type RunningNameServer, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';
import { until as poll } from '../helpers/until.ts';

let apiEnv: Record<string, string>;
let api: RunningServer;
let key: string;
const ns: RunningNameServer[] = [];
const nsEnv: Array<Record<string, string>> = [];
const secrets: string[] = [];

const call = (method: string, path: string, body?: unknown) =>
  fetch(`${api.url}${path}`, {
    method,
    headers: { 'x-auth-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

/** Asks a name server until `check` holds (bounded), and returns the last answer. */
async function until(server: RunningNameServer, name: string, type: string, check: (r: Awaited<ReturnType<typeof dig>>) => boolean) {
  let r = await dig(server.dnsPort, name, type);
  for (let i = 0; i < 60 && !check(r); i++) {
    await new Promise((res) => setTimeout(res, 100));
    r = await dig(server.dnsPort, name, type);
  }
  return r;
}

beforeAll(async () => {
  apiEnv = { PALISADE_DATA_DIR: tempDir(), PALISADE_CHANGE_RETENTION: '100', PALISADE_API_PORT: String(await freePort()) };
  key = JSON.parse((await runAdminCli(apiEnv, ['user', 'create', '--name', 'ops', '--email', 'ops@example.org'])).stdout).key.api_key;
  for (const name of ['ns1', 'ns2']) {
    const notifyPort = await freePort();
    const added = JSON.parse((await runAdminCli(apiEnv, ['consumer', 'add', '--name', name, '--url', `http://127.0.0.1:${notifyPort}/notify`])).stdout);
    secrets.push(added.secret);
    nsEnv.push({ PALISADE_DATA_DIR: tempDir(), PALISADE_SYNC_TOKEN: added.token, PALISADE_SYNC_SECRET: added.secret, PALISADE_SYNC_PORT: String(notifyPort), PALISADE_SYNC_POLL_MS: '500' });
  }
  api = await startServe(apiEnv, START_TIMEOUT_MS, 'api');
  for (const env of nsEnv) ns.push(await startNameServer({ ...env, PALISADE_SYNC_URL: api.url }));
  expect((await call('POST', '/domains', { domain: 'sync.example', backend: '198.51.100.1', enabled: false })).status).toBe(201);
  expect((await call('GET', '/domains/sync.example/activatens')).status).toBe(200);
});

afterAll(async () => {
  for (const server of ns) await stopProcess(server);
  if (api) await stopProcess(api);
  removeTempDirs();
});

describe('ns1 and ns2 from one API', () => {
  it('serve a new record on both, stop serving it when deleted, follow activatens/deactivatens', async () => {
    const created = await call('POST', '/domains/sync.example/dnsrecords', { name: 'rec', type: 1, value: '192.0.2.1' });
    const { id } = (await created.json()) as { id: number };
    for (const server of ns) expect((await until(server, 'rec.sync.example', 'A', (r) => r.answer.length === 1)).answer[0]!.data).toBe('192.0.2.1');
    expect((await call('DELETE', `/domains/sync.example/dnsrecords/${id}`)).status).toBe(204);
    for (const server of ns) expect((await until(server, 'rec.sync.example', 'A', (r) => r.status === 'NXDOMAIN')).status).toBe('NXDOMAIN');
    await call('GET', '/domains/sync.example/deactivatens');
    for (const server of ns) expect((await until(server, 'sync.example', 'SOA', (r) => r.status === 'REFUSED')).status).toBe('REFUSED');
    await call('GET', '/domains/sync.example/activatens');
    for (const server of ns) expect((await until(server, 'sync.example', 'SOA', (r) => r.status === 'NOERROR')).status).toBe('NOERROR');
  });

  it('give the same SOA serial for the same content', async () => {
    await call('POST', '/domains/sync.example/dnsrecords', { name: 'serial', type: 6, value: 'v1' });
    const revision = ((await (await call('GET', '/domains/sync.example')).json()) as { revision: number }).revision;
    const serials = await Promise.all(ns.map(async (s) => (await until(s, 'sync.example', 'SOA', (r) => r.answer[0]?.data.split(' ')[2] === String(revision))).answer[0]!.data.split(' ')[2]));
    expect(serials).toEqual([String(revision), String(revision)]);
  });

  it('refuse forged, stale and replayed notifications', async () => {
    const body = JSON.stringify({ revision: 1 });
    const now = Math.floor(Date.now() / 1000);
    const post = (timestamp: number, signature: string) =>
      fetch(ns[0]!.notifyUrl, { method: 'POST', headers: { 'x-palisade-timestamp': String(timestamp), 'x-palisade-signature': signature }, body });
    expect((await post(now, signNotification('not-the-secret', now, body))).status).toBe(401);
    expect((await post(now - 600, signNotification(secrets[0]!, now - 600, body))).status).toBe(401);
    const good = signNotification(secrets[0]!, now, body);
    // Revision 1 is long applied: taken, but nothing to pull ("up to date").
    expect((await post(now, good)).status).toBe(200);
    expect((await post(now, good)).status).toBe(401);
    for (let i = 0; i < 20 && !ns[0]!.output().includes('replayed notification'); i++) await new Promise((r) => setTimeout(r, 50));
    expect(ns[0]!.output()).toContain('replayed notification');
  });

  it('keep answering while the API is down, catch up when it returns, and restart from local state', async () => {
    await call('POST', '/domains/sync.example/dnsrecords', { name: 'kept', type: 1, value: '192.0.2.7' });
    for (const server of ns) await until(server, 'kept.sync.example', 'A', (r) => r.answer.length === 1);
    await stopProcess(api, 'SIGKILL');
    // A name server restarted while the API is down answers from what it stored.
    await stopProcess(ns[1]!);
    ns[1] = await startNameServer({ ...nsEnv[1]!, PALISADE_SYNC_URL: api.url });
    for (const server of ns) expect((await dig(server.dnsPort, 'kept.sync.example', 'A')).answer[0]!.data).toBe('192.0.2.7');
    await poll('a failed pull', () => ns[0]!.output().includes('cannot pull from the API')).catch(() => undefined);
    expect(ns[0]!.output()).toContain('cannot pull from the API');

    api = await startServe(apiEnv, START_TIMEOUT_MS, 'api');
    await call('POST', '/domains/sync.example/dnsrecords', { name: 'after', type: 1, value: '192.0.2.8' });
    for (const server of ns) expect((await until(server, 'after.sync.example', 'A', (r) => r.answer.length === 1)).answer[0]!.data).toBe('192.0.2.8');
  });

  it('a name server that fell behind the retained history recovers through the snapshot', async () => {
    await stopProcess(ns[1]!);
    for (let i = 0; i < 120; i++) expect((await call('PATCH', '/domains/sync.example', { bwlimit: i + 1 })).status).toBe(200);
    await call('POST', '/domains/sync.example/dnsrecords', { name: 'late', type: 1, value: '192.0.2.9' });
    ns[1] = await startNameServer({ ...nsEnv[1]!, PALISADE_SYNC_URL: api.url });
    expect((await until(ns[1], 'late.sync.example', 'A', (r) => r.answer.length === 1)).answer[0]!.data).toBe('192.0.2.9');
    expect(ns[1].output()).toContain('loading a fresh snapshot');
    // Both now hold exactly the API's records.
    const records = (await (await call('GET', '/domains/sync.example/dnsrecords')).json()) as Array<{ name: string; type_name: string; value: string }>;
    for (const server of ns) {
      for (const record of records) {
        const r = await dig(server.dnsPort, `${record.name}.sync.example`, record.type_name);
        expect(r.answer.map((a) => a.data.replace(/^"|"$/g, ''))).toContain(record.value);
      }
    }
  });

  it('are told by push (signed notifications accepted), not only by polling', async () => {
    await call('POST', '/domains/sync.example/dnsrecords', { name: 'pushed', type: 1, value: '192.0.2.10' });
    await until(ns[1]!, 'pushed.sync.example', 'A', (r) => r.answer.length === 1);
    let metrics = '';
    for (let i = 0; i < 20 && !/outcome="accepted"\} [1-9]/.test(metrics); i++) {
      metrics = await (await fetch(ns[1]!.notifyUrl.replace('/notify', '/metrics'))).text();
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(metrics).toMatch(/palisade_sync_notifications_total\{outcome="accepted"\} [1-9]/);
  });

  it('a name server started in the middle of writes, receiving no pushes, converges to the API by polling', async () => {
    // ns2's token on another port (pushes go to ns2's registered URL), and a wrong secret besides.
    const env = { ...nsEnv[1]!, PALISADE_DATA_DIR: tempDir(), PALISADE_SYNC_SECRET: 'wrong-secret', PALISADE_SYNC_PORT: '0', PALISADE_SYNC_URL: api.url };
    let stop = false;
    let written = 0;
    const writer = (async () => {
      for (let i = 0; !stop && i < 200; i++) {
        const res = await call('POST', '/domains/sync.example/dnsrecords', { name: `flight${i}`, type: 1, value: `198.51.100.${(i % 250) + 1}` });
        if (res.status === 201) written++;
        if (i % 10 === 9) {
          const [first] = (await (await call('GET', `/domains/sync.example/dnsrecords?name=flight${i - 9}`)).json()) as Array<{ id: number }>;
          await call('DELETE', `/domains/sync.example/dnsrecords/${first!.id}`);
        }
      }
    })();
    await new Promise((r) => setTimeout(r, 300));
    const late = await startNameServer(env);
    try {
      stop = true;
      await writer;
      expect(written).toBeGreaterThan(0);
      const records = (await (await call('GET', '/domains/sync.example/dnsrecords?limit=1000')).json()) as Array<{ name: string; type_name: string; value: string }>;
      const flight = records.filter((r) => r.name.startsWith('flight'));
      const lastName = flight[flight.length - 1]!.name;
      await until(late, `${lastName}.sync.example`, 'A', (r) => r.answer.length === 1);
      for (const record of flight) {
        expect((await dig(late.dnsPort, `${record.name}.sync.example`, 'A')).answer.map((a) => a.data)).toEqual([record.value]);
      }
      // Deleted ones are gone there too.
      const deleted = Array.from({ length: written }, (_, i) => `flight${i}`).filter((n) => !flight.some((r) => r.name === n));
      for (const name of deleted.slice(0, 5)) expect((await dig(late.dnsPort, `${name}.sync.example`, 'A')).status).toBe('NXDOMAIN');
    } finally {
      await stopProcess(late);
    }
  });

  it('report applied revision and lag at /healthz and /metrics', async () => {
    const health = (await (await fetch(ns[0]!.notifyUrl.replace('/notify', '/healthz'))).json()) as { ok: boolean; revision: number; lag: number };
    expect(health.ok).toBe(true);
    expect(health.revision).toBeGreaterThan(100);
    const metrics = await (await fetch(ns[0]!.notifyUrl.replace('/notify', '/metrics'))).text();
    expect(metrics).toMatch(/palisade_dns_revision_applied \d+/);
    expect(metrics).toMatch(/palisade_sync_lag_revisions \d+/);
    expect(metrics).toMatch(/palisade_sync_notifications_total\{outcome="rejected"\} [1-9]/);
  });
});
