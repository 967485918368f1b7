// Long-running children of a test (servers) that die with the test's worker process: a test that
// times out, or a worker that vitest ends, leaves no server running behind it. Such orphans kept
// serving and running their timers for minutes after a failed run, and loaded the machine for the
// tests after them. Linux: util-linux's setpriv sets the parent-death signal (SIGKILL), then runs
// the command in its place (the child's pid is the command's); elsewhere the command as it is.
import { spawnSync } from 'node:child_process';

const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((path) => spawnSync(path, ['--pdeathsig', 'SIGKILL', '--', 'true']).status === 0);

/** The command and arguments to spawn so that the child is killed when this process ends. */
export function tiedToWorker(command: string, args: readonly string[]): [string, string[]] {
  return SETPRIV ? [SETPRIV, ['--pdeathsig', 'SIGKILL', '--', command, ...args]] : [command, [...args]];
}
