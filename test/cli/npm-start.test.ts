// `npm start` under a supervisor: SIGTERM to npm stops the server too (the script execs node, so
// npm's forwarded signal reaches it instead of a shell that would ignore it).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { NO_RATE_LIMITS } from '../helpers/config.ts';
import { freePort } from '../helpers/redis-server.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const portOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });

afterAll(() => removeTempDirs());

describe('npm start', () => {
  it('stops the server when npm gets SIGTERM', async () => {
    const port = await freePort();
    const child = spawn('npm', ['start'], {
      cwd: root,
      env: { ...process.env, ...NO_RATE_LIMITS, PALISADE_DATA_DIR: tempDir(), PALISADE_API_PORT: String(port), PALISADE_DNS_PORT: '0', PALISADE_EDGE_HTTP_PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    for (let i = 0; i < 200 && !out.includes('palisade serving'); i++) await new Promise((r) => setTimeout(r, 100));
    expect(out).toContain('palisade serving');
    expect(await portOpen(port)).toBe(true);
    child.kill('SIGTERM');
    await once(child, 'exit');
    let open = true;
    for (let i = 0; i < 50 && open; i++) {
      open = await portOpen(port);
      if (open) await new Promise((r) => setTimeout(r, 100));
    }
    expect(open, out).toBe(false);
  }, 40_000);
});
