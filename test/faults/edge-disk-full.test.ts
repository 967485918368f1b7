// An edge's full disk (a real tmpfs under its data dir): it keeps serving, keeps applying the
// API's changes (a new domain, in memory), says so in /healthz (degraded, 200) and one log line,
// writes them once space returns, and a restart with the API away serves them. It starts on an
// already-full disk with no local state, from the feed in memory.
import { createServer, request, type Server } from 'node:http';
import { mkdirSync, rmSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/redis-server.ts';
import { runAdminCli, startEdge, startServe, stopProcess, type RunningEdge, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';
import { fillDisk, mountTmpfsKept, unmountAll } from '../helpers/tmpfs.ts';

let api: RunningServer | undefined;
let edge: RunningEdge | undefined;
let backend: Server;
let backendPort: number;
let key: string;
let apiEnv: Record<string, string>;
let edgeEnv: Record<string, string>;
let filler: string;
let stateDir: string;

const call = (method: string, path: string, body?: unknown) =>
  fetch(`${api!.url}${path}`, { method, headers: { 'x-auth-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });

/** A plain-HTTP request to the edge with a chosen Host: its status. */
function viaEdge(host: string): Promise<number> {
  const url = new URL(edge!.httpUrl);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: '/', headers: { host } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    req.end();
  });
}

async function servedWithin(host: string, timeoutMs = 10_000): Promise<number> {
  const started = Date.now();
  let status = await viaEdge(host);
  while (status !== 200 && Date.now() - started < timeoutMs) {
    await new Promise((r) => setTimeout(r, 100));
    status = await viaEdge(host);
  }
  return status;
}

async function healthUntil(status: string, timeoutMs = 15_000) {
  const get = async () => {
    const res = await fetch(edge!.notifyUrl.replace('/notify', '/healthz'));
    return { code: res.status, body: (await res.json()) as { status: string; local_state: { written: boolean; reason?: string } } };
  };
  const started = Date.now();
  let h = await get();
  while (h.body.status !== status && Date.now() - started < timeoutMs) {
    await new Promise((r) => setTimeout(r, 200));
    h = await get();
  }
  return h;
}

const addDomain = async (domain: string) => expect((await call('POST', '/domains', { domain, backend: `127.0.0.1:${backendPort}` })).status).toBe(201);
const lines = (text: string) => edge!.output().split('\n').filter((l) => l.includes(text)).length;
const startApi = async () => (api = await startServe(apiEnv, 20_000, 'api'));
const startEdgeHere = async () => (edge = await startEdge(edgeEnv));

beforeAll(async () => {
  backend = createServer((_req, res) => res.end('ok'));
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
  backendPort = (backend.address() as { port: number }).port;
  apiEnv = { PALISADE_DATA_DIR: tempDir(), PALISADE_ALLOW_PRIVATE_BACKENDS: 'true', PALISADE_API_PORT: String(await freePort()) };
  const admin = async (args: string[]) => JSON.parse((await runAdminCli(apiEnv, args)).stdout) as Record<string, unknown>;
  key = ((await admin(['user', 'create', '--name', 'edge', '--email', 'edge@example.org'])).key as { api_key: string }).api_key;
  await admin(['node', 'add', '--name', 'e1', '--ipv4', '127.0.0.1', '--location', 'DE']);
  const consumer = (await admin(['consumer', 'add', '--name', 'edge-e1', '--node', '1'])) as { token: string; secret: string };
  await startApi();
  await addDomain('before.example');
  const mount = await mountTmpfsKept('palisade-disk-full', '8m');
  filler = join(mount, 'filler');
  mkdirSync(join(mount, 'data'));
  stateDir = join(mount, 'data', 'edge-state');
  edgeEnv = {
    PALISADE_DATA_DIR: join(mount, 'data'),
    PALISADE_EDGE_NODE: '1',
    PALISADE_EDGE_NAME: 'e1',
    PALISADE_SYNC_URL: api!.url,
    PALISADE_SYNC_TOKEN: consumer.token,
    PALISADE_SYNC_SECRET: consumer.secret,
    PALISADE_SYNC_PORT: '0',
    PALISADE_SYNC_POLL_MS: '300',
    PALISADE_ALLOW_PRIVATE_BACKENDS: 'true',
  };
  await startEdgeHere();
  expect(await servedWithin('before.example')).toBe(200);
}, 60_000);

afterAll(async () => {
  if (edge) await stopProcess(edge);
  if (api) await stopProcess(api);
  backend?.close();
  await unmountAll();
  removeTempDirs();
});

describe('an edge whose disk is full', () => {
  it('keeps serving and applying changes, says so, writes them once space returns, and restarts from them', async () => {
    fillDisk(filler);
    await addDomain('during.example');
    expect(await servedWithin('during.example')).toBe(200);
    expect(await viaEdge('before.example')).toBe(200);
    const degraded = await healthUntil('degraded');
    expect(degraded.code).toBe(200);
    expect(degraded.body.local_state.written, JSON.stringify(degraded.body)).toBe(false);
    expect(edge!.child.exitCode, edge!.output().slice(-3000)).toBeNull();
    expect(lines('cannot write the local state'), edge!.output()).toBe(1);

    unlinkSync(filler);
    expect((await healthUntil('ok')).body.local_state.written).toBe(true);
    expect(lines('the local state is written again'), edge!.output()).toBe(1);
    await stopProcess(edge!, 'SIGKILL');
    await stopProcess(api!);
    await startEdgeHere();
    expect(await viaEdge('during.example')).toBe(200);
    await startApi();
  }, 60_000);

  it('starts on a full disk with no local state: from the feed, in memory', async () => {
    await stopProcess(edge!);
    rmSync(stateDir, { recursive: true, force: true });
    fillDisk(filler);
    await startEdgeHere();
    expect(await servedWithin('during.example')).toBe(200);
    expect((await healthUntil('degraded')).body.local_state.written).toBe(false);
    await addDomain('memory.example');
    expect(await servedWithin('memory.example')).toBe(200);
    unlinkSync(filler);
    expect((await healthUntil('ok')).body.local_state.written).toBe(true);
    await stopProcess(edge!, 'SIGKILL');
    await stopProcess(api!);
    await startEdgeHere();
    expect(await viaEdge('memory.example')).toBe(200);
    await startApi();
  }, 60_000);
});
