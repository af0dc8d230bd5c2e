/**
 * A started swarm run (swarm.ts): its nodes' services, followed by polling their tasks (a task that
 * ends is a node exit, its service's log the node's output), the faults on their containers, and the
 * teardown that leaves nothing of the run on any machine.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RuntimeError } from '../engine/errors.js';
import { STOP_TIMEOUT_S } from './docker.js';
import {
  type Docker,
  demuxLogs,
  ignore,
  keptMessage,
  mapBounded,
  RUN_LABEL,
  removeLabelled,
  runContainers,
  signalName,
} from './docker-client.js';
import type { FabricNetwork } from './docker-network.js';
import { InOrder } from './in-order.js';
import type { Daemons } from './swarm-daemons.js';
import { removeSwarmRun } from './swarm-removal.js';
import {
  addressOn,
  ENDED,
  latest,
  POLL_MS,
  pollUntil,
  sleep,
  startFailure,
  TASK_START_MS,
  type Task,
  taskFailure,
  tasksOf,
} from './swarm-tasks.js';
import type { ContainerFaults, ExitInfo, NodeLaunch, StartedRuntime, StoppedRuntime } from './types.js';

/** new tasks for a node whose task could not start, before the start fails */
const START_RETRIES = 2;

interface Node {
  launch: NodeLaunch;
  service: string;
  task: Task | null;
  paused: boolean;
  /** kill, pause, resume and teardown's signals, in the order asked for */
  ops: InOrder;
  /** an exit of its current task was reported */
  exitSeen: boolean;
  /** new tasks made for it because one could not start (startFailure), and the last task replaced */
  retries: number;
  replaced?: string;
}

export class StartedServices implements StartedRuntime {
  readonly kind = 'swarm';
  readonly containers: ContainerFaults;
  private readonly nodes = new Map<string, Node>();
  private handlers: Array<(i: ExitInfo) => void> = [];
  private timer: NodeJS.Timeout | null = null;
  /** output being saved (service logs to files) */
  private readonly saving: Array<Promise<void>> = [];
  private stopped: Promise<StoppedRuntime> | null = null;

  constructor(
    private readonly d: Docker,
    private readonly daemons: Daemons,
    private readonly net: FabricNetwork,
    private readonly launches: NodeLaunch[],
    /** node -> the hostname of the machine its service is pinned to */
    private readonly machineOf: Record<string, string>,
    /** after teardown: the log folder given back */
    private readonly cleanup: () => void = () => {},
    private readonly log?: (s: string) => void,
  ) {
    this.containers = {
      stopNode: async (name) => {
        const c = this.container(name);
        if (c) await c.stop({ t: STOP_TIMEOUT_S }).catch(ignore(304));
      },
      startNode: (name) => this.restart(name),
      disconnect: async (name) => {
        const n = this.node(name);
        await this.daemon(n)
          .getNetwork(this.net.id)
          .disconnect({ Container: this.containerId(n), Force: true });
      },
      connect: async (name) => {
        const n = this.node(name);
        const address = n.task ? addressOn(n.task, this.net.id) : undefined;
        await this.daemon(n)
          .getNetwork(this.net.id)
          .connect({
            Container: this.containerId(n),
            ...(address && { EndpointConfig: { IPAMConfig: { IPv4Address: address } } }),
          });
      },
    };
  }

  created(name: string, service: string): void {
    const launch = this.launches.find((l) => l.name === name)!;
    this.nodes.set(name, {
      launch,
      service,
      task: null,
      paused: false,
      ops: new InOrder(),
      exitSeen: false,
      retries: 0,
    });
  }

  /** the nodes whose services were created (an interrupt may end the start-up before all were) */
  get startedCount(): number {
    return this.nodes.size;
  }

