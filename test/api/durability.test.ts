// Durability of the embedded store through the real process: restart, SIGTERM and kill -9.
import { afterAll, describe, expect, it } from 'vitest';
import { runAdminCli, startServe } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';

afterAll(removeTempDirs);

async function userKey(env: Record<string, string>): Promise<string> {
  const res = await runAdminCli(env, ['user', 'create', '--name', 'durable', '--email', 'durable@example.org']);
  expect(res.code, res.stderr).toBe(0);
  return JSON.parse(res.stdout).key.api_key as string;
}

const json = (key: string) => ({ 'x-auth-key': key, 'content-type': 'application/json' });

describe('durability', () => {
  it('state survives a graceful restart (SIGTERM exits 0)', async () => {
    const env = { PALISADE_DATA_DIR: tempDir() };
    const key = await userKey(env);
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

  it('every acknowledged write survives kill -9 in the middle of a write storm', async () => {
    const env = { PALISADE_DATA_DIR: tempDir() };
    const key = await userKey(env);
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
    const writers = Promise.all(Array.from({ length: 8 }, (_, w) => writer(w)));
    while (acknowledged.length < 200) await new Promise((r) => setTimeout(r, 5));
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
