// Python's own `http.server` serving a directory on loopback: an HTTP/1.0 server that answers
// every request with a Content-Length and then closes the connection — what many customers'
// backends (and quick test servers) look like to an edge.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { tiedToWorker } from './tied-spawn.ts';

export interface PythonHttpServer {
  port: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

function requirePython(): void {
  try {
    execFileSync('python3', ['--version'], { stdio: 'pipe' });
  } catch {
    throw new Error('the `python3` command is required for this test (Debian: apt-get install python3)');
  }
}

/** `python3 -m http.server 0 --bind 127.0.0.1 --directory DIR`; resolves once it says its port. */
export async function startPythonHttpServer(directory: string, timeoutMs = 10_000): Promise<PythonHttpServer> {
  requirePython();
  const child = spawn(...tiedToWorker('python3', ['-u', '-m', 'http.server', '0', '--bind', '127.0.0.1', '--directory', directory]), { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  // One line per request on stderr: read and dropped so that the pipe never fills.
  child.stderr!.on('data', () => undefined);
  const exited = once(child, 'exit');
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    const match = /port (\d+)/.exec(out);
    if (match) {
      return {
        port: Number(match[1]),
        child,
        stop: async () => {
          if (child.exitCode !== null || child.signalCode !== null) return;
          child.kill('SIGTERM');
          await exited;
        },
      };
    }
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`python3 -m http.server did not start:\n${out}`);
}