  /**
   * Waits until every node's task runs (or `signal` aborts the start-up); a task the swarm could not
   * run fails the start, saying why.
   */
  async running(signal?: AbortSignal): Promise<void> {
    let waiting: string[] = [];
    await pollUntil(
      async () => {
        if (signal?.aborted) return true;
        await this.poll();
        waiting = [];
        for (const n of this.nodes.values()) {
          const t = n.task;
          if (t?.Status.State === 'running') continue;
          if (t && ENDED.has(t.Status.State) && t.ID !== n.replaced) {
            if (!startFailure(t) || n.retries >= START_RETRIES)
              throw new RuntimeError(taskFailure(n.launch.name, t));
            // the daemon could not start its container (seen: "unable to remount dir as readonly ...
            // device or resource busy" on the task's secrets, moby/moby#48783): a new task, said
            n.retries++;
            n.replaced = t.ID;
            this.log?.(
              `node ${n.launch.name}: its swarm task could not start (${t.Status.Err}); a new task (${n.retries} of ${START_RETRIES})`,
            );
            await this.newTask(n);
          }
          waiting.push(`${n.launch.name} (${t?.Status.State ?? 'no task yet'})`);
        }
        return waiting.length === 0 ? true : undefined;
      },
      () =>
        `node tasks not running after ${TASK_START_MS / 1000} s: ${waiting.slice(0, 5).join(', ')}${waiting.length > 5 ? ', …' : ''}`,
    );
  }

  /** Polls the tasks from now on: a task that ends is a node exit. */
  follow(): void {
    const tick = async (): Promise<void> => {
      await this.poll().catch(() => {});
      if (this.timer !== null) this.timer = setTimeout(() => void tick(), POLL_MS);
    };
    this.timer = setTimeout(() => void tick(), POLL_MS);
  }

  private async poll(): Promise<void> {
    const all = [...this.nodes.values()];
    const tasks = await tasksOf(
      this.d,
      all.map((n) => n.service),
    );
    for (const n of all) {
      const t = latest(tasks, n.service);
      if (!t) continue;
      if (t.ID !== n.task?.ID) n.exitSeen = false;
      n.task = t;
      if (!n.exitSeen && ENDED.has(t.Status.State) && t.Status.ContainerStatus?.ContainerID) {
        n.exitSeen = true;
        n.paused = false;
        const code = t.Status.ContainerStatus.ExitCode ?? null;
        const signal = code !== null && code > 128 ? signalName(code - 128) : null;
        const info: ExitInfo = { name: n.launch.name, code: signal ? null : code, signal };
        this.saveOutput(n);
        for (const h of this.handlers) h(info);
      }
    }
  }

  /** Writes the node's service log (every task's output) to `<logDir>/<node>.stdout|stderr`. */
  private saveOutput(n: Node): void {
    this.saving.push(this.writeOutput(n));
  }

  private async writeOutput(n: Node): Promise<void> {
    try {
      const raw = (await this.d
        .getService(n.service)
        .logs({ stdout: true, stderr: true, follow: false })) as unknown as Buffer;
      const { stdout, stderr } = demuxLogs(raw);
      await writeFile(join(n.launch.logDir, `${n.launch.name}.stdout`), stdout);
      await writeFile(join(n.launch.logDir, `${n.launch.name}.stderr`), stderr);
    } catch {
      // the service is gone already: its output was saved when its task ended
    }
  }

  onExit(handler: (info: ExitInfo) => void): void {
    this.handlers.push(handler);
  }

  isRunning(name: string): boolean {
    return this.nodes.get(name)?.task?.Status.State === 'running';
  }

  private node(name: string): Node {
    const n = this.nodes.get(name);
    if (!n) throw new Error(`no node named '${name}' in this run`);
    return n;
  }

  private daemon(n: Node): Docker {
    if (!n.task) throw new RuntimeError(`node ${n.launch.name} has no task`);
    return this.daemons.of(n.task.NodeID, n.launch.name);
  }

  private containerId(n: Node): string {
    const id = n.task?.Status.ContainerStatus?.ContainerID;
    if (!id) throw new RuntimeError(`node ${n.launch.name}'s task has no container`);
    return id;
  }

  private container(name: string) {
    const n = this.node(name);
    return n.task?.Status.ContainerStatus?.ContainerID
      ? this.daemon(n).getContainer(this.containerId(n))
      : null;
  }

  /** nodes whose task has not ended */
  private live(): Node[] {
    return [...this.nodes.values()].filter((n) => n.task && !ENDED.has(n.task.Status.State));
  }

  /** Sends a signal to a node's container (thawed first); a machine out of reach is left to its service's removal. */
  private signal(n: Node, signal: string): Promise<void> {
    return n.ops.run(async () => {
      try {
        const c = this.container(n.launch.name);
        if (!c) return;
        if (n.paused) await c.unpause().catch(() => {});
        n.paused = false;
        await c.kill({ signal }).catch(() => {});
      } catch {
        // no daemon named for its machine: removing its service stops it
      }
    });
  }

