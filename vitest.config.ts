import { join } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Files that must have the machine to themselves, run one at a time after the rest: runs whose result
 * has wall time in it (dilated runs: timing), datagrams sent to
 * whatever node ports are open (hostile: they would land in a neighbour's fabric) and real socket
 * timing (core-endpoint). Every other file checks only its own processes (`ownNodePids`: the file's
 * tag in their environment) and runs beside another.
 */
const ALONE = [
  'test/core-endpoint.test.ts',
  'test/hostile.integration.test.ts',
  'test/timing.integration.test.ts',
];

/**
 * The container tests first among the paired files: most of their time is the Docker daemon's
 * (building the image, creating and removing containers, networks and services), which the files
 * beside them fill with fabrics. They are one file (test/containers/), so that no two of them share
 * the daemon.
 */
const FIRST = ['test/containers.integration.test.ts'];

/**
 * `npm run test:unit` (DCEMU_UNIT=1): the edit-test loop, the files that start no fabric. Integration,
 * browser and container files and the ones that must run alone are left out; the full suite is
 * `npm test`.
 */
const UNIT = process.env.DCEMU_UNIT === '1';
const NOT_UNIT = ['test/**/*.integration.test.ts', 'test/**/*.browser.test.ts', 'examples/schemes/*/test/**'];

class DockerFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const first = (f: TestSpecification) => FIRST.some((name) => f.moduleId.endsWith(name));
    const sorted = await super.sort(files);
    return [...sorted.filter(first), ...sorted.filter((f) => !first(f))];
  }
}

export default defineConfig({
  // the SDK's modules for the examples' own tests (examples/schemes/*/test), from the sources
  resolve: {
    alias: ['index', 'node', 'study'].map((m) => ({
      find: m === 'index' ? /^dcemu\/scheme$/ : new RegExp(`^dcemu/scheme/${m}$`),
      replacement: join(import.meta.dirname, `sdk/${m}.ts`),
    })),
  },
  test: {
    testTimeout: 240_000,
    hookTimeout: 60_000,
    // the default reporter, then the slowest files (the suite's budget: 10 minutes on 2 cores, docs/testing.md), with
    // the CPU each took
    reporters: ['default', './test/slowest-reporter.ts'],
    // the tests run dist/: a build older than a source file stops the run before any test
    globalSetup: ['./test/fresh-build.ts'],
    // the CPU each file took; its temp folders removed after it passed; the tag its processes carry;
    // the end of its node pool
    setupFiles: [
      './test/cpu-probe.ts',
      './test/temp-cleanup.ts',
      './test/own-processes.ts',
      './test/node-pool.ts',
    ],
    // (the run's sequencer: vitest takes it from here, not from a project)
    sequence: { sequencer: DockerFirst },
    projects: [
      {
        extends: true,
        test: {
          name: 'paired',
          // the project's tests, and the example scheme packages' own (they import dcemu's SDK by its
          // package name: here, the SDK's source)
          include: ['test/**/*.test.ts', 'examples/schemes/*/test/**/*.test.js'],
          exclude: UNIT ? [...ALONE, ...NOT_UNIT] : ALONE,
          // two files at a time: exact (conservative) fabrics give the same figures however slowly
          // they run, and one file's start-ups, teardowns and daemon waits leave a core idle. Three or
          // four at a time were no faster (the suite is CPU-bound) and slowed the Docker file 1.5-2x
          // (docs/testing.md)
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: 'alone',
          include: UNIT ? [] : ALONE,
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
