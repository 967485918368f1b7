// The CPU time this thread spends running `fn`, in milliseconds: what a CPU-bound check costs,
// without the time the thread waited for a core. On a loaded machine the wall clock counts the
// neighbours' work too (a 10 ms reading measured 1,959 ms beside other test files).

/** Milliseconds of this thread's CPU time (user + system) spent in `fn`. */
export function cpuMs(fn: () => unknown): number {
  const before = process.threadCpuUsage();
  fn();
  const spent = process.threadCpuUsage(before);
  return (spent.user + spent.system) / 1000;
}
