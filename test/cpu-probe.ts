/**
 * Setup file of every test file: the CPU the file took, its own and its child processes' (the fabrics
 * it ran), read from /proc where there is one, handed to the slowest-files reporter on its tests'
 * meta. On a CPU-bound suite CPU seconds say what a file costs better than its wall time, which a
 * neighbour's load or the machine's speed moves. Each test also labels the runs it makes
 * (DCEMU_RUN_LABEL: its file and name) in the run log, whose datagrams the machine's speed hardly
 * moves.
 */
import { readFileSync } from 'node:fs';
import { afterEach, beforeAll, beforeEach } from 'vitest';
import { NodePool } from '../orchestrator/runtime/pool.js';

declare module 'vitest' {
  interface TaskMeta {
    /**
     * CPU seconds of the file's worker and the processes it waited for, from the file's start to this
     * test's end (its beforeAll runs included), where /proc says
     */
    fileCpuS?: number;
    /** CPU seconds of this test alone (its beforeEach/afterEach hooks included, the file's beforeAll not) */
    testCpuS?: number;
  }
}

/**
 * user + system time of this process, its waited-for children and the node pool's processes (they
 * outlive the runs they serve: orchestrator/runtime/pool.ts), seconds; null without /proc
 */
function cpuS(): number | null {
  try {
    let ticks = statTicks('self', 4);
    for (const pid of NodePool.active()?.pids() ?? []) {
      try {
        ticks += statTicks(String(pid), 2);
      } catch {
        // ended and waited for since: its time is the worker's children's now
      }
    }
    return ticks / 100;
  } catch {
    return null;
  }
}

/** a process's user and system time (and with `fields` 4, its waited-for children's), clock ticks */
function statTicks(pid: string, fields: 2 | 4): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return [11, 12, 13, 14].slice(0, fields).reduce((s, i) => s + Number(f[i]), 0);
}

// a task's meta reaches the reporter with the test's result, so every test carries the file's CPU so
// far; the reporter takes the last (a file's afterAll hooks, its cleanup, are left out)
let start: number | null = null;
let testStart: number | null = null;
// biome-ignore lint/correctness/noEmptyPattern: vitest wants the context destructured; the file is the second argument
beforeAll(({}, suite) => {
  start = cpuS();
  // the runs of the file's hooks, in the run log (orchestrator/engine/run-log.ts) the slowest-files report reads
  process.env.DCEMU_RUN_LABEL = `${suite.file.name}\t`;
});
beforeEach(({ task }) => {
  testStart = cpuS();
  process.env.DCEMU_RUN_LABEL = `${task.file.name}\t${task.name}`;
});
afterEach(({ task }) => {
  process.env.DCEMU_RUN_LABEL = `${task.file.name}\t`;
  const now = cpuS();
  if (now === null) return;
  if (start !== null) task.meta.fileCpuS = Math.round((now - start) * 10) / 10;
  if (testStart !== null) task.meta.testCpuS = Math.round((now - testStart) * 10) / 10;
});
