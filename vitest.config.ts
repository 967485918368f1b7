import { configDefaults, defineConfig } from 'vitest/config';
import { IN_PROCESS } from './test/in-process-files.ts';

// Tests that measure time (the longest stall another tenant sees, rate limits, floods, timeouts
// and descriptors of an edge under misbehaving peers) run after
// the rest, one file at a time: sharing the two cores with other suites' servers would measure
// the neighbours, not the code. `backend-misbehaviour` is not among them: it asserts bytes and a
// live process, with no bound a loaded machine could reach (its 40 s deadline is 6× its need), and
// spends most of its time waiting on bandwidth limits, so it runs beside the others.
const TIMING = ['test/dns/zone-stall.test.ts', 'test/dns/tcp-exhaustion.test.ts', 'test/dns/cookies.test.ts', 'test/api/rate-limit.test.ts', 'test/edge/edge-protections.test.ts', 'test/edge/fuzz-backends.test.ts', 'test/edge/shared-backends.test.ts', 'test/sync/feed-fairness.test.ts', 'test/dns/dnssec-flood.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    // Spawned `palisade` processes run dist/: built before any test when src/ is newer.
    globalSetup: ['test/global-build.ts'],
    // Set-ups start several processes (CLI runs, API, name servers, edges); on a loaded machine
    // that takes longer than a test.
    hookTimeout: 60_000,
    // Tests start real servers and child processes; two workers match the 2-core machines we run on.
    maxWorkers: 2,
    // The JSON report lets CI print one plain "N passed, M failed" line.
    reporters: ['default', 'json'],
    outputFile: { json: '.vitest-results.json' },
    projects: [
      { extends: true, test: { name: 'suite', include: ['test/**/*.test.ts'], exclude: [...configDefaults.exclude, ...TIMING, ...IN_PROCESS], sequence: { groupOrder: 0 } } },
      // Beside them, in the same two workers: files that need no process of their own (see the list).
      { extends: true, test: { name: 'in-process', include: IN_PROCESS, isolate: false, sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: 'timing', include: TIMING, fileParallelism: false, sequence: { groupOrder: 1 } } },
    ],
  },
});
