// CAA stops our own issuance (RFC 8659): with our name servers serving the domain, a CAA set that
// names another CA keeps the order from ever being placed (the task says which name and which
// record); once the customer's CAA names our CA, the certificate is issued (pebble, DNS-01).
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pollTask, type TaskJson } from '../helpers/cert-tasks.ts';
import { startPebble, type TestPebble } from '../helpers/pebble.ts';
import { freePort } from '../helpers/redis-server.ts';
import { runAdminCli, startServe, stopProcess, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';

const D = 'caa.example';
let server: RunningServer;
let pebble: TestPebble;
let backend: Server;
let key: string;

const call = (method: string, path: string, body?: unknown) =>
  fetch(`${server.url}${path}`, { method, headers: { 'x-auth-key': key, ...(body !== undefined && { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });
const waitForTask = async (done: (t: TaskJson) => boolean, timeoutMs = 40_000): Promise<TaskJson> => (await pollTask(server.url, key, D, done, { timeoutMs, output: server.output })).task;

beforeAll(async () => {
  backend = createServer((req, res) => res.end('backend'));
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
  const dnsPort = await freePort();
  pebble = await startPebble({ dnsServer: `127.0.0.1:${dnsPort}`, httpPort: await freePort() });
  const env = {
    PALISADE_DATA_DIR: tempDir(),
    PALISADE_DNS_PORT: String(dnsPort),
    PALISADE_ALLOW_PRIVATE_BACKENDS: 'true',
    PALISADE_ACME_DIRECTORY: pebble.directory,
    PALISADE_ACME_CA_FILE: pebble.caFile,
    PALISADE_ACME_CAA_IDENTITY: 'pebble.test',
    PALISADE_ACME_POLL_MS: '50',
    PALISADE_CERT_RETRY_SECONDS: '1',
    PALISADE_CERT_MAX_ATTEMPTS: '100',
    PALISADE_CERT_CHALLENGE_TIMEOUT_SECONDS: '10',
  };
  key = (JSON.parse((await runAdminCli(env, ['user', 'create', '--name', 'C', '--email', 'c@example.org'])).stdout) as { key: { api_key: string } }).key.api_key;
  server = await startServe(env);
}, 60_000);

afterAll(async () => {
  if (server) await stopProcess(server);
  await pebble?.stop();
  backend?.close();
  removeTempDirs();
});

describe('CAA and our own certificates', { timeout: 90_000 }, () => {
  it('another CA named in CAA: never ordered, the task names the record; our CA named: issued', async () => {
    const backendPort = (backend.address() as { port: number }).port;
    expect((await call('POST', '/domains', { domain: D, backend: `127.0.0.1:${backendPort}`, mask: '*' })).status).toBe(201);
    const caa = await call('POST', `/domains/${D}/dnsrecords`, { name: '@', type: 'CAA', value: '0 issue "other-ca.example"' });
    expect(caa.status).toBe(201);
    const wild = await call('POST', `/domains/${D}/dnsrecords`, { name: '@', type: 'CAA', value: '0 issuewild ";"' });
    expect(wild.status).toBe(201);
    expect((await call('GET', `/domains/${D}/activatens`)).status).toBe(200);
    expect((await call('PATCH', `/domains/${D}`, { ssl: true })).status).toBe(200);
    const refused = await waitForTask((t) => t.challenge === 'dns-01' && t.problems.some((p) => p.type === 'palisade:caa'));
    expect(refused.orders).toBe(0);
    expect(refused.error).toMatch(/CAA forbids our CA/);
    expect(refused.problems).toContainEqual({ name: D, type: 'palisade:caa', detail: expect.stringMatching(/only other-ca\.example, not our CA \(pebble\.test\).*CAA at caa\.example/) });
    expect(refused.problems).toContainEqual({ name: `*.${D}`, type: 'palisade:caa', detail: expect.stringMatching(/issuewild records allow no CA/) });

    // The customer names our CA for both: the next attempt orders and is issued.
    const id = ((await caa.json()) as { id: number }).id;
    expect((await call('PATCH', `/domains/${D}/dnsrecords/${id}`, { value: '0 issue "pebble.test"' })).status).toBe(200);
    expect((await call('PATCH', `/domains/${D}/dnsrecords/${((await wild.json()) as { id: number }).id}`, { value: '0 issuewild "pebble.test; validationmethods=dns-01"' })).status).toBe(200);
    const issued = await waitForTask((t) => t.state === 'done' || t.state === 'failed');
    expect(issued, JSON.stringify(issued)).toMatchObject({ state: 'done', challenge: 'dns-01', orders: 1 });
  });
});
