// The proxy's relay (backend-relay.ts) when the client goes away at the awkward moments: before
// the proxy starts (an earlier stage was waiting), while its request waits for one of the pooled
// backend connections, and while the relay is paused for a slow reader. Real sockets on loopback:
// a backend that answers slowly, an edge-side HTTP server calling Proxy.forward, real clients.
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { pino } from 'pino';
import { BackendHealth } from '../../src/edge/backend-health.ts';
import { Proxy, type ProxyOutcome } from '../../src/edge/proxy.ts';
import type { DomainState } from '../../src/model/domain.ts';

const POOL = 256;
let backend: Server;
let backendPort = 0;
/** Requests the backend has received, by path. */
const seen = new Map<string, number>();
const health = new BackendHealth(pino({ level: 'silent' }), 2000, true);
const proxy = new Proxy({ connectTimeoutMs: 2000, responseTimeoutMs: 10_000, maxBodyBytes: 1 << 20, allowPrivateBackends: true }, health);

beforeAll(async () => {
  backend = createServer((req, res) => {
    const path = req.url ?? '/';
    seen.set(path, (seen.get(path) ?? 0) + 1);
    // /slow: answers after 1.5 s; /big: 8 MiB, sent as fast as the reader takes it.
    if (path.startsWith('/slow')) return void setTimeout(() => res.end('slow'), 1500);
    if (path === '/big') {
      res.writeHead(200, { 'content-length': String(8 << 20) });
      return void res.end(Buffer.alloc(8 << 20, 'x'));
    }
    res.end('ok');
  });
  backend.keepAliveTimeout = 10_000;
  await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
  backendPort = (backend.address() as AddressInfo).port;
});

afterAll(async () => {
  proxy.close();
  backend.closeAllConnections();
  await new Promise((resolve) => backend.close(resolve));
});

const domain = () => ({ backend: `127.0.0.1:${backendPort}`, failover: null }) as unknown as DomainState;

/** An edge-side server whose handler runs `before` (an earlier stage), then forwards; outcomes are handed to `outcomes`. */
async function edge(before: (req: IncomingMessage, res: ServerResponse) => Promise<void>, outcomes: Array<ProxyOutcome & { ms: number }>): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    void before(req, res).then(async () => {
      const started = performance.now();
      const outcome = await proxy.forward({ req, res, domain: domain(), host: 'example.test', scheme: 'http', client: '127.0.0.1' });
      outcomes.push({ ...outcome, ms: performance.now() - started });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

function get(port: number, path: string, onResponse?: (res: IncomingMessage) => void) {
  const req = request({ host: '127.0.0.1', port, path, agent: false }, (res) => (onResponse ? onResponse(res) : res.resume()));
  req.on('error', () => undefined);
  req.end();
  return req;
}

const until = async (check: () => boolean, ms: number) => {
  for (const end = performance.now() + ms; performance.now() < end && !check(); ) await new Promise((r) => setTimeout(r, 10));
  return check();
};

it('a client gone while an earlier stage waited: the proxy does not start, and says so at once', async () => {
  const outcomes: Array<ProxyOutcome & { ms: number }> = [];
  // The earlier stage waits 200 ms; the client leaves after 50.
  const { server, port } = await edge(() => new Promise((r) => setTimeout(r, 200)), outcomes);
  const req = get(port, '/before');
  setTimeout(() => req.destroy(), 50);
  expect(await until(() => outcomes.length === 1, 3000), 'the forward never settled').toBe(true);
  expect(outcomes[0]).toMatchObject({ status: 499, via: 'client-gone' });
  expect(seen.get('/before') ?? 0).toBe(0);
  server.closeAllConnections();
  server.close();
});

it('a client gone while its request waits for a pooled backend connection: out of the queue at once', async () => {
  const outcomes: Array<ProxyOutcome & { ms: number }> = [];
  const { server, port } = await edge(async () => undefined, outcomes);
  // Every pooled connection busy with a slow answer.
  for (let i = 0; i < POOL; i++) get(port, `/slow-${i}`);
  expect(await until(() => [...seen.keys()].filter((k) => k.startsWith('/slow-')).length === POOL, 5000)).toBe(true);
  const waiting = get(port, '/slow-queued');
  await new Promise((r) => setTimeout(r, 200));
  waiting.destroy();
  // Settled long before a connection frees (1.5 s), never sent to the backend.
  expect(await until(() => outcomes.some((o) => o.via === 'client-gone'), 1000), 'the queued request was not taken out').toBe(true);
  await until(() => outcomes.length === POOL + 1, 5000);
  expect(outcomes.filter((o) => o.status === 200)).toHaveLength(POOL);
  expect(seen.get('/slow-queued') ?? 0).toBe(0);
  server.closeAllConnections();
  server.close();
}, 20_000);

it('a client gone while the relay is paused for it: the exchange ends, the pooled connection is given up', async () => {
  const outcomes: Array<ProxyOutcome & { ms: number }> = [];
  const { server, port } = await edge(async () => undefined, outcomes);
  // A client that reads the first bytes of 8 MiB, then stops reading, then leaves.
  const req = get(port, '/big', (res) => {
    res.once('data', () => {
      res.pause();
      setTimeout(() => req.destroy(), 300);
    });
  });
  expect(await until(() => outcomes.length === 1, 3000), 'the forward never settled').toBe(true);
  expect(outcomes[0]).toMatchObject({ status: 200, via: 'backend' });
  expect(outcomes[0]!.bytes).toBeLessThan(8 << 20);
  server.closeAllConnections();
  server.close();
});
