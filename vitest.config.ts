import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Tests start real servers and child processes; two workers match the 2-core machines we run on.
    maxWorkers: 2,
    // The JSON report lets CI print one plain "N passed, M failed" line.
    reporters: ['default', 'json'],
    outputFile: { json: '.vitest-results.json' },
  },
});
