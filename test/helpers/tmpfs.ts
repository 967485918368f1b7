// A small tmpfs mounted for a test (root only), always unmounted after it, and mounts that earlier
// runs left behind cleaned up before a new one is made.
//
// A mount point is named PREFIX-PID-XXXXXX, PID being the test worker that mounted it: a mount
// whose worker is gone is stale. (Names without a PID, from before, are stale once untouched for
// STALE_AFTER_MS: no run keeps its mount that long.) Another run's live mount is left alone.
import { spawnSync } from 'node:child_process';
import { closeSync, ftruncateSync, mkdtempSync, openSync, readFileSync, rmdirSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';

const STALE_AFTER_MS = 30 * 60_000;

export interface Tmpfs {
  path: string;
  /** Unmounts (waiting for processes still closing its files, lazily at last) and removes the mount point. */
  unmount(): Promise<void>;
}

/** Mount points of the mounts under `prefix` (/proc/self/mounts escapes spaces and such in octal). */
function mountsUnder(prefix: string): string[] {
  return readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[1]?.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8))))
    .filter((path): path is string => path !== undefined && path.startsWith(prefix));
}

const isMounted = (path: string) => mountsUnder(path).includes(path);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function isStale(path: string, name: string): boolean {
  const owner = new RegExp(`^${name}-(\\d+)-[^-]+$`).exec(basename(path));
  if (owner) return !alive(Number(owner[1]));
  try {
    return Date.now() - statSync(path).mtimeMs > STALE_AFTER_MS;
  } catch {
    return false;
  }
}

/**
 * Unmounts `path` and removes the mount point: `tries` tries (100 ms apart) while processes close
 * its files, then lazily (gone from view at once, freed when the last file is closed). Says what
 * went wrong, if anything did.
 */
async function unmountPath(path: string, tries: number): Promise<{ lazily: boolean; error?: string }> {
  let said = '';
  for (let i = 0; i < tries && isMounted(path); i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 100));
    said = spawnSync('umount', [path], { encoding: 'utf8' }).stderr?.trim() ?? '';
  }
  const lazily = isMounted(path);
  if (lazily) said = spawnSync('umount', ['-l', path], { encoding: 'utf8' }).stderr?.trim() || said;
  if (isMounted(path)) return { lazily, error: `could not unmount ${path}: ${said}` };
  try {
    rmdirSync(path); // empty once unmounted; never a recursive removal, which would empty a mount still there
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return { lazily, error: `could not remove ${path}: ${(error as Error).message}` };
  }
  return { lazily };
}

/**
 * Mounts a tmpfs of `size` (e.g. "12m") on a new directory named after `name`, after unmounting
 * the stale mounts of earlier runs of the same name; refuses (throws) if one of those stays.
 */
export async function mountTmpfs(name: string, size: string): Promise<Tmpfs> {
  const prefix = join(tmpdir(), `${name}-`);
  for (const stale of mountsUnder(prefix).filter((path) => isStale(path, name))) {
    const { lazily, error } = await unmountPath(stale, 1);
    if (error) throw new Error(`a tmpfs an earlier run left mounted is still there (${error}); unmount it and run again`);
    console.warn(`unmounted a tmpfs an earlier run left behind: ${stale}${lazily ? ' (lazily: a process still had files open there)' : ''}`);
  }
  const path = mkdtempSync(`${prefix}${process.pid}-`);
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', path], { encoding: 'utf8' });
  if (mounted.status !== 0) {
    rmdirSync(path);
    throw new Error(`this test mounts a ${size} tmpfs and needs root for it: mount said ${mounted.stderr || mounted.error?.message}`);
  }
  return {
    path,
    unmount: async () => {
      const { lazily, error } = await unmountPath(path, 50);
      if (error) throw new Error(error);
      if (lazily) console.warn(`${path}: still in use 5 s after the test, unmounted lazily`);
    },
  };
}

/** What `mountTmpfsKept` mounted in this process, for `unmountAll`. */
const ours: Tmpfs[] = [];

/** `mountTmpfs`, kept for `unmountAll()` (call it in afterAll: it copes with a half-done set-up). */
export async function mountTmpfsKept(name: string, size: string): Promise<string> {
  const mount = await mountTmpfs(name, size);
  ours.push(mount);
  return mount.path;
}

/** Unmounts every mount `mountTmpfsKept` made in this process. */
export async function unmountAll(): Promise<void> {
  for (const mount of ours.splice(0)) await mount.unmount();
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
