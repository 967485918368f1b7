// A WebSocket handshake the backend has not answered yet, whose client leaves: everything it held
// is let go at once — the backend's connection, the client's share of the backend, the edge's
// connection — not when the response timeout (60 s, the default here) runs out. Through a real
// `palisade serve` and a backend that takes handshakes and never answers them.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCli, startServe, stopProcess, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';

let server: RunningServer;
let backend: Server;
let edgePort: number;
/** The backend's side of every handshake it holds, by path. */
const held = new Map<string, Duplex>();
const opened: Socket[] = [];

async function eventually(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const handshake = (path: string) => `GET ${path} HTTP/1.1\r\nHost: ws.test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`;

/** A handshake from `localAddress`; resolves with the client's socket once the backend holds it. */
async function pending(path: string, localAddress: string): Promise<Socket> {
  const socket = connect({ host: '127.0.0.1', port: edgePort, localAddress }, () => socket.write(handshake(path)));
  socket.on('error', () => undefined);
  opened.push(socket);
  await eventually(() => held.has(path), 5000, `${path} at the backend`);
  return socket;
}

/** What the edge answers a handshake from `localAddress` within `waitMs` ('' if nothing). */
function answer(path: string, localAddress: string, waitMs: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port: edgePort, localAddress }, () => socket.write(handshake(path)));
    opened.push(socket);
    socket.on('error', () => undefined);
    let received = '';
    const done = () => resolve(received);
    socket.on('data', (d: Buffer) => {
      received += d.toString('latin1');
      done();
    });
    socket.on('close', done);
    setTimeout(done, waitMs);
  });
}

beforeAll(async () => {
  backend = createServer((_req, res) => res.end('plain'));
  backend.on('upgrade', (req: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => socket.destroy());
    if (req.url === '/ws-late') {
      // Answers after a while, then echoes in upper case.
      setTimeout(() => {
        socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n');
        socket.on('data', (d: Buffer) => socket.write(d.toString().toUpperCase()));
      }, 500);
      return;
    }
    // Taken, never answered; read so that the edge's closing its side is noticed.
    held.set(req.url!, socket);
    socket.resume();
    socket.on('end', () => socket.destroy());
    socket.on('close', () => held.delete(req.url!));
  });
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
  const port = (backend.address() as { port: number }).port;
  const env = {
    PALISADE_DATA_DIR: tempDir(),
    PALISADE_ALLOW_PRIVATE_BACKENDS: 'true',
    PALISADE_EDGE_RESPONSE_TIMEOUT_MS: '60000',
    PALISADE_EDGE_BACKEND_SHARE_PER_CLIENT: '2',
  };
  const key = JSON.parse((await runAdminCli(env, ['user', 'create', '--name', 'a', '--email', 'a@example.org'])).stdout).key.api_key;
  server = await startServe(env);
  edgePort = Number(new URL(server.edgeUrl!).port);
  const created = await fetch(`${server.url}/domains`, { method: 'POST', headers: { 'x-auth-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ domain: 'ws.test', backend: `127.0.0.1:${port}` }) });
  expect(created.status, await created.text()).toBe(201);
  await eventually(async () => (await fetch(`${server.edgeUrl}/`, { headers: { host: 'ws.test' } }).then((r) => r.status, () => 0)) === 200, 5000, 'the domain at the edge');
}, 90_000);

afterAll(async () => {
  for (const socket of opened) socket.destroy();
  if (server) await stopProcess(server);
  backend?.close();
  removeTempDirs();
});

describe('a pending WebSocket handshake whose client leaves', () => {
  it('closes the backend’s connection at once when the client half-closes (FIN) or closes', async () => {
    const ending = await pending('/ws-end', '127.0.10.1');
    const closing = await pending('/ws-close', '127.0.10.2');
    ending.end();
    closing.destroy();
    // The bug held both until the response timeout (60 s); seconds of margin for a loaded machine.
    await eventually(() => !held.has('/ws-end') && !held.has('/ws-close'), 5000, 'the backend connections closed');
  });

  it('gives the client’s share of the backend back at once', async () => {
    // A share of 2: both taken by handshakes left pending, then their client goes.
    const sockets = [await pending('/ws-a', '127.0.10.3'), await pending('/ws-b', '127.0.10.3')];
    expect(await answer('/ws-c', '127.0.10.3', 3000)).toMatch(/^HTTP\/1\.1 429/);
    for (const socket of sockets) socket.end();
    await eventually(() => held.size === 0, 5000, 'the backend connections closed');
    const next = connect({ host: '127.0.0.1', port: edgePort, localAddress: '127.0.10.3' }, () => next.write(handshake('/ws-d')));
    next.on('error', () => undefined);
    opened.push(next);
    await eventually(() => held.has('/ws-d'), 5000, 'the next handshake at the backend');
  });

  it('keeps what a client sent before the answer and gives it to the backend after 101', async () => {
    const socket = connect({ host: '127.0.0.1', port: edgePort, localAddress: '127.0.10.4' }, () => socket.write(`${handshake('/ws-late')}early bytes`));
    socket.on('error', () => undefined);
    opened.push(socket);
    let received = '';
    socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
    await eventually(() => received.includes('EARLY BYTES'), 5000, 'the early bytes echoed');
    expect(received).toMatch(/^HTTP\/1\.1 101/);
  });
});
