// How a benchmark ends, whatever happened: its error printed (exit code 1), the processes it
// started stopped, its scratch directory removed.
import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';

export function runBench(main: () => Promise<void>, children: ChildProcess[], dir: string): void {
  main()
    .catch((error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    })
    .finally(() => {
      for (const child of children) child.kill('SIGTERM');
      setTimeout(() => rmSync(dir, { recursive: true, force: true }), 500);
    });
}
