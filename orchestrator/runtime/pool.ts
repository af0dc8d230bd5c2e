/**
 * Node processes that outlive their run, for a command of many runs (an experiment's seeds and arms,
 * a sweep's points, chaos runs): when a run ends, each of its node processes that ended cleanly waits
 * in the pool, and the next run's node of the same role takes it instead of starting a process. It
 * skips Node's start-up (~70 ms of CPU) and runs code V8 has already compiled and optimized, which a
 * short run otherwise spends much of its CPU on.
 *
 * A pooled process runs one node at a time, named over its IPC channel (core/node-runtime.ts
 * `servePool`); a node that dies (a crash, a kill, a chaos stop) takes its process with it. The pool is
 * the command's: `NodePool.open()` at its start and `close()` at its end, which ends every waiting
 * process; a process also ends when its orchestrator is gone (the IPC channel closes). A single run
 * (`dcemu run`) uses no pool: its processes end with it.
 */

import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ResultPromise } from 'execa';
import { keyEnv } from '../../core/auth.js';
import type { PoolOrder, PoolReport } from '../../core/node-runtime.js';
import type { NodeLaunch } from './types.js';

/** A node process with its IPC channel to the pool. */
export type IpcProcess = ResultPromise<{ ipc: true; serialization: 'json' }>;

/** One pooled process and the node it runs, if any. */
export class PooledProcess {
  /** the node it runs (null: waiting in the pool) */
  launch: NodeLaunch | null = null;
  /** how many nodes it has run to their end */
  runs = 0;
  alive = true;
  /** the node it runs: its end without the process (its exit code), and with it (code, signal) */
  private onRelease: ((code: number) => void) | null = null;
  private onExit: ((code: number | null, signal: string | null) => void) | null = null;
  /** the node it ran last (stray output after its end still belongs to it) */
  private last: NodeLaunch | null = null;

  constructor(
    readonly key: string,
    readonly proc: IpcProcess,
    readonly pid: number,
  ) {
    // stray output (a warning, a crash's stack) goes to the files of the node it runs
    const forward = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
      const l = this.last;
      if (l) appendFileSync(join(l.logDir, `${l.name}.${stream}`), chunk);
    };
    // a node that ends with its process (a crash, a kill) ends there; one handler for every node it runs
    void proc.then((r) => {
      this.alive = false;
      const end = this.onExit;
      this.launch = null;
      this.onRelease = null;
      this.onExit = null;
      end?.(r.exitCode ?? null, r.signal ?? null);
    });
    proc.stdout?.on('data', forward('stdout'));
    proc.stderr?.on('data', forward('stderr'));
    void (async () => {
      try {
        for await (const m of proc.getEachMessage({ reference: false })) {
          const r = m as unknown as PoolReport;
          if (r?.type === 'released') this.released(r.code);
        }
      } catch {
        // the channel closed with the process
      }
    })();
  }

  /**
   * Runs `launch`'s node; `onRelease` gets its exit code when it ends without its process, `onExit`
   * the process's code and signal when it ends with it.
   */
  assign(
    launch: NodeLaunch,
    onRelease: (code: number) => void,
    onExit: (code: number | null, signal: string | null) => void,
  ): void {
    this.launch = launch;
    this.last = launch;
    this.onRelease = onRelease;
    this.onExit = onExit;
    void this.proc
      .sendMessage({
        type: 'assign',
        env: { ...launch.env, ...keyEnv(launch.secret, launch.name) },
      } satisfies PoolOrder)
      .catch(() => {});
  }

  /** Its node stops and reports, as on a SIGTERM (a signal could reach the next node it runs). */
  stop(): void {
    if (this.launch) void this.proc.sendMessage({ type: 'stop' } satisfies PoolOrder).catch(() => {});
  }

  private released(code: number): void {
    this.runs++;
    const done = this.onRelease;
    this.launch = null;
    this.onRelease = null;
    this.onExit = null;
    done?.(code);
  }
}

