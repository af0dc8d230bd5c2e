/**
 * The node pool's bookkeeping without processes: which of its processes still run a node of a run
 * (what chaos's survivor check counts, since a pooled process's command line names the pool, not the
 * run).
 */
import { describe, expect, it } from 'vitest';
import { NodePool, type PoolSpawner } from '../orchestrator/runtime/pool.js';
import type { NodeLaunch } from '../orchestrator/runtime/types.js';

/** A stand-in for a pooled node process: its IPC messages are pushed by the test; it never exits. */
function fakeProcess() {
  const inbox: unknown[] = [];
  let wake: (() => void) | null = null;
  const proc = Object.assign(new Promise<never>(() => {}), {
    stdout: null,
    stderr: null,
    sendMessage: async () => {},
    kill: () => true,
    async *getEachMessage() {
      for (;;) {
        while (inbox.length > 0) yield inbox.shift();
        await new Promise<void>((r) => {
          wake = r;
        });
      }
    },
  });
  const report = (m: unknown) => {
    inbox.push(m);
    wake?.();
  };
  return { proc, report };
}

const launch = (name: string, runId: string): NodeLaunch => ({
  name,
  runId,
  role: 'host',
  env: {},
  secret: Buffer.alloc(32),
  logDir: '/nonexistent',
});

describe('node pool', () => {
  it('counts the processes still running a node of a run, until each node is released', async () => {
    const pool = NodePool.open();
    const fakes: ReturnType<typeof fakeProcess>[] = [];
    const spawn: PoolSpawner = () => {
      const f = fakeProcess();
      fakes.push(f);
      return { proc: f.proc as never, pid: 100_000 + fakes.length };
    };
    const codes: number[] = [];
    const a = pool.take(launch('h0', 'run-a'), spawn);
    a.assign(
      launch('h0', 'run-a'),
      (c) => codes.push(c),
      () => {},
    );
    const b = pool.take(launch('h1', 'run-a'), spawn);
    b.assign(
      launch('h1', 'run-a'),
      (c) => codes.push(c),
      () => {},
    );
    expect(pool.runningFor('run-a')).toBe(2);
    expect(pool.runningFor('run-b')).toBe(0);
    fakes[0].report({ type: 'released', code: 0 });
    await new Promise((r) => setImmediate(r));
    expect(codes).toEqual([0]);
    // one node of run-a never ended: it outlives its run
    expect(pool.runningFor('run-a')).toBe(1);
    // the released process runs a node of the next run
    pool.give(a, true);
    const again = pool.take(launch('h0', 'run-b'), spawn);
    expect(again).toBe(a);
    again.assign(
      launch('h0', 'run-b'),
      () => {},
      () => {},
    );
    expect(pool.runningFor('run-b')).toBe(1);
    expect(pool.runningFor('run-a')).toBe(1);
    await Promise.race([pool.close(), new Promise((r) => setTimeout(r, 10))]);
  });
});
