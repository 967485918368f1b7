// Domain fronting through the edge of `palisade serve`, with real TLS connections on loopback: a
// connection whose handshake (SNI) named one tenant's domain gets 421 for requests (and upgrades)
// whose Host names another tenant's domain, and the other tenant's backend never hears of them;
// names of the same domain share a connection; a handshake without SNI carries no customer's
// request; plain HTTP is routed by Host alone.
import { once } from 'node:events';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import { connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { frontedRequest } from '../../src/edge/tls/fronting.ts';
import { RoutingTable } from '../../src/edge/routing.ts';
import { makeZone } from '../helpers/dns-fixture.ts';
import { runAdminCli, startServe, stopProcess, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';

let server: RunningServer;
let httpsPort: number;
const backends: Server[] = [];
/** What each tenant's backend was asked: "alpha GET /x host". */
const heard: string[] = [];

function startBackend(name: string): Promise<number> {
  const s = createServer((req, res) => {
    heard.push(`${name} ${req.method} ${req.url} ${req.headers.host}`);
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(`${name} site`);
  });
  // An upgrade is accepted with 101 and the socket closed.
  s.on('upgrade', (req: IncomingMessage, socket: import('node:stream').Duplex) => {
    heard.push(`${name} UPGRADE ${req.url} ${req.headers.host}`);
    socket.end('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n');
  });
  backends.push(s);
  return new Promise((resolve) => s.listen(0, '127.0.0.1', () => resolve((s.address() as { port: number }).port)));
}

/**
 * Requests written raw on one TLS connection to the edge whose handshake names `servername` (none:
 * no SNI, as a client that dialled the address); the status line of each answer, in order.
 */
async function overTls(servername: string | undefined, requests: Array<{ host: string; path: string; upgrade?: boolean }>): Promise<number[]> {
  const socket = tlsConnect({ host: '127.0.0.1', port: httpsPort, servername, rejectUnauthorized: false });
  await once(socket, 'secureConnect');
  expect(socket.servername || undefined, 'the client sent the SNI it was asked to').toBe(servername ?? undefined);
  let received = '';
  socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
  const statuses: number[] = [];
  for (const [i, r] of requests.entries()) {
    const last = i === requests.length - 1;
    const headers = r.upgrade ? 'connection: Upgrade\r\nupgrade: websocket\r\nsec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n' : `connection: ${last ? 'close' : 'keep-alive'}\r\n`;
    const before = received.length;
    socket.write(`GET ${r.path} HTTP/1.1\r\nhost: ${r.host}\r\n${headers}\r\n`);
    // Each answer is read whole (they carry a length) before the next request is sent.
    const started = Date.now();
    while (!/^HTTP\/1\.1 \d{3}[\s\S]*?\r\n\r\n/.test(received.slice(before)) && Date.now() - started < 5000 && !socket.destroyed) await new Promise((r) => setTimeout(r, 10));
    const status = /^HTTP\/1\.1 (\d{3})/.exec(received.slice(before));
    statuses.push(status ? Number(status[1]) : 0);
    if (status && Number(status[1]) === 421) break;
  }
  socket.destroy();
  return statuses;
}

function overHttp(host: string, path: string): Promise<{ status: number; body: string }> {
  const url = new URL(server.edgeUrl!);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, headers: { host } }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  const env = { PALISADE_DATA_DIR: tempDir(), PALISADE_ALLOW_PRIVATE_BACKENDS: 'true' };
  const keyOf = async (name: string) => {
    const res = await runAdminCli(env, ['user', 'create', '--name', name, '--email', `${name}@example.org`]);
    expect(res.code, res.stderr).toBe(0);
    return JSON.parse(res.stdout).key.api_key as string;
  };
  const [alphaKey, bravoKey] = [await keyOf('alpha'), await keyOf('bravo')];
  const [alphaPort, bravoPort] = [await startBackend('alpha'), await startBackend('bravo')];
  server = await startServe(env);
  httpsPort = Number(new URL(server.edgeHttpsUrl!).port);
  for (const [key, body] of [
    [alphaKey, { domain: 'alpha.test', backend: `127.0.0.1:${alphaPort}`, ssl: true, mask: 'www', baseprotection: false }],
    [bravoKey, { domain: 'bravo.test', backend: `127.0.0.1:${bravoPort}`, ssl: true, baseprotection: false }],
  ] as const) {
    const res = await fetch(`${server.url}/domains`, { method: 'POST', headers: { 'x-auth-key': key, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(res.status, await res.text()).toBe(201);
  }
  // The edge follows the store within a second.
  const started = Date.now();
  while ((await overHttp('bravo.test', '/ready')).status !== 200 && Date.now() - started < 10_000) await new Promise((r) => setTimeout(r, 100));
}, 60_000);

afterAll(async () => {
  if (server) await stopProcess(server);
  for (const s of backends) s.close();
  removeTempDirs();
});

describe('domain fronting at the edge', { timeout: 30_000 }, () => {
  it("answers 421 when the SNI names one tenant's domain and Host another's; that backend hears nothing", async () => {
    heard.length = 0;
    expect(await overTls('alpha.test', [{ host: 'bravo.test', path: '/fronted' }])).toEqual([421]);
    expect(await overTls('bravo.test', [{ host: 'www.alpha.test', path: '/fronted-back' }])).toEqual([421]);
    expect(heard.filter((h) => h.includes('/fronted'))).toEqual([]);
  });

  it('lets names of the same domain share a connection (SNI www.alpha.test, Host alpha.test)', async () => {
    heard.length = 0;
    expect(await overTls('www.alpha.test', [{ host: 'alpha.test', path: '/same-1' }, { host: 'www.alpha.test', path: '/same-2' }])).toEqual([200, 200]);
    expect(heard).toEqual(['alpha GET /same-1 alpha.test', 'alpha GET /same-2 www.alpha.test']);
  });

  it('checks every request of a kept-alive connection, not only its first', async () => {
    heard.length = 0;
    expect(await overTls('alpha.test', [{ host: 'alpha.test', path: '/first' }, { host: 'bravo.test', path: '/second' }])).toEqual([200, 421]);
    expect(heard).toEqual(['alpha GET /first alpha.test']);
  });

  it('refuses customer requests on a handshake without SNI, or naming an unknown name; the status page stays', async () => {
    heard.length = 0;
    expect(await overTls(undefined, [{ host: 'alpha.test', path: '/no-sni' }])).toEqual([421]);
    expect(await overTls('nobody.test', [{ host: 'alpha.test', path: '/unknown-sni' }])).toEqual([421]);
    expect(await overTls(undefined, [{ host: '127.0.0.1', path: '/' }])).toEqual([200]);
    expect(heard).toEqual([]);
  });

  it('does the same for upgrades (WebSocket)', async () => {
    heard.length = 0;
    expect(await overTls('alpha.test', [{ host: 'bravo.test', path: '/ws-fronted', upgrade: true }])).toEqual([421]);
    expect(await overTls(undefined, [{ host: 'bravo.test', path: '/ws-no-sni', upgrade: true }])).toEqual([421]);
    expect(heard).toEqual([]);
    expect(await overTls('bravo.test', [{ host: 'bravo.test', path: '/ws', upgrade: true }])).toEqual([101]);
    expect(heard).toEqual(['bravo UPGRADE /ws bravo.test']);
  });

  it('routes plain HTTP by Host alone (no handshake names anything there)', async () => {
    expect(await overHttp('bravo.test', '/plain')).toEqual({ status: 200, body: 'bravo site' });
    expect(await overHttp('alpha.test', '/plain')).toEqual({ status: 200, body: 'alpha site' });
  });
});

describe('the fronting rule, without sockets', () => {
  const table = new RoutingTable();
  table.put(makeZone({ domain: 'alpha.test', mask: 'www' }, []).domain);
  table.put(makeZone({ domain: 'bravo.test', mask: '*' }, []).domain);
  table.put(makeZone({ domain: 'off.test', enabled: false }, []).domain);
  it.each([
    ['alpha.test', 'alpha.test', false],
    ['WWW.Alpha.Test.', 'alpha.test', false],
    ['x.bravo.test', 'y.bravo.test', false],
    ['alpha.test', 'bravo.test', true],
    ['off.test', 'alpha.test', true],
    ['mail.alpha.test', 'alpha.test', true],
    [undefined, 'alpha.test', true],
    [false, 'alpha.test', true],
    ['', 'alpha.test', true],
    // Host names no domain: the edge's own 421 page answers it, not this rule.
    ['alpha.test', 'nobody.test', false],
    ['alpha.test', 'off.test', false],
  ] as const)('SNI %s, Host %s → fronted %s', (sni, host, fronted) => {
    expect(frontedRequest(table, sni, table.route(host))).toBe(fronted);
  });
});
