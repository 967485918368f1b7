// A name server's local state damaged on disk (truncated, overwritten, a garbage meta page, zero
// length, a lost lock file, a stored document that does not parse, a crash while reading it) is
// found at start-up, moved aside with one log line, and the name server resyncs from the API by
// itself — also when the API is away at first. An unwritable data directory is one clear line
// and exit code 1.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, ftruncateSync, mkdtempSync, openSync, readdirSync, statSync, unlinkSync, writeFileSync, writeSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dig } from '../helpers/dig.ts';
import { freePort } from '../helpers/redis-server.ts';
import { BIN, runAdminCli, START_TIMEOUT_MS, startNameServer, startServe, stopProcess, type RunningNameServer, type RunningServer } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';
import { until } from '../helpers/until.ts';

let apiEnv: Record<string, string>;
let api: RunningServer;
let nsEnv: Record<string, string>;
let ns: RunningNameServer | undefined;
let stateDir: string;

async function answered(port: number, name: string, tries = 80): Promise<boolean> {
  for (let i = 0; i < tries; i++) {
    const r = await dig(port, name, 'A').catch(() => undefined);
    if (r && r.answer.length === 1) return true;
    await new Promise((res) => setTimeout(res, 100));
  }
  return false;
}

async function stopNs(): Promise<void> {
  if (ns) await stopProcess(ns);
  ns = undefined;
}

async function startNs(): Promise<RunningNameServer> {
  ns = await startNameServer({ ...nsEnv, PALISADE_SYNC_URL: api.url });
  return ns;
}

/** Stops the name server, damages its state with `damage`, starts it and checks it recovers. */
async function recoversFrom(damage: () => void | Promise<void>, expectMovedAside = true): Promise<void> {
  await stopNs();
  await damage();
  const server = await startNs();
  expect(await answered(server.dnsPort, 'rec.state.example'), server.output()).toBe(true);
  const lines = server.output().split('\n').filter((l) => l.includes('local state is damaged'));
  expect(lines.length, server.output()).toBe(expectMovedAside ? 1 : 0);
  expect(server.child.exitCode).toBeNull();
}

const dataFile = () => join(stateDir, 'data.mdb');

