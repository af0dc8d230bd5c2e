import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // integration tests start dozens of processes each: one file at a time keeps a 2-core machine honest
    fileParallelism: false,
    testTimeout: 240_000,
    hookTimeout: 60_000,
  },
});
