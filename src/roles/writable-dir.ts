// A data directory the process cannot write (read-only mount, wrong owner) would otherwise fail
// deep inside LMDB with a stack trace; it is checked at start-up and reported in one line.
import { mkdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StartupError } from './startup-error.ts';

export function ensureWritableDir(path: string, setting: string): void {
  const probe = join(path, `.write-check-${process.pid}`);
  try {
    mkdirSync(path, { recursive: true });
    writeFileSync(probe, '');
    unlinkSync(probe);
  } catch (error) {
    let { code, message } = error as NodeJS.ErrnoException;
    // A recursive mkdir on a read-only mount reports ENOENT; a plain one tells the real reason.
    if (code === 'ENOENT') {
      try {
        mkdirSync(path);
      } catch (plain) {
        ({ code, message } = plain as NodeJS.ErrnoException);
      }
    }
    throw new StartupError(`the data directory ${path} is not writable (${code ?? message}); fix its mount or owner, or set ${setting}`);
  }
}