beforeAll(async () => {
  apiEnv = { PALISADE_DATA_DIR: tempDir(), PALISADE_API_PORT: String(await freePort()) };
  const key = JSON.parse((await runAdminCli(apiEnv, ['user', 'create', '--name', 'st', '--email', 'st@example.org'])).stdout).key.api_key;
  const added = JSON.parse((await runAdminCli(apiEnv, ['consumer', 'add', '--name', 'ns1'])).stdout);
  api = await startServe(apiEnv, START_TIMEOUT_MS, 'api');
  const nsData = tempDir();
  stateDir = join(nsData, 'ns-state');
  nsEnv = { PALISADE_DATA_DIR: nsData, PALISADE_SYNC_TOKEN: added.token, PALISADE_SYNC_SECRET: added.secret, PALISADE_SYNC_POLL_MS: '300' };
  const call = (method: string, path: string, body?: unknown) =>
    fetch(`${api.url}${path}`, { method, headers: { 'x-auth-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  await call('POST', '/domains', { domain: 'state.example', backend: '198.51.100.1', enabled: false });
  await call('POST', '/domains/state.example/dnsrecords', { name: 'rec', type: 1, value: '192.0.2.7' });
  // Enough zones that the state file spans many pages.
  for (let i = 0; i < 60; i++) await call('POST', '/domains', { domain: `z${i}.example`, backend: '198.51.100.1', enabled: false, tags: ['x'.repeat(60)] });
  await call('GET', '/domains/state.example/activatens');
  for (let i = 0; i < 60; i++) await call('GET', `/domains/z${i}.example/activatens`);
  const server = await startNs();
  expect(await answered(server.dnsPort, 'rec.state.example')).toBe(true);
});

afterAll(async () => {
  await stopNs();
  if (api) await stopProcess(api);
  removeTempDirs();
});

describe('damaged local state', () => {
  it('a cut-short data file (would SIGBUS when mapped)', async () => {
    await recoversFrom(() => {
      const pages = Math.floor(statSync(dataFile()).size / 4096);
      expect(pages).toBeGreaterThan(4);
      const fd = openSync(dataFile(), 'r+');
      ftruncateSync(fd, 3 * 4096);
      closeSync(fd);
    });
  });

  it('random bytes over the whole file', async () => {
    await recoversFrom(() => writeFileSync(dataFile(), randomBytes(statSync(dataFile()).size)));
  });

  it('garbage meta pages behind an intact magic number (would SIGSEGV)', async () => {
    await recoversFrom(() => {
      const fd = openSync(dataFile(), 'r+');
      for (const page of [0, 4096]) writeSync(fd, randomBytes(200), 0, 200, page + 0x30);
      closeSync(fd);
    });
  });

  it('a zero-length file', async () => {
    await recoversFrom(() => writeFileSync(dataFile(), ''));
  });

  it('a missing lock file is no damage: the state is kept and served', async () => {
    await recoversFrom(() => unlinkSync(join(stateDir, 'lock.mdb')), false);
  });

  it('a stored document that does not parse', async () => {
    await recoversFrom(async () => {
      const env = open({ path: stateDir, compression: false, noSubdir: false });
      for (const side of ['a', 'b']) {
        const heads = env.openDB<string, string>({ name: `heads-${side}`, encoding: 'string' });
        heads.putSync('state.example', '{"domain": {"domain": "state.example", "recor');
      }
      await env.close();
    });
  });

  it('a crash while reading it at the last start', async () => {
    await recoversFrom(() => writeFileSync(`${stateDir}.loading`, '12345\n'));
    // Moved-aside copies are kept for inspection, the newest three only.
    const kept = readdirSync(join(stateDir, '..')).filter((n) => n.startsWith('ns-state.damaged-'));
    expect(kept.length).toBeLessThanOrEqual(3);
  });

  it('damaged while the API is away: says so, keeps retrying, and resyncs once the API is back', async () => {
    await stopNs();
    await stopProcess(api);
    writeFileSync(dataFile(), randomBytes(8192));
    const server = await startNs();
    await until('the damage and a failed pull told', () => server.output().includes('local state is damaged') && server.output().includes('cannot pull from the API')).catch(() => undefined);
    expect(server.child.exitCode).toBeNull();
    expect(server.output()).toContain('local state is damaged');
    expect(server.output()).toContain('cannot pull from the API');
    expect((await dig(server.dnsPort, 'rec.state.example', 'A')).status).toBe('REFUSED');
    api = await startServe(apiEnv, START_TIMEOUT_MS, 'api');
    expect(await answered(server.dnsPort, 'rec.state.example')).toBe(true);
  }, 60_000);
});

describe('unwritable data directory', () => {
  const roDir = mkdtempSync(join(tmpdir(), 'palisade-ro-'));
  beforeAll(() => {
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=1m', 'tmpfs', roDir], { encoding: 'utf8' });
    if (mounted.status !== 0) throw new Error(`this test mounts a read-only tmpfs and needs root for it: ${mounted.stderr || mounted.error?.message}`);
  });
  afterAll(() => {
    spawnSync('umount', [roDir]);
    rmSync(roDir, { recursive: true, force: true });
  });

  it.each(['dns', 'serve'])('palisade %s: one clear line and exit code 1', async (role) => {
    const child = spawn(process.execPath, [BIN, role], {
      env: { ...process.env, ...nsEnv, PALISADE_SYNC_URL: 'http://127.0.0.1:9', PALISADE_DATA_DIR: join(roDir, 'data'), PALISADE_DNS_PORT: '0', PALISADE_API_PORT: '0', PALISADE_SYNC_PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const [code] = (await once(child, 'exit')) as [number];
    expect(code).toBe(1);
    const lines = out.trim().split('\n');
    expect(lines, out).toHaveLength(1);
    expect(lines[0], lines[0]).toMatch(/data directory .* is not writable \((EROFS|EACCES)\)/);
  });
});
