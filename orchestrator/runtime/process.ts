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
import { compileCacheDir, nodeEntry, nodeOptions } from '../../core/paths.js';
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
  running: boolean;
  paused: boolean;
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
    for (const l of launches) {
      // the arguments only label the process, so `ps`/`pgrep -f <runId>` can find a run's nodes
      const args = [...nodeOptions(), nodeEntry(l.role), '--dcemu-run', l.runId, '--dcemu-node', l.name];
      // a CPU-bound node runs as a batch process where `chrt` can say so (it then execs node, same pid):
      // fewer preemptions when a datagram wakes a peer, about 3% less CPU on the quickstart
      const batch = l.cpuBound ? batchLauncher() : null;
      const [file, argv] =
        batch !== null ? [batch, ['--batch', '0', process.execPath, ...args]] : [process.execPath, args];
      const proc = execa(file, argv, {
        // V8's compile cache on disk: the second and later node processes skip compiling dcemu's
        // modules; the node watches this process: it ends with it, even before its control
        // connection is up
        env: { NODE_COMPILE_CACHE: compileCacheDir(), ...l.env, DCEMU_PARENT_PID: String(process.pid) },
        extendEnv: true,
        stdin: 'ignore',
        stdout: { file: join(l.logDir, `${l.name}.stdout`) },
        stderr: { file: join(l.logDir, `${l.name}.stderr`) },
        reject: false,
        // its own process group: a Ctrl-C in the terminal, or a supervisor's SIGTERM to the group,
        // reaches the orchestrator only, which stops every node and collects its report (a node that
        // got the signal itself would die before it reported, or during start-up before it connected)
        detached: true,
        cleanup: true,
        forceKillAfterDelay: 2000,
      });
      const child: Child = { name: l.name, proc, pid: proc.pid ?? -1, running: true, paused: false };
      this.children.set(l.name, child);
      proc.then((r) => {
        child.running = false;
        const info: ExitInfo = { name: l.name, code: r.exitCode ?? null, signal: r.signal ?? null };
        for (const h of this.handlers) h(info);
      });
    }
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
      c.proc.kill('SIGTERM');
    }
    const settle = Promise.allSettled(all.map((c) => c.proc));
    const timeout = new Promise((r) => setTimeout(r, 3000).unref());
    await Promise.race([settle, timeout]);
    for (const c of all) if (c.running || pidAlive(c.pid)) c.proc.kill('SIGKILL');
    await Promise.race([settle, new Promise((r) => setTimeout(r, 3000).unref())]);
    const leftRunning = all.filter((c) => pidAlive(c.pid)).length;
    return { started: all.length, leftRunning };
  }
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