  kill(name: string): Promise<void> {
    const n = this.node(name);
    return n.ops.run(async () => {
      const c = this.container(name);
      if (!c) return;
      await c.kill({ signal: 'SIGKILL' }).catch(ignore(409)); // not running
      // a frozen process dies only once its cgroup is thawed
      if (n.paused) await c.unpause().catch(() => {});
      n.paused = false;
    });
  }

  pause(name: string): Promise<void> {
    const n = this.node(name);
    return n.ops.run(async () => {
      if (n.paused || !this.isRunning(name)) return;
      await this.container(name)?.pause();
      n.paused = true;
    });
  }

  resume(name: string): Promise<void> {
    // teardown wakes every node: one whose service an interrupted start-up never made has no task
    const n = this.nodes.get(name);
    if (!n) return Promise.resolve();
    return n.ops.run(async () => {
      if (!n.paused) return;
      await this.container(name)?.unpause();
      n.paused = false;
    });
  }

  /**
   * `start` of a stopped node: its task ended for good (and its network attachment with it), so the
   * service is updated with a new force-update count, which makes a new task; it may get another
   * address, which the node reports.
   */
  private async restart(name: string): Promise<void> {
    const n = this.node(name);
    const old = n.task?.ID;
    await this.newTask(n);
    await pollUntil(
      async () => {
        await this.poll();
        const t = n.task;
        if (!t || t.ID === old) return undefined;
        if (ENDED.has(t.Status.State)) throw new RuntimeError(taskFailure(name, t));
        return t.Status.State === 'running' ? true : undefined;
      },
      () => `node ${name}: its new task did not start within 2 minutes`,
    );
  }

  /** Updates the node's service with a new force-update count, which makes it a new task. */
  private async newTask(n: Node): Promise<void> {
    const svc = this.d.getService(n.service);
    const spec = (await svc.inspect()) as {
      Version: { Index: number };
      Spec: { TaskTemplate: { ForceUpdate?: number } & Record<string, unknown> } & Record<string, unknown>;
    };
    await svc.update({
      version: spec.Version.Index,
      ...spec.Spec,
      TaskTemplate: { ...spec.Spec.TaskTemplate, ForceUpdate: (spec.Spec.TaskTemplate.ForceUpdate ?? 0) + 1 },
    });
  }

  stop(): Promise<StoppedRuntime> {
    this.stopped ??= this.teardown();
    return this.stopped;
  }

  private async teardown(): Promise<StoppedRuntime> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.poll().catch(() => {});
    // nodes end on SIGTERM at once (a wedged one gets SIGKILL); each exit the polls see saves the
    // node's output before its service goes
    for (const signal of ['SIGTERM', 'SIGKILL']) {
      await mapBounded(this.live(), 8, (n) => this.signal(n, signal));
      for (const until = Date.now() + 3000; this.live().length > 0 && Date.now() < until; ) {
        await sleep(POLL_MS);
        await this.poll().catch(() => {});
      }
    }
    // tasks out of reach (a machine whose daemon is not named): their output so far
    for (const n of this.live()) this.saveOutput(n);
    await Promise.all(this.saving);
    const runId = this.launches[0]?.runId;
    const kept = runId === undefined ? [] : await removeSwarmRun(runId);
    // the other machines' agents remove their tasks' containers a few seconds later: dcemu does it now,
    // where it knows the daemon, so that nothing of the run is left on any machine when it ends
    const far = runId === undefined ? [] : this.daemons.farClients(new Set(Object.values(this.machineOf)));
    for (const f of far) kept.push(...(await removeLabelled(runId!, f)).kept);
    let leftRunning = runId === undefined ? 0 : await runContainers(runId);
    for (const f of far)
      leftRunning += (
        await f.listContainers({ all: true, filters: { label: [`${RUN_LABEL}=${runId}`] } }).catch(() => [])
      ).length;
    this.cleanup();
    return {
      started: this.nodes.size,
      leftRunning,
      ...(kept.length > 0 && { kept: [keptMessage(kept)] }),
      machines: Object.fromEntries(
        this.launches
          .filter((l) => this.nodes.has(l.name))
          .map((l) => [l.name, this.machineOf[l.name] ?? '?']),
      ),
    };
  }
}
