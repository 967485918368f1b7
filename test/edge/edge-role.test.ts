// `palisade edge` as an operator runs it: a real API process, edge nodes and feed consumers made
// with the operator CLI, the edge fed by the API's change feed (signed pushes, polling far apart
// so that pushes are what moves it), real backends and real TLS clients. The node's share only
// (nothing about other nodes' domains, not even their names), settings in force within a second,
// TLS by SNI with certificates from the feed (swapped without a restart while a connected client
// carries on), fhttps, the node's default certificate, and a restart with the API down.
import { randomUUID } from 'node:crypto';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { connect as netConnect } from 'node:net';
import { connect as tlsConnect, type PeerCertificate } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signNotification } from '../../src/sync/notifier.ts';
import { makeCertificate } from '../helpers/certs.ts';
import { freePort } from '../helpers/redis-server.ts';
import { runAdminCli, START_TIMEOUT_MS, startEdge, startServe, stopProcess, type RunningEdge, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';

let api: RunningServer;
let edge: RunningEdge;
let backend: Server;
let backendPort: number;
let key: string;
let consumer: { token: string; secret: string };
let nsConsumer: { token: string };
let apiEnv: Record<string, string>;
let edgeEnv: Record<string, string>;
const seen: Array<{ url: string; headers: IncomingMessage['headers'] }> = [];

const call = (method: string, path: string, body?: unknown) =>
  fetch(`${api.url}${path}`, { method, headers: { 'x-auth-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });

/** A plain-HTTP request to the edge with a chosen Host. */
function viaEdge(host: string, path: string, method = 'GET') {
  const url = new URL(edge.httpUrl);
  return new Promise<{ status: number; headers: IncomingMessage['headers']; body: string }>((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, method, headers: { host } }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** An HTTPS request to the edge naming `host` in SNI and Host; the certificate it was served with. */
function viaEdgeTls(host: string, path: string, agent?: HttpsAgent) {
  const url = new URL(edge.httpsUrl);
  return new Promise<{ status: number; body: string; fingerprint: string; reused: boolean }>((resolve, reject) => {
    const req = httpsRequest({ host: url.hostname, port: url.port, path, servername: host, headers: { host }, rejectUnauthorized: false, agent: agent ?? false }, (res) => {
      let body = '';
      const socket = res.socket as import('node:tls').TLSSocket;
      const fingerprint = socket.getPeerCertificate().fingerprint256;
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body, fingerprint, reused: socket.isSessionReused() || (req as unknown as { reusedSocket: boolean }).reusedSocket }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The certificate the edge presents for a TLS handshake naming `servername` (or none). */
function peerCertificate(servername: string | undefined): Promise<PeerCertificate> {
  const url = new URL(edge.httpsUrl);
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: url.hostname, port: Number(url.port), servername, rejectUnauthorized: false }, () => {
      resolve(socket.getPeerCertificate());
      socket.end();
    });
    socket.on('error', reject);
  });
}

/** A signed push, as the API sends it: the edge pulls at once. */
async function push(): Promise<void> {
  const body = JSON.stringify({ revision: Number.MAX_SAFE_INTEGER, id: randomUUID() });
  const timestamp = Math.floor(Date.now() / 1000);
  await fetch(edge.notifyUrl, { method: 'POST', headers: { 'content-type': 'application/json', 'x-palisade-timestamp': String(timestamp), 'x-palisade-signature': signNotification(consumer.secret, timestamp, body) }, body });
}

async function eventually<T>(what: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 5000): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  for (;;) {
    const value = await what();
    if (ok(value)) return { value, ms: Date.now() - started };
    if (Date.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms: ${JSON.stringify(value).slice(0, 300)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const admin = async (args: string[]) => {
  const out = await runAdminCli(apiEnv, args);
  expect(out.code, out.stderr).toBe(0);
  return JSON.parse(out.stdout) as Record<string, unknown>;
};

beforeAll(async () => {
  backend = createServer((req, res) => {
    seen.push({ url: req.url!, headers: req.headers });
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ host: req.headers.host, url: req.url, proto: req.headers['x-forwarded-proto'] }));
    });
  });
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
  backendPort = (backend.address() as { port: number }).port;

  apiEnv = { PALISADE_DATA_DIR: tempDir(), PALISADE_ALLOW_PRIVATE_BACKENDS: 'true' };
  key = ((await admin(['user', 'create', '--name', 'edge', '--email', 'edge@example.org'])).key as { api_key: string }).api_key;
  await admin(['node', 'add', '--name', 'e1', '--ipv4', '127.0.0.1', '--location', 'DE']);
  await admin(['node', 'add', '--name', 'e2', '--ipv4', '127.0.0.2', '--location', 'NL']);
  const syncPort = await freePort();
  consumer = (await admin(['consumer', 'add', '--name', 'edge-e1', '--node', '1', '--url', `http://127.0.0.1:${syncPort}/notify`])) as typeof consumer;
  nsConsumer = (await admin(['consumer', 'add', '--name', 'ns1'])) as typeof nsConsumer;
  api = await startServe(apiEnv, START_TIMEOUT_MS, 'api');

  const create = async (body: Record<string, unknown>) => expect((await call('POST', '/domains', body)).status).toBe(201);
  await create({ domain: 'mine.example', backend: `127.0.0.1:${backendPort}` });
  await create({ domain: 'other.example', backend: `127.0.0.1:${backendPort}`, bind_node: [2] });
  await create({ domain: 'tls-one.example', backend: `127.0.0.1:${backendPort}`, ssl: true });
  await create({ domain: 'tls-two.example', backend: `127.0.0.1:${backendPort}`, ssl: true, mask: '*' });

  edgeEnv = {
    PALISADE_DATA_DIR: tempDir(),
    PALISADE_EDGE_NODE: '1',
    PALISADE_EDGE_NAME: 'e1',
    PALISADE_SYNC_URL: api.url,
    PALISADE_SYNC_TOKEN: consumer.token,
    PALISADE_SYNC_SECRET: consumer.secret,
    PALISADE_SYNC_PORT: String(syncPort),
    // Far apart: what happens within a second is the push's doing.
    PALISADE_SYNC_POLL_MS: '60000',
    PALISADE_SYNC_MAX_LAG_MS: '2000',
    // The backend is on loopback: the edge checks addresses again before it connects.
    PALISADE_ALLOW_PRIVATE_BACKENDS: 'true',
  };
  edge = await startEdge(edgeEnv);
  await eventually(() => viaEdge('mine.example', '/'), (r) => r.status === 200);
}, 60_000);

afterAll(async () => {
  if (edge) await stopProcess(edge);
  if (api) await stopProcess(api);
  backend?.close();
  removeTempDirs();
});

describe('palisade edge', () => {
  it('serves the domains bound to its node; another node\'s domain is unknown here, and the feed never names it', async () => {
    const mine = await viaEdge('mine.example', '/hello');
    expect(mine.status).toBe(200);
    expect(JSON.parse(mine.body)).toMatchObject({ host: 'mine.example', url: '/hello', proto: 'http' });
    const other = await viaEdge('other.example', '/');
    expect(other.status).toBe(421);

    const auth = { authorization: `Bearer ${consumer.token}` };
    const snapshot = await (await fetch(`${api.url}/sync/edge/snapshot`, { headers: auth })).text();
    expect(snapshot).toContain('"mine.example"');
    expect(snapshot).not.toContain('other.example');
    expect(snapshot.trim().split('\n').at(-1)).toMatch(/^\{"end":\{"items":\d+\}\}$/);

    // Moving a domain away: the edge drops it, and learns it only by a keyed digest.
    const before = Number(JSON.parse(snapshot.split('\n')[0]!).edge.revision);
    expect((await call('PATCH', '/domains/mine.example', { bind_node: [2] })).status).toBe(200);
    await eventually(() => viaEdge('mine.example', '/'), (r) => r.status === 421, 1000);
    const changes = await (await fetch(`${api.url}/sync/edge/changes?since=${before}`, { headers: auth })).text();
    expect(changes).not.toContain('mine.example');
    expect(JSON.parse(changes).changes).toEqual([expect.objectContaining({ kind: 'domain', op: 'delete', digest: expect.stringMatching(/^[\w-]{43}$/) })]);
    // And back.
    expect((await call('PATCH', '/domains/mine.example', { bind_node: [1, 2] })).status).toBe(200);
    await eventually(() => viaEdge('mine.example', '/'), (r) => r.status === 200, 1000);
  });

  it('feeds edges and name servers apart: each token reads its own feed only', async () => {
    const edgeAuth = { authorization: `Bearer ${consumer.token}` };
    const nsAuth = { authorization: `Bearer ${nsConsumer.token}` };
    expect((await fetch(`${api.url}/sync/snapshot`, { headers: edgeAuth })).status).toBe(403);
    expect((await fetch(`${api.url}/sync/changes?since=0`, { headers: edgeAuth })).status).toBe(403);
    expect((await fetch(`${api.url}/sync/edge/snapshot`, { headers: nsAuth })).status).toBe(403);
    expect((await fetch(`${api.url}/sync/edge/snapshot`)).status).toBe(401);
    expect((await fetch(`${api.url}/sync/edge/changes?since=0`, { headers: { authorization: 'Bearer nt_not-a-real-token' } })).status).toBe(401);
  });

  it('puts a setting changed through the API in force within a second (push)', async () => {
    const times: number[] = [];
    for (const enabled of [false, true, false, true]) {
      const started = Date.now();
      expect((await call('PATCH', '/domains/mine.example', { enabled })).status).toBe(200);
      await eventually(() => viaEdge('mine.example', '/'), (r) => (enabled ? r.status === 200 : r.body.includes('not configured')), 1000);
      times.push(Date.now() - started);
    }
    console.log(`API change → edge applied: ${times.join(', ')} ms`);
  });

  it('terminates TLS with the certificate of the name asked for (SNI), the default certificate otherwise, and swaps certificates without a restart', async () => {
    const one = makeCertificate(['tls-one.example', 'www.tls-one.example']);
    const two = makeCertificate(['tls-two.example', '*.tls-two.example']);
    // Before any certificate: the node's own, which names no customer.
    const before = await peerCertificate('tls-one.example');
    expect(before.subject.CN).toBe('palisade edge e1');
    await admin(['cert', 'put', 'tls-one.example', '--cert', one.certPath, '--key', one.keyPath]);
    await admin(['cert', 'put', 'tls-two.example', '--cert', two.certPath, '--key', two.keyPath]);
    await push();
    await eventually(() => peerCertificate('tls-two.example'), (c) => c.fingerprint256 === two.fingerprint256);
    expect((await peerCertificate('tls-one.example')).fingerprint256).toBe(one.fingerprint256);
    expect((await peerCertificate('www.tls-one.example')).fingerprint256).toBe(one.fingerprint256);
    expect((await peerCertificate('deep.tls-two.example')).fingerprint256).toBe(two.fingerprint256);
    // Names the certificate does not cover, unknown names, no SNI, other nodes' names: the default one.
    for (const name of ['mail.tls-one.example', 'nobody.example', 'other.example', undefined]) {
      const cert = await peerCertificate(name);
      expect(cert.subject.CN, String(name)).toBe('palisade edge e1');
    }

    // Requests over TLS reach the backend, which learns the scheme.
    const agent = new HttpsAgent({ keepAlive: true, maxSockets: 1 });
    const first = await viaEdgeTls('tls-one.example', '/tls', agent);
    expect(first.status).toBe(200);
    expect(JSON.parse(first.body)).toMatchObject({ proto: 'https', host: 'tls-one.example' });
    expect(first.fingerprint).toBe(one.fingerprint256);

    // A new certificate: new handshakes get it; the connected client carries on undisturbed.
    const renewed = makeCertificate(['tls-one.example', 'www.tls-one.example']);
    await admin(['cert', 'put', 'tls-one.example', '--cert', renewed.certPath, '--key', renewed.keyPath]);
    await push();
    await eventually(() => peerCertificate('tls-one.example'), (c) => c.fingerprint256 === renewed.fingerprint256);
    const again = await viaEdgeTls('tls-one.example', '/tls-again', agent);
    expect(again.status).toBe(200);
    expect(again.reused).toBe(true);
    expect(again.fingerprint).toBe(one.fingerprint256);
    agent.destroy();
    expect((await viaEdgeTls('tls-one.example', '/fresh')).fingerprint).toBe(renewed.fingerprint256);
  });

  it('fhttps: plain HTTP is sent to https (301 for GET/HEAD, 308 otherwise), never the ACME paths, never without a certificate', async () => {
    expect((await call('PATCH', '/domains/tls-one.example', { fhttps: true })).status).toBe(200);
    expect((await call('PATCH', '/domains/mine.example', { fhttps: true })).status).toBe(200);
    const httpsPort = new URL(edge.httpsUrl).port;
    const get = await eventually(() => viaEdge('tls-one.example', '/a/b?x=1&y=2'), (r) => r.status === 301, 1000);
    expect(get.value.headers.location).toBe(`https://tls-one.example:${httpsPort}/a/b?x=1&y=2`);
    // An absolute-form request (a client talking to us as to a proxy) is redirected to the same place.
    const absolute = await new Promise<string>((resolve) => {
      const url = new URL(edge.httpUrl);
      const socket = netConnect(Number(url.port), url.hostname, () => socket.write('GET http://tls-one.example/a/b?x=1 HTTP/1.1\r\nHost: elsewhere.example\r\nConnection: close\r\n\r\n'));
      let received = '';
      socket.on('data', (d: Buffer) => (received += d.toString()));
      socket.on('close', () => resolve(received));
    });
    expect(absolute).toMatch(/^HTTP\/1\.1 301/);
    expect(absolute.toLowerCase()).toContain(`location: https://tls-one.example:${httpsPort}/a/b?x=1\r\n`);
    expect((await viaEdge('www.tls-one.example', '/', 'POST')).status).toBe(308);
    const ping = await viaEdge('tls-one.example', '/.well-known/acme-challenge/ping');
    expect([ping.status, ping.body]).toEqual([200, 'pong']);
    expect((await viaEdge('tls-one.example', '/.well-known/acme-challenge/some-token')).status).toBe(404);
    // No certificate covers mine.example: redirecting would lead into a failing handshake.
    expect((await viaEdge('mine.example', '/')).status).toBe(200);
    expect((await viaEdgeTls('tls-one.example', '/over-tls')).status).toBe(200);
  });

  it("applies a customer's IP lists on the nodes they name: another node's list stays away, and moves in within a second", async () => {
    const created = await call('POST', '/security/iplist', { name: 'elsewhere', ips: ['127.0.0.1'], allnodes: false, nodes: [2] });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: number };
    await push();
    await new Promise((r) => setTimeout(r, 200));
    expect((await viaEdge('mine.example', '/')).status).toBe(200);
    const snapshot = await (await fetch(`${api.url}/sync/edge/snapshot`, { headers: { authorization: `Bearer ${consumer.token}` } })).text();
    expect(snapshot).not.toContain('"elsewhere"');
    // Named to this node too: in force here.
    expect((await call('PATCH', `/security/iplist/${id}`, { nodes: [1, 2] })).status).toBe(200);
    const blocked = await eventually(() => viaEdge('mine.example', '/'), (r) => r.status === 403, 1000);
    expect(blocked.value.body).toContain('127.0.0.1');
    expect((await call('PATCH', `/security/iplist/${id}`, { allnodes: true, nodes: [] })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 200));
    expect((await viaEdge('mine.example', '/')).status).toBe(403);
    expect((await call('DELETE', `/security/iplist/${id}`)).status).toBe(204);
    await eventually(() => viaEdge('mine.example', '/'), (r) => r.status === 200, 1000);
  });

  it('reports its feed and traffic on /healthz and /metrics', async () => {
    const base = edge.notifyUrl.replace(/\/notify$/, '');
    const health = await (await fetch(`${base}/healthz`)).json();
    expect(health).toMatchObject({ status: 'ok', node: 1, lag: 0 });
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toMatch(/palisade_edge_requests_total\{class="2xx",cache="BYPASS"\} \d+/);
    expect(metrics).toMatch(/palisade_edge_upstream_seconds_bucket\{le="\+Inf"\} [1-9]/);
    expect(metrics).toMatch(/palisade_edge_active_connections \d+/);
    expect(metrics).toMatch(/palisade_edge_revision_applied [1-9]/);
    expect(metrics).toMatch(/palisade_sync_notifications_total\{outcome="accepted"\} [1-9]/);
    // Every family a scraper sees says what it is.
    const typed = [...metrics.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]);
    const helped = new Set([...metrics.matchAll(/^# HELP (\S+) /gm)].map((m) => m[1]));
    expect(typed.filter((name) => !helped.has(name))).toEqual([]);
  });

  it('restarted while the API is down, serves what it had (domains and certificates) and says it is degraded', async () => {
    const tlsBefore = (await peerCertificate('tls-one.example')).fingerprint256;
    await stopProcess(api);
    await stopProcess(edge);
    edge = await startEdge(edgeEnv);
    expect(edge.output()).toMatch(/serving the local state/);
    expect((await viaEdge('mine.example', '/')).status).toBe(200);
    expect((await viaEdge('other.example', '/')).status).toBe(421);
    expect((await peerCertificate('tls-one.example')).fingerprint256).toBe(tlsBefore);
    const base = edge.notifyUrl.replace(/\/notify$/, '');
    const health = await eventually(() => fetch(`${base}/healthz`).then(async (r) => ({ status: r.status, body: (await r.json()) as { reason?: string } })), (h) => h.status === 503, 6000);
    expect(health.value.body.reason).toMatch(/no successful pull/);
  });

  it('connects to no loopback or private backend unless its own operator allows it, whatever the feed says (502, the backend never reached)', async () => {
    // The API allowed the loopback backend; this edge's operator does not.
    await stopProcess(edge);
    const { PALISADE_ALLOW_PRIVATE_BACKENDS: _allowed, ...strict } = edgeEnv;
    edge = await startEdge(strict);
    const before = seen.length;
    const refused = await viaEdge('mine.example', '/inside');
    expect(refused.status).toBe(502);
    // Nor do its health checks (whose verdicts would tell what answers inside).
    await new Promise((r) => setTimeout(r, 300));
    expect(seen.length).toBe(before);
    expect(edge.output()).not.toMatch(/backend (down|up again)/);
  });
});
