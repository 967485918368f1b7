// An outage end to end with real parts: `palisade api`, `palisade edge` (node 1, reporting on its
// authenticated channel), two `palisade dns` name servers, real backends on loopback and real
// webhook receivers. The backend is stopped and started again: the uptime endpoint shows the
// outage and the response times; the customer's receiver gets exactly one "down" and one
// "recovered" per domain, signed, within 5 s of the API seeing the change; the DNS-only domain
// answers its failover on both name servers (dig) while the backend is down, with a short TTL,
// and its backend again after; a failing receiver gets retries; another customer sees nothing.
import { createServer, request, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dig } from '../helpers/dig.ts';
import { freePort } from '../helpers/redis-server.ts';
import { runAdminCli, START_TIMEOUT_MS, startEdge, startNameServer, startServe, stopProcess, type RunningEdge, type RunningNameServer, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';
import { signatureValid, startReceiver, type TestReceiver } from '../helpers/webhook-receiver.ts';
import { startBackendAt, type StoppableBackend } from '../helpers/stoppable-backend.ts';

let api: RunningServer;
let edge: RunningEdge;
const nameServers: RunningNameServer[] = [];
let apiEnv: Record<string, string>;
let keyA: string;
let keyB: string;
let backendPort: number;
let backend: StoppableBackend | undefined;
let failover: Server;
let failoverPort: number;
let receiverA: TestReceiver;
let receiverB: TestReceiver;
let secretA: string;
let hookA: string;

const call = (key: string, method: string, path: string, body?: unknown) =>
  fetch(`${api.url}${path}`, { method, headers: { 'x-auth-key': key, ...(body !== undefined && { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });

const admin = async (args: string[]) => {
  const out = await runAdminCli(apiEnv, args);
  expect(out.code, out.stderr).toBe(0);
  return JSON.parse(out.stdout) as Record<string, unknown>;
};

const startBackend = (port: number) => startBackendAt(port, (req, res) => setTimeout(() => res.end(`backend ${req.headers.host}`), 20));

async function stopBackend(): Promise<void> {
  const b = backend!;
  backend = undefined;
  await b.stop();
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n--- api ---\n${api.output().slice(-3000)}\n--- edge ---\n${edge.output().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

interface UptimeJson {
  state: string;
  nodes: Record<string, { state: string }>;
  minute: { summary: Record<string, unknown> & { checks: number; checks_failed: number; requests: number; response_ms: { p50: number | null; p99: number | null }; nodes: Record<string, unknown> }; periods: Array<{ start: string; checks: number; checks_failed: number; availability: number | null }> };
  hour: { periods: unknown[] };
  day: { periods: unknown[]; summary: { checks: number } };
}
const uptime = async (domain: string) => (await (await call(keyA, 'GET', `/domains/${domain}/uptime`)).json()) as UptimeJson;

/** A GET through the edge for a customer's name (fetch cannot set Host). */
function viaEdge(host: string): Promise<number> {
  const url = new URL(edge.httpUrl);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: '/', headers: { host }, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

const eventsOf = (receiver: TestReceiver, domain: string) => receiver.received.filter((r) => r.json.domain === domain).map((r) => r.json.type);

const answers = async (port: number) => (await dig(port, 'dnsonly.example', 'A')).answer.filter((a) => a.type === 'A');

beforeAll(async () => {
  backendPort = await freePort();
  backend = await startBackend(backendPort);
  failover = createServer((_req, res) => res.end('failover'));
  await new Promise<void>((resolve) => failover.listen(0, '127.0.0.2', resolve));
  failoverPort = (failover.address() as { port: number }).port;
  receiverA = await startReceiver();
  receiverB = await startReceiver();

  apiEnv = {
    PALISADE_DATA_DIR: tempDir(),
    PALISADE_ALLOW_PRIVATE_BACKENDS: 'true',
    PALISADE_WEBHOOK_ALLOW_PRIVATE: 'true',
    PALISADE_WEBHOOK_RETRY_MS: '200',
  };
  keyA = ((await admin(['user', 'create', '--name', 'A', '--email', 'a@example.org'])).key as { api_key: string }).api_key;
  keyB = ((await admin(['user', 'create', '--name', 'B', '--email', 'b@example.org'])).key as { api_key: string }).api_key;
  await admin(['node', 'add', '--name', 'e1', '--ipv4', '127.0.0.1', '--location', 'DE']);
  const edgeSync = await freePort();
  const edgeConsumer = (await admin(['consumer', 'add', '--name', 'edge-e1', '--node', '1', '--url', `http://127.0.0.1:${edgeSync}/notify`])) as { token: string; secret: string };
  const nsConsumers: Array<{ token: string; secret: string; port: number }> = [];
  for (const name of ['ns1', 'ns2']) {
    const port = await freePort();
    nsConsumers.push({ ...((await admin(['consumer', 'add', '--name', name, '--url', `http://127.0.0.1:${port}/notify`])) as { token: string; secret: string }), port });
  }
  api = await startServe(apiEnv, START_TIMEOUT_MS, 'api');
  edge = await startEdge({
    PALISADE_DATA_DIR: tempDir(),
    PALISADE_EDGE_NODE: '1',
    PALISADE_SYNC_URL: api.url,
    PALISADE_SYNC_TOKEN: edgeConsumer.token,
    PALISADE_SYNC_SECRET: edgeConsumer.secret,
    PALISADE_SYNC_PORT: String(edgeSync),
    PALISADE_SYNC_POLL_MS: '200',
    PALISADE_EDGE_CHECK_INTERVAL_MS: '200',
    PALISADE_EDGE_REPORT_MS: '500',
    // The backend is on loopback: the edge checks addresses again before it connects.
    PALISADE_ALLOW_PRIVATE_BACKENDS: 'true',
  });
  for (const c of nsConsumers) {
    nameServers.push(await startNameServer({ PALISADE_DATA_DIR: tempDir(), PALISADE_SYNC_URL: api.url, PALISADE_SYNC_TOKEN: c.token, PALISADE_SYNC_SECRET: c.secret, PALISADE_SYNC_PORT: String(c.port), PALISADE_SYNC_POLL_MS: '200' }));
  }
}, 90_000);

afterAll(async () => {
  for (const ns of nameServers) await stopProcess(ns);
  if (edge) await stopProcess(edge);
  if (api) await stopProcess(api);
  if (backend) await stopBackend();
  failover?.close();
  await receiverA?.close();
  await receiverB?.close();
  removeTempDirs();
});

describe('a backend outage seen by a real edge', { timeout: 60_000 }, () => {
  it('registers webhooks (the secret shown once) and domains; the edge reports them up with response times', async () => {
    const created = await call(keyA, 'POST', '/me/webhooks', { url: receiverA.url, description: 'ops' });
    expect(created.status).toBe(201);
    const hook = (await created.json()) as { id: string; secret: string; events: string[] };
    expect(hook.secret).toMatch(/^[0-9a-f]{64}$/);
    expect(hook.events).toEqual([]);
    secretA = hook.secret;
    hookA = hook.id;
    expect(JSON.stringify(await (await call(keyA, 'GET', '/me/webhooks')).json())).not.toContain(secretA);
    expect((await call(keyB, 'POST', '/me/webhooks', { url: receiverB.url })).status).toBe(201);

    expect((await call(keyA, 'POST', '/domains', { domain: 'site.example', backend: `127.0.0.1:${backendPort}` })).status).toBe(201);
    expect((await call(keyA, 'POST', '/domains', { domain: 'dnsonly.example', enabled: false, mask: 'www', backend: `127.0.0.1:${backendPort}`, failover: `127.0.0.2:${failoverPort}` })).status).toBe(201);
    expect((await call(keyA, 'POST', '/domains/dnsonly.example/activatens')).status).toBe(200);
    for (const ns of nameServers) {
      const a = await until('the DNS-only domain answered', async () => ((await answers(ns.dnsPort)).length > 0 ? await answers(ns.dnsPort) : undefined));
      expect(a.map((r) => r.data)).toEqual(['127.0.0.1']);
      expect(a[0]!.ttl).toBe(30);
    }
    // Real requests through the edge: their upstream times feed the response percentiles.
    await until('the edge serving site.example', async () => ((await viaEdge('site.example')) === 200 ? true : undefined));
    for (let i = 0; i < 20; i++) expect(await viaEdge('site.example')).toBe(200);
    const up = await until('uptime with checks and requests', async () => {
      const u = await uptime('site.example');
      return u.state === 'up' && u.minute.summary.checks >= 3 && u.minute.summary.requests >= 20 ? u : undefined;
    });
    expect(up.nodes).toEqual({ 1: expect.objectContaining({ state: 'up' }) });
    expect(up.minute.summary.checks_failed).toBe(0);
    expect(up.minute.summary.response_ms.p50).toBeGreaterThanOrEqual(15);
    // A sane figure in ms (at least the backend's 15 ms; not microseconds counted as ms), not a
    // latency bound: a loaded machine may add hundreds of ms.
    expect(up.minute.summary.response_ms.p50).toBeLessThan(2000);
    // Created this minute (or the one before, across a minute's turn): nothing older is shown.
    expect(up.minute.periods.length).toBeGreaterThanOrEqual(1);
    expect(up.minute.periods.length).toBeLessThanOrEqual(2);
    expect(up.day.summary.checks).toBeGreaterThanOrEqual(3);
    expect(Object.keys(up.minute.summary.nodes)).toEqual(['1']);
  });

  it('the backend stops: one signed "down" within 5 s of detection, failover in DNS on both name servers, the outage in the uptime', async () => {
    await stopBackend();
    const stoppedAt = Date.now();
    const down = await until('backend.down for site.example', async () => receiverA.received.find((r) => r.json.domain === 'site.example' && r.json.type === 'backend.down'));
    const detectedAt = Date.parse(String(down.json.data.since));
    console.log(`backend stopped → edge verdict at the API ${detectedAt - stoppedAt} ms → webhook received ${down.at - detectedAt} ms later`);
    expect(down.at - detectedAt).toBeLessThan(5000);
    expect(signatureValid(down, secretA)).toBe(true);
    expect(down.headers['x-palisade-event']).toBe('backend.down');
    expect(down.json.data).toMatchObject({ state: 'down', nodes: { 1: 'down' } });

    for (const ns of nameServers) {
      const a = await until('the failover answered', async () => {
        const got = await answers(ns.dnsPort);
        return got[0]?.data === '127.0.0.2' ? got : undefined;
      });
      expect(a[0]!.ttl).toBe(30);
      expect((await dig(ns.dnsPort, 'www.dnsonly.example', 'A')).answer.map((r) => r.data)).toEqual(['127.0.0.2']);
    }
    const domain = (await (await call(keyA, 'GET', '/domains/dnsonly.example')).json()) as { failover_active: boolean };
    expect(domain.failover_active).toBe(true);

    // The enabled domain's requests go to no backend: 502 from the edge, counted as failed.
    expect(await viaEdge('site.example')).toBe(502);
    const out = await until('uptime showing the outage', async () => {
      const u = await uptime('site.example');
      return u.state === 'down' && u.minute.summary.checks_failed >= 3 ? u : undefined;
    });
    expect(out.nodes['1']!.state).toBe('down');
    const last = out.minute.periods[out.minute.periods.length - 1]!;
    expect(last.availability).toBeLessThan(100);
    const dnsOnly = await uptime('dnsonly.example');
    expect(dnsOnly.state).toBe('failover');
  });

  it('the backend comes back: one "recovered"; DNS answers the backend again', async () => {
    backend = await startBackend(backendPort);
    const recovered = await until('backend.recovered for site.example', async () => receiverA.received.find((r) => r.json.domain === 'site.example' && r.json.type === 'backend.recovered'));
    expect(Date.now() - Date.parse(String(recovered.json.data.since))).toBeLessThan(5000 + 1000);
    expect(signatureValid(recovered, secretA)).toBe(true);
    for (const ns of nameServers) {
      await until('the backend answered again', async () => ((await answers(ns.dnsPort))[0]?.data === '127.0.0.1' ? true : undefined));
    }
    expect((await uptime('site.example')).state).toBe('up');
    // Nothing more comes in: exactly one of each.
    await new Promise((r) => setTimeout(r, 1500));
    expect(eventsOf(receiverA, 'site.example')).toEqual(['backend.down', 'backend.recovered']);
    expect(eventsOf(receiverA, 'dnsonly.example').sort()).toEqual(['backend.down', 'backend.recovered', 'failover.engaged', 'failover.released']);
    for (const r of receiverA.received) expect(signatureValid(r, secretA)).toBe(true);
    // The customer's events list, newest first; the delivery log shows each delivered.
    const events = (await (await call(keyA, 'GET', '/me/events')).json()) as Array<{ type: string; domain: string; created: string }>;
    expect(events.filter((e) => e.domain === 'site.example').map((e) => e.type)).toEqual(['backend.recovered', 'backend.down']);
    const log = (await (await call(keyA, 'GET', `/me/webhooks/${hookA}/deliveries`)).json()) as Array<{ state: string; attempts: Array<{ status: number }> }>;
    expect(log.length).toBe(receiverA.received.length);
    for (const d of log) expect(d).toMatchObject({ state: 'delivered', attempts: [{ status: 204 }] });
  });

  it('another customer sees nothing of it', async () => {
    expect(receiverB.received.filter((r) => r.json.type !== 'webhook.test')).toEqual([]);
    expect(await (await call(keyB, 'GET', '/me/events')).json()).toEqual([]);
    expect((await call(keyB, 'GET', '/domains/site.example/uptime')).status).toBe(404);
    expect((await call(keyB, 'GET', `/me/webhooks/${hookA}`)).status).toBe(404);
    expect((await call(keyB, 'GET', `/me/webhooks/${hookA}/deliveries`)).status).toBe(404);
    expect((await call(keyB, 'DELETE', `/me/webhooks/${hookA}`)).status).toBe(404);
    expect((await call(keyB, 'POST', `/me/webhooks/${hookA}/test`)).status).toBe(404);
  });

  it('a receiver that fails gets retries until it takes the event, each attempt in the log', async () => {
    const failing = await startReceiver({ failFirst: 2, failStatus: 503 });
    try {
      const hook = (await (await call(keyA, 'POST', '/me/webhooks', { url: failing.url, events: ['webhook.test'] })).json()) as { id: string; secret: string };
      const test = await call(keyA, 'POST', `/me/webhooks/${hook.id}/test`);
      expect(test.status).toBe(202);
      const delivery = (await test.json()) as { id: string; state: string };
      expect(delivery.state).toBe('pending');
      const log = await until('the delivery delivered', async () => {
        const list = (await (await call(keyA, 'GET', `/me/webhooks/${hook.id}/deliveries`)).json()) as Array<{ id: string; state: string; attempts: Array<{ status: number }> }>;
        return list[0]?.state === 'delivered' ? list : undefined;
      });
      expect(log).toHaveLength(1);
      expect(log[0]!.id).toBe(delivery.id);
      expect(log[0]!.attempts.map((a) => a.status)).toEqual([503, 503, 204]);
      expect(failing.received.map((r) => r.status)).toEqual([503, 503, 204]);
      expect(new Set(failing.received.map((r) => r.headers['x-palisade-delivery']))).toEqual(new Set([delivery.id]));
      for (const r of failing.received) expect(signatureValid(r, hook.secret)).toBe(true);
      // Backoff: 200 ms, then 400 ms (each ±20 %).
      const gaps = [failing.received[1]!.at - failing.received[0]!.at, failing.received[2]!.at - failing.received[1]!.at];
      expect(gaps[0]).toBeGreaterThanOrEqual(155);
      expect(gaps[1]).toBeGreaterThanOrEqual(315);
      // Subscribed to the test event only: the outage events above did not go there.
      expect(failing.received.every((r) => r.json.type === 'webhook.test')).toBe(true);
    } finally {
      await failing.close();
    }
  });

  it("one customer's slow receiver with a backlog does not hold up another customer's deliveries", async () => {
    const slow = await startReceiver({ delayMs: 1500 });
    try {
      const hook = (await (await call(keyA, 'POST', '/me/webhooks', { url: slow.url, events: ['webhook.test'] })).json()) as { id: string };
      for (let i = 0; i < 30; i++) expect((await call(keyA, 'POST', `/me/webhooks/${hook.id}/test`)).status).toBe(202);
      const hooksB = (await (await call(keyB, 'GET', '/me/webhooks')).json()) as Array<{ id: string }>;
      const sent = Date.now();
      expect((await call(keyB, 'POST', `/me/webhooks/${hooksB[0]!.id}/test`)).status).toBe(202);
      await until("B's test event", async () => (receiverB.received.some((r) => r.json.type === 'webhook.test') ? true : undefined));
      const tookB = receiverB.received.find((r) => r.json.type === 'webhook.test')!.at - sent;
      console.log(`B's delivery took ${tookB} ms while A's slow receiver had ${30 - slow.received.length} of 30 waiting`);
      // A's 30 events ahead of B's at 1.5 s each would hold B's for 45 s; even one of them, 1.5 s.
      // B's own delivery takes milliseconds: 4 s leaves a loaded machine its room.
      expect(tookB).toBeLessThan(4000);
      expect(slow.received.length).toBeLessThan(10);
      expect((await call(keyA, 'DELETE', `/me/webhooks/${hook.id}`)).status).toBe(204);
    } finally {
      await slow.close();
    }
  });

  it('the edge reports only with its node token: a customer key or no token is refused', async () => {
    const body = JSON.stringify({ rows: [{ domain: 'site.example', state: 'down', measures: [] }] });
    expect((await fetch(`${api.url}/sync/edge/report`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).status).toBe(401);
    expect((await fetch(`${api.url}/sync/edge/report`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${keyA}` }, body })).status).toBe(401);
    expect((await uptime('site.example')).state).toBe('up');
  });
});
