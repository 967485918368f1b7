// `palisade serve` in front of backends that close the connection after each answer: Python's
// `http.server` (HTTP/1.0, a Content-Length, then close), a raw HTTP/1.0 server that sends no
// length and ends the body by closing, and a raw HTTP/1.1 server that says `Connection: close`.
// Clients download a 1 MiB file through the edge, with and without a bandwidth limit, reading
// it whole, pausing after a few KB, reading slowly, or leaving in the middle. While the edge's
// upstream reader was held back (a slow client, the bandwidth limit), the backend's FIN used to
// reach an undici (7.x) parser paused by backpressure and end the whole process with an
// assertion from a socket handler (undici #5360): API, DNS and every domain's edge with it.
// Each case checks the bytes the clients got, then that the process still runs and answers its
// API, DNS and the edge.
import { createHash, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { dig } from '../helpers/dig.ts';
import { startPythonHttpServer, type PythonHttpServer } from '../helpers/python-http-server.ts';
import { runAdminCli, startServe, stopProcess, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';

const FILE = randomBytes(1024 * 1024);
const FILE_SHA = createHash('sha256').update(FILE).digest('hex');
/** The burst case's limit: eight downloads of 1 MiB held back for ~4 s each. */
const BWLIMIT = 256;
/**
 * The four readers of one domain share its bucket: at 512 KB/s the three whole downloads take ~6 s
 * instead of ~12 s, and the limit still holds the upstream reader back for all of them.
 */
const SHARED_BWLIMIT = 512;
/** Limited domains per raw backend for the burst case (each its own bucket, so all at full rate). */
const BURST = 8;

let server: RunningServer;
let env: Record<string, string>;
let key: string;
let python: PythonHttpServer;
const raw: Server[] = [];
/** How many times a `palisade serve` process had to be started again because the last one died. */
const deaths: string[] = [];

/**
 * A raw backend: reads the request head, answers with `head` and the file, then closes (FIN):
 * the FIN is there while the edge still holds most of the body back.
 */
function rawBackend(head: string): Promise<number> {
  const server = createServer((socket: Socket) => {
    socket.on('error', () => undefined);
    let received = '';
    socket.on('data', (d: Buffer) => {
      if (received.includes('\r\n\r\n')) return;
      received += d.toString('latin1');
      if (!received.includes('\r\n\r\n')) return;
      // All at once and then FIN, as a small server writing a file does.
      socket.write(head);
      socket.write(FILE);
      socket.end();
    });
  });
  raw.push(server);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)));
}

type Reader = 'whole' | 'pauses' | 'slow' | 'leaves';

interface Download {
  reader: Reader;
  status?: number;
  bytes: number;
  sha?: string;
  error?: string;
  ms: number;
}

/**
 * Downloads `path` through the edge on a connection of its own. `pauses`: reads 8 KB, then
 * nothing for 3 s (past the edge's client timeout), then the rest; `slow`: waits 25 ms after each
 * chunk; `leaves`: goes away after 100 KB. Never rejects: what happened is in the result.
 */
function download(host: string, path: string, reader: Reader): Promise<Download> {
  const url = new URL(server.edgeUrl!);
  const started = performance.now();
  return new Promise((resolve) => {
    const hash = createHash('sha256');
    let bytes = 0;
    let status: number | undefined;
    let paused = false;
    let settled = false;
    const done = (extra: Partial<Download>) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve({ reader, status, bytes, ms: Math.round(performance.now() - started), ...extra });
    };
    const req = request({ host: url.hostname, port: url.port, path, headers: { host }, agent: false }, (res) => {
      status = res.statusCode;
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        hash.update(chunk);
        if (reader === 'leaves' && bytes >= 100 * 1024) {
          req.destroy();
          done({ error: 'left on purpose' });
        } else if (reader === 'pauses' && !paused && bytes >= 8 * 1024) {
          paused = true;
          res.pause();
          setTimeout(() => res.resume(), 3000);
        } else if (reader === 'slow') {
          res.pause();
          setTimeout(() => res.resume(), 25);
        }
      });
      res.on('end', () => done({ sha: hash.digest('hex') }));
      res.on('error', (error) => done({ error: error.message }));
      res.on('aborted', () => done({ error: 'response aborted' }));
    });
    req.on('error', (error) => done({ error: error.message }));
    req.end();
    // Far beyond what the slowest reader needs (1 MiB shared with three others at 512 KB/s).
    const deadline = setTimeout(() => {
      req.destroy();
      done({ error: 'no end within 40 s' });
    }, 40_000);
  });
}

const died = () => server.child.exitCode !== null || server.child.signalCode !== null;
const tail = () => server.output().slice(-3000);

async function startPalisade(): Promise<void> {
  server = await startServe(env);
}

