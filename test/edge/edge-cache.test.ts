// The edge's cache against the definitions (docs/edge.md): levels 0–3 and query strings,
// Cache-Control / Set-Cookie / Authorization / Vary, default lifetimes, expiry, one upstream fetch
// for many concurrent misses, large files on disk (complete files only, Range served from them),
// and a domain's cache dropped when its settings change. Through `palisade serve`'s edge, a real
// backend that counts what reaches it.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCli, startServe, stopProcess, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';

let server: RunningServer;
let key: string;
let dataDir: string;
let backend: Server;
const hits = new Map<string, number>();
const BIG = 20 * 1_048_576;

const call = (method: string, path: string, body?: unknown) =>
  fetch(`${server.url}${path}`, { method, headers: { 'x-auth-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });

function get(host: string, path: string, headers: Record<string, string> = {}, method = 'GET') {
  const url = new URL(server.edgeUrl!);
  return new Promise<{ status: number; cache: string | undefined; headers: IncomingMessage['headers']; body: Buffer }>((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, method, headers: { host, ...headers }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, cache: res.headers['x-cache'] as string | undefined, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** How many requests for `host` + `path` reached the backend. */
const upstream = (host: string, path: string) => hits.get(`${host}${path}`) ?? 0;

beforeAll(async () => {
  backend = createServer((req, res) => {
    const id = `${req.headers.host}${req.url}`;
    hits.set(id, (hits.get(id) ?? 0) + 1);
    const path = req.url!.split('?')[0]!;
    const send = (status: number, headers: Record<string, string>, body: string | Buffer) => {
      res.writeHead(status, { 'content-length': String(Buffer.byteLength(body)), ...headers });
      res.end(body);
    };
    if (path === '/big.zip') {
      res.writeHead(200, { 'content-type': 'application/zip', 'content-length': String(BIG) });
      for (let i = 0; i < 20; i++) res.write(Buffer.alloc(1_048_576, i));
      return void res.end();
    }
    if (path === '/slow.png') return void setTimeout(() => send(200, { 'content-type': 'image/png' }, 'slow'), 300);
    if (path === '/missing.css') return send(404, { 'content-type': 'text/css' }, 'nope');
    const headers: Record<string, Record<string, string>> = {
      '/private.css': { 'cache-control': 'private, max-age=600' },
      '/nostore.js': { 'cache-control': 'no-store' },
      '/maxage0.js': { 'cache-control': 'public, max-age=0' },
      '/nocache.js': { 'cache-control': 'no-cache' },
      '/cookie.css': { 'set-cookie': 'session=abc' },
      '/short.css': { 'cache-control': 'max-age=1' },
      '/vary.css': { vary: 'Accept-Encoding' },
      '/varystar.css': { vary: '*' },
      '/etag.js': { etag: '"v1"' },
    };
    const body = path === '/vary.css' ? `encoding=${req.headers['accept-encoding'] ?? 'none'}` : `${req.url} #${hits.get(id)}`;
    // The type the extension claims, as a real server sends it (the cache stores nothing else).
    const types: Record<string, string> = { css: 'text/css', js: 'application/javascript', png: 'image/png', jpg: 'image/jpeg', zip: 'application/zip' };
    send(200, { 'content-type': types[path.slice(path.lastIndexOf('.') + 1)] ?? 'text/html', ...(headers[path] ?? {}) }, body);
  });
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
  const port = (backend.address() as { port: number }).port;
  dataDir = tempDir();
  const env = { PALISADE_DATA_DIR: dataDir, PALISADE_ALLOW_PRIVATE_BACKENDS: 'true' };
  key = JSON.parse((await runAdminCli(env, ['user', 'create', '--name', 'cache', '--email', 'cache@example.org'])).stdout).key.api_key;
  server = await startServe(env);
  for (const [domain, cachelevel, cachelargefiles] of [
    ['l0.example', 0, false],
    ['l1.example', 1, false],
    ['l2.example', 2, false],
    ['l3.example', 3, false],
    ['big.example', 3, true],
  ] as const) {
    expect((await call('POST', '/domains', { domain, backend: `127.0.0.1:${port}`, cachelevel, cachelargefiles })).status).toBe(201);
  }
  // The edge follows the store within a second.
  for (let i = 0; i < 100 && (await get('big.example', '/')).status !== 200; i++) await new Promise((r) => setTimeout(r, 50));
}, 60_000);

afterAll(async () => {
  if (server) await stopProcess(server);
  backend?.close();
  removeTempDirs();
});

describe('edge cache', () => {
  it('level 0 never stores; levels 1–3 store static files and never HTML', async () => {
    for (let i = 0; i < 2; i++) expect((await get('l0.example', '/a.css')).cache).toBe('BYPASS');
    expect(upstream('l0.example', '/a.css')).toBe(2);
    for (const host of ['l1.example', 'l2.example', 'l3.example']) {
      expect((await get(host, '/a.css')).cache, host).toBe('MISS');
      const hit = await get(host, '/a.css');
      expect(hit.cache, host).toBe('HIT');
      expect(hit.body.toString()).toBe('/a.css #1');
      expect(Number(hit.headers.age)).toBeGreaterThanOrEqual(0);
      expect(upstream(host, '/a.css'), host).toBe(1);
      for (let i = 0; i < 2; i++) expect((await get(host, '/index.html')).cache).toBe('BYPASS');
      expect(upstream(host, '/index.html')).toBe(2);
    }
  });

  it('query strings: level 1 passes them by, level 2 leaves them out of the key, level 3 keys on them', async () => {
    expect((await get('l1.example', '/q.js?v=1')).cache).toBe('BYPASS');
    expect((await get('l1.example', '/q.js?v=1')).cache).toBe('BYPASS');
    expect((await get('l2.example', '/q.js?v=1')).cache).toBe('MISS');
    const two = await get('l2.example', '/q.js?v=2');
    expect([two.cache, two.body.toString()]).toEqual(['HIT', '/q.js?v=1 #1']);
    expect((await get('l3.example', '/q.js?v=1')).cache).toBe('MISS');
    expect((await get('l3.example', '/q.js?v=2')).cache).toBe('MISS');
    expect((await get('l3.example', '/q.js?v=1')).cache).toBe('HIT');
  });

  it('never stores private, no-store, no-cache, max-age=0, Set-Cookie or Vary: *; never answers Authorization from the cache', async () => {
    for (const path of ['/private.css', '/nostore.js', '/maxage0.js', '/nocache.js', '/cookie.css', '/varystar.css']) {
      await get('l3.example', path);
      const again = await get('l3.example', path);
      expect(again.cache, path).toBe('MISS');
      expect(upstream('l3.example', path), path).toBe(2);
    }
    await get('l3.example', '/auth.css');
    const authed = await get('l3.example', '/auth.css', { authorization: 'Bearer x' });
    expect(authed.cache).toBe('BYPASS');
    expect(upstream('l3.example', '/auth.css')).toBe(2);
  });

  it('keeps 404s for a while, honours max-age (then EXPIRED), and answers conditional requests', async () => {
    await get('l3.example', '/missing.css');
    const again = await get('l3.example', '/missing.css');
    expect([again.status, again.cache]).toEqual([404, 'HIT']);
    expect((await get('l3.example', '/short.css')).cache).toBe('MISS');
    expect((await get('l3.example', '/short.css')).cache).toBe('HIT');
    await new Promise((r) => setTimeout(r, 1100));
    const expired = await get('l3.example', '/short.css');
    expect([expired.cache, expired.body.toString()]).toEqual(['EXPIRED', '/short.css #2']);
    await get('l3.example', '/etag.js');
    const conditional = await get('l3.example', '/etag.js', { 'if-none-match': '"v1"' });
    expect([conditional.status, conditional.cache]).toEqual([304, 'HIT']);
  });

  it('keeps one variant per normalised Accept-Encoding (Vary)', async () => {
    const gzip = { 'accept-encoding': 'gzip, deflate' };
    const br = { 'accept-encoding': 'gzip, deflate, br' };
    expect((await get('l3.example', '/vary.css', gzip)).body.toString()).toBe('encoding=gzip, deflate');
    const gzipAgain = await get('l3.example', '/vary.css', { 'accept-encoding': 'deflate, gzip' });
    expect([gzipAgain.cache, gzipAgain.body.toString()]).toEqual(['HIT', 'encoding=gzip, deflate']);
    const brFirst = await get('l3.example', '/vary.css', br);
    expect([brFirst.cache, brFirst.body.toString()]).toEqual(['MISS', 'encoding=gzip, deflate, br']);
    expect((await get('l3.example', '/vary.css', br)).cache).toBe('HIT');
    expect((await get('l3.example', '/vary.css', gzip)).body.toString()).toBe('encoding=gzip, deflate');
  });

  it('fetches once for many concurrent misses of one key (cache lock)', async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, () => get('l3.example', '/slow.png')));
    expect(answers.every((a) => a.status === 200 && a.body.toString() === 'slow')).toBe(true);
    expect(upstream('l3.example', '/slow.png')).toBe(1);
    expect(answers.filter((a) => a.cache === 'MISS')).toHaveLength(1);
  });

  it('large files: passed through uncached without cachelargefiles; on disk with it, whole, and ranges served from the file', async () => {
    for (let i = 0; i < 2; i++) expect((await get('l3.example', '/big.zip')).body.length).toBe(BIG);
    expect(upstream('l3.example', '/big.zip')).toBe(2);

    const first = await get('big.example', '/big.zip');
    expect([first.cache, first.body.length]).toEqual(['MISS', BIG]);
    const cacheDir = join(dataDir, 'edge-cache');
    const files = () => readdirSync(cacheDir).filter((f) => f.startsWith('obj-'));
    for (let i = 0; i < 50 && files().length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(files()).toHaveLength(1);
    expect(statSync(join(cacheDir, files()[0]!)).size).toBe(BIG);
    expect(readdirSync(cacheDir).filter((f) => f.startsWith('tmp-'))).toEqual([]);
    const hit = await get('big.example', '/big.zip');
    expect([hit.cache, hit.body.length, hit.body[BIG - 1]]).toEqual(['HIT', BIG, 19]);
    const range = await get('big.example', '/big.zip', { range: 'bytes=1048575-1048577' });
    expect([range.status, range.headers['content-range'], [...range.body]]).toEqual([206, `bytes 1048575-1048577/${BIG}`, [0, 1, 1]]);
    const head = await get('big.example', '/big.zip', {}, 'HEAD');
    expect([head.status, head.headers['content-length'], head.body.length]).toEqual([200, String(BIG), 0]);
    expect(upstream('big.example', '/big.zip')).toBe(1);
    expect(existsSync(cacheDir)).toBe(true);
  });

  it("drops a domain's cache when its settings change", async () => {
    await get('l2.example', '/drop.css');
    expect((await get('l2.example', '/drop.css')).cache).toBe('HIT');
    // A setting the edge acts on (a change of tags alone no longer reaches edges at all).
    expect((await call('PATCH', '/domains/l2.example', { bwlimit: 100_000_000 })).status).toBe(200);
    let after = await get('l2.example', '/drop.css');
    for (let i = 0; i < 40 && after.cache === 'HIT'; i++) {
      await new Promise((r) => setTimeout(r, 50));
      after = await get('l2.example', '/drop.css');
    }
    expect(after.cache).toBe('MISS');
    expect(upstream('l2.example', '/drop.css')).toBe(2);
    // Other domains keep theirs.
    expect((await get('l3.example', '/a.css')).cache).toBe('HIT');
  });
});
