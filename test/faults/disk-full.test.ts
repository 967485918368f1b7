// A full disk under the embedded store (a real tmpfs, mounted for the test): a failed commit
// answers 507 problem+json, the process and its DNS keep running, reads keep working, a restart
// on the still-full disk starts and answers the same, writes work again once space returns, and
// every acknowledged write is still there.
import { mkdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dig } from '../helpers/dig.ts';
import { runAdminCli, START_TIMEOUT_MS, startServe, stopProcess, stopStarted, type RunningServer } from '../helpers/spawn-palisade.ts';
import { fillDisk, mountTmpfs, type Tmpfs } from '../helpers/tmpfs.ts';

let disk: Tmpfs | undefined;
let dataDir: string;
let filler: string;
let server: RunningServer;
let key: string;
let env: Record<string, string>;

const call = (method: string, path: string, body?: unknown) =>
  fetch(`${server.url}${path}`, { method, headers: { 'x-auth-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });


// Set-up: a CLI run and a start (each within the start deadline), and the mount.
beforeAll(async () => {
  // Mounts left by earlier runs that ended without their clean-up are unmounted first.
  disk = await mountTmpfs('palisade-full', '12m');
  dataDir = join(disk.path, 'data');
  filler = join(disk.path, 'filler');
  mkdirSync(dataDir);
  env = { PALISADE_DATA_DIR: dataDir };
  const created = await runAdminCli(env, ['user', 'create', '--name', 'full', '--email', 'full@example.org']);
  expect(created.code, created.stderr).toBe(0);
  key = JSON.parse(created.stdout).key.api_key;
  server = await startServe(env);
}, 2 * START_TIMEOUT_MS);

// Copes with a set-up that failed anywhere: whatever was started is stopped (and its exit awaited,
// so that nothing holds the file system), then the tmpfs is unmounted if it was mounted.
afterAll(async () => {
  await stopStarted();
  await disk?.unmount();
});

describe('disk full', () => {
  it('507 on a failed commit, nothing lost, everything else keeps working, writes resume when space returns', async () => {
    expect((await call('POST', '/domains', { domain: 'full.example', backend: '198.51.100.1', enabled: false })).status).toBe(201);
    expect((await call('GET', '/domains/full.example/activatens')).status).toBe(200);
    // Room for a few records, then none.
    fillDisk(filler, 256 * 1024);
    const acknowledged: string[] = [];
    let refused: Response | undefined;
    for (let i = 0; i < 400 && !refused; i++) {
      const value = `${i}`.padEnd(3000, 'x');
      const res = await call('POST', '/domains/full.example/dnsrecords', { name: `r${i}`, type: 6, value });
      if (res.status === 201) acknowledged.push(`r${i}`);
      else refused = res;
    }
    expect(refused, 'the disk never filled').toBeDefined();
    expect(acknowledged.length).toBeGreaterThan(0);
    const refusedText = await refused!.clone().text();
    expect(refused!.status, refusedText).toBe(507);
    expect(refused!.headers.get('content-type')).toContain('application/problem+json');
    expect(refused!.headers.get('retry-after')).toBeTruthy();
    expect(((await refused!.json()) as { code: string }).code).toBe('STORAGE_FULL');
    // The process stays up (no unhandled rejection ends it), reads and DNS keep working.
    await new Promise((r) => setTimeout(r, 500));
    expect(server.child.exitCode, server.output().slice(-3000)).toBeNull();
    expect((await call('GET', '/domains/full.example')).status).toBe(200);
    expect((await dig(server.dnsPort, 'full.example', 'SOA')).status).toBe('NOERROR');
    for (let i = 0; i < 5; i++) expect([201, 507]).toContain((await call('POST', '/domains/full.example/dnsrecords', { name: 'again', type: 1, value: `192.0.2.${i + 1}` })).status);
    await new Promise((r) => setTimeout(r, 300));
    expect(server.child.exitCode).toBeNull();

    // Killed and restarted on the still-full disk: it starts, serves, and refuses writes the same way.
    await stopProcess(server, 'SIGKILL');
    server = await startServe(env);
    const last = await dig(server.dnsPort, `${acknowledged.at(-1)}.full.example`, 'TXT');
    expect(last.answer, `${acknowledged.length} acknowledged\n${last.raw}\n${server.output().slice(-2000)}`).toHaveLength(1);
    const stillFull = await call('POST', '/domains/full.example/dnsrecords', { name: 'big', type: 6, value: 'y'.repeat(4000) });
    expect([201, 507]).toContain(stillFull.status);
    await new Promise((r) => setTimeout(r, 300));
    expect(server.child.exitCode).toBeNull();

    // Space returns: writes work again, and every acknowledged record is there.
    unlinkSync(filler);
    expect((await call('POST', '/domains/full.example/dnsrecords', { name: 'after', type: 1, value: '192.0.2.99' })).status).toBe(201);
    const records = (await (await call('GET', '/domains/full.example/dnsrecords?limit=1000')).json()) as Array<{ name: string }>;
    const names = new Set(records.map((r) => r.name));
    for (const name of acknowledged) expect(names.has(name), name).toBe(true);
    expect((await dig(server.dnsPort, 'after.full.example', 'A')).answer[0]?.data).toBe('192.0.2.99');
  }, START_TIMEOUT_MS + 60_000);
});
