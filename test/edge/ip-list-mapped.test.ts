// IP list entries written in IPv4-mapped form (::ffff:127.0.0.8) block the IPv4 client they map:
// the API stores them as IPv4, the edge compiles mapped entries stored earlier as IPv4, and a client
// address in any mapped spelling is judged as IPv4. End to end with a real `palisade serve`, clients
// on chosen loopback addresses, and a trusted proxy configured in mapped form.
import { createServer, request, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressKey, IpRanges } from '../../src/edge/protect/ip-ranges.ts';
import { runAdminCli, startServe, stopProcess, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';

describe('IP ranges with IPv4-mapped entries and clients', () => {
  const ranges = IpRanges.compile(['::ffff:127.0.0.8', '::ffff:10.1.0.0/112', '::ffff:192.0.2.0/120', '198.51.100.7', '2001:db8::/32']);

  it.each([
    ['127.0.0.8', true],
    ['::ffff:127.0.0.8', true],
    ['::ffff:7f00:8', true],
    ['::FFFF:127.0.0.8', true],
    ['0:0:0:0:0:ffff:7f00:8', true],
    ['127.0.0.9', false],
    ['10.1.255.255', true],
    ['10.2.0.0', false],
    ['192.0.2.200', true],
    ['::ffff:c000:2c8', true],
    // An IPv4 entry matches the client however a dual-stack socket or a proxy spells it.
    ['198.51.100.7', true],
    ['::ffff:c633:6407', true],
    ['2001:db8::1', true],
    // Other embeddings are IPv6 clients of their own (a NAT64 client is not its IPv4 server).
    ['64:ff9b::7f00:8', false],
  ])('%s → %s', (address, listed) => expect(ranges.has(address)).toBe(listed));

  it('keys a mapped client as the IPv4 address', () => {
    expect(addressKey('::ffff:7f00:8')).toEqual({ family: 4, key: 0x7f000008 });
    expect(addressKey('::ffff:127.0.0.8')).toEqual({ family: 4, key: 0x7f000008 });
    expect(addressKey('::1')).toMatchObject({ family: 6 });
  });
});

let server: RunningServer;
let backend: Server;
let key: string;
const reached: string[] = [];

const api = (method: string, path: string, body?: unknown) =>
  fetch(`${server.url}${path}`, { method, headers: { 'x-auth-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });

/** A request to the edge from a chosen loopback address, optionally claiming another client by X-Forwarded-For. */
function from(localAddress: string, forwardedFor?: string) {
  const url = new URL(server.edgeUrl!);
  return new Promise<number>((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: '/', localAddress, agent: false, headers: { host: 'mapped.example', ...(forwardedFor && { 'x-forwarded-for': forwardedFor }) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    req.end();
  });
}

async function eventually(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeAll(async () => {
  backend = createServer((req, res) => {
    reached.push(String(req.headers['x-forwarded-for']));
    res.end('backend');
  });
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
  // The backend is on the loopback: this test is about IP lists, so the operator allows it here.
  const env = { PALISADE_DATA_DIR: tempDir(), PALISADE_ALLOW_PRIVATE_BACKENDS: 'true', PALISADE_GEOIP_DB: 'off', PALISADE_EDGE_TRUSTED_PROXIES: '::ffff:127.0.0.9' };
  key = JSON.parse((await runAdminCli(env, ['user', 'create', '--name', 'm', '--email', 'm@example.org'])).stdout).key.api_key;
  server = await startServe(env);
  const port = (backend.address() as { port: number }).port;
  expect((await api('POST', '/domains', { domain: 'mapped.example', backend: `127.0.0.1:${port}` })).status).toBe(201);
}, 60_000);

afterAll(async () => {
  if (server) await stopProcess(server);
  backend?.close();
  removeTempDirs();
});

describe('edge: an IP list entry in IPv4-mapped form', () => {
  it('is stored as the IPv4 address it maps, and blocks that IPv4 client', async () => {
    const created = await api('POST', '/security/iplist', { name: 'mapped', ips: ['::ffff:127.0.0.8', '::FFFF:cb00:7100/120'] });
    expect(created.status).toBe(201);
    const list = (await created.json()) as { id: number; ips: string[] };
    expect(list.ips).toEqual(['127.0.0.8', '203.0.113.0/24']);
    await eventually(async () => (await from('127.0.0.8')) === 403, 3000);
    const before = reached.length;
    expect(await from('127.0.0.8')).toBe(403);
    expect(reached.length).toBe(before);
    expect(await from('127.0.0.7')).toBe(200);

    // One entry added in mapped form: the same.
    const put = await api('PUT', `/security/iplist/${list.id}/${encodeURIComponent('::ffff:127.0.0.7')}`);
    expect(put.status).toBe(200);
    expect(((await put.json()) as { ips: string[] }).ips).toContain('127.0.0.7');
    await eventually(async () => (await from('127.0.0.7')) === 403, 3000);
  });

  it('judges clients named by a trusted proxy (configured in mapped form) the same, in any spelling', async () => {
    for (const [client, status] of [
      ['203.0.113.77', 403],
      ['::ffff:cb00:714d', 403],
      ['::ffff:203.0.113.77', 403],
      ['198.51.100.1', 200],
    ] as const) {
      expect(await from('127.0.0.9', client), client).toBe(status);
    }
    expect(reached.at(-1)).toBe('198.51.100.1');
  });
});
