import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: { alias: { 'dcemu/scheme': join(import.meta.dirname, 'scheme/index.ts') } },
  test: {
    // the project's tests, and the example scheme packages' own (they import dcemu's SDK by its
    // package name: here, the SDK's source)
    include: ['test/**/*.test.ts', 'examples/schemes/*/test/**/*.test.js'],
    // integration tests start dozens of processes each: one file at a time keeps a 2-core machine
    // honest. (Running the container tests beside exact fabric files saved ~60 s of wall, but starved
    // the dilated docker test, whose detections then came late: a flaky test, so not done.)
    fileParallelism: false,
    testTimeout: 240_000,
    // the default reporter, then the slowest files (the suite's budget: 12 minutes on 2 cores), with
    // the CPU each took (test/cpu-probe.ts)
    reporters: ['default', './test/slowest-reporter.ts'],
    setupFiles: ['./test/cpu-probe.ts'],
    hookTimeout: 60_000,
  },
});
