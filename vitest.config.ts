import { join } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The tests that run fabrics in containers: most of their wall time is the Docker daemon's (building
 * the image, creating, starting and removing containers and networks), not CPU. They run first, in a
 * group of two workers, beside a few exact (conservative) fabric files whose time adds up to about
 * theirs, so that the daemon's waits overlap those files' fabrics; the rest then run one file at a time
 * (on a 2-core machine the suite is CPU-bound otherwise). Every run is checked by its own run's label
 * or path, so files running side by side never see each other's processes or containers.
 */
const CONTAINER_TESTS = ['test/docker.integration.test.ts', 'test/compose.integration.test.ts'];
/** exact runs only, and no bound on wall time: a neighbour's load cannot change what they assert */
const BESIDE_CONTAINERS = [
  'test/f10.integration.test.ts',
  'test/f10-experiment.integration.test.ts',
  'test/sweep.integration.test.ts',
  'test/hostile.integration.test.ts',
  'test/routing.integration.test.ts',
];

/** The container tests first, so that the files beside them start while the daemon works. */
class ContainersFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification) => (CONTAINER_TESTS.some((c) => f.moduleId.endsWith(c)) ? 0 : 1);
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

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
          name: 'beside-containers',
          include: [...CONTAINER_TESTS, ...BESIDE_CONTAINERS],
          maxWorkers: 2,
          sequence: { groupOrder: 1, sequencer: ContainersFirst },
        },
      },
      {
        extends: true,
        test: {
          name: 'fabric',
          // the project's tests, and the example scheme packages' own (they import dcemu's SDK by its
          // package name: here, the SDK's source)
          include: ['test/**/*.test.ts', 'examples/schemes/*/test/**/*.test.js'],
          exclude: [...CONTAINER_TESTS, ...BESIDE_CONTAINERS],
          // integration tests start dozens of processes each: one file at a time keeps a 2-core
          // machine honest
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
