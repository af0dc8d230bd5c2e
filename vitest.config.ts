import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

/**
 * The tests that run fabrics in containers: most of their wall time is the Docker daemon's (building
 * the image, creating, starting and removing containers and networks), not CPU. They run in a lane of
 * their own beside the rest, so that this waiting overlaps the other files' fabrics (on a 2-core
 * machine the suite is CPU-bound otherwise); every run is checked by its own run's label, so the two
 * lanes never see each other's processes or containers.
 */
const CONTAINER_TESTS = ['test/docker.integration.test.ts', 'test/compose.integration.test.ts'];

export default defineConfig({
  resolve: { alias: { 'dcemu/scheme': join(import.meta.dirname, 'scheme/index.ts') } },
  test: {
    testTimeout: 240_000,
    hookTimeout: 60_000,
    // the default reporter, then the slowest files (the suite's budget: 12 minutes on 2 cores)
    reporters: ['default', './test/slowest-reporter.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'fabric',
          // the project's tests, and the example scheme packages' own (they import dcemu's SDK by its
          // package name: here, the SDK's source)
          include: ['test/**/*.test.ts', 'examples/schemes/*/test/**/*.test.js'],
          exclude: CONTAINER_TESTS,
          // integration tests start dozens of processes each: one file at a time keeps a 2-core
          // machine honest
          fileParallelism: false,
        },
      },
      {
        extends: true,
        test: { name: 'containers', include: CONTAINER_TESTS, fileParallelism: false },
      },
    ],
  },
});
