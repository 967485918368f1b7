// Certificates by HTTP-01, end to end with real parts: `palisade api` and `palisade edge` as
// an operator runs them, pebble as the CA (validating against the edge's HTTP port), and
// pebble-challtestsrv as the public DNS the names resolve through. Issuance on `ssl: true`, the
// edge serving the new certificate by SNI without a restart, the export, the check before
// ordering (a name pointing elsewhere: no order), an explicit request once mended, new names on a
// mask change, the key sealed in the store, and another customer seeing none of it.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmbeddedStore } from '../../src/store/lmdb/index.ts';
import { edgeServes, pollTask, type TaskJson } from '../helpers/cert-tasks.ts';
import { startChallSrv, startPebble, type TestChallSrv, type TestPebble } from '../helpers/pebble.ts';
import { freePort } from '../helpers/redis-server.ts';
import { runAdminCli, START_TIMEOUT_MS, startEdge, startServe, stopProcess, type RunningEdge, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';
import { readZip } from '../helpers/zip.ts';

let api: RunningServer;
let edge: RunningEdge;
let pebble: TestPebble;
let challsrv: TestChallSrv;
let backend: Server;
let apiEnv: Record<string, string>;
let keyA: string;
let keyB: string;
let backendPort: number;

const call = (key: string, method: string, path: string, body?: unknown) =>
  fetch(`${api.url}${path}`, { method, headers: { 'x-auth-key': key, ...(body !== undefined && { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });

const waitForTask = (domain: string, done: (t: TaskJson) => boolean) => pollTask(api.url, keyA, domain, done, { output: api.output });

const admin = async (args: string[]) => {
  const out = await runAdminCli(apiEnv, args);
  expect(out.code, out.stderr).toBe(0);
  return JSON.parse(out.stdout) as Record<string, unknown>;
};

beforeAll(async () => {
  backend = createServer((req, res) => res.end(`backend ${req.headers.host}`));
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
  backendPort = (backend.address() as { port: number }).port;
  challsrv = await startChallSrv();
  const edgeHttpPort = await freePort();
  pebble = await startPebble({ dnsServer: challsrv.dns, httpPort: edgeHttpPort });

  apiEnv = {
    PALISADE_DATA_DIR: tempDir(),
    PALISADE_ALLOW_PRIVATE_BACKENDS: 'true',
    PALISADE_ACME_DIRECTORY: pebble.directory,
    PALISADE_ACME_CA_FILE: pebble.caFile,
    PALISADE_ACME_EMAIL: 'certs@example.org',
    PALISADE_ACME_RESOLVER: challsrv.dns,
    PALISADE_ACME_HTTP_PORT: String(edgeHttpPort),
    PALISADE_ACME_POLL_MS: '50',
    PALISADE_CERT_RETRY_SECONDS: '1',
    PALISADE_CERT_CHALLENGE_TIMEOUT_SECONDS: '10',
  };
  keyA = ((await admin(['user', 'create', '--name', 'A', '--email', 'a@example.org'])).key as { api_key: string }).api_key;
  keyB = ((await admin(['user', 'create', '--name', 'B', '--email', 'b@example.org'])).key as { api_key: string }).api_key;
  await admin(['node', 'add', '--name', 'e1', '--ipv4', '127.0.0.1', '--location', 'DE']);
  const syncPort = await freePort();
  const consumer = (await admin(['consumer', 'add', '--name', 'edge-e1', '--node', '1', '--url', `http://127.0.0.1:${syncPort}/notify`])) as { token: string; secret: string };
  api = await startServe(apiEnv, START_TIMEOUT_MS, 'api');
  edge = await startEdge({
    PALISADE_DATA_DIR: tempDir(),
    PALISADE_EDGE_NODE: '1',
    PALISADE_EDGE_NAME: 'e1',
    PALISADE_EDGE_HTTP_PORT: String(edgeHttpPort),
    PALISADE_SYNC_URL: api.url,
    PALISADE_SYNC_TOKEN: consumer.token,
    PALISADE_SYNC_SECRET: consumer.secret,
    PALISADE_SYNC_PORT: String(syncPort),
  });
}, 90_000);

afterAll(async () => {
  if (edge) await stopProcess(edge);
  if (api) await stopProcess(api);
  await pebble?.stop();
  await challsrv?.stop();
  backend?.close();
  removeTempDirs();
});

describe('certificates by HTTP-01 through an edge', { timeout: 60_000 }, () => {
  let issued: TaskJson;

  it('ssl: true gets a certificate from the CA, and the edge serves it by SNI without a restart', async () => {
    const created = await call(keyA, 'POST', '/domains', { domain: 'shop.example', backend: `127.0.0.1:${backendPort}`, mask: 'www', ssl: true });
    expect(created.status).toBe(201);
    const { task, ms } = await waitForTask('shop.example', (t) => t.state === 'done' || t.state === 'failed');
    console.log(`ssl: true → certificate issued (HTTP-01, pebble) in ${ms} ms`);
    expect(task, JSON.stringify(task)).toMatchObject({ state: 'done', challenge: 'http-01', attempts: 1, orders: 1, names: ['shop.example', 'www.shop.example'], reason: 'new', error: null });
    issued = task;
    const servedAfter = await edgeServes(edge.httpsUrl, 'www.shop.example', task.certificate!.fingerprint, await pebble.root());
    console.log(`… served by the edge ${servedAfter} ms after the task said done`);
    // Active tasks: none left.
    expect(await (await call(keyA, 'GET', '/tasks/')).json()).toEqual([]);
    expect(await (await call(keyA, 'GET', `/tasks/${task.id}`)).json()).toMatchObject({ id: task.id, state: 'done' });
  });

  it('exports a ZIP whose key matches its certificate, the key file mode 0600', async () => {
    const res = await call(keyA, 'GET', '/domains/shop.example/certexport');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/zip');
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="shop\.example-certificate-\d{4}-\d{2}-\d{2}\.zip"$/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const entries = readZip(Buffer.from(await res.arrayBuffer()));
    expect(entries.map((e) => e.name).sort()).toEqual(['cert.pem', 'chain.pem', 'fullchain.pem', 'privkey.pem']);
    const file = (name: string) => entries.find((e) => e.name === name)!;
    expect(file('privkey.pem').mode).toBe(0o100600);
    expect(file('cert.pem').mode).toBe(0o100644);
    const leaf = new X509Certificate(file('cert.pem').data);
    expect(leaf.checkPrivateKey(createPrivateKey(file('privkey.pem').data))).toBe(true);
    expect(leaf.fingerprint256.replaceAll(':', '').toLowerCase()).toBe(issued.certificate!.fingerprint);
    expect(file('fullchain.pem').data.toString()).toBe(file('cert.pem').data.toString() + file('chain.pem').data.toString());
    // The chain is the CA's intermediate: the leaf was issued by it.
    expect(leaf.checkIssued(new X509Certificate(file('chain.pem').data))).toBe(true);
  });

  it('another customer sees none of it', async () => {
    expect(await (await call(keyB, 'GET', '/tasks/?state=all')).json()).toEqual([]);
    expect((await call(keyB, 'GET', `/tasks/${issued.id}`)).status).toBe(404);
    expect((await call(keyB, 'GET', '/domains/shop.example/certexport')).status).toBe(404);
    expect((await call(keyB, 'POST', '/domains/shop.example/certificate')).status).toBe(404);
  });

  it('a name pointing elsewhere is found before ordering (no order placed); once mended, an explicit request issues', async () => {
    await challsrv.addA('www.far.example', ['203.0.113.9']);
    expect((await call(keyA, 'POST', '/domains', { domain: 'far.example', backend: `127.0.0.1:${backendPort}`, mask: 'www', ssl: true })).status).toBe(201);
    const { task } = await waitForTask('far.example', (t) => t.attempts >= 1 && t.state !== 'running');
    expect(task).toMatchObject({ state: 'queued', orders: 0 });
    expect(task.next_attempt).not.toBeNull();
    expect(task.error).toContain('www.far.example resolves to 203.0.113.9');
    expect(task.problems).toEqual([{ name: 'www.far.example', type: 'palisade:points-elsewhere', detail: expect.stringContaining('203.0.113.9') }]);
    // Waiting for a retry, the task says so in GET /tasks/ (active).
    expect(((await (await call(keyA, 'GET', '/tasks/')).json()) as TaskJson[]).map((t) => t.domain)).toContain('far.example');
    const noCert = await call(keyA, 'GET', '/domains/far.example/certexport');
    expect(noCert.status).toBe(409);
    expect(noCert.headers.get('content-type')).toContain('application/problem+json');
    expect(await noCert.json()).toMatchObject({ status: 409, task: { domain: 'far.example', state: 'queued' } });

    await challsrv.addA('www.far.example', ['127.0.0.1']);
    const asked = await call(keyA, 'POST', '/domains/far.example/certificate');
    expect(asked.status).toBe(202);
    const { task: done } = await waitForTask('far.example', (t) => t.state === 'done' || t.state === 'failed');
    expect(done).toMatchObject({ state: 'done', orders: 1 });
    // A valid certificate that covers the names is not replaced by asking again.
    const again = await call(keyA, 'POST', '/domains/far.example/certificate');
    expect(again.status).toBe(200);
    expect(((await again.json()) as TaskJson).certificate!.fingerprint).toBe(done.certificate!.fingerprint);
  });

  it('a mask change gets a new certificate for the new names', async () => {
    expect((await call(keyA, 'PATCH', '/domains/shop.example', { mask: 'www, api' })).status).toBe(200);
    const { task } = await waitForTask('shop.example', (t) => t.reason === 'names-changed' && (t.state === 'done' || t.state === 'failed'));
    expect(task).toMatchObject({ state: 'done', names: ['api.shop.example', 'shop.example', 'www.shop.example'] });
    await edgeServes(edge.httpsUrl, 'api.shop.example', task.certificate!.fingerprint, await pebble.root());
  });

  it('twenty domains turned on at once: each issued once (one attempt, one order)', async () => {
    const names = Array.from({ length: 20 }, (_, i) => `many${i}.example`);
    for (const domain of names) expect((await call(keyA, 'POST', '/domains', { domain, backend: `127.0.0.1:${backendPort}`, mask: '', ssl: false })).status).toBe(201);
    await Promise.all(names.map((domain) => call(keyA, 'PATCH', `/domains/${domain}`, { ssl: true })));
    const started = Date.now();
    let tasks: TaskJson[] = [];
    while (Date.now() - started < 45_000) {
      tasks = ((await (await call(keyA, 'GET', '/tasks/?state=all')).json()) as TaskJson[]).filter((t) => t.domain.startsWith('many'));
      if (tasks.length === 20 && tasks.every((t) => t.state === 'done' || t.state === 'failed')) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    console.log(`20 domains at once: issued in ${Date.now() - started} ms`);
    expect(tasks.map((t) => [t.domain, t.state, t.attempts, t.orders]).sort()).toEqual(names.map((n) => [n, 'done', 1, 1]).sort());
  });

  it('counts what it did in /metrics, and never logs a private key', async () => {
    const text = await (await fetch(`${api.url}/metrics`)).text();
    const value = (line: string) => Number(new RegExp(`^${line.replace(/[{}"=]/g, (c) => `\\${c}`)} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN);
    expect(value('palisade_cert_attempts_total{outcome="issued"}')).toBeGreaterThanOrEqual(23);
    expect(value('palisade_cert_failures_total{type="palisade:points-elsewhere"}')).toBeGreaterThanOrEqual(1);
    expect(value('palisade_cert_orders_total')).toBe(value('palisade_cert_attempts_total{outcome="issued"}'));
    expect(value('palisade_cert_worker_leader')).toBe(1);
    expect(api.output()).not.toContain('PRIVATE KEY');
    expect(edge.output()).not.toContain('PRIVATE KEY');
  });

  it('keeps private keys sealed in the store: no PEM key in its files, and the stored key opens only with the operator key', async () => {
    const dir = apiEnv.PALISADE_DATA_DIR!;
    expect(readdirSync(dir)).toContain('data.mdb');
    const raw = readFileSync(join(dir, 'data.mdb')).toString('latin1');
    expect(raw).toContain('BEGIN CERTIFICATE');
    expect(raw).not.toContain('PRIVATE KEY');
    const store = new EmbeddedStore({ path: dir });
    try {
      const cert = await store.getCertificate('shop.example');
      expect(cert!.key.startsWith('pk1:')).toBe(true);
      // The HTTP-01 tokens are gone once the order is through.
      expect((await store.listChallenges({ limit: 10 })).items).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