/** The process each role's node runs in, started once for the pool (as StartedProcesses starts one). */
export type PoolSpawner = (launch: NodeLaunch, pooled: true) => { proc: ResultPromise; pid: number };

export class NodePool {
  private static current: NodePool | null = null;
  private opened = 0;
  private readonly idle = new Map<string, PooledProcess[]>();
  private readonly all = new Set<PooledProcess>();

  /** The pool of this orchestrator process, opened for a command of many runs (nested opens share it). */
  static open(): NodePool {
    NodePool.current ??= new NodePool();
    NodePool.current.opened++;
    return NodePool.current;
  }

  /** the pool open now, if a command of many runs opened one */
  static active(): NodePool | null {
    return NodePool.current;
  }

  /** the pids of its processes (waiting, or running a node): for a caller that accounts their CPU */
  pids(): number[] {
    return [...this.all].map((p) => p.pid);
  }

  /**
   * How many of its processes still run a node of run `runId`: after that run's teardown, none (a
   * node that neither ended nor took its process with it outlived its run).
   */
  runningFor(runId: string): number {
    let n = 0;
    for (const p of this.all) if (p.alive && p.launch?.runId === runId) n++;
    return n;
  }

  /** A process for `launch`: one waiting in the pool, or a new one from `spawn`. */
  take(launch: NodeLaunch, spawn: PoolSpawner): PooledProcess {
    const key = `${launch.role}:${launch.cpuBound === true}`;
    const waiting = this.idle.get(key);
    let p = waiting?.pop();
    while (p && !p.alive) p = waiting?.pop();
    if (p) return p;
    const { proc, pid } = spawn(launch, true);
    const fresh = new PooledProcess(key, proc as IpcProcess, pid);
    this.all.add(fresh);
    void proc.then(() => this.all.delete(fresh));
    return fresh;
  }

  /**
   * A process whose node ended cleanly waits for the next; one whose node failed (`clean` false), or
   * one given after the pool closed, ends.
   */
  give(p: PooledProcess, clean: boolean): void {
    if (!p.alive) return;
    if (this.opened === 0 || !clean) {
      void p.proc.sendMessage({ type: 'end' } satisfies PoolOrder).catch(() => {});
      return;
    }
    const list = this.idle.get(p.key) ?? [];
    list.push(p);
    this.idle.set(p.key, list);
  }

  /**
   * The command is done with the pool (the last of nested opens): every waiting process ends, and
   * any that does not within 3 s is killed. Processes still running a node end with it.
   */
  async close(): Promise<void> {
    if (--this.opened > 0) return;
    NodePool.current = null;
    const waiting = [...this.idle.values()].flat().filter((p) => p.alive && !p.launch);
    this.idle.clear();
    for (const p of waiting) void p.proc.sendMessage({ type: 'end' } satisfies PoolOrder).catch(() => {});
    const ended = Promise.allSettled(waiting.map((p) => p.proc));
    await Promise.race([ended, new Promise((r) => setTimeout(r, 3000).unref())]);
    for (const p of waiting) if (p.alive) p.proc.kill('SIGKILL');
    await Promise.race([ended, new Promise((r) => setTimeout(r, 3000).unref())]);
  }
}

/**
 * Runs `task(i)` for every i in [0, count), at most `parallel` at once, each worker taking the next
 * index when its last task ends; no new task starts once `signal` has aborted. The tasks' runs take
 * their node processes from one NodePool, closed when every worker is done (chaos runs, sweep points).
 */
export async function eachPooled(
  count: number,
  parallel: number,
  task: (i: number) => Promise<void>,
  signal?: AbortSignal,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < count && !signal?.aborted; i = next++) await task(i);
  };
  const pool = NodePool.open();
  try {
    await Promise.all(Array.from({ length: Math.max(1, Math.min(parallel, count)) }, worker));
  } finally {
    await pool.close();
  }
}
