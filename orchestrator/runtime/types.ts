/**
 * Runtimes instantiate a planned fabric: one node per process (embedded default) or per container.
 * The lifecycle lives in the types (docs/conventions.md §8): `Runtime.start()` gives a `StartedRuntime`, whose
 * idempotent `stop()` leaves nothing running and says so.
 */

import type { NodeKind } from '../../core/messages.js';

export interface NodeLaunch {
  name: string;
  /** the run this node belongs to: shows in `ps` and labels containers */
  runId: string;
  role: NodeKind;
  /** environment: control address and node name */
  env: Record<string, string>;
  /**
   * the run's secret (core/auth.ts): the runtime hands the node its key (a process: `DCEMU_KEY` in its
   * environment) or the secret (a container: a file, `DCEMU_SECRET_FILE`), and nobody else
   */
  secret: Buffer;
  /** where the node's stdout/stderr go */
  logDir: string;
  /**
   * the node runs as fast as the CPU allows (conservative mode) rather than with the wall clock, so the
   * OS may schedule it as a batch process
   */
  cpuBound?: boolean;
  /**
   * a scheme of the user's own: the folder of its package (its parts module and the files they
   * import), which the node must see at the same path; its `node_modules` is not for the node (there
   * `dcemu` is the runtime's own)
   */
  schemeDir?: string;
}

export interface ExitInfo {
  name: string;
  code: number | null;
  signal: string | null;
}

/** Where a run's processes meet: decided by the runtime before any node starts. */
export interface RuntimeSite {
  /** address the orchestrator's control server listens on; nodes connect to it */
  controlHost: string;
  /** port it listens on, when nodes were told it in advance (attached runtime); default: any free port */
  controlPort?: number;
  /**
   * host:port the nodes dial for their control connection, when it is not where the orchestrator
   * listens (a relay: swarm tasks on other machines cannot reach this one's bridge)
   */
  controlAddress?: string;
  /**
   * address node `name` binds its UDP socket to, or a subnet (`a.b.c.d/n`) when its address is known
   * only once it runs (a swarm task): the node binds its interface in it. The node reports where it
   * bound, and its peers send there.
   */
  bindHost(name: string): string;
  /**
   * UDP port every node binds, when the runtime gives each node its own address (containers): a
   * restarted node is then found where it was. Default: any free port, reported by the node.
   */
  nodePort?: number;
  /**
   * the run's secret when the runtime draws it (attached: written for the nodes others start; swarm: a
   * Docker secret its control relay needs before any node starts); default: the fabric draws one
   */
  secret?: Buffer;
  /** undoes `prepare` when the run never starts (start-up failed); idempotent */
  release(): Promise<void>;
  /**
   * what `release` removes that would outlive the orchestrator (a container runtime's containers and
   * network), for the line an orchestrator that crashes prints as it removes them; none: nothing
   */
  outlives?: string;
}

/** Faults only a container runtime can inject: real, kernel-level, beside the emulated wire faults. */
export interface ContainerFaults {
  /** `docker stop`: SIGTERM, then SIGKILL after a grace period; the container stays */
  stopNode(name: string): Promise<void>;
  /** `docker start` on a stopped container: the node process starts again from scratch */
  startNode(name: string): Promise<void>;
  /** `docker network disconnect` from the fabric network: its interface is gone */
  disconnect(name: string): Promise<void>;
  /** `docker network connect` back, with the same address */
  connect(name: string): Promise<void>;
}

/** What a runtime may watch of a node's control connection. */
export interface NodeLink {
  readonly closed: boolean;
  once(event: 'close', listener: () => void): unknown;
}

export interface StartedRuntime {
  readonly kind: string;
  /** container faults, when the runtime has containers */
  readonly containers?: ContainerFaults;
  /** SIGKILL: the node dies at once, mid-frame, like a power cut */
  kill(name: string): Promise<void>;
  /** SIGSTOP / SIGCONT: the node freezes with its sockets open */
  pause(name: string): Promise<void>;
  resume(name: string): Promise<void>;
  isRunning(name: string): boolean;
  /** called once for every node that exits, expectedly or not */
  onExit(handler: (info: ExitInfo) => void): void;
  /** a node's control connection was accepted: a runtime that did not start the node follows it by this */
  nodeConnected?(name: string, link: NodeLink): void;
  /** stops every node still running; idempotent */
  stop(): Promise<StoppedRuntime>;
}

export interface StoppedRuntime {
  started: number;
  /** processes still alive after teardown: must be 0 */
  leftRunning: number;
  /**
   * a run of a command of many runs (runtime/pool.ts): how many of its nodes ran in processes an
   * earlier run started; absent without a pool
   */
  reused?: number;
  /**
   * what the runtime could not remove (a container or network the Docker daemon keeps), one line
   * each, and how to clear it; absent when nothing was left
   */
  kept?: string[];
  /** a runtime that spans machines: the machine (hostname) each node ran on */
  machines?: Record<string, string>;
}

export interface Runtime {
  readonly kind: string;
  /** its started runtime offers `containers` (stop, start, disconnect, connect): checked before a run */
  readonly containerFaults?: boolean;
  /**
   * its node processes can load a scheme's parts from a file of the user's (a scheme named by
   * `scheme.module`, its folder in `NodeLaunch.schemeDir`): processes see this machine's files, the
   * docker runtime mounts the folder; compose's containers see only what their image holds
   */
  readonly hostFiles?: boolean;
  /**
   * its nodes run on other machines too (attached, swarm): this machine's memory does not bound the
   * fabric, so the memory check before a run is left out
   */
  readonly remoteNodes?: boolean;
  /**
   * sets up what the run's nodes share (addresses, a container network) before any starts; `racks`
   * and `pods` are the groups of nodes a runtime that spans machines keeps on one machine
   * (placement.ts)
   */
  prepare(nodes: string[], runId: string, racks?: string[][], pods?: string[][]): Promise<RuntimeSite>;
  /**
   * starts the nodes; an abort of `signal` (an interrupt) ends the start-up where it is: what started
   * is returned, for the fabric to stop and collect
   */
  start(launches: NodeLaunch[], signal?: AbortSignal): Promise<StartedRuntime>;
}
