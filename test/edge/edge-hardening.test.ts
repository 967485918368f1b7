// The edge tried as an attacker would, through a real `palisade serve` and a real backend that
// records what reaches it: raw sockets for what HTTP clients will not send (Upgrade side doors,
// absolute-form targets, malformed Host headers, bodies that trickle), many loopback addresses for
// many clients, and the edge process's own descriptor count for what outlives an attack.
import { readdirSync } from 'node:fs';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partPid, runAdminCli, startServe, stopProcess, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';

let server: RunningServer;
let backend: Server;
let edgePort: number;
let key: string;
/** Every request line and Host the backend saw. */
const seen: { method: string; url: string; host: string; upgrade?: string; headers?: IncomingMessage['headers'] }[] = [];
/** Backend sockets held by upgrades it never answers. */
const held = new Set<Duplex>();

const api = (method: string, path: string, body?: unknown) =>
  fetch(`${server.url}${path}`, { method, headers: { 'x-auth-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });

/** Sends raw bytes from `localAddress`; resolves with everything received until the edge closes (or `waitMs`). */
function raw(text: string, localAddress = '127.0.0.1', waitMs = 3000, headOnly = false): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port: edgePort, localAddress }, () => socket.write(text));
    let received = '';
    socket.on('data', (d: Buffer) => {
      received += d.toString('latin1');
      if (headOnly && received.includes('\r\n\r\n')) setTimeout(done, 50);
    });
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(received);
    };
    const timer = setTimeout(done, waitMs);
    socket.on('close', done);
    socket.on('error', done);
  });
}

/** An ordinary GET through the edge from `localAddress`. */
function get(host: string, path: string, localAddress = '127.0.0.1', headers: Record<string, string> = {}): Promise<{ status: number; body: string; headers: IncomingMessage['headers'] }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: edgePort, path, localAddress, agent: false, headers: { host, ...headers } }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

// The edge part's process (serve runs the API, the name server and the edge as separate processes).
const edgeFds = () => readdirSync(`/proc/${partPid(server, 'edge')}/fd`).length;

