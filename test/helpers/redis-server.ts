// A real redis-server on a random loopback port, started for a test file and stopped after it.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { tiedToWorker } from './tied-spawn.ts';
import { freePort } from './free-port.ts';

/** Kept here too: many tests import it from this helper. */
export { freePort };

export interface TestRedis {
  url: string;
  port: number;
  stop(): Promise<void>;
  /** Stops the server but keeps the port, so `restart()` brings the same URL back. */
  pause(): Promise<void>;
  restart(): Promise<void>;
}


function launch(port: number): Promise<ChildProcess> {
  const child = spawn(...tiedToWorker('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'yes']), {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${out}`)), 10_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code}):\n${out}`)));
  });
}

async function halt(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.removeAllListeners('exit');
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

export async function startRedis(): Promise<TestRedis> {
  if (spawnSync('sh', ['-c', 'command -v redis-server']).status !== 0) {
    throw new Error('redis-server is required for these tests (Debian: apt-get install redis-server)');
  }
  const port = await freePort();
  let child = await launch(port);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: () => halt(child),
    pause: () => halt(child),
    restart: async () => {
      child = await launch(port);
    },
  };
}
