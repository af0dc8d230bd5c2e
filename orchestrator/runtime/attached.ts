/**
 * The attached runtime: the orchestrator starts no node. Someone else does — the services of a file
 * written by `dcemu compose` — and each node connects to the control server on its own, at an address
 * it was told in advance. `prepare` therefore returns the addresses the compose file assigned (the
 * same allocation, orchestrator/runtime/addresses.ts) and a fixed control port; `start` only follows the nodes
 * through their control connections: a node has "exited" when its connection closed.
 *
 * The orchestrator owns no process here, so it cannot kill, pause or resume one: those timeline
 * actions are refused (`refuseNodeFaults`, checked before a run starts; `dcemu compose` leaves them
 * out of the file it writes). Link and clock faults travel over the control channel and still work.
 */

import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { formatSecret, newSecret } from '../../core/auth.js';
import { RuntimeError } from '../engine/errors.js';
import type { Scenario } from '../scenario/resolve.js';
import { allocateAddresses, CONTROL_PORT } from './addresses.js';
import type {
  ExitInfo,
  NodeLaunch,
  NodeLink,
  Runtime,
  RuntimeSite,
  StartedRuntime,
  StoppedRuntime,
} from './types.js';

/** timeline actions that need a runtime owning the node's process */
export const NODE_PROCESS_FAULTS: ReadonlySet<string> = new Set(['kill', 'pause', 'resume']);

/** how long `stop()` waits for nodes to close their connections after their report, real ms */
const LEAVE_WAIT_MS = 3000;

export interface AttachedOptions {
  /** the fabric's subnet, as written in the compose file (`dcemu compose` passes it) */
  subnet: string;
  /**
   * where the run's secret is written for the nodes to read (`--secret-file`; compose: a tmpfs volume
   * only the run's containers mount): drawn anew for every run, removed when it ends
   */
  secretFile: string;
}

export class AttachedRuntime implements Runtime {
  readonly kind = 'attached';
  readonly remoteNodes = true;

  constructor(private readonly opts: AttachedOptions) {}

  async prepare(nodes: string[]): Promise<RuntimeSite> {
    const addr = allocateAddresses(nodes, this.opts.subnet);
    const secret = newSecret();
    const file = this.opts.secretFile;
    const tmp = `${file}.${process.pid}.tmp`;
    try {
      // whole or not at all: a node reading it meanwhile never sees half a secret
      writeFileSync(tmp, formatSecret(secret), { mode: 0o400 });
      renameSync(tmp, file);
    } catch (err) {
      throw new RuntimeError(
        `--secret-file ${file}: cannot write the run's secret (${(err as Error).message})`,
      );
    }
    const remove = async () => rmSync(file, { force: true });
    this.removeSecret = remove;
    return {
      secret,
      controlHost: addr.orchestrator,
      controlPort: CONTROL_PORT,
      bindHost: (name) => {
        const host = addr.nodes.get(name);
        if (!host) throw new RuntimeError(`no address for node '${name}' in subnet ${addr.subnet}`);
        return host;
      },
      release: remove,
    };
  }

  private removeSecret: () => Promise<void> = async () => {};

  async start(launches: NodeLaunch[]): Promise<StartedRuntime> {
    return new AttachedNodes(
      launches.map((l) => l.name),
      this.removeSecret,
    );
  }
}

/** Refuses a scenario whose timeline needs a node's process (kill, pause, resume): one line, naming it. */
export function refuseNodeFaults(scenario: Scenario): void {
  const ev = scenario.timeline.find((e) => NODE_PROCESS_FAULTS.has(e.action));
  if (!ev) return;
  throw new RuntimeError(
    `${scenario.file}: timeline ${ev.action} ${ev.node}: not available when nodes are attached (the orchestrator does not own their processes); use the process or docker runtime`,
  );
}

interface Attached {
  link: NodeLink | null;
  /** the connection closed: the node ended (or lost the orchestrator) */
  left: boolean;
}

class AttachedNodes implements StartedRuntime {
  readonly kind = 'attached';
  private readonly nodes = new Map<string, Attached>();
  private handlers: Array<(i: ExitInfo) => void> = [];
  private stopped: Promise<StoppedRuntime> | null = null;

  constructor(
    names: string[],
    private readonly removeSecret: () => Promise<void>,
  ) {
    for (const name of names) this.nodes.set(name, { link: null, left: false });
  }

  nodeConnected(name: string, link: NodeLink): void {
    const n = this.nodes.get(name);
    if (!n || n.link) return;
    n.link = link;
    const left = () => {
      if (n.left) return;
      n.left = true;
      // the exit status lives in a container the orchestrator cannot see
      for (const h of this.handlers) h({ name, code: null, signal: null });
    };
    if (link.closed) left();
    else link.once('close', left);
  }

  onExit(handler: (info: ExitInfo) => void): void {
    this.handlers.push(handler);
  }

  isRunning(name: string): boolean {
    const n = this.nodes.get(name);
    return n !== undefined && n.link !== null && !n.left;
  }

  private refuse(action: string, name: string): Promise<void> {
    if (!this.nodes.has(name)) return Promise.reject(new RuntimeError(`no node named '${name}' in this run`));
    return Promise.reject(
      new RuntimeError(
        `${action} ${name}: not available when nodes are attached (the orchestrator does not own their processes)`,
      ),
    );
  }

  kill(name: string): Promise<void> {
    return this.refuse('kill', name);
  }

  pause(name: string): Promise<void> {
    return this.refuse('pause', name);
  }

  resume(name: string): Promise<void> {
    return this.refuse('resume', name);
  }

  stop(): Promise<StoppedRuntime> {
    this.stopped ??= this.leave();
    return this.stopped;
  }

  /** Nodes end themselves after their report: wait a little for the last ones to hang up. */
  private async leave(): Promise<StoppedRuntime> {
    const connected = [...this.nodes.values()].filter((n) => n.link !== null);
    const stillUp = () => connected.filter((n) => !n.left).length;
    for (const deadline = Date.now() + LEAVE_WAIT_MS; stillUp() > 0 && Date.now() < deadline; ) {
      await new Promise((r) => setTimeout(r, 50).unref());
    }
    await this.removeSecret();
    return { started: connected.length, leftRunning: stillUp() };
  }
}