async function eventually(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const wsHandshake = (host: string, path: string, extra = '') =>
  `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n${extra}\r\n`;

beforeAll(async () => {
  backend = createServer((req, res) => {
    seen.push({ method: req.method!, url: req.url!, host: req.headers.host ?? '', upgrade: req.headers.upgrade, headers: req.headers });
    const path = req.url!.split('?')[0]!;
    if (path === '/acct/profile.css') {
      // A dynamic page that ignores the extension: the visitor's secret, as HTML.
      res.writeHead(200, { 'content-type': 'text/html' });
      return void res.end(`secret of ${req.headers.cookie ?? 'nobody'}`);
    }
    if (path === '/moved.png') {
      // Built from Host, as many frameworks do: what a poisoned Host would put in the cache.
      res.writeHead(301, { location: `http://${req.headers.host}/new.png`, 'content-length': '0' });
      return void res.end();
    }
    if (path === '/style.css') {
      res.writeHead(200, { 'content-type': 'text/css', 'cache-control': 'max-age=600' });
      return void res.end(`/* over ${req.headers['x-forwarded-proto']} */`);
    }
    if (path === '/hold') return void setTimeout(() => res.end('held'), 1500);
    if (req.method === 'POST') {
      let size = 0;
      req.on('data', (c: Buffer) => (size += c.length));
      req.on('end', () => res.end(`got ${size}`));
      return;
    }
    res.end(`backend ${req.url}`);
  });
  backend.on('upgrade', (req: IncomingMessage, socket: Duplex) => {
    seen.push({ method: req.method!, url: req.url!, host: req.headers.host ?? '', upgrade: req.headers.upgrade });
    // The edge resets a handshake whose client left before it was answered.
    socket.on('error', () => socket.destroy());
    if (req.url === '/ws-badstatus') return void socket.end('HTTP/1.1 099 Nonsense\r\nContent-Length: 0\r\n\r\n');
    if (req.url === '/ws-never') {
      held.add(socket);
      // Reading (and discarding) is how the backend notices the edge closing its side.
      socket.resume();
      socket.on('end', () => socket.destroy());
      socket.on('close', () => held.delete(socket));
      return;
    }
    socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n');
    socket.on('data', (d: Buffer) => socket.write(d.toString().toUpperCase()));
    // A WebSocket server closes when its client does.
    socket.on('end', () => socket.end());
  });
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
  const port = (backend.address() as { port: number }).port;
  const env = {
    PALISADE_DATA_DIR: tempDir(),
    PALISADE_ALLOW_PRIVATE_BACKENDS: 'true',
    PALISADE_EDGE_RESPONSE_TIMEOUT_MS: '1500',
    PALISADE_EDGE_CLIENT_TIMEOUT_MS: '20000',
    PALISADE_EDGE_MAX_CONNECTIONS_PER_CLIENT: '40',
    PALISADE_EDGE_BODY_GRACE_MS: '1500',
    PALISADE_EDGE_BACKEND_SHARE_PER_CLIENT: '8',
  };
  key = JSON.parse((await runAdminCli(env, ['user', 'create', '--name', 'a', '--email', 'a@example.org'])).stdout).key.api_key;
  server = await startServe(env);
  edgePort = Number(new URL(server.edgeUrl!).port);
  const backendText = `127.0.0.1:${port}`;
  for (const body of [
    { domain: 'alpha.test', backend: backendText, cachelevel: 3, ssl: true },
    { domain: 'bravo.test', backend: backendText },
    { domain: 'waf.test', backend: backendText, baseprotection: true },
    { domain: 'challenge.test', backend: backendText, sjschallenge: true },
  ]) {
    const created = await api('POST', '/domains', body);
    expect(created.status, await created.text()).toBe(201);
  }
  await eventually(async () => (await get('challenge.test', '/')).status === 503, 5000, 'domains at the edge');
}, 60_000);

afterAll(async () => {
  if (server) await stopProcess(server);
  for (const socket of held) socket.destroy();
  backend?.close();
  removeTempDirs();
});

describe('edge hardening: the Upgrade side door is closed', () => {
  it('an Upgrade header of any kind goes through the WAF: attacks in the query are refused and never reach the backend', async () => {
    const before = seen.length;
    for (const upgrade of ['websocket', 'foo', 'h2c']) {
      const answer = await raw(`GET /item?id=1'%20OR%201=1-- HTTP/1.1\r\nHost: waf.test\r\nConnection: Upgrade\r\nUpgrade: ${upgrade}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`, '127.0.0.1', 3000, true);
      expect(answer, upgrade).toMatch(/^HTTP\/1\.1 403/);
      const xss = await raw(`GET /?q=%3Cscript%3Ealert(1)%3C/script%3E HTTP/1.1\r\nHost: waf.test\r\nConnection: Upgrade\r\nUpgrade: ${upgrade}\r\n\r\n`, '127.0.0.1', 3000, true);
      expect(xss, upgrade).toMatch(/^HTTP\/1\.1 403/);
    }
    expect(seen.slice(before)).toEqual([]);
    // A clean WebSocket handshake still goes through and both directions work.
    const clean = await raw(`${wsHandshake('waf.test', '/chat')}`, '127.0.0.1', 500);
    expect(clean).toMatch(/^HTTP\/1\.1 101/);
  });

  it('the JS challenge stands before upgrades too', async () => {
    const before = seen.length;
    expect(await raw(wsHandshake('challenge.test', '/ws'), '127.0.0.1', 3000, true)).toMatch(/^HTTP\/1\.1 503/);
    expect(await raw('GET / HTTP/1.1\r\nHost: challenge.test\r\nConnection: Upgrade\r\nUpgrade: foo\r\nAccept: text/html\r\n\r\n', '127.0.0.1', 3000, true)).toMatch(/^HTTP\/1\.1 503/);
    expect(seen.slice(before)).toEqual([]);
  });

  it('a request that is not a WebSocket handshake is an ordinary request: Upgrade does not reach the backend', async () => {
    const answer = await raw('GET /plain HTTP/1.1\r\nHost: bravo.test\r\nConnection: Upgrade, close\r\nUpgrade: h2c\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
    expect(seen.at(-1)).toMatchObject({ url: '/plain', upgrade: undefined });
  });

  it('an upgrade with a body is no upgrade, and cannot desynchronise a backend connection another tenant uses next', async () => {
    // The attacker announces 20 bytes and sends none; the victim, another tenant on the same
    // backend, upgrades right after.
    const attacker = raw(`GET /index.html HTTP/1.1\r\nHost: alpha.test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nContent-Length: 20\r\n\r\n`, '127.0.0.2', 1500);
    await new Promise((r) => setTimeout(r, 200));
    for (let i = 0; i < 3; i++) {
      const victim = await raw(wsHandshake('bravo.test', `/victim-${i}`), '127.0.0.3', 500);
      expect(victim).toMatch(/^HTTP\/1\.1 101/);
      expect(seen.some((s) => s.url === `/victim-${i}` && s.host === 'bravo.test' && s.upgrade === 'websocket')).toBe(true);
      const plain = await get('bravo.test', `/after-${i}`, '127.0.0.3');
      expect(plain.body).toBe(`backend /after-${i}`);
    }
    await attacker;
  });

  it('an upgrade the backend never answers gets 504 after the response timeout; clients that leave release both sides', async () => {
    const alone = await raw(wsHandshake('bravo.test', '/ws-never'), '127.0.0.4', 4000);
    expect(alone).toMatch(/^HTTP\/1\.1 504/);
    await eventually(() => held.size === 0, 3000, `the backend side of the timed-out upgrade closed (${held.size} held)`);

    const baseline = edgeFds();
    const sockets: Socket[] = [];
    // 40 clients × 8 upgrades each (their whole share of the backend), then every client leaves
    // before the backend answers.
    for (let c = 0; c < 40; c++) {
      for (let i = 0; i < 8; i++) {
        const socket = connect({ host: '127.0.0.1', port: edgePort, localAddress: `127.0.1.${c + 1}` }, () => socket.write(wsHandshake('bravo.test', '/ws-never')));
        socket.on('error', () => undefined);
        sockets.push(socket);
      }
    }
    await eventually(() => held.size >= 300, 5000, 'upgrades reached the backend');
    const peak = edgeFds();
    expect(peak).toBeGreaterThan(baseline + 400);
    for (const socket of sockets) socket.destroy();
    await eventually(() => held.size === 0, 5000, 'backend sockets released');
    await eventually(() => edgeFds() <= baseline + 20, 5000, `edge descriptors back near ${baseline}`);
    expect((await get('bravo.test', '/still-here')).status).toBe(200);
  });
});

describe('edge hardening: what a client or a backend sends cannot end the process', () => {
  it('a WebSocket handshake pipelined behind an unfinished response closes that connection, nothing else', async () => {
    // The connection is closed (with or without the first answer); the edge goes on.
    const answer = await raw(`GET /first HTTP/1.1\r\nHost: bravo.test\r\n\r\n${wsHandshake('bravo.test', '/ws')}`, '127.0.0.1', 1500);
    expect(answer).not.toMatch(/HTTP\/1\.1 101/);
    expect((await get('bravo.test', '/alive')).status).toBe(200);
    expect(server.child.exitCode).toBeNull();
  });

  it('a backend answering a handshake with a status no response may carry (099) gets the client a 502', async () => {
    expect(await raw(wsHandshake('bravo.test', '/ws-badstatus'), '127.0.0.1', 3000, true)).toMatch(/^HTTP\/1\.1 502/);
    expect((await get('bravo.test', '/alive')).status).toBe(200);
    expect(server.child.exitCode).toBeNull();
  });

  it('clients that send a handshake and leave at once, at every moment, leave nothing behind', async () => {
    for (let i = 0; i < 60; i++) {
      const socket = connect({ host: '127.0.0.1', port: edgePort, localAddress: '127.0.6.1' }, () => {
        socket.write(wsHandshake(i % 2 ? 'waf.test' : 'bravo.test', `/gone-${i}?q=${'x'.repeat(i * 50)}`));
        setTimeout(() => socket.destroy(), i % 5);
      });
      socket.on('error', () => undefined);
    }
    await new Promise((r) => setTimeout(r, 500));
    expect((await get('bravo.test', '/alive')).status).toBe(200);
    expect(server.child.exitCode).toBeNull();
  });

  it('an ordinary request naming Upgrade ends its connection with the answer (nothing pipelined behind it is read)', async () => {
    const answer = await raw('GET /plain-upgrade HTTP/1.1\r\nHost: bravo.test\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n', '127.0.0.1', 3000);
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
    expect(answer.toLowerCase()).toContain('connection: close');
  });
});

describe('edge hardening: Host and the request target', () => {
  it('passes on no header a backend could take as the client, the host, the scheme or the path', async () => {
    await raw('GET /claims HTTP/1.1\r\nHost: bravo.test\r\nForwarded: for=6.6.6.6;host=evil.example;proto=https\r\nX-Real-IP: 6.6.6.6\r\nX-Forwarded-Port: 1337\r\nX-Forwarded-Prefix: /admin\r\nX-Original-URL: /admin\r\nX-Rewrite-URL: /admin\r\nTrue-Client-IP: 6.6.6.6\r\nConnection: close\r\n\r\n');
    const headers = seen.at(-1)!.headers!;
    expect(seen.at(-1)!.url).toBe('/claims');
    for (const name of ['forwarded', 'x-real-ip', 'x-forwarded-port', 'x-forwarded-prefix', 'x-original-url', 'x-rewrite-url', 'true-client-ip']) expect(headers[name], name).toBeUndefined();
    expect(headers['x-forwarded-for']).toBe('127.0.0.1');
    expect(headers['x-forwarded-host']).toBe('bravo.test');
  });

  it('keys the cache by the Host the backend receives, port included: another port cannot poison the plain name', async () => {
    const poisoned = await get('alpha.test:1337', '/moved.png');
    expect(poisoned.headers.location).toBe('http://alpha.test:1337/new.png');
    const clean = await get('alpha.test', '/moved.png');
    expect(clean.headers.location).toBe('http://alpha.test/new.png');
  });

  it('refuses a Host that the backend could read otherwise (userinfo, markup in the port) with 400, before it reaches the backend or the cache', async () => {
    const before = seen.length;
    for (const host of ['alpha.test:@evil.example', 'alpha.test:"><script>', 'alpha.test:80:81', 'alpha.test:99999', 'alpha test', 'alpha.test\\evil']) {
      const answer = await raw(`GET /moved.png HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      expect(answer, host).toMatch(/^HTTP\/1\.1 400/);
    }
    expect(seen.slice(before)).toEqual([]);
    // A clean request afterwards: the cached redirect names the real host only.
    const moved = await get('alpha.test', '/moved.png');
    expect(moved.status).toBe(301);
    expect(moved.headers.location).toBe('http://alpha.test/new.png');
  });

  it('sends the backend the canonical Host (lower case, no final dot, the port as a number)', async () => {
    await raw('GET /canon HTTP/1.1\r\nHost: ALPHA.Test.:8081\r\nConnection: close\r\n\r\n');
    expect(seen.at(-1)).toMatchObject({ url: '/canon', host: 'alpha.test:8081' });
  });

  it('reads an absolute-form target as its authority and origin-form path: ACME paths stay the edge’s, with or without Upgrade', async () => {
    const before = seen.length;
    const acme = await raw('GET http://alpha.test/.well-known/acme-challenge/sometoken HTTP/1.1\r\nHost: bravo.test\r\nConnection: close\r\n\r\n');
    expect(acme).toMatch(/^HTTP\/1\.1 404/);
    expect(acme).toContain('no such challenge token');
    const upgraded = await raw(wsHandshake('alpha.test', 'http://alpha.test/.well-known/acme-challenge/other'));
    expect(upgraded).toMatch(/^HTTP\/1\.1 404/);
    expect(seen.slice(before)).toEqual([]);
    // An absolute-form request elsewhere goes to the backend in origin form.
    expect(await raw('GET http://alpha.test/abs?x=1 HTTP/1.1\r\nHost: whatever.example\r\nConnection: close\r\n\r\n')).toMatch(/^HTTP\/1\.1 200/);
    expect(seen.at(-1)).toMatchObject({ url: '/abs?x=1', host: 'alpha.test' });
    // Userinfo in the authority is refused like in Host.
    expect(await raw('GET http://evil@alpha.test/ HTTP/1.1\r\nHost: alpha.test\r\nConnection: close\r\n\r\n')).toMatch(/^HTTP\/1\.1 400/);
  });

  it('exempts /robots.txt from the JS challenge only without a query string', async () => {
    expect((await get('challenge.test', '/robots.txt')).status).toBe(200);
    expect((await get('challenge.test', '/robots.txt?anything')).status).toBe(503);
  });
});

describe('edge hardening: the cache', () => {
  it('does not store a page answered under a static name (cache deception) nor an answer to a request with a cookie', async () => {
    const victim = await get('alpha.test', '/acct/profile.css', '127.0.0.5', { cookie: 'session=victim' });
    expect(victim.body).toBe('secret of session=victim');
    const attacker = await get('alpha.test', '/acct/profile.css', '127.0.0.6');
    expect(attacker.body).toBe('secret of nobody');
    expect(attacker.headers['x-cache']).not.toBe('HIT');
    for (const path of ['/acct.php;x.css', '/acct.php%2Fx.css']) {
      await get('alpha.test', path, '127.0.0.5', { cookie: 'session=victim' });
      expect((await get('alpha.test', path, '127.0.0.6')).headers['x-cache'], path).not.toBe('HIT');
    }
  });

  it('keys by scheme: an answer fetched over http is not a hit over https', async () => {
    const first = await get('alpha.test', '/style.css');
    expect(first.body).toBe('/* over http */');
    expect((await get('alpha.test', '/style.css')).headers['x-cache']).toBe('HIT');
    const httpsPort = Number(new URL(server.edgeHttpsUrl!).port);
    const overTls = await new Promise<{ body: string; cache: unknown }>((resolve, reject) => {
      const req = httpsRequest({ host: '127.0.0.1', port: httpsPort, path: '/style.css', servername: 'alpha.test', rejectUnauthorized: false, agent: false, headers: { host: 'alpha.test' } }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ body, cache: res.headers['x-cache'] }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(overTls.body).toBe('/* over https */');
    expect(overTls.cache).not.toBe('HIT');
  });
});

describe('edge hardening: exhaustion', () => {
  it('caps the connections of one client address and keeps serving others', async () => {
    const sockets: Socket[] = [];
    for (let i = 0; i < 60; i++) {
      const socket = connect({ host: '127.0.0.1', port: edgePort, localAddress: '127.0.2.1' });
      socket.on('error', () => undefined);
      sockets.push(socket);
    }
    await new Promise((r) => setTimeout(r, 500));
    const open = sockets.filter((s) => !s.destroyed && s.readyState === 'open').length;
    expect(open).toBe(40);
    expect((await get('bravo.test', '/other-client', '127.0.2.2')).status).toBe(200);
    for (const socket of sockets) socket.destroy();
    await eventually(async () => (await get('bravo.test', '/again', '127.0.2.1').catch(() => ({ status: 0 }))).status === 200, 3000, 'the capped client served again');
  });

  it('ends a request body that trickles (408) and keeps the backend for everyone else', async () => {
    const trickles: Promise<string>[] = [];
    const sockets: Socket[] = [];
    for (let i = 0; i < 20; i++) {
      trickles.push(
        new Promise((resolve) => {
          const socket = connect({ host: '127.0.0.1', port: edgePort, localAddress: '127.0.3.1' }, () => socket.write('POST /upload HTTP/1.1\r\nHost: bravo.test\r\nContent-Length: 1000\r\n\r\nx'));
          sockets.push(socket);
          let received = '';
          const drip = setInterval(() => socket.writable && socket.write('x'), 1000);
          socket.on('data', (d: Buffer) => (received += d.toString()));
          socket.on('close', () => {
            clearInterval(drip);
            resolve(received);
          });
          socket.on('error', () => undefined);
        }),
      );
    }
    const started = Date.now();
    expect((await get('bravo.test', '/meanwhile', '127.0.3.2')).status).toBe(200);
    expect(Date.now() - started).toBeLessThan(1000);
    const answers = await Promise.race([Promise.all(trickles), new Promise<string[]>((r) => setTimeout(() => r([]), 8000))]);
    for (const socket of sockets) socket.destroy();
    expect(answers).toHaveLength(20);
    for (const answer of answers) expect(answer).toMatch(/^HTTP\/1\.1 408/);
  });

  it('counts open WebSockets in a client’s share of the backend', async () => {
    const sockets: Socket[] = [];
    const answers: string[] = [];
    for (let i = 0; i < 9; i++) {
      await new Promise<void>((resolve) => {
        const socket = connect({ host: '127.0.0.1', port: edgePort, localAddress: '127.0.5.1' }, () => socket.write(wsHandshake('bravo.test', `/ws-open-${i}`)));
        socket.on('error', () => undefined);
        socket.once('data', (d: Buffer) => {
          answers.push(d.toString('latin1'));
          resolve();
        });
        sockets.push(socket);
      });
    }
    expect(answers.slice(0, 8).every((a) => a.startsWith('HTTP/1.1 101'))).toBe(true);
    expect(answers[8]).toMatch(/^HTTP\/1\.1 429/);
    // Closing one frees its place.
    sockets[0]!.destroy();
    await new Promise((r) => setTimeout(r, 200));
    expect(await raw(wsHandshake('bravo.test', '/ws-after'), '127.0.5.1', 500)).toMatch(/^HTTP\/1\.1 101/);
    for (const socket of sockets) socket.destroy();
  });

  it('gives one client at most its share of a backend address at once (429 past it), others unaffected', async () => {
    const mine = Promise.all(Array.from({ length: 12 }, () => get('bravo.test', '/hold', '127.0.4.1')));
    await new Promise((r) => setTimeout(r, 300));
    const other = await get('bravo.test', '/hold', '127.0.4.2');
    expect(other.status).toBe(200);
    const statuses = (await mine).map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(8);
    expect(statuses.filter((s) => s === 429)).toHaveLength(4);
  });
});
