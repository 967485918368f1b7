// The API's key-free routes (issue 25 §3): heavy public documents are answered with a strong
// ETag (304 on If-None-Match) and compressed once, not per request; their success lines are
// sampled; /metrics answers only an operator (a token, or loopback when none is set).
// The rate limits of the front door are in rate-limit.test.ts (they measure time).
import { request as httpRequest } from 'node:http';
import { Writable } from 'node:stream';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/api/app.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { openStore } from '../../src/store/index.ts';
import { startApi, type TestApi } from '../helpers/api-server.ts';
import { testConfig } from '../helpers/config.ts';
import { createNetns, type TestNetns } from '../helpers/netns.ts';
import { startServe, stopProcess, stopStarted } from '../helpers/spawn-palisade.ts';
import { tempDir } from '../helpers/temp.ts';

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** One request on a real socket, the body as sent (no decompression). */
function raw(base: string, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(base + path, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** An app whose log lines are kept, listening on `host`. */
async function loggedApp(env: Record<string, string>, host = '127.0.0.1'): Promise<{ app: FastifyInstance; url: string; lines: string[]; close(): Promise<void> }> {
  const dataDir = tempDir();
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const store = openStore({ dataDir });
  const app = await buildApp({ store, config: testConfig(dataDir, env), logger: pino({ level: 'info' }, sink) });
  await app.listen({ host, port: 0 });
  const { port } = app.server.address() as { port: number };
  return {
    app,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    lines,
    async close() {
      await app.close();
      await store.close();
    },
  };
}

let api: TestApi;
beforeAll(async () => {
  api = await startApi();
});
afterAll(() => api.close());

describe('public documents', () => {
  const documents: [string, string][] = [
    ['/openapi.json', 'application/json'],
    ['/docs/json', 'application/json'],
    ['/docs/', 'text/html'],
    ['/docs', 'text/html'],
    ['/docs/static/swagger-ui-bundle.js', 'application/javascript'],
    ['/docs/static/swagger-ui.css', 'text/css'],
    ['/docs/static/swagger-initializer.js', 'application/javascript'],
  ];

  it('carry a strong ETag and answer If-None-Match with an empty 304', async () => {
    for (const [path, type] of documents) {
      const first = await raw(api.url, path);
      expect(first.status, path).toBe(200);
      expect(first.headers['content-type'], path).toContain(type);
      const etag = first.headers.etag as string;
      expect(etag, path).toMatch(/^"[\w+/=-]{16,}"$/);
      const again = await raw(api.url, path, { 'if-none-match': etag });
      expect(again.status, path).toBe(304);
      expect(again.body.length, path).toBe(0);
      expect(again.headers.etag, path).toBe(etag);
      // A list of tags and the wildcard match too; another tag does not.
      expect((await raw(api.url, path, { 'if-none-match': `"other", ${etag}` })).status, path).toBe(304);
      expect((await raw(api.url, path, { 'if-none-match': '*' })).status, path).toBe(304);
      expect((await raw(api.url, path, { 'if-none-match': '"other"' })).status, path).toBe(200);
    }
  });

  it('are compressed (br, gzip) when the client accepts it, and the same document once decompressed', async () => {
    for (const [path, type] of documents) {
      const plain = await raw(api.url, path);
      expect(plain.headers['content-encoding'], path).toBeUndefined();
      expect(plain.headers.vary, path).toMatch(/accept-encoding/i);
      const gz = await raw(api.url, path, { 'accept-encoding': 'gzip' });
      expect(gz.headers['content-encoding'], path).toBe('gzip');
      expect(gz.headers['content-type'], path).toContain(type);
      expect(gunzipSync(gz.body).equals(plain.body), path).toBe(true);
      const br = await raw(api.url, path, { 'accept-encoding': 'gzip, deflate, br' });
      expect(br.headers['content-encoding'], path).toBe('br');
      expect(brotliDecompressSync(br.body).equals(plain.body), path).toBe(true);
      // br refused explicitly: gzip.
      expect((await raw(api.url, path, { 'accept-encoding': 'br;q=0, gzip' })).headers['content-encoding'], path).toBe('gzip');
      // The ETag names the representation: each encoding has its own, and each answers 304.
      expect(new Set([plain.headers.etag, gz.headers.etag, br.headers.etag]).size, path).toBe(3);
      expect((await raw(api.url, path, { 'accept-encoding': 'br', 'if-none-match': br.headers.etag as string })).status, path).toBe(304);
    }
    const spec = await raw(api.url, '/openapi.json', { 'accept-encoding': 'br' });
    const plain = await raw(api.url, '/openapi.json');
    console.log(`/openapi.json: ${plain.body.length} bytes, ${spec.body.length} with br`);
    expect(spec.body.length).toBeLessThan(plain.body.length / 5);
  });

  it('/openapi.json is the document the API describes, unchanged', async () => {
    const body = JSON.parse((await raw(api.url, '/openapi.json')).body.toString('utf8')) as object;
    expect(body).toEqual(JSON.parse(JSON.stringify(api.app.swagger())));
    // HEAD has the headers and no body.
    const head = await raw(api.url, '/openapi.json', {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(head.headers.etag).toBeTruthy();
  });

  it('unknown files under /docs/static are still 404', async () => {
    expect((await raw(api.url, '/docs/static/nope.js')).status).toBe(404);
  });
});

describe('logs of key-free routes', () => {
  it('sample successful answers (1 in 100, first included) and always log errors', async () => {
    const server = await loggedApp({});
    try {
      const before = server.lines.length;
      for (let i = 0; i < 300; i++) await (await fetch(`${server.url}/docs/`)).arrayBuffer();
      for (let i = 0; i < 200; i++) await (await fetch(`${server.url}/readyz`)).arrayBuffer();
      const written = server.lines.slice(before).map((l) => JSON.parse(l) as { msg: string; sampled?: number; req?: { url: string } });
      console.log(`500 successful answers of key-free routes: ${written.length} log lines`);
      expect(written.length).toBeLessThanOrEqual(6);
      expect(written.filter((l) => l.req?.url === '/docs/')).toHaveLength(3);
      expect(written.every((l) => l.sampled === 100)).toBe(true);
      // An error answer of a key-free route is always logged.
      const n = server.lines.length;
      expect((await fetch(`${server.url}/readyz?bad=1`)).status).toBe(400);
      expect(server.lines.length).toBe(n + 1);
    } finally {
      await server.close();
    }
  });
});

describe('/metrics', () => {
  it('answers loopback when no operator token is set, but not a request a proxy passed on', async () => {
    const res = await fetch(`${api.url}/metrics`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('palisade_api_requests_total');
    const proxied = await fetch(`${api.url}/metrics`, { headers: { 'x-forwarded-for': '203.0.113.9' } });
    expect(proxied.status).toBe(403);
    expect(proxied.headers.get('content-type')).toContain('application/problem+json');
  });

  // "Another address" is a real one: the API runs inside a network namespace of the test's own
  // and is asked from this side of a veth pair, so the request comes from a non-loopback address.
  let netns: TestNetns;
  beforeAll(() => {
    netns = createNetns();
  });
  afterAll(async () => {
    await stopStarted();
    netns?.remove();
  });
  const apiInNetns = (env: Record<string, string>) =>
    startServe({ PALISADE_DATA_DIR: tempDir(), PALISADE_API_HOST: netns.nsAddress, PALISADE_API_PLAIN_HTTP: 'true', ...env }, undefined, 'api', netns.prefix);

  it('refuses another address when no operator token is set', async () => {
    const server = await apiInNetns({});
    try {
      expect(new URL(server.url).hostname).toBe(netns.nsAddress);
      const res = await fetch(`${server.url}/metrics`);
      expect(res.status).toBe(403);
      expect(((await res.json()) as { detail: string }).detail).toContain('PALISADE_METRICS_TOKEN');
      // The API itself answers there.
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    } finally {
      await stopProcess(server);
    }
  });

  it('with PALISADE_METRICS_TOKEN, answers the bearer of the token from anywhere and no one else', async () => {
    const token = 'metrics-token-0123456789abcdef';
    const server = await apiInNetns({ PALISADE_METRICS_TOKEN: token });
    const local = await startApi({ PALISADE_METRICS_TOKEN: token });
    try {
      for (const base of [server.url, local.url]) {
        const none = await fetch(`${base}/metrics`);
        expect(none.status, base).toBe(401);
        expect(none.headers.get('www-authenticate'), base).toMatch(/^Bearer/);
        expect((await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}x` } })).status, base).toBe(401);
        expect((await fetch(`${base}/metrics`, { headers: { authorization: `Basic ${token}` } })).status, base).toBe(401);
        const ok = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}` } });
        expect(ok.status, base).toBe(200);
        expect(ok.headers.get('content-type'), base).toContain('text/plain');
      }
    } finally {
      await stopProcess(server);
      await local.close();
    }
  });

  it('a bad PALISADE_METRICS_TOKEN is a configuration error naming it', () => {
    for (const bad of ['short', 'has space in it 0123456789']) {
      let error: unknown;
      try {
        loadConfig({ PALISADE_DATA_DIR: tempDir(), PALISADE_METRICS_TOKEN: bad });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).problems.join('\n')).toMatch(/^PALISADE_METRICS_TOKEN: /m);
    }
    expect(loadConfig({ PALISADE_DATA_DIR: tempDir(), PALISADE_METRICS_TOKEN: 'x'.repeat(16) }).api.metricsToken).toBe('x'.repeat(16));
    expect(loadConfig({ PALISADE_DATA_DIR: tempDir() }).api.metricsToken).toBeUndefined();
  });
});
