// Certificate issuance when things go wrong, with real parts: a CA that cannot be reached, a CA
// that refuses the validation (pebble looking up the TXT somewhere else than our name servers),
// no CA configured at all, and the operator key missing or wrong at start. Each task says why,
// retries back off, and no order is placed twice for one attempt.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pollTask, type TaskJson } from '../helpers/cert-tasks.ts';
import { makeCertificate } from '../helpers/certs.ts';
import { startChallSrv, startPebble, type TestChallSrv, type TestPebble } from '../helpers/pebble.ts';
import { freePort } from '../helpers/redis-server.ts';
import { runAdminCli, startServe, stopProcess, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';

let backend: Server;
let backendPort: number;
let challsrv: TestChallSrv;
const running: RunningServer[] = [];

async function serveWith(extra: Record<string, string>): Promise<{ server: RunningServer; key: string; env: Record<string, string> }> {
  const env = { PALISADE_DATA_DIR: tempDir(), PALISADE_ALLOW_PRIVATE_BACKENDS: 'true', PALISADE_ACME_POLL_MS: '50', PALISADE_CERT_CHALLENGE_TIMEOUT_SECONDS: '5', ...extra };
  const user = await runAdminCli(env, ['user', 'create', '--name', 'F', '--email', 'f@example.org']);
  expect(user.code, user.stderr).toBe(0);
  const node = await runAdminCli(env, ['node', 'add', '--name', 'e1', '--ipv4', '127.0.0.1', '--location', 'DE']);
  expect(node.code, node.stderr).toBe(0);
  const server = await startServe(env);
  running.push(server);
  return { server, key: (JSON.parse(user.stdout) as { key: { api_key: string } }).key.api_key, env };
}

const call = (server: RunningServer, key: string, method: string, path: string, body?: unknown) =>
  fetch(`${server.url}${path}`, { method, headers: { 'x-auth-key': key, ...(body !== undefined && { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });

/** Every distinct state of the domain's task seen while polling, until `done` holds for one. */
const watchTask = async (server: RunningServer, key: string, domain: string, done: (t: TaskJson) => boolean): Promise<TaskJson[]> =>
  (await pollTask(server.url, key, domain, done, { output: server.output })).seen;

beforeAll(async () => {
  backend = createServer((req, res) => res.end('backend'));
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
  backendPort = (backend.address() as { port: number }).port;
  challsrv = await startChallSrv();
});

afterAll(async () => {
  for (const s of running) await stopProcess(s);
  await challsrv?.stop();
  backend?.close();
  removeTempDirs();
});

describe('certificate failures', { timeout: 90_000 }, () => {
  it('a CA that cannot be reached: the task says so, places no order, and backs off', async () => {
    const { server, key } = await serveWith({ PALISADE_ACME_DIRECTORY: `https://127.0.0.1:${await freePort()}/dir`, PALISADE_ACME_RESOLVER: challsrv.dns, PALISADE_CERT_RETRY_SECONDS: '1' });
    expect((await call(server, key, 'POST', '/domains', { domain: 'down.example', backend: `127.0.0.1:${backendPort}`, mask: 'www', ssl: true })).status).toBe(201);
    const seen = await watchTask(server, key, 'down.example', (t) => t.attempts >= 3 && t.state === 'queued');
    const waits = seen.filter((t) => t.state === 'queued' && t.next_attempt !== null);
    const last = waits[waits.length - 1]!;
    expect(last.error).toMatch(/^the CA \(https:\/\/127\.0\.0\.1:\d+\/dir\) could not be reached: .*ECONNREFUSED/);
    expect(last.orders).toBe(0);
    // Each wait longer than the one before (1 s, 2 s, 4 s … with ±20 % jitter).
    const delays = waits.map((t) => Date.parse(t.next_attempt!) - Date.parse(t.updated));
    expect(delays.length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < delays.length; i++) expect(delays[i]!).toBeGreaterThan(delays[i - 1]!);
  });

  it('a CA that refuses the validation: its problem type and detail per name, one order per attempt', async () => {
    // pebble asks challtestsrv, not our name server: our TXT is there, the CA does not see it.
    const dnsPort = await freePort();
    const pebble: TestPebble = await startPebble({ dnsServer: challsrv.dns, httpPort: await freePort() });
    try {
      const { server, key } = await serveWith({ PALISADE_DNS_PORT: String(dnsPort), PALISADE_ACME_DIRECTORY: pebble.directory, PALISADE_ACME_CA_FILE: pebble.caFile, PALISADE_CERT_RETRY_SECONDS: '1' });
      expect((await call(server, key, 'POST', '/domains', { domain: 'refused.example', backend: `127.0.0.1:${backendPort}`, mask: '', ssl: false })).status).toBe(201);
      expect((await call(server, key, 'GET', '/domains/refused.example/activatens')).status).toBe(200);
      expect((await call(server, key, 'PATCH', '/domains/refused.example', { ssl: true })).status).toBe(200);
      const seen = await watchTask(server, key, 'refused.example', (t) => t.attempts >= 2 && t.state === 'queued');
      const last = seen[seen.length - 1]!;
      expect(last.problems).toHaveLength(1);
      expect(last.problems[0]!.name).toBe('refused.example');
      expect(last.problems[0]!.type).toMatch(/^urn:ietf:params:acme:error:(unauthorized|dns|incorrectResponse)$/);
      expect(last.problems[0]!.detail.length).toBeGreaterThan(0);
      expect(last.error).toContain('validation failed');
      // No duplicate orders: exactly one per attempt.
      expect(last.orders).toBe(last.attempts);
    } finally {
      await pebble.stop();
    }
  });

  it('without a CA configured, ssl: true is stored and the task fails at once saying why', async () => {
    const { server, key, env } = await serveWith({});
    const created = await call(server, key, 'POST', '/domains', { domain: 'offline.example', backend: `127.0.0.1:${backendPort}`, ssl: true });
    expect(created.status).toBe(201);
    expect(await created.json()).toMatchObject({ ssl: true });
    const seen = await watchTask(server, key, 'offline.example', (t) => t.state === 'failed');
    expect(seen[seen.length - 1]).toMatchObject({ state: 'failed', attempts: 1, orders: 0, error: expect.stringContaining('PALISADE_ACME_DIRECTORY') });
    // The customer's default list shows the failed task and why (it was an empty list), not only ?state=all.
    const open = (await (await call(server, key, 'GET', '/tasks/')).json()) as TaskJson[];
    expect(open).toEqual([expect.objectContaining({ domain: 'offline.example', state: 'failed', error: expect.stringContaining('PALISADE_ACME_DIRECTORY') })]);
    expect(await (await call(server, key, 'GET', '/tasks/?state=active')).json()).toEqual([]);
    // Asking again cannot succeed: 409 saying what the operator lacks, and no second task or attempt.
    const again = await call(server, key, 'POST', '/domains/offline.example/certificate');
    expect(again.status).toBe(409);
    expect(((await again.json()) as { detail: string }).detail).toContain('no ACME CA is configured (PALISADE_ACME_DIRECTORY is unset)');
    const after = (await (await call(server, key, 'GET', '/tasks/')).json()) as TaskJson[];
    expect(after).toEqual([expect.objectContaining({ id: open[0]!.id, attempts: 1 })]);
    // Turning ssl off closes it: it leaves the open list, and stays in ?state=all.
    await call(server, key, 'PATCH', '/domains/offline.example', { ssl: false });
    expect(await (await call(server, key, 'GET', '/tasks/')).json()).toEqual([]);
    expect(((await (await call(server, key, 'GET', '/tasks/?state=all')).json()) as TaskJson[])[0]).toMatchObject({ state: 'failed', error: 'cancelled: ssl was turned off' });
    await call(server, key, 'PATCH', '/domains/offline.example', { ssl: true });
    // The largest mask the limits allow names more than a certificate holds: said before anything else.
    const mask = Array.from({ length: 150 }, (_, i) => `n${i}`).join(',');
    expect((await call(server, key, 'POST', '/domains', { domain: 'wide.example', backend: `127.0.0.1:${backendPort}`, mask, ssl: true })).status).toBe(201);
    const wide = await watchTask(server, key, 'wide.example', (t) => t.state === 'failed');
    expect(wide[wide.length - 1]!.problems).toEqual([{ name: 'wide.example', type: 'palisade:too-many-names', detail: expect.stringContaining('151 names') }]);

    // A certificate in the store: the API refuses to start without the operator key, or with another one.
    const cert = makeCertificate(['offline.example']);
    const put = await runAdminCli(env, ['cert', 'put', 'offline.example', '--cert', cert.certPath, '--key', cert.keyPath]);
    expect(put.code, put.stderr).toBe(0);
    const refusedPut = await runAdminCli({ ...env, PALISADE_SECRET_KEY: '' }, ['cert', 'put', 'offline.example', '--cert', cert.certPath, '--key', cert.keyPath]);
    expect(refusedPut.code).toBe(2);
    expect(refusedPut.stderr).toContain('PALISADE_SECRET_KEY');
    await stopProcess(server);
    for (const [secret, message] of [
      ['', 'set PALISADE_SECRET_KEY'],
      ['ab'.repeat(32), 'does not open with PALISADE_SECRET_KEY'],
    ] as const) {
      const refused = await startServe({ ...env, PALISADE_SECRET_KEY: secret }).then(
        (s) => {
          running.push(s);
          return 'started';
        },
        (error: Error) => error.message,
      );
      expect(refused).toContain(message);
    }
    running.push(await startServe(env));
  });
});
