// A small real tmpfs for disk-full tests (needs root). Every mount made here is unmounted by
// `unmountAll()` (call it in afterAll: it runs when a set-up failed half-way too), and at the
// latest when the process exits; a mount still busy is detached lazily.
import { spawnSync } from 'node:child_process';
import { closeSync, ftruncateSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const mounted: string[] = [];

/** Mounts a tmpfs of `size` (e.g. "8m") on a new directory and returns the directory. */
export function mountTmpfs(size: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'palisade-tmpfs-'));
  const result = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { encoding: 'utf8' });
  if (result.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`this test mounts a ${size} tmpfs and needs root for it: mount said ${result.stderr || result.error?.message}`);
  }
  // Also when the test process ends without its afterAll (a crash, a timeout's kill).
  if (mounted.length === 0) process.once('exit', unmountAll);
  mounted.push(dir);
  return dir;
}

/** Unmounts (lazily if still busy) and removes every directory mounted here. */
export function unmountAll(): void {
  for (const dir of mounted.splice(0)) {
    if (spawnSync('umount', [dir]).status !== 0) spawnSync('umount', ['-l', dir]);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Writes `file` until the file system refuses (ENOSPC), then gives back `leave` bytes. */
export function fillDisk(file: string, leave = 0): void {
  const fd = openSync(file, 'w');
  const block = Buffer.alloc(64 * 1024, 1);
  let size = 0;
  try {
    for (;;) size += writeSync(fd, block);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    // The last blocks, a page at a time: nothing is left but `leave`.
    const page = Buffer.alloc(4096, 1);
    try {
      for (;;) size += writeSync(fd, page);
    } catch {
      // full
    }
    ftruncateSync(fd, Math.max(0, size - leave));
    closeSync(fd);
  }
}
