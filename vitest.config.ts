import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // integration tests start dozens of processes each: one file at a time keeps a 2-core machine honest
    fileParallelism: false,
    testTimeout: 240_000,
    // the default reporter, then the slowest files (the suite's budget: 12 minutes on 2 cores)
    reporters: ['default', './test/slowest-reporter.ts'],
    hookTimeout: 60_000,
  },
});
