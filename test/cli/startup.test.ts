// Start-up failures an operator can fix are one clear line and exit code 1, not a hang or a stack.
import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/spawn-palisade.ts';
import { removeTempDirs, tempDir } from '../helpers/temp.ts';

afterAll(removeTempDirs);

async function run(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [BIN, 'serve'], { env: { ...process.env, PALISADE_LOG_LEVEL: 'error', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return { code, stderr };
}

describe('start-up failures', () => {
  it('a DNS port in use', async () => {
    const taken = createSocket('udp4');
    await new Promise<void>((resolve) => taken.bind(0, '127.0.0.1', () => resolve()));
    const port = taken.address().port;
    try {
      const r = await run({ PALISADE_DATA_DIR: tempDir(), PALISADE_API_PORT: '0', PALISADE_DNS_PORT: String(port) });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`palisade: dns: cannot listen on 127.0.0.1:${port} (EADDRINUSE)`);
    } finally {
      taken.close();
    }
  });

  it('every invalid setting named at once', async () => {
    const r = await run({ PALISADE_API_PORT: 'eighty', PALISADE_NS1: 'single', PALISADE_DNS_CACHE: 'maybe', REDIS_URL: 'http://x' });
    expect(r.code).toBe(1);
    for (const name of ['PALISADE_API_PORT=eighty', 'PALISADE_NS1=single', 'PALISADE_DNS_CACHE=maybe', 'REDIS_URL=http://x']) expect(r.stderr).toContain(name);
  });
});
