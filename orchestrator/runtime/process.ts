/**
 * The embedded process runtime: every node a child process of the orchestrator on this machine,
 * started with the Node binary the orchestrator runs on (`process.execPath`). Teardown resumes paused
 * children, asks them to end (SIGTERM), then kills what is left (SIGKILL) and verifies by pid that
 * nothing survived. Each node is its own process group, so signals for the orchestrator's group go to
 * the orchestrator alone; every node ends itself when its control connection drops or its parent is
 * gone (a SIGKILLed orchestrator).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { execa, execaSync, type ResultPromise } from 'execa';
import { keyEnv } from '../../core/auth.js';
import { compileCacheDir, nodeEntry, nodeOptions } from '../../core/paths.js';
import { NodePool, type PooledProcess } from './pool.js';
import type { ExitInfo, NodeLaunch, Runtime, RuntimeSite, StartedRuntime, StoppedRuntime } from './types.js';

/** every process of a run lives on loopback; each node's socket gets its own port */
const LOOPBACK = '127.0.0.1';

export class ProcessRuntime implements Runtime {
  readonly kind = 'process';
  readonly hostFiles = true;

  async prepare(): Promise<RuntimeSite> {
    return { controlHost: LOOPBACK, bindHost: () => LOOPBACK, release: async () => {} };
  }

  async start(launches: NodeLaunch[]): Promise<StartedRuntime> {
    return new StartedProcesses(launches);
  }
}

interface Child {
  name: string;
  proc: ResultPromise;
  pid: number;
  /** its node runs (a pooled process's node may end without it: it then waits in the pool) */
  running: boolean;
  paused: boolean;
  /** the node's end: its process's exit, or (pooled) its release */
  ended: Promise<void>;
  pooled: PooledProcess | null;
}

let chrt: string | null | undefined;

/** util-linux's `chrt`, if this machine has one that can start a batch process (checked once) */
function batchLauncher(): string | null {
  if (chrt === undefined) {
    const found = ['/usr/bin/chrt', '/bin/chrt'].find((f) => existsSync(f));
    chrt =
      found !== undefined &&
      execaSync(found, ['--batch', '0', found, '--version'], { reject: false }).exitCode === 0
        ? found
        : null;
  }
  return chrt;
}

class StartedProcesses implements StartedRuntime {
  readonly kind = 'process';
  private readonly children = new Map<string, Child>();
  private handlers: Array<(i: ExitInfo) => void> = [];
  private stopped: Promise<StoppedRuntime> | null = null;

  constructor(launches: NodeLaunch[]) {
    const pool = NodePool.active();
    for (const l of launches) {
      // a scheme of the user's own may keep a node's state in its modules (one process, one node: the
      // SDK's promise), so its nodes get processes of their own
      const child = pool && l.schemeDir === undefined ? this.pooledChild(l, pool) : this.ownChild(l);
      this.children.set(l.name, child);
    }
  }

  /** how many of this run's nodes run in processes an earlier run of the pool started */
  private reused = 0;
  private pooled = false;

  /** A process of the node's own: it ends with the node. */
  private ownChild(l: NodeLaunch): Child {
    const { proc, pid } = spawnNode(l, false);
    const child: Child = {
      name: l.name,
      proc,
      pid,
      running: true,
      paused: false,
      ended: proc.then(() => {}),
      pooled: null,
    };
    proc.then((r) => {
      child.running = false;
      this.exited({ name: l.name, code: r.exitCode ?? null, signal: r.signal ?? null });
    });
    return child;
  }

  /** A pooled process (orchestrator/runtime/pool.ts): the node's end returns it to the pool. */
  private pooledChild(l: NodeLaunch, pool: NodePool): Child {
    const p = pool.take(l, spawnNode);
    this.pooled = true;
    if (p.runs > 0) this.reused++;
    let settle: () => void = () => {};
    const ended = new Promise<void>((r) => {
      settle = r;
    });
    const child: Child = {
      name: l.name,
      proc: p.proc,
      pid: p.pid,
      running: true,
      paused: false,
      ended,
      pooled: p,
    };
    const done = (info: ExitInfo) => {
      if (!child.running) return;
      child.running = false;
      settle();
      this.exited(info);
    };
    p.assign(
      l,
      (code) => {
        done({ name: l.name, code, signal: null });
        pool.give(p, code === 0);
      },
      (code, signal) => done({ name: l.name, code, signal }),
    );
    return child;
  }

  private exited(info: ExitInfo): void {
    for (const h of this.handlers) h(info);
  }

  onExit(handler: (info: ExitInfo) => void): void {
    this.handlers.push(handler);
  }

  isRunning(name: string): boolean {
    return this.children.get(name)?.running ?? false;
  }

