// The JS challenge with a real headless Chromium (Debian's, driven by playwright-core): the
// browser passes and reaches the backend's page; a client without JavaScript does not; forged,
// expired, replayed and other-network clearances do not; ACME paths, the ping and robots.txt
// pass unchallenged; a challenged client never reaches the backend.
import { createHmac } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientPrefix } from '../../src/edge/protect/challenge.ts';
import { pageSha256 } from '../../src/edge/protect/challenge-page.ts';
import { runAdminCli, startServe, stopProcess, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';
import { createHash } from 'node:crypto';

const CHROMIUM = '/usr/bin/chromium';
const SECRET = 'a1'.repeat(32);
let server: RunningServer;
let backend: Server;
let browser: Browser | undefined;
const reached: string[] = [];

function get(path: string, headers: Record<string, string> = {}, localAddress = '127.0.0.1') {
  const url = new URL(server.edgeUrl!);
  return new Promise<{ status: number; body: string; headers: import('node:http').IncomingHttpHeaders }>((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, localAddress, agent: false, headers: { host: 'chal.example', ...headers } }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A clearance cookie signed with the edge's key, as a forger who knew it would make one. */
function clearance(value: object): string {
  const payload = Buffer.from(JSON.stringify(value)).toString('base64url');
  return `__palisade_clearance=${payload}.${createHmac('sha256', Buffer.from(SECRET, 'hex')).update(payload).digest('base64url')}`;
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`headless Chromium is missing at ${CHROMIUM}: install it (Debian: apt-get install chromium)`);
  backend = createServer((req, res) => {
    reached.push(req.url!);
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<html><body><h1>backend page</h1><p>${req.url}</p></body></html>`);
  });
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
  const port = (backend.address() as { port: number }).port;
  const env = { PALISADE_DATA_DIR: tempDir(), PALISADE_ALLOW_PRIVATE_BACKENDS: 'true', PALISADE_EDGE_CHALLENGE_SECRET: SECRET };
  const key = JSON.parse((await runAdminCli(env, ['user', 'create', '--name', 'c', '--email', 'c@example.org'])).stdout).key.api_key as string;
  server = await startServe(env);
  const res = await fetch(`${server.url}/domains`, { method: 'POST', headers: { 'x-auth-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ domain: 'chal.example', backend: `127.0.0.1:${port}`, sjschallenge: true }) });
  expect(res.status).toBe(201);
  for (let i = 0; i < 100 && (await get('/robots.txt')).status !== 200; i++) await new Promise((r) => setTimeout(r, 50));
}, 60_000);

afterAll(async () => {
  await browser?.close();
  if (server) await stopProcess(server);
  backend?.close();
  removeTempDirs();
});

describe('edge: JS challenge', () => {
  it('the page computes the same SHA-256 as node:crypto', () => {
    for (const text of ['', 'abc', 'x'.repeat(55), 'y'.repeat(64), 'eyJrIjoiY2hhbGxlbmdlIn0.abc123'.repeat(5)]) {
      expect(pageSha256(text)).toBe(createHash('sha256').update(text).digest('hex'));
    }
  });

  it('a headless Chromium passes and reaches the page it asked for; the clearance then works for other requests from its network', async () => {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--host-resolver-rules=MAP chal.example 127.0.0.1'],
    });
    const context = await browser.newContext();
    const page = await context.newPage();
    const verifyUrls: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/.palisade/challenge')) verifyUrls.push(r.url());
    });
    const started = Date.now();
    await page.goto(`http://chal.example:${new URL(server.edgeUrl!).port}/welcome?x=1`);
    await page.waitForFunction(() => document.body.innerText.includes('backend page'), null, { timeout: 30_000 });
    console.log(`headless Chromium passed the challenge (difficulty 4) in ${Date.now() - started} ms`);
    expect(page.url()).toMatch(/\/welcome\?x=1$/);
    expect(await page.textContent('p')).toBe('/welcome?x=1');
    const cookie = (await context.cookies()).find((c) => c.name === '__palisade_clearance');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', secure: false, path: '/' });

    // The same clearance from another address of the same /24 works; from another /24 it does not.
    const header = `__palisade_clearance=${cookie!.value}`;
    expect((await get('/api/data', { cookie: header }, '127.0.0.77')).status).toBe(200);
    const elsewhere = await get('/api/data', { cookie: header }, '127.0.1.1');
    expect(elsewhere.status).toBe(503);

    // The verification URL the browser used cannot be used again.
    expect(verifyUrls).toHaveLength(1);
    const replay = await get(new URL(verifyUrls[0]!).pathname + new URL(verifyUrls[0]!).search, { accept: 'text/html' });
    expect(replay.status).toBe(403);
    expect(replay.body).toContain('used already');
    expect(replay.headers['set-cookie']).toBeUndefined();
  }, 60_000);

  it('a client without JavaScript gets 503 (a page for navigations, JSON otherwise) and never reaches the backend', async () => {
    const before = reached.length;
    const navigation = await get('/', { accept: 'text/html,application/xhtml+xml' });
    expect(navigation.status).toBe(503);
    expect(navigation.headers['cache-control']).toBe('no-store');
    expect(navigation.body).toContain('<noscript>');
    const api = await get('/api/data', { accept: '*/*' });
    expect(api.status).toBe(503);
    expect(JSON.parse(api.body)).toMatchObject({ error: 'challenge_required' });
    expect(reached.length).toBe(before);
  });

  it('refuses forged, expired and other-site clearances, and unsolved or foreign challenges', async () => {
    const prefix = clientPrefix('127.0.0.1');
    const hour = Date.now() + 3_600_000;
    const cases = {
      forged: `__palisade_clearance=${Buffer.from(JSON.stringify({ k: 'clearance', d: 'chal.example', p: prefix, e: hour })).toString('base64url')}.AAAA`,
      expired: clearance({ k: 'clearance', d: 'chal.example', p: prefix, e: Date.now() - 1000 }),
      otherSite: clearance({ k: 'clearance', d: 'other.example', p: prefix, e: hour }),
      otherNetwork: clearance({ k: 'clearance', d: 'chal.example', p: clientPrefix('192.0.2.1'), e: hour }),
      notAClearance: clearance({ k: 'challenge', d: 'chal.example', p: prefix, e: hour }),
    };
    for (const [name, cookie] of Object.entries(cases)) expect((await get('/x', { cookie })).status, name).toBe(503);
    // The control: a well-made one passes.
    expect((await get('/x', { cookie: clearance({ k: 'clearance', d: 'chal.example', p: prefix, e: hour }) })).status).toBe(200);

    // A challenge with no work done, and one issued to another network.
    const page = (await get('/', { accept: 'text/html' })).body;
    const challenge = /"challenge":"([^"]+)"/.exec(page)![1]!;
    const unsolved = await get(`/.palisade/challenge?challenge=${encodeURIComponent(challenge)}&nonce=1&return=/`);
    expect(unsolved.status).toBe(403);
    expect(unsolved.body).toMatch(/work is not done|used already/);
    const foreign = await get(`/.palisade/challenge?challenge=${encodeURIComponent(challenge)}&nonce=1&return=/`, {}, '127.0.1.1');
    expect(foreign.body).toContain('another network');
  });

  it('lets ACME paths, the ping and robots.txt through unchallenged, and sends the browser back to its own host only', async () => {
    expect((await get('/.well-known/acme-challenge/ping')).body).toBe('pong');
    expect((await get('/.well-known/acme-challenge/token')).status).toBe(404);
    expect((await get('/robots.txt')).status).toBe(200);
    // A solved challenge whose return URL points elsewhere goes to "/".
    const page = (await get('/', { accept: 'text/html' })).body;
    const challenge = /"challenge":"([^"]+)"/.exec(page)![1]!;
    let nonce = 0;
    while (!createHash('sha256').update(challenge + nonce).digest('hex').startsWith('0000')) nonce++;
    const verified = await get(`/.palisade/challenge?challenge=${encodeURIComponent(challenge)}&nonce=${nonce}&return=${encodeURIComponent('//evil.example/')}`);
    expect(verified.status).toBe(302);
    expect(verified.headers.location).toBe('/');
  });
});
