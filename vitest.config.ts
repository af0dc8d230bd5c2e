import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: { alias: { 'dcemu/scheme': join(import.meta.dirname, 'scheme/index.ts') } },
  test: {
    // the project's tests, and the example scheme packages' own (they import dcemu's SDK by its
    // package name: here, the SDK's source)
    include: ['test/**/*.test.ts', 'examples/schemes/*/test/**/*.test.js'],
    // integration tests start dozens of processes each: one file at a time keeps a 2-core machine honest
    fileParallelism: false,
    testTimeout: 240_000,
    // the default reporter, then the slowest files (the suite's budget: 12 minutes on 2 cores)
    reporters: ['default', './test/slowest-reporter.ts'],
    hookTimeout: 60_000,
  },
});
