/**
 * The docker runtime (docs/containers.md): one container per node from the locally built image
 * (`orchestrator/runtime/image.ts`), all on one internal network of the run with fixed addresses,
 * through the Docker client testcontainers sets up. Node faults become `docker kill` / `pause` / `unpause`; container faults (`stop`,
 * `start`, `disconnect`, `connect`) act on the container and its network interface. Every container
 * and the network carry `dcemu=<runId>`: teardown removes them by that label and checks that none
 * remains, and `dcemu clean` finds what an orchestrator killed with SIGKILL left behind (its nodes end
 * themselves when their control connection drops, so those containers are stopped already).
 */
import { writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { ContainerCreateOptions } from 'dockerode';
import { nodeOptions } from '../../core/paths.js';
import { RuntimeError } from '../engine/errors.js';
import {
  type Docker,
  demuxLogs,
  docker,
  ignore,
  keptMessage,
  mapBounded,
  NODE_LABEL,
  RUN_LABEL,
  removeRun,
  runContainers,
  signalName,
  startedLine,
} from './docker-client.js';
import { createFabricNetwork, type FabricNetwork } from './docker-network.js';
import {
  containerUser,
  HARDENED_HOST,
  lendFolder,
  SECRET_IN_CONTAINER,
  schemeForContainers,
  secretFile,
} from './hardening.js';
import { ensureImage, imageEntry } from './image.js';
import { InOrder } from './in-order.js';
import type {
  ContainerFaults,
  ExitInfo,
  NodeLaunch,
  Runtime,
  RuntimeSite,
  StartedRuntime,
  StoppedRuntime,
} from './types.js';

/**
 * The UDP port every node binds: fixed, so a node restarted by `start` is found where it was (each
 * container has its own address, so one port for all is no clash).
 */
export const NODE_UDP_PORT = 40000;
/**
 * containers (here) or swarm services (runtime/swarm.ts: each a raft commit on the managers) created
 * at once; the starts go one at a time (see `start`)
 */
export const CREATE_CONCURRENCY = 6;
/**
 * Nodes whose orchestrator is gone without a teardown end this far apart (ms), in the run's order:
 * fewer of one network's containers end together (see `start`; no guarantee, a daemon under load may
 * take longer to clean up after one)
 */
const EXIT_STAGGER_MS = 200;
/**
 * `docker stop` grace period (and a swarm service's), s: nodes end on SIGTERM at once; a wedged one
 * is killed after this
 */
export const STOP_TIMEOUT_S = 1;

export interface DockerRuntimeOptions {
  /** image tag to run; default: `ensureImage()` (built when the app changed) */
  image?: string;
  log?: (s: string) => void;
}

export class DockerRuntime implements Runtime {
  readonly kind = 'docker';
  readonly hostFiles = true;
  readonly containerFaults = true;
  private network: FabricNetwork | null = null;
  private nodes: string[] = [];

  constructor(private readonly opts: DockerRuntimeOptions = {}) {}

  async prepare(nodes: string[], runId: string): Promise<RuntimeSite> {
    const d = await docker();
    const net = await createFabricNetwork(d, runId, nodes).catch(async (err) => {
      await removeRun(runId).catch(() => {});
      throw err;
    });
    this.network = net;
    this.nodes = nodes;
    const index = new Map(nodes.map((n, i) => [n, i]));
    this.opts.log?.(`network ${net.name}: ${net.subnet}, orchestrator at ${net.gateway}`);
    return {
      controlHost: net.gateway,
      bindHost: (name) => {
        const i = index.get(name);
        if (i === undefined) throw new Error(`no node named '${name}' in this run`);
        return net.address(i);
      },
      nodePort: NODE_UDP_PORT,
      outlives: `the containers and network of run ${runId}`,
      release: async () => {
        const { kept } = await removeRun(runId);
        if (kept.length > 0) throw new RuntimeError(keptMessage(kept));
      },
    };
  }

  async start(launches: NodeLaunch[], signal?: AbortSignal): Promise<StartedRuntime> {
    const net = this.network;
    if (!net) throw new Error('DockerRuntime.start before prepare');
    const image = this.opts.image ?? (await ensureImage({ log: this.opts.log }));
    const d = await docker();
    const index = new Map(this.nodes.map((n, i) => [n, i]));
    const address = (name: string): string => net.address(index.get(name)!);
    // the run's secret, mounted read-only into each container; the log folder lent to the nodes' user
    const secret = secretFile(launches[0]?.secret ?? Buffer.alloc(0));
    const lent = launches[0] ? lendFolder(resolve(launches[0].logDir)) : { giveBack: () => {} };
    const dir = launches[0]?.schemeDir;
    const scheme = dir === undefined ? null : schemeForContainers(dir);
    const started = new StartedContainers(d, net, address, launches, () => {
      secret.remove();
      scheme?.remove();
      lent.giveBack();
    });
    await started.watch();
    const t0 = Date.now();
    try {
      // created a few at a time (no network endpoint exists before a start), started one at a time:
      // endpoints of one network made at once race in Docker 20.10's endpoint count, which can then
      // stay above the endpoints there are and keep the network after its containers are gone
      const containers = await mapBounded(launches, CREATE_CONCURRENCY, (l) =>
        d.createContainer(
          containerSpec(l, image, net, address(l.name), index.get(l.name)!, secret, scheme?.path),
        ),
      );
      // an interrupt ends the start-up here (22 one at a time take seconds): what started is
      // stopped and collected, what did not is removed with the run
      for (const [i, c] of containers.entries()) {
        if (signal?.aborted) break;
        await c.start();
        started.began(launches[i].name);
      }
    } catch (err) {
      await started.stop();
      throw new RuntimeError(`cannot start the node containers: ${(err as Error).message.split('\n')[0]}`);
    }
    this.opts.log?.(startedLine(started.startedCount, launches.length, 'containers', t0));
    return started;
  }
}

/**
 * A node's container (node `i` of the run): the image's node entry for its role, on the run's network
 * at its fixed address.
 */
function containerSpec(
  l: NodeLaunch,
  image: string,
  net: FabricNetwork,
  ip: string,
  i: number,
  secret: { path: string; env: Record<string, string> },
  /** where the scheme folder the containers read lies on this machine (schemeForContainers) */
  schemeSource = l.schemeDir,
): ContainerCreateOptions {
  const env = {
    ...l.env,
    ...secret.env,
    // a node stays after its report until teardown stops it: one container exiting at a time
    DCEMU_STAY_AFTER_REPORT: '1',
    // an orchestrator gone without a teardown (SIGKILL): its nodes end EXIT_STAGGER_MS apart, in order
    DCEMU_EXIT_STAGGER_MS: String(i * EXIT_STAGGER_MS),
  };
  return {
    name: containerName(l),
    Image: image,
    Cmd: [...nodeOptions(), imageEntry(l.role), '--dcemu-run', l.runId, '--dcemu-node', l.name],
    Env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
    Labels: { [RUN_LABEL]: l.runId, [NODE_LABEL]: l.name },
    User: containerUser(),
    HostConfig: {
      ...HARDENED_HOST,
      NetworkMode: net.name,
      // node log files land in the host's results folder, owned by whoever runs dcemu; a scheme of
      // the user's own is read where it lies, its node_modules hidden (there `dcemu` resolves to the
      // image's own, /node_modules/dcemu -> /app, so its parts share the bundle's modules)
      Binds: [
        `${resolve(l.logDir)}:${resolve(l.logDir)}:rw`,
        `${secret.path}:${SECRET_IN_CONTAINER}:ro`,
        ...(l.schemeDir ? [`${schemeSource}:${l.schemeDir}:ro`] : []),
      ],
      Tmpfs: {
        ...HARDENED_HOST.Tmpfs,
        ...(l.schemeDir && { [join(l.schemeDir, 'node_modules')]: 'ro' }),
      },
    },
    NetworkingConfig: { EndpointsConfig: { [net.name]: { IPAMConfig: { IPv4Address: ip } } } },
  };
}

function containerName(l: { runId: string; name: string }): string {
  return `${l.runId}-${l.name}`;
}

type State = 'created' | 'running' | 'paused' | 'exited';

interface Node {
  launch: NodeLaunch;
  container: string;
  state: State;
  /** kill, pause, resume and teardown's stop, in the order asked for */
  ops: InOrder;
}

class StartedContainers implements StartedRuntime {
  readonly kind = 'docker';
  readonly containers: ContainerFaults;
  private readonly nodes = new Map<string, Node>();
  private handlers: Array<(i: ExitInfo) => void> = [];
  private readonly earlyExits: ExitInfo[] = [];
  private events: NodeJS.ReadableStream | null = null;
  private stopped: Promise<StoppedRuntime> | null = null;
  /** the nodes whose containers were started (an interrupt may end the start-up before all were) */
  private readonly begun = new Set<string>();

  constructor(
    private readonly d: Docker,
    net: FabricNetwork,
    address: (name: string) => string,
    launches: NodeLaunch[],
    /** after teardown: the secret file removed, the log folder given back */
    private readonly cleanup: () => void = () => {},
  ) {
    for (const l of launches)
      this.nodes.set(l.name, {
        launch: l,
        container: containerName(l),
        state: 'created',
        ops: new InOrder(),
      });
    const network = d.getNetwork(net.id);
    this.containers = {
      stopNode: async (name) => {
        await this.container(name).stop({ t: STOP_TIMEOUT_S }).catch(ignore(304));
      },
      startNode: async (name) => {
        await this.container(name).start().catch(ignore(304));
      },
      disconnect: async (name) => {
        await network.disconnect({ Container: this.node(name).container, Force: true });
      },
      connect: async (name) => {
        await network.connect({
          Container: this.node(name).container,
          EndpointConfig: { IPAMConfig: { IPv4Address: address(name) } },
        });
      },
    };
  }

  /**
   * Follows the daemon's events for the run's containers: a container that dies is reported to
   * `onExit` (with its exit code, or the signal behind codes above 128) and its output is saved.
   */
  async watch(): Promise<void> {
    const runId = this.nodes.values().next().value?.launch.runId;
    const stream = await this.d.getEvents({
      filters: { type: ['container'], label: [`${RUN_LABEL}=${runId}`] },
    });
    this.events = stream;
    let buf = '';
    stream.on('data', (chunk: Buffer) => {
      buf += chunk.toString('utf8');
      for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
        const line = buf.slice(0, i).trim();
        buf = buf.slice(i + 1);
        if (line) this.onEvent(JSON.parse(line));
      }
    });
    stream.on('error', () => {});
  }

  private onEvent(e: {
    status?: string;
    Action?: string;
    Actor?: { Attributes?: Record<string, string> };
  }): void {
    const attrs = e.Actor?.Attributes ?? {};
    const n = this.nodes.get(attrs[NODE_LABEL] ?? '');
    if (!n) return;
    switch (e.Action ?? e.status) {
      case 'start':
        n.state = 'running';
        break;
      case 'pause':
        n.state = 'paused';
        break;
      case 'unpause':
        n.state = 'running';
        break;
      case 'die': {
        n.state = 'exited';
        const code = Number(attrs.exitCode ?? Number.NaN);
        const signal = code > 128 ? signalName(code - 128) : null;
        const info: ExitInfo = { name: n.launch.name, code: signal ? null : code, signal };
        void this.saveOutput(n);
        if (this.handlers.length === 0) this.earlyExits.push(info);
        for (const h of this.handlers) h(info);
        break;
      }
    }
  }

  /** Writes the container's stdout/stderr (all its starts) to `<logDir>/<node>.stdout|stderr`. */
  private async saveOutput(n: Node): Promise<void> {
    try {
      const raw = await this.d.getContainer(n.container).logs({ stdout: true, stderr: true, follow: false });
      const { stdout, stderr } = demuxLogs(raw);
      await writeFile(join(n.launch.logDir, `${n.launch.name}.stdout`), stdout);
      await writeFile(join(n.launch.logDir, `${n.launch.name}.stderr`), stderr);
    } catch {
      // the container is gone already: its last output was saved when it died
    }
  }

  began(name: string): void {
    this.begun.add(name);
  }

  get startedCount(): number {
    return this.begun.size;
  }

  onExit(handler: (info: ExitInfo) => void): void {
    this.handlers.push(handler);
    // containers that died while others were still starting, before anyone listened
    for (const info of this.earlyExits.splice(0)) handler(info);
  }

  isRunning(name: string): boolean {
    const s = this.nodes.get(name)?.state;
    return s === 'running' || s === 'paused';
  }

  private node(name: string): Node {
    const n = this.nodes.get(name);
    if (!n) throw new Error(`no node named '${name}' in this run`);
    return n;
  }

  private container(name: string) {
    return this.d.getContainer(this.node(name).container);
  }

  kill(name: string): Promise<void> {
    const n = this.node(name);
    return n.ops.run(async () => {
      await this.container(name).kill({ signal: 'SIGKILL' }).catch(ignore(409)); // not running
      // a frozen process dies only once its cgroup is thawed
      if (n.state === 'paused')
        await this.container(name)
          .unpause()
          .catch(() => {});
    });
  }

  pause(name: string): Promise<void> {
    const n = this.node(name);
    return n.ops.run(async () => {
      if (n.state !== 'running') return;
      await this.container(name).pause();
      n.state = 'paused';
    });
  }

  resume(name: string): Promise<void> {
    const n = this.node(name);
    return n.ops.run(async () => {
      if (n.state !== 'paused') return;
      await this.container(name).unpause();
      n.state = 'running';
    });
  }

  stop(): Promise<StoppedRuntime> {
    this.stopped ??= this.teardown();
    return this.stopped;
  }

  private async teardown(): Promise<StoppedRuntime> {
    const all = [...this.nodes.values()];
    // one at a time: containers of one network exiting at once race in Docker 20.10's endpoint
    // bookkeeping, which then keeps the network ("has active endpoints" with no container left)
    for (const n of all)
      await n.ops.run(async () => {
        const c = this.d.getContainer(n.container);
        if (n.state === 'paused') await c.unpause().catch(() => {});
        await c.stop({ t: STOP_TIMEOUT_S }).catch(() => {});
        await this.saveOutput(n);
      });
    this.events?.removeAllListeners('data');
    (this.events as unknown as { destroy?: () => void } | null)?.destroy?.();
    const runId = all[0]?.launch.runId;
    const kept = runId === undefined ? [] : (await removeRun(runId)).kept;
    const leftRunning = runId === undefined ? 0 : await runContainers(runId);
    this.cleanup();
    return {
      started: this.begun.size,
      leftRunning,
      ...(kept.length > 0 && { kept: [keptMessage(kept)] }),
    };
  }
}
