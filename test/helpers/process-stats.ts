// What a child process holds, read from /proc: resident memory and open file descriptors.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** Resident set size in MiB. */
export function rssMiB(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
}

/** Open file descriptors (sockets, files, pipes, epoll and event fds). */
export function openFds(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

/** Open file descriptors by kind ("socket", "pipe", "anon_inode", "file"), for reports. */
export function fdKinds(pid: number): Record<string, number> {
  const kinds: Record<string, number> = {};
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    let kind = 'closed meanwhile';
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      kind = target.startsWith('/') ? 'file' : target.replace(/:.*$/, '');
    } catch {
      // Closed between the listing and the look.
    }
    kinds[kind] = (kinds[kind] ?? 0) + 1;
  }
  return kinds;
}

/** Proportional set size in MiB (`/proc/PID/smaps_rollup`): the process's own share of its memory. */
export function pssMiB(pid: number): number {
  return Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))![1]) / 1024;
}
