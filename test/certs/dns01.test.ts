// Certificates by DNS-01 through our own name servers, end to end: `palisade serve` (API, name
// server and edge in one process) and pebble resolving every name through our name server. A
// wildcard (mask "*") is refused before ordering while our name servers are off, and issued
// once they are on; the TXT records come and go without the customer ever seeing them; the edge
// serves the certificate for any name under the wildcard; renewal at two thirds of pebble's short
// lifetime, never before; ssl off stops renewal.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { edgeServes, pollTask, type TaskJson } from '../helpers/cert-tasks.ts';
import { dig } from '../helpers/dig.ts';
import { startPebble, type TestPebble } from '../helpers/pebble.ts';
import { freePort } from '../helpers/redis-server.ts';
import { runAdminCli, startServe, stopProcess, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';

/** pebble's certificate lifetime here: renewal is due two thirds in. */
const VALIDITY_S = 12;

let server: RunningServer;
let pebble: TestPebble;
let backend: Server;
let env: Record<string, string>;
let key: string;

const call = (method: string, path: string, body?: unknown) =>
  fetch(`${server.url}${path}`, { method, headers: { 'x-auth-key': key, ...(body !== undefined && { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });

const waitForTask = async (done: (t: TaskJson) => boolean, timeoutMs = 30_000): Promise<TaskJson> =>
  (await pollTask(server.url, key, 'wild.example', done, { timeoutMs, output: server.output })).task;

const servesNow = async (name: string, fingerprint: string) => edgeServes(server.edgeHttpsUrl!, name, fingerprint, await pebble.root());

beforeAll(async () => {
  backend = createServer((req, res) => res.end('backend'));
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
  const dnsPort = await freePort();
  pebble = await startPebble({ dnsServer: `127.0.0.1:${dnsPort}`, httpPort: await freePort(), validitySeconds: VALIDITY_S });
  env = {
    PALISADE_DATA_DIR: tempDir(),
    PALISADE_DNS_PORT: String(dnsPort),
    PALISADE_ALLOW_PRIVATE_BACKENDS: 'true',
    PALISADE_ACME_DIRECTORY: pebble.directory,
    PALISADE_ACME_CA_FILE: pebble.caFile,
    PALISADE_ACME_POLL_MS: '50',
    // Also the least gap between two attempts for one domain: activation runs the waiting task
    // once it is over.
    PALISADE_CERT_RETRY_SECONDS: '2',
    PALISADE_CERT_RENEW_CHECK_SECONDS: '1',
    PALISADE_CERT_CHALLENGE_TIMEOUT_SECONDS: '10',
  };
  const user = await runAdminCli(env, ['user', 'create', '--name', 'W', '--email', 'w@example.org']);
  key = (JSON.parse(user.stdout) as { key: { api_key: string } }).key.api_key;
  server = await startServe(env);
}, 60_000);

afterAll(async () => {
  if (server) await stopProcess(server);
  await pebble?.stop();
  backend?.close();
  removeTempDirs();
});

describe('certificates by DNS-01 on our name servers', { timeout: 90_000 }, () => {
  let first: TaskJson;

  it('a wildcard waits for our name servers, then is issued by DNS-01 and served for any name under it', async () => {
    const backendPort = (backend.address() as { port: number }).port;
    expect((await call('POST', '/domains', { domain: 'wild.example', backend: `127.0.0.1:${backendPort}`, mask: '*', ssl: true })).status).toBe(201);
    const waiting = await waitForTask((t) => t.attempts >= 1 && t.state !== 'running');
    expect(waiting).toMatchObject({ state: 'queued', challenge: 'http-01', orders: 0 });
    expect(waiting.problems).toContainEqual({ name: '*.wild.example', type: 'palisade:wildcard-needs-dns01', detail: expect.stringContaining('activate our name servers') });

    // The customer's record list, watched while the order runs: the service's TXT never shows.
    let watching = true;
    const seen = new Set<string>();
    const watcher = (async () => {
      while (watching) {
        for (const r of (await (await call('GET', '/domains/wild.example/dnsrecords')).json()) as Array<{ name: string }>) seen.add(r.name);
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    const started = Date.now();
    try {
      expect((await call('GET', '/domains/wild.example/activatens')).status).toBe(200);
      first = await waitForTask((t) => t.state === 'done' || t.state === 'failed' || (t.attempts > 2 && t.state === 'queued'));
      console.log(`activatens → wildcard certificate issued (DNS-01, pebble) in ${Date.now() - started} ms (the gap after the last attempt included)`);
    } finally {
      watching = false;
      await watcher;
    }
    expect(first, JSON.stringify(first)).toMatchObject({ state: 'done', challenge: 'dns-01', orders: 1, names: ['*.wild.example', 'wild.example'] });
    expect(first.attempts).toBeGreaterThanOrEqual(2);
    expect([...seen].filter((n) => n.includes('acme'))).toEqual([]);
    // The TXT records are gone from our name server once the order is through.
    const txt = await dig(server.dnsPort, '_acme-challenge.wild.example', 'TXT');
    expect(txt.answer).toEqual([]);
    await servesNow('anything.wild.example', first.certificate!.fingerprint);
    await servesNow('wild.example', first.certificate!.fingerprint);
  });

  it('renews at two thirds of the lifetime, never before, and the edge takes the new certificate', async () => {
    const renewed = await waitForTask((t) => t.reason === 'renewal' && (t.state === 'done' || t.state === 'failed'), VALIDITY_S * 1000 + 20_000);
    expect(renewed).toMatchObject({ state: 'done', challenge: 'dns-01' });
    expect(renewed.certificate!.fingerprint).not.toBe(first.certificate!.fingerprint);
    const from = Date.parse(first.certificate!.not_before);
    const to = Date.parse(first.certificate!.not_after);
    const due = from + ((to - from) * 2) / 3;
    // The new certificate was made after the old one's renewal point (pebble backdates nothing here).
    expect(Date.parse(renewed.certificate!.not_before)).toBeGreaterThanOrEqual(due - 1000);
    await servesNow('www.wild.example', renewed.certificate!.fingerprint);
  });

  it('ssl off stops renewal', async () => {
    expect((await call('PATCH', '/domains/wild.example', { ssl: false })).status).toBe(200);
    const before = await waitForTask(() => true);
    const { not_before, not_after } = before.certificate!;
    const due = Date.parse(not_before) + ((Date.parse(not_after) - Date.parse(not_before)) * 2) / 3;
    await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now()) + 3000));
    const after = await waitForTask(() => true);
    expect(after.id).toBe(before.id);
    expect(after.certificate!.fingerprint).toBe(before.certificate!.fingerprint);
    expect(await (await call('GET', '/tasks/')).json()).toEqual([]);
  });
});
