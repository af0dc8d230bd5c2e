/**
 * Setup file of every test file: the folders `tempOut` made for the file (results of its runs) are
 * removed after it when none of its tests failed. A failed file keeps them, to look into; a passing
 * suite leaves nothing behind in the temp dir (on a long-lived machine they once filled the disk).
 */
import { rmSync } from 'node:fs';
import { afterAll, type RunnerTestSuite } from 'vitest';
import { tempDirs } from './helpers.js';

type Task = RunnerTestSuite['tasks'][number];

const failed = (tasks: readonly Task[]): boolean =>
  tasks.some((t) => t.result?.state === 'fail' || ('tasks' in t && failed(t.tasks)));

// biome-ignore lint/correctness/noEmptyPattern: vitest reads a hook's first argument as fixtures, by destructuring
afterAll(({}, suite) => {
  if (failed(suite.tasks)) return;
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