beforeAll(async () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'file.bin'), FILE);
  python = await startPythonHttpServer(dir);
  // No length: the body ends with the connection.
  const http10 = await rawBackend('HTTP/1.0 200 OK\r\nConnection: close\r\nContent-Type: application/octet-stream\r\n\r\n');
  const http11 = await rawBackend(`HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: application/octet-stream\r\nContent-Length: ${FILE.length}\r\n\r\n`);
  env = {
    PALISADE_DATA_DIR: tempDir(),
    PALISADE_ALLOW_PRIVATE_BACKENDS: 'true',
    // A paused reader is silent for longer than this: the edge must not mistake it for a stuck request.
    PALISADE_EDGE_CLIENT_TIMEOUT_MS: '2000',
    PALISADE_EDGE_RESPONSE_TIMEOUT_MS: '10000',
  };
  key = JSON.parse((await runAdminCli(env, ['user', 'create', '--name', 'closers', '--email', 'closers@example.org'])).stdout).key.api_key;
  await startPalisade();
  const create = async (domain: string, port: number, bwlimit: number) => {
    const res = await fetch(`${server.url}/domains`, { method: 'POST', headers: { 'x-auth-key': key, 'content-type': 'application/json' }, body: JSON.stringify({ domain, backend: `127.0.0.1:${port}`, bwlimit }) });
    expect(res.status, await res.text()).toBe(201);
    // Its zone served by the name server too (checked after each case).
    expect((await fetch(`${server.url}/domains/${domain}/activatens`, { headers: { 'x-auth-key': key } })).status).toBe(200);
  };
  for (const [name, port] of [['python', python.port], ['http10', http10], ['http11', http11]] as const) {
    await create(`${name}.example`, port, 0);
    await create(`${name}-bw.example`, port, SHARED_BWLIMIT);
  }
  for (const [name, port] of [['http10', http10], ['http11', http11]] as const) {
    for (let i = 1; i <= BURST; i++) await create(`${name}-bw${i}.example`, port, BWLIMIT);
  }
  // The unlimited domains answer before the cases start (the limited ones take 4 s a download).
  for (const name of ['python', 'http10', 'http11']) {
    for (const host of [`${name}.example`]) {
      const check = await download(host, '/file.bin', 'whole');
      expect(check, `${host}: ${check.error}`).toMatchObject({ status: 200, bytes: FILE.length, sha: FILE_SHA });
    }
  }
}, 90_000);

// A case that killed the process does not take the next ones with it: they get a new one (and
// the report says so).
beforeEach(async () => {
  if (server && died()) {
    deaths.push(tail());
    await startPalisade();
  }
});

afterAll(async () => {
  if (server) await stopProcess(server);
  await python?.stop();
  for (const s of raw) s.close();
  removeTempDirs();
  if (deaths.length > 0) console.log(`palisade serve died ${deaths.length} time(s); the first:\n${deaths[0]}`);
});

/** The process runs, and its API, DNS and edge answer. */
async function stillServing(host: string): Promise<void> {
  expect(died(), `palisade serve died:\n${tail()}`).toBe(false);
  const health = await fetch(`${server.url}/healthz`);
  expect(health.status).toBe(200);
  const soa = await dig(server.dnsPort, host, 'SOA');
  expect(soa.status).toBe('NOERROR');
  expect(soa.answer.map((r) => r.type)).toEqual(['SOA']);
  // Another edge request: the whole file, from the same backend, without the limit (quick).
  const again = await download(host.replace(/-bw\d*\./, '.'), '/file.bin', 'whole');
  expect(again).toMatchObject({ status: 200, bytes: FILE.length, sha: FILE_SHA });
  expect(died(), `palisade serve died:\n${tail()}`).toBe(false);
  expect(server.output()).not.toMatch(/AssertionError|uncaught/i);
}

describe.each([
  ['python3 -m http.server (HTTP/1.0, Content-Length, close)', 'python'],
  ['a raw HTTP/1.0 server (Connection: close, no length)', 'http10'],
  ['a raw HTTP/1.1 server (Connection: close, Content-Length)', 'http11'],
])('the edge in front of %s', (_title, name) => {
  it.each([
    [`bwlimit ${SHARED_BWLIMIT} KB/s`, `${name}-bw.example`],
    ['no bandwidth limit', `${name}.example`],
  ])('%s: 1 MiB to clients reading whole, pausing, slowly, and leaving midway; the process lives on', async (_limit, host) => {
    const started = performance.now();
    const results = await Promise.all((['whole', 'pauses', 'slow', 'leaves'] as const).map((reader) => download(host, '/file.bin', reader)));
    console.log(`${host}: ${results.map((r) => `${r.reader} ${r.status ?? '-'} ${r.bytes} B ${r.ms} ms${r.error ? ` (${r.error})` : ''}`).join('; ')}; ${Math.round(performance.now() - started)} ms`);
    expect(died(), `palisade serve died:\n${tail()}`).toBe(false);
    for (const result of results.filter((r) => r.reader !== 'leaves')) {
      expect(result, result.reader).toMatchObject({ status: 200, bytes: FILE.length, sha: FILE_SHA });
    }
    const left = results.find((r) => r.reader === 'leaves')!;
    expect(left.error).toBe('left on purpose');
    await stillServing(host);
  }, 60_000);
});

// The FIN meets a paused parser only when the body's last bytes and the FIN are read together while
// the limit holds the parser back: not every download; eight at once make it all but certain.
describe.each([
  ['a raw HTTP/1.0 server (Connection: close, no length)', 'http10'],
  ['a raw HTTP/1.1 server (Connection: close, Content-Length)', 'http11'],
])('the edge in front of %s', (_title, name) => {
  it(`${BURST} clients at once, each on its own domain limited to ${BWLIMIT} KB/s; the process lives on`, async () => {
    const started = performance.now();
    const hosts = Array.from({ length: BURST }, (_, i) => `${name}-bw${i + 1}.example`);
    const results = await Promise.all(hosts.map((host) => download(host, '/file.bin', 'whole')));
    console.log(`${name} burst: ${results.map((r) => `${r.status ?? '-'} ${r.bytes} B${r.error ? ` (${r.error})` : ''}`).join('; ')}; ${Math.round(performance.now() - started)} ms`);
    expect(died(), `palisade serve died:\n${tail()}`).toBe(false);
    for (const result of results) expect(result).toMatchObject({ status: 200, bytes: FILE.length, sha: FILE_SHA });
    await stillServing(hosts[0]!);
  }, 60_000);
});
