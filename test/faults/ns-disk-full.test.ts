// A name server's full disk (a real tmpfs under its data dir, mounted for the test): it keeps
// answering, keeps applying the API's changes in memory, says so in /healthz (degraded, 200) and
// in one log line; once space returns it writes them (one line), and a restart with the API away
// serves them from its local state. It starts on an already-full disk too: from its local state,
// or, with none, from the feed in memory.
import { existsSync, mkdirSync, rmSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dig } from '../helpers/dig.ts';
import { freePort } from '../helpers/redis-server.ts';
import { runAdminCli, startNameServer, startServe, stopProcess, type RunningNameServer, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';
import { fillDisk, mountTmpfsKept, unmountAll } from '../helpers/tmpfs.ts';

let apiEnv: Record<string, string>;
let api: RunningServer | undefined;
let key: string;
let nsEnv: Record<string, string>;
let ns: RunningNameServer | undefined;
let filler: string;
let stateDir: string;

const call = (method: string, path: string, body?: unknown) =>
  fetch(`${api!.url}${path}`, { method, headers: { 'x-auth-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });

const addRecord = async (name: string, type: number, value: string) => {
  const res = await call('POST', '/domains/full.example/dnsrecords', { name, type, value });
  expect(res.status, await res.clone().text()).toBe(201);
};

/** Until `check` holds for a dig answer (bounded); the last answer. */
async function until(name: string, type: string, check: (r: Awaited<ReturnType<typeof dig>>) => boolean, tries = 100) {
  let r = await dig(ns!.dnsPort, name, type);
  for (let i = 0; i < tries && !check(r); i++) {
    await new Promise((res) => setTimeout(res, 100));
    r = await dig(ns!.dnsPort, name, type);
  }
  return r;
}

async function health(): Promise<{ code: number; body: { status: string; reason?: string; local_state: { written: boolean; reason?: string } } }> {
  const res = await fetch(ns!.notifyUrl.replace('/notify', '/healthz'));
  return { code: res.status, body: (await res.json()) as never };
}

async function healthUntil(status: string, timeoutMs = 15_000) {
  const started = Date.now();
  let h = await health();
  while (h.body.status !== status && Date.now() - started < timeoutMs) {
    await new Promise((r) => setTimeout(r, 200));
    h = await health();
  }
  return h;
}

const lines = (text: string) => ns!.output().split('\n').filter((l) => l.includes(text)).length;
const startNs = async () => (ns = await startNameServer(nsEnv));
const startApi = async () => (api = await startServe(apiEnv, 20_000, 'api'));

beforeAll(async () => {
  apiEnv = { PALISADE_DATA_DIR: tempDir(), PALISADE_API_PORT: String(await freePort()) };
  key = JSON.parse((await runAdminCli(apiEnv, ['user', 'create', '--name', 'ops', '--email', 'ops@example.org'])).stdout).key.api_key;
  const added = JSON.parse((await runAdminCli(apiEnv, ['consumer', 'add', '--name', 'ns1'])).stdout);
  await startApi();
  const mount = await mountTmpfsKept('palisade-disk-full', '8m');
  filler = join(mount, 'filler');
  mkdirSync(join(mount, 'data'));
  stateDir = join(mount, 'data', 'ns-state');
  nsEnv = { PALISADE_DATA_DIR: join(mount, 'data'), PALISADE_SYNC_URL: api!.url, PALISADE_SYNC_TOKEN: added.token, PALISADE_SYNC_SECRET: added.secret, PALISADE_SYNC_POLL_MS: '300' };
  expect((await call('POST', '/domains', { domain: 'full.example', backend: '198.51.100.1', enabled: false })).status).toBe(201);
  expect((await call('GET', '/domains/full.example/activatens')).status).toBe(200);
  await addRecord('rec', 1, '192.0.2.7');
  await startNs();
  expect((await until('rec.full.example', 'A', (r) => r.answer.length === 1)).answer).toHaveLength(1);
}, 60_000);

afterAll(async () => {
  // The name server first: a mount in use does not unmount.
  if (ns) await stopProcess(ns);
  if (api) await stopProcess(api);
  await unmountAll();
  removeTempDirs();
});

describe('a name server whose disk is full', () => {
  it('keeps answering and applying changes, says so, writes them once space returns, and restarts from them', async () => {
    fillDisk(filler);
    await addRecord('new', 1, '192.0.2.55');
    await addRecord('big', 6, 'x'.repeat(3000));
    expect((await until('new.full.example', 'A', (r) => r.answer.length === 1)).answer[0]?.data).toBe('192.0.2.55');
    expect((await until('big.full.example', 'TXT', (r) => r.answer.length === 1)).answer).toHaveLength(1);
    const degraded = await healthUntil('degraded');
    expect(degraded.code).toBe(200);
    expect(degraded.body.local_state.written, JSON.stringify(degraded.body)).toBe(false);
    expect(degraded.body.reason).toMatch(/local state not written \(the disk is full/);
    // More changes while full, one of them to a record the earlier ones patched.
    await addRecord('later', 1, '192.0.2.56');
    const records = (await (await call('GET', '/domains/full.example/dnsrecords')).json()) as Array<{ id: number; name: string }>;
    const rec = records.find((r) => r.name === 'rec')!;
    expect((await call('PATCH', `/domains/full.example/dnsrecords/${rec.id}`, { value: '192.0.2.8' })).status).toBe(200);
    expect((await until('rec.full.example', 'A', (r) => r.answer[0]?.data === '192.0.2.8')).answer[0]?.data).toBe('192.0.2.8');
    expect((await until('later.full.example', 'A', (r) => r.answer.length === 1)).answer).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 500));
    expect(ns!.child.exitCode, ns!.output().slice(-3000)).toBeNull();
    expect(lines('cannot write the local state'), ns!.output()).toBe(1);

    unlinkSync(filler);
    const recovered = await healthUntil('ok');
    expect(recovered.body.local_state.written, JSON.stringify(recovered.body)).toBe(true);
    expect(lines('the local state is written again'), ns!.output()).toBe(1);

    // Killed (no last write at shutdown), then started with the API away: it serves what it wrote.
    await stopProcess(ns!, 'SIGKILL');
    await stopProcess(api!);
    await startNs();
    expect((await dig(ns!.dnsPort, 'new.full.example', 'A')).answer[0]?.data).toBe('192.0.2.55');
    expect((await dig(ns!.dnsPort, 'later.full.example', 'A')).answer[0]?.data).toBe('192.0.2.56');
    expect((await dig(ns!.dnsPort, 'rec.full.example', 'A')).answer[0]?.data).toBe('192.0.2.8');
    expect((await dig(ns!.dnsPort, 'big.full.example', 'TXT')).answer).toHaveLength(1);
    await startApi();
  }, 90_000);

  it('starts on a full disk from its local state, and applies changes in memory', async () => {
    await stopProcess(ns!);
    fillDisk(filler);
    await stopProcess(api!);
    await startNs();
    expect((await dig(ns!.dnsPort, 'new.full.example', 'A')).answer[0]?.data).toBe('192.0.2.55');
    expect((await healthUntil('degraded')).body.local_state.written).toBe(false);
    await startApi();
    await addRecord('fresh', 1, '192.0.2.57');
    expect((await until('fresh.full.example', 'A', (r) => r.answer.length === 1)).answer[0]?.data).toBe('192.0.2.57');
    expect(ns!.child.exitCode).toBeNull();
    unlinkSync(filler);
    expect((await healthUntil('ok')).body.local_state.written).toBe(true);
  }, 60_000);

  it('starts on a full disk with no local state: from the feed, in memory; writes it all once space returns', async () => {
    await stopProcess(ns!);
    rmSync(stateDir, { recursive: true, force: true });
    fillDisk(filler);
    await startNs();
    expect((await until('fresh.full.example', 'A', (r) => r.answer.length === 1)).answer[0]?.data).toBe('192.0.2.57');
    const degraded = await healthUntil('degraded');
    expect(degraded.body.local_state.reason, JSON.stringify(degraded.body)).toMatch(/the disk is full/);
    // Nothing was created on the full disk (LMDB would fault on a new lock file there).
    expect(existsSync(join(stateDir, 'lock.mdb'))).toBe(false);
    await addRecord('memory', 1, '192.0.2.58');
    expect((await until('memory.full.example', 'A', (r) => r.answer.length === 1)).answer[0]?.data).toBe('192.0.2.58');
    // A record difference patched from the snapshot held in memory.
    const records = (await (await call('GET', '/domains/full.example/dnsrecords')).json()) as Array<{ id: number; name: string }>;
    const rec = records.find((r) => r.name === 'rec')!;
    expect((await call('PATCH', `/domains/full.example/dnsrecords/${rec.id}`, { value: '192.0.2.9' })).status).toBe(200);
    expect((await until('rec.full.example', 'A', (r) => r.answer[0]?.data === '192.0.2.9')).answer[0]?.data).toBe('192.0.2.9');

    unlinkSync(filler);
    expect((await healthUntil('ok')).body.local_state.written).toBe(true);
    await stopProcess(ns!, 'SIGKILL');
    await stopProcess(api!);
    await startNs();
    expect((await dig(ns!.dnsPort, 'memory.full.example', 'A')).answer[0]?.data).toBe('192.0.2.58');
    expect((await dig(ns!.dnsPort, 'rec.full.example', 'A')).answer[0]?.data).toBe('192.0.2.9');
    expect((await dig(ns!.dnsPort, 'new.full.example', 'A')).answer[0]?.data).toBe('192.0.2.55');
  }, 60_000);
});
