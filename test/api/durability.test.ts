// Durability of the embedded store through the real process: restart, SIGTERM and kill -9.
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCli, START_TIMEOUT_MS, startServe, stopStarted } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';

// A test's servers are stopped even when it fails half-way (a timed-out test left them running).
afterEach(() => stopStarted());
afterAll(removeTempDirs);

// One user, created once by the real CLI; each test starts from a copy of that store (copied
// while no process has it open): one process start fewer per test.
let template: string;
let key: string;
beforeAll(async () => {
  template = tempDir();
  const res = await runAdminCli({ PALISADE_DATA_DIR: template }, ['user', 'create', '--name', 'durable', '--email', 'durable@example.org']);
  expect(res.code, res.stderr).toBe(0);
  key = JSON.parse(res.stdout).key.api_key as string;
});

function dataDirWithUser(): string {
  const dir = tempDir();
  copyFileSync(join(template, 'data.mdb'), join(dir, 'data.mdb'));
  return dir;
}

/**
 * Each test starts `palisade serve` twice, in series (the second start is the point): its
 * timeout is the helper's start deadline for each, and 30 s for the rest (about 1 s idle: the
 * requests, the write storm, the shutdown). The suite's 30 s for the CLI run and both starts
 * was hit at a load of 17–20 on 2 cores, where a start alone took up to 20 s.
 */
const TWO_STARTS = 2 * START_TIMEOUT_MS + 30_000;

const json = (key: string) => ({ 'x-auth-key': key, 'content-type': 'application/json' });

describe('durability', () => {
  it('state survives a graceful restart (SIGTERM exits 0)', { timeout: TWO_STARTS }, async () => {
    const env = { PALISADE_DATA_DIR: dataDirWithUser() };
    const first = await startServe(env);
    const created = await fetch(`${first.url}/domains`, { method: 'POST', headers: json(key), body: JSON.stringify({ domain: 'restart.example', backend: '198.51.100.1' }) });
    expect(created.status).toBe(201);
    first.child.kill('SIGTERM');
    expect((await first.exited)[0]).toBe(0);
    expect(first.output()).toContain('shutting down');

    const second = await startServe(env);
    const read = await fetch(`${second.url}/domains/restart.example`, { headers: { 'x-auth-key': key } });
    expect(read.status).toBe(200);
    expect(((await read.json()) as { domain: string }).domain).toBe('restart.example');
    second.child.kill('SIGTERM');
    await second.exited;
  });

  it('every acknowledged write survives kill -9 in the middle of a write storm', { timeout: TWO_STARTS }, async () => {
    const env = { PALISADE_DATA_DIR: dataDirWithUser() };
    const server = await startServe(env);
    const base = server.url;
    expect((await fetch(`${base}/domains`, { method: 'POST', headers: json(key), body: JSON.stringify({ domain: 'storm.example', backend: '198.51.100.1' }) })).status).toBe(201);

    const acknowledged: number[] = [];
    let stop = false;
    // Eight writers adding records until the process dies under them (bounded to 5,000 writes).
    const writer = async (w: number) => {
      for (let i = 0; !stop && i < 625; i++) {
        try {
          const res = await fetch(`${base}/domains/storm.example/dnsrecords`, {
            method: 'POST',
            headers: json(key),
            body: JSON.stringify({ name: `w${w}-${i}`, type: 1, value: '192.0.2.1' }),
          });
          if (res.status === 201) acknowledged.push(((await res.json()) as { id: number }).id);
        } catch {
          return; // connection reset: the server is gone
        }
      }
    };
    let writing = true;
    const writers = Promise.all(Array.from({ length: 8 }, (_, w) => writer(w))).finally(() => (writing = false));
    // Writers that all ended before 200 writes were acknowledged (refused, or the server gone) end
    // the wait too: the test then fails on the count, with the server's output, not on its timeout.
    while (acknowledged.length < 200 && writing) await new Promise((r) => setTimeout(r, 5));
    expect(acknowledged.length, server.output().slice(-3000)).toBeGreaterThanOrEqual(200);
    server.child.kill('SIGKILL');
    const [, signal] = await server.exited;
    stop = true;
    await writers;
    expect(signal).toBe('SIGKILL');

    const again = await startServe(env);
    const res = await fetch(`${again.url}/domains/storm.example/dnsrecords?limit=1000`, { headers: { 'x-auth-key': key } });
    const ids = new Set(((await res.json()) as Array<{ id: number }>).map((r) => r.id));
    let next = res.headers.get('link');
    while (next) {
      const page = await fetch(`${again.url}${/<([^>]+)>/.exec(next)![1]}`, { headers: { 'x-auth-key': key } });
      for (const r of (await page.json()) as Array<{ id: number }>) ids.add(r.id);
      next = page.headers.get('link');
    }
    const lost = acknowledged.filter((id) => !ids.has(id));
    expect(acknowledged.length).toBeGreaterThanOrEqual(200);
    expect(lost).toEqual([]);
    again.child.kill('SIGTERM');
    await again.exited;
  });
});
