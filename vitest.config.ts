import { join } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Files that must have the machine to themselves, run one at a time after the rest: a dilated run
 * (real time is in the result: a neighbour's load makes it late), a bound on wall time, a look at
 * every node process of the checkout (`allNodePids`: a neighbour's nodes would count), datagrams sent
 * to whatever node ports are open (hostile: they would land in a neighbour's fabric), real socket
 * timing (core-endpoint), or Docker state beyond the file's own runs (a swarm joined and left,
 * `dcemu clean` daemon-wide, compose).
 */
const ALONE = [
  'test/api.integration.test.ts',
  'test/capture.integration.test.ts',
  'test/chaos.integration.test.ts',
  'test/compose.integration.test.ts',
  'test/core-endpoint.test.ts',
  'test/docker-alone.integration.test.ts',
  'test/hostile.integration.test.ts',
  'test/quickstart.integration.test.ts',
  'test/run.integration.test.ts',
  'test/swarm.integration.test.ts',
  'test/sweep.integration.test.ts',
];

/**
 * The exact docker tests first among the paired files: most of their time is the Docker daemon's
 * (building the image, creating and removing containers and networks), which the files beside them
 * fill with fabrics.
 */
const FIRST = ['test/docker.integration.test.ts'];

class DockerFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const first = (f: TestSpecification) => FIRST.some((name) => f.moduleId.endsWith(name));
    const sorted = await super.sort(files);
    return [...sorted.filter(first), ...sorted.filter((f) => !first(f))];
  }
}

export default defineConfig({
  resolve: { alias: { 'dcemu/scheme': join(import.meta.dirname, 'scheme/index.ts') } },
  test: {
    testTimeout: 240_000,
    hookTimeout: 60_000,
    // the default reporter, then the slowest files (the suite's budget: 12 minutes on 2 cores), with
    // the CPU each took
    reporters: ['default', './test/slowest-reporter.ts'],
    // the CPU each file took; its temp folders removed after it passed
    setupFiles: ['./test/cpu-probe.ts', './test/temp-cleanup.ts'],
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
          exclude: ALONE,
          // two files at a time: exact (conservative) fabrics give the same figures however slowly
          // they run, and one file's start-ups, teardowns and daemon waits leave a core idle
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: 'alone',
          include: ALONE,
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
