// The bytes of request bodies baseprotection may hold at once (protect/body-buffer-budget.ts),
// tried as the attack that showed the need: many connections from one address, each sending most
// of a form body and then a byte now and then, against a real `palisade serve` with a small budget
// (2 MiB per client network, 4 MiB on the node). Past its share the client gets 429, past the node's
// budget everyone gets 503 for a body, never memory growth; other clients go on being served; and
// the budget is back to 0 once the bodies are gone, however their exchanges ended (client abort,
// WAF refusal, backend unreachable, answered).
import { createServer, request, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCli, startServe, stopProcess, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';

let server: RunningServer;
let backend: Server;
let edgePort: number;
let key: string;
const KIB = 1024;
/** Each slow body announces this much (within the WAF's default 1024 KiB limit: read whole). */
const ANNOUNCED = 600 * KIB;
/** Every socket a test opened, ended after it. */
const opened: Socket[] = [];

const api = (method: string, path: string, body?: unknown) =>
  fetch(`${server.url}${path}`, { method, headers: { 'x-auth-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });

async function eventually(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The edge's gauge of body bytes reserved now (undefined when it reports none). */
async function reserved(): Promise<number | undefined> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const match = /^palisade_edge_body_buffer_bytes (\d+)$/m.exec(text);
  return match ? Number(match[1]) : undefined;
}

interface SlowBody {
  socket: Socket;
  /** Everything the edge answered so far. */
  answer: () => string;
  /** The edge has closed the connection. */
  closed: () => boolean;
}

/** A form POST from `localAddress` announcing ANNOUNCED bytes: all but 1 KiB sent at once, then a byte every 500 ms. */
function slowForm(localAddress: string, host = 'waf.test'): SlowBody {
  let received = '';
  const socket = connect({ host: '127.0.0.1', port: edgePort, localAddress }, () => {
    socket.write(`POST /form HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${ANNOUNCED}\r\n\r\n`);
    socket.write(`a=${'b'.repeat(ANNOUNCED - KIB - 2)}`);
  });
  const drip = setInterval(() => socket.writable && socket.write('b'), 500);
  socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
  let closed = false;
  socket.on('close', () => {
    closed = true;
    clearInterval(drip);
  });
  socket.on('error', () => undefined);
  opened.push(socket);
  return { socket, answer: () => received, closed: () => closed };
}

/** A whole POST from `localAddress`; resolves with its status. */
function post(localAddress: string, host: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: edgePort, path: '/form', method: 'POST', localAddress, agent: false, headers: { host, 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const status = (answer: string): number | undefined => {
  const match = /^HTTP\/1\.1 (\d{3})/.exec(answer);
  return match ? Number(match[1]) : undefined;
};

beforeAll(async () => {
  backend = createServer((req, res) => {
    let size = 0;
    req.on('data', (c: Buffer) => (size += c.length));
    req.on('end', () => res.end(`got ${size}`));
  });
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
  const port = (backend.address() as { port: number }).port;
  // A port nothing listens on: the backend of a domain whose requests end unreachable.
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const closedPort = (closed.address() as { port: number }).port;
  await new Promise<void>((r) => closed.close(() => r()));
  const env = {
    PALISADE_DATA_DIR: tempDir(),
    PALISADE_ALLOW_PRIVATE_BACKENDS: 'true',
    PALISADE_EDGE_BODY_BUFFER_MB: '4',
    PALISADE_EDGE_BODY_BUFFER_PER_CLIENT_MB: '2',
    // The trickle is what is tried here, not the least body pace (its own tests).
    PALISADE_EDGE_BODY_MIN_RATE: '0',
  };
  key = JSON.parse((await runAdminCli(env, ['user', 'create', '--name', 'a', '--email', 'a@example.org'])).stdout).key.api_key;
  server = await startServe(env);
  edgePort = Number(new URL(server.edgeUrl!).port);
  for (const body of [
    { domain: 'waf.test', backend: `127.0.0.1:${port}`, baseprotection: true },
    { domain: 'gone.test', backend: `127.0.0.1:${closedPort}`, baseprotection: true },
  ]) {
    const created = await api('POST', '/domains', body);
    expect(created.status, await created.text()).toBe(201);
  }
  await eventually(async () => (await post('127.0.0.1', 'waf.test', 'a=1')) === 200, 5000, 'domains at the edge');
}, 90_000);

afterEach(async () => {
  for (const socket of opened.splice(0)) socket.destroy();
  await eventually(async () => (await reserved()) === 0, 5000, 'the body buffer budget back to 0');
});

afterAll(async () => {
  if (server) await stopProcess(server);
  backend?.close();
  removeTempDirs();
});

describe('edge body buffer budget', () => {
  it('gives one client at most its share of buffered bodies (429 past it) while another client is served', async () => {
    // 2 MiB per client: three 600 KiB bodies fit, the other five are refused before they are read.
    const bodies = Array.from({ length: 8 }, () => slowForm('127.0.7.1'));
    await eventually(() => bodies.filter((b) => status(b.answer()) === 429).length === 5, 5000, 'five refusals');
    await new Promise((r) => setTimeout(r, 300));
    expect(bodies.map((b) => status(b.answer())).filter((s) => s !== undefined)).toEqual([429, 429, 429, 429, 429]);
    const refused = bodies.find((b) => status(b.answer()) === 429)!.answer().toLowerCase();
    expect(refused).toMatch(/\r\nretry-after: \d+\r\n/);
    expect(await reserved()).toBe(3 * ANNOUNCED);
    // Another client, meanwhile: a form of its own and a plain GET.
    expect(await post('127.0.7.2', 'waf.test', 'name=other')).toBe(200);
    // A refused connection does not linger on with its trickle: the edge ends it after the answer.
    await eventually(() => bodies.filter((b) => b.closed()).length === 5, 15_000, 'the refused connections closed');
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/palisade_edge_blocked_total\{reason="body-buffer-client"\} 5/);
  });

  it('refuses bodies past the node’s budget with 503, whoever sends them, and serves bodies that fit', async () => {
    // 4 MiB on the node: six 600 KiB bodies fit (three clients × two, each within its share).
    const held = ['127.0.8.1', '127.0.8.2', '127.0.8.3'].flatMap((address) => [slowForm(address), slowForm(address)]);
    await eventually(async () => (await reserved()) === 6 * ANNOUNCED, 5000, 'six bodies held');
    const late = [slowForm('127.0.8.4'), slowForm('127.0.8.5')];
    await eventually(() => late.every((b) => status(b.answer()) !== undefined), 5000, 'the late bodies answered');
    expect(late.map((b) => status(b.answer()))).toEqual([503, 503]);
    expect(held.every((b) => b.answer() === '')).toBe(true);
    // What still fits is served: 4096 − 3600 KiB is room for a small form.
    expect(await post('127.0.8.6', 'waf.test', 'name=small')).toBe(200);
    expect(await reserved()).toBe(6 * ANNOUNCED);
  });

  it('gives the budget back on every way an exchange ends', async () => {
    // The client leaves mid-body.
    const leaving = Array.from({ length: 3 }, () => slowForm('127.0.9.1'));
    await eventually(async () => (await reserved()) === 3 * ANNOUNCED, 5000, 'three bodies held');
    for (const b of leaving) b.socket.destroy();
    await eventually(async () => (await reserved()) === 0, 5000, 'released after the client left');
    // The WAF refuses the body; the backend cannot be reached; the backend answers.
    expect(await post('127.0.9.2', 'waf.test', `q=${encodeURIComponent("1' UNION SELECT password FROM users--")}&x=${'y'.repeat(200 * KIB)}`)).toBe(403);
    expect(await post('127.0.9.3', 'gone.test', `x=${'y'.repeat(200 * KIB)}`)).toBe(502);
    expect(await post('127.0.9.4', 'waf.test', `x=${'y'.repeat(200 * KIB)}`)).toBe(200);
    await eventually(async () => (await reserved()) === 0, 5000, 'released after refusal, failure and answer');
  });
});