  private child(name: string): Child {
    const c = this.children.get(name);
    if (!c) throw new Error(`no node named '${name}' in this run`);
    return c;
  }

  async kill(name: string): Promise<void> {
    const c = this.child(name);
    if (c.running) c.proc.kill('SIGKILL');
  }

  async pause(name: string): Promise<void> {
    const c = this.child(name);
    if (c.running && !c.paused) {
      c.proc.kill('SIGSTOP');
      c.paused = true;
    }
  }

  async resume(name: string): Promise<void> {
    const c = this.child(name);
    if (c.running && c.paused) {
      c.proc.kill('SIGCONT');
      c.paused = false;
    }
  }

  stop(): Promise<StoppedRuntime> {
    this.stopped ??= this.teardown();
    return this.stopped;
  }

  private async teardown(): Promise<StoppedRuntime> {
    const all = [...this.children.values()];
    for (const c of all) {
      if (!c.running) continue;
      if (c.paused) c.proc.kill('SIGCONT');
      if (c.pooled) c.pooled.stop();
      else c.proc.kill('SIGTERM');
    }
    const settle = Promise.allSettled(all.map((c) => c.ended));
    const timeout = new Promise((r) => setTimeout(r, 3000).unref());
    await Promise.race([settle, timeout]);
    // a pooled process whose node ended waits in the pool: it is not this run's any more
    const ours = (c: Child) => c.running || (c.pooled === null && pidAlive(c.pid));
    for (const c of all) if (ours(c)) c.proc.kill('SIGKILL');
    await Promise.race([
      Promise.allSettled(all.filter(ours).map((c) => c.proc)),
      new Promise((r) => setTimeout(r, 3000).unref()),
    ]);
    const leftRunning = all.filter((c) => ours(c) && pidAlive(c.pid)).length;
    return { started: all.length, leftRunning, ...(this.pooled ? { reused: this.reused } : {}) };
  }
}

/**
 * More options for Node in every node process this runtime starts, from `DCEMU_NODE_ARGS` (separated
 * by spaces; none by default): `npm run profile` (scripts/profile.mjs) passes V8's `--cpu-prof` this
 * way. Process runtime only: a container's files would stay in the container.
 */
function extraNodeArgs(): string[] {
  return (process.env.DCEMU_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
}

/**
 * Starts a node process for `l` (`pooled`: one that runs node after node for a pool, its stray output
 * piped to the pool, which writes it to the files of the node it runs).
 */
function spawnNode(l: NodeLaunch, pooled: boolean): { proc: ResultPromise; pid: number } {
  // the arguments only label the process, so `ps`/`pgrep -f <runId>` can find a run's nodes (a pooled
  // process runs nodes of many runs: it is labelled with its pool's orchestrator)
  const label = pooled
    ? ['--dcemu-pool', String(process.pid), '--dcemu-role', l.role]
    : ['--dcemu-run', l.runId, '--dcemu-node', l.name];
  const args = [...nodeOptions(), ...extraNodeArgs(), nodeEntry(l.role), ...label];
  // a CPU-bound node runs as a batch process where `chrt` can say so (it then execs node, same pid):
  // fewer preemptions when a datagram wakes a peer, about 3% less CPU on the quickstart
  const batch = l.cpuBound ? batchLauncher() : null;
  const [file, argv] =
    batch !== null ? [batch, ['--batch', '0', process.execPath, ...args]] : [process.execPath, args];
  const proc = execa(file, argv, {
    // V8's compile cache on disk: the second and later node processes skip compiling dcemu's
    // modules; the node watches this process: it ends with it, even before its control
    // connection is up
    env: {
      NODE_COMPILE_CACHE: compileCacheDir(),
      ...l.env,
      ...keyEnv(l.secret, l.name),
      DCEMU_PARENT_PID: String(process.pid),
      ...(pooled ? { DCEMU_POOLED: '1' } : {}),
    },
    extendEnv: true,
    stdin: 'ignore',
    ...(pooled
      ? { stdout: 'pipe', stderr: 'pipe', buffer: false, ipc: true, serialization: 'json' }
      : {
          stdout: { file: join(l.logDir, `${l.name}.stdout`) },
          stderr: { file: join(l.logDir, `${l.name}.stderr`) },
        }),
    reject: false,
    // its own process group: a Ctrl-C in the terminal, or a supervisor's SIGTERM to the group,
    // reaches the orchestrator only, which stops every node and collects its report (a node that
    // got the signal itself would die before it reported, or during start-up before it connected)
    detached: true,
    cleanup: true,
    forceKillAfterDelay: 2000,
  }) as ResultPromise;
  return { proc, pid: proc.pid ?? -1 };
}

/** True if a process with this pid exists (and is not a zombie we already reaped). */
export function pidAlive(pid: number): boolean {
  if (pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
