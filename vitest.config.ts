import { join } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The tests that run fabrics in containers: most of their wall time is the Docker daemon's (building
 * the image, creating, starting and removing containers and networks), not CPU. They run first, in a
 * group of two workers, beside a few exact (conservative) fabric files whose time adds up to about
 * theirs, so that the daemon's waits overlap those files' fabrics; the rest then run one file at a time
 * (on a 2-core machine the suite is CPU-bound otherwise). The container tests check their leftovers by
 * their own runs' labels.
 */
const CONTAINER_TESTS = ['test/docker.integration.test.ts', 'test/compose.integration.test.ts'];
/**
 * Exact runs only, with no bound on wall time and no look at every node process of the checkout (the
 * container tests run the same fabric on processes to compare bytes): a neighbour can change neither
 * what they assert nor what they see. Their time, ~100 s on a 2-core machine, is about the container
 * tests'.
 */
const BESIDE_CONTAINERS = [
  'test/expresspass.integration.test.ts',
  'test/clocks.integration.test.ts',
  'test/f10.integration.test.ts',
  'test/f10-experiment.integration.test.ts',
  'test/routing.integration.test.ts',
];

/** The container tests first (the longest first), so that the files beside them run while the daemon works. */
class ContainersFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification) => {
      const i = CONTAINER_TESTS.findIndex((c) => f.moduleId.endsWith(c));
      return i < 0 ? CONTAINER_TESTS.length : i;
    };
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  resolve: { alias: { 'dcemu/scheme': join(import.meta.dirname, 'scheme/index.ts') } },
  test: {
    testTimeout: 240_000,
    hookTimeout: 60_000,
    // the default reporter, then the slowest files (the suite's budget: 12 minutes on 2 cores), with
    // the CPU each took (test/cpu-probe.ts)
    reporters: ['default', './test/slowest-reporter.ts'],
    setupFiles: ['./test/cpu-probe.ts'],
    // (the run's sequencer: vitest takes it from here, not from a project)
    sequence: { sequencer: ContainersFirst },
    projects: [
      {
        extends: true,
        test: {
          name: 'beside-containers',
          include: [...CONTAINER_TESTS, ...BESIDE_CONTAINERS],
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
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
