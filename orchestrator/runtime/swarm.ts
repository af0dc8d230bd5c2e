/**
 * The swarm runtime (docs/containers.md): every node a task of its own one-replica service
 * on a Docker Swarm, all on one attachable overlay network of the run inside 198.18.0.0/15, placed
 * over the swarm's machines a rack at a time (placement.ts). The orchestrator runs on a manager.
 *
 * - **Control.** Nodes on other machines cannot reach this machine's bridges, so a relay task on this
 *   machine (control-relay.ts) sits on the overlay and forwards each node's control connection to the
 *   orchestrator, which listens on this machine's `docker_gwbridge` address.
 * - **Addresses.** Swarm gives a task its address when it schedules it: a node binds its interface
 *   in the run's subnet and reports it (`ready.udpHost`); a node started again may get another.
 * - **Faults** act on the container of the node's task, on the machine that runs it: this daemon, or
 *   the one named for that machine in `DCEMU_SWARM_DAEMONS` (`hostname=tcp://addr:2375,other=ssh://
 *   user@addr`). `kill`, `pause`/`resume`, `stop` and `disconnect`/`connect` are the container's; a
 *   stopped task does not come back (restart policy `none`; its network attachment is released), so
 *   `start` forces a new task of the node's service.
 * - **Exits** are followed by polling the swarm's tasks (every machine's, from the manager); a node's
 *   output is its service's log, saved as `<node>.stdout|stderr`. Node log files land in the results
 *   folder for tasks on this machine (a bind mount); on other machines they stay in the task.
 *
 * Everything the run creates carries `dcemu=<runId>`: teardown removes the services, then the
 * containers and the network by that label, and `dcemu clean` finds what a killed orchestrator left.
 */
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import Dockerode from 'dockerode';
import { formatSecret, newSecret, SECRET_FILE_ENV } from '../../core/auth.js';
import { ipv4, ipv4String } from '../../core/ipv4.js';
import { nodeOptions } from '../../core/paths.js';
import { RuntimeError } from '../engine/errors.js';
import { inAllowedRange } from './addresses.js';
import { RELAY_PORT } from './control-relay.js';
import { CREATE_CONCURRENCY, NODE_UDP_PORT, STOP_TIMEOUT_S } from './docker.js';
import {
  type Docker,
  demuxLogs,
  docker,
  ignore,
  keptMessage,
  mapBounded,
  NODE_LABEL,
  RUN_LABEL,
  removeLabelled,
  removeRun,
  runContainers,
  signalName,
  startedLine,
} from './docker-client.js';
import { createFabricNetwork, type FabricNetwork } from './docker-network.js';
import { containerIds, lendFolder } from './hardening.js';
import { APP_DIR, ensureImage, imageEntry } from './image.js';
import { carryImage } from './image-carry.js';
import { InOrder } from './in-order.js';
import { place, placementGroups } from './placement.js';
import { labDaemons } from './swarm-lab-state.js';
import type {
  ContainerFaults,
  ExitInfo,
  NodeLaunch,
  Runtime,
  RuntimeSite,
  StartedRuntime,
  StoppedRuntime,
} from './types.js';

/** the bridge through which a swarm task reaches its own machine (Docker's name for it) */
export const GWBRIDGE = 'docker_gwbridge';
/** the relay task's "node" label: not a node of the fabric */
const RELAY = '(control relay)';
/** how often the tasks are polled for their state */
const POLL_MS = 200;
/** a task that is not running after this long fails the start, naming what the swarm says */
const TASK_START_MS = 120_000;
/** new tasks for a node whose task could not start, before the start fails */
const START_RETRIES = 2;

export interface SwarmRuntimeOptions {
  /** image to run; default: `ensureImage()` here (other machines need it too: docs/containers.md) */
  image?: string;
  log?: (s: string) => void;
  /**
   * swarm machine hostname -> Docker endpoint URL, for the image and for faults on its tasks; default
   * DCEMU_SWARM_DAEMONS and the lab's daemons (swarm-lab.ts)
   */
  daemons?: Record<string, string>;
  /** node -> machine hostname: the node's group goes there; the rest by placement.ts */
  place?: Record<string, string>;
}

/** A swarm task as the API lists it (the fields dcemu reads). */
interface Task {
  ID: string;
  ServiceID: string;
  NodeID: string;
  CreatedAt: string;
  DesiredState: string;
  Status: { State: string; Err?: string; ContainerStatus?: { ContainerID?: string; ExitCode?: number } };
  NetworksAttachments?: Array<{ Network: { ID: string }; Addresses?: string[] }>;
}

/** A swarm machine: its node id, hostname and whether it is this one. */
interface Machine {
  id: string;
  hostname: string;
  cpus: number;
  local: boolean;
}

export class SwarmRuntime implements Runtime {
  readonly kind = 'swarm';
  readonly containerFaults = true;
  /** nodes run on the swarm's machines: this one's memory does not bound the fabric */
  readonly remoteNodes = true;
  private network: FabricNetwork | null = null;
  private machines: Machine[] = [];
  private placement = new Map<string, string>();
  private image: string | null = null;
  private secret: SwarmSecret | null = null;
  private daemons: Daemons | null = null;

  constructor(private readonly opts: SwarmRuntimeOptions = {}) {}

  async prepare(
    nodes: string[],
    runId: string,
    racks: string[][] = nodes.map((n) => [n]),
    pods?: string[][],
  ): Promise<RuntimeSite> {
    const d = await docker();
    const info = (await d.info()) as {
      Swarm?: { LocalNodeState?: string; ControlAvailable?: boolean; NodeID?: string };
    };
    if (info.Swarm?.LocalNodeState !== 'active' || !info.Swarm.ControlAvailable)
      throw new RuntimeError(
        `--runtime swarm runs on a swarm manager, and this Docker daemon is ${info.Swarm?.LocalNodeState === 'active' ? 'a worker' : 'in no swarm'}: 'dcemu swarm init' makes this machine a one-machine swarm (docs/containers.md says how to add machines)`,
      );
    const gateway = await gwbridgeGateway(d);
    this.machines = await swarmMachines(d, info.Swarm.NodeID ?? '');
    this.placement = place(
      placementGroups(racks, pods, this.machines.length),
      this.machines.map((m) => ({ id: m.id, weight: m.cpus })),
      pinned(this.opts.place ?? {}, this.machines, nodes),
    );
    const daemons = new Daemons(d, this.machines, {
      ...labDaemons(),
      ...(this.opts.daemons ?? parseDaemons(process.env.DCEMU_SWARM_DAEMONS)),
    });
    this.daemons = daemons;
    const net = await createFabricNetwork(d, runId, nodes, { overlay: true }).catch(async (err) => {
      await removeRun(runId).catch(() => {});
      throw err;
    });
    this.network = net;
    const release = async (): Promise<void> => {
      const kept = await removeSwarmRun(runId);
      if (kept.length > 0) throw new RuntimeError(keptMessage(kept));
    };
    try {
      // the run's secret as a Docker secret: the swarm hands it to the run's tasks only, as a file in
      // memory, and `docker inspect` shows its name, never its content
      const secret = newSecret();
      const created = (await d.createSecret({
        Name: `${runId}-secret`,
        Labels: { [RUN_LABEL]: runId },
        Data: Buffer.from(formatSecret(secret)).toString('base64'),
      })) as { id: string };
      this.secret = { id: created.id, name: `${runId}-secret` };
      const controlPort = await freePort(gateway);
      const image = this.opts.image ?? (await ensureImage({ log: this.opts.log }));
      this.image = image;
      await this.carryImage(d, daemons, image);
      const relay = await startRelay(
        d,
        runId,
        net,
        image,
        `${gateway}:${controlPort}`,
        info.Swarm.NodeID ?? '',
        this.secret,
      );
      const spread = new Map<string, number>();
      for (const m of this.placement.values()) spread.set(m, (spread.get(m) ?? 0) + 1);
      this.opts.log?.(
        `overlay ${net.name}: ${net.subnet} over ${this.machines.length} machine(s) (${this.machines
          .filter((m) => spread.has(m.id))
          .map((m) => `${m.hostname}: ${spread.get(m.id)} nodes`)
          .join(', ')}); control relay at ${relay}:${RELAY_PORT}`,
      );
      return {
        secret,
        controlHost: gateway,
        controlPort,
        controlAddress: `${relay}:${RELAY_PORT}`,
        bindHost: () => net.subnet,
        nodePort: NODE_UDP_PORT,
        outlives: `the services and network of run ${runId}`,
        release,
      };
    } catch (err) {
      await release().catch(() => {});
      throw err;
    }
  }

  /**
   * The image on every machine that runs nodes: carried from here to a daemon dcemu knows when it
   * lacks it (image-carry.ts); a machine whose daemon is not named is left to have it (said).
   */
  private async carryImage(d: Docker, daemons: Daemons, image: string): Promise<void> {
    const used = new Set(this.placement.values());
    for (const m of this.machines) {
      if (m.local || !used.has(m.id)) continue;
      const far = daemons.known(m.id);
      if (!far) {
        this.opts.log?.(
          `image on ${m.hostname} not checked: dcemu knows no daemon for it (DCEMU_SWARM_DAEMONS); it must hold ${image}`,
        );
        continue;
      }
      const c = await carryImage(d, far, image, m.hostname);
      if (c.carried)
        this.opts.log?.(
          `image ${image} carried to ${m.hostname} (${(c.bytes / 2 ** 20).toFixed(0)} MiB in ${(c.ms / 1000).toFixed(1)} s)`,
        );
    }
  }

  async start(launches: NodeLaunch[], signal?: AbortSignal): Promise<StartedRuntime> {
    const net = this.network;
    const image = this.image;
    const secret = this.secret;
    if (!net || !image || !secret) throw new Error('SwarmRuntime.start before prepare');
    // dilated mode reads each machine's monotonic clock against one epoch: one machine only
    const used = new Set(launches.map((l) => this.placement.get(l.name)));
    if (used.size > 1 && launches.some((l) => !l.cpuBound))
      throw new RuntimeError(
        `dilated mode runs on one clock, and this swarm spreads the fabric over ${used.size} machines: use --sync conservative (exact at any distance), or a swarm of one machine`,
      );
    const d = await docker();
    const daemons = this.daemons!;
    // the log folder is the node tasks' user's to write while the run lasts (runtime/hardening.ts)
    const lent = launches[0] ? lendFolder(resolve(launches[0].logDir)) : { giveBack: () => {} };
    const hostnames = new Map(this.machines.map((m) => [m.id, m.hostname]));
    const machineOf = Object.fromEntries(
      launches.map((l) => [l.name, hostnames.get(this.placement.get(l.name) ?? '') ?? '?']),
    );
    const started = new StartedServices(
      d,
      daemons,
      net,
      launches,
      machineOf,
      () => lent.giveBack(),
      this.opts.log,
    );
    const t0 = Date.now();
    try {
      // an interrupt ends the start-up where it is: no more services, no more waiting for their tasks
      await mapBounded(launches, CREATE_CONCURRENCY, async (l) => {
        if (signal?.aborted) return;
        const machine = this.placement.get(l.name) ?? this.machines[0].id;
        const local = this.machines.find((m) => m.id === machine)?.local ?? false;
        const svc = (await d.createService(serviceSpec(l, image, net, machine, local, secret))) as {
          id: string;
        };
        started.created(l.name, svc.id);
      });
      await started.running(signal);
    } catch (err) {
      await started.stop();
      throw err instanceof RuntimeError
        ? err
        : new RuntimeError(`cannot start the node services: ${(err as Error).message.split('\n')[0]}`);
    }
    started.follow();
    this.opts.log?.(startedLine(started.startedCount, launches.length, 'services', t0));
    return started;
  }
}

/**
 * A service of one task pinned to a machine, on the run's overlay, never restarted, with no virtual
 * IP (peers are addressed by the addresses nodes report: no load balancer).
 */
function oneTask(
  name: string,
  labels: Record<string, string>,
  container: Dockerode.ContainerSpec,
  machine: string,
  net: FabricNetwork,
): Dockerode.CreateServiceOptions {
  return {
    Name: name,
    Labels: labels,
    TaskTemplate: {
      ContainerSpec: { ...container, Labels: labels, StopGracePeriod: STOP_TIMEOUT_S * 1e9 },
      RestartPolicy: { Condition: 'none' },
      Placement: { Constraints: [`node.id==${machine}`] },
      Networks: [{ Target: net.id }],
    },
    Mode: { Replicated: { Replicas: 1 } },
    EndpointSpec: { Mode: 'dnsrr' },
  };
}

function serviceSpec(
  l: NodeLaunch,
  image: string,
  net: FabricNetwork,
  machine: string,
  local: boolean,
  secret: SwarmSecret,
): Dockerode.CreateServiceOptions {
  const logDir = resolve(l.logDir);
  return oneTask(
    `${l.runId}-${l.name}`,
    { [RUN_LABEL]: l.runId, [NODE_LABEL]: l.name },
    {
      Image: image,
      Args: [...nodeOptions(), imageEntry(l.role), '--dcemu-run', l.runId, '--dcemu-node', l.name],
      Env: Object.entries({ ...l.env, ...secretEnv }).map(([k, v]) => `${k}=${v}`),
      ...hardenedSpec(secret),
      // node log files land in the results folder when the task runs here; elsewhere that folder
      // does not exist, and the node writes into its task
      Mounts: [
        local
          ? { Type: 'bind' as const, Source: logDir, Target: logDir }
          : { Type: 'tmpfs' as const, Source: '', Target: logDir },
        { Type: 'tmpfs' as const, Source: '', Target: '/tmp' },
      ],
    },
    machine,
    net,
  );
}

/**
 * This machine's `docker_gwbridge`: its subnet ('?' if it reports none), the host's address on it and
 * its labels; null if there is none.
 */
export async function gwbridge(
  d: Docker,
): Promise<{ subnet: string; gateway: string; labels: Record<string, string> } | null> {
  const inspect = (await d
    .getNetwork(GWBRIDGE)
    .inspect()
    .catch(() => null)) as {
    IPAM?: { Config?: Array<{ Subnet?: string; Gateway?: string }> };
    Labels?: Record<string, string>;
  } | null;
  if (!inspect) return null;
  const c = inspect.IPAM?.Config?.[0];
  const subnet = c?.Subnet ?? '?';
  // without an explicit gateway Docker gives the bridge the subnet's first address
  const gateway = c?.Gateway ?? ipv4String(ipv4(subnet.split('/')[0]) + 1);
  return { subnet, gateway, labels: inspect.Labels ?? {} };
}

/** The host's address on `docker_gwbridge`, checked to lie inside 198.18.0.0/15. */
async function gwbridgeGateway(d: Docker): Promise<string> {
  const gw = await gwbridge(d);
  if (!gw)
    throw new RuntimeError(`this swarm machine has no ${GWBRIDGE} network: 'dcemu swarm init' creates it`);
  if (!inAllowedRange(gw.subnet))
    throw new RuntimeError(
      `${GWBRIDGE} uses ${gw.subnet}, outside 198.18.0.0/15 where dcemu keeps its traffic: leave the swarm, remove ${GWBRIDGE} and set the swarm up with 'dcemu swarm init' (docs/containers.md)`,
    );
  return gw.gateway;
}

/**
 * `--place` as node -> machine id, checked: every node and machine named exists (the machine ready
 * and active in the swarm).
 */
function pinned(place: Record<string, string>, machines: Machine[], nodes: string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const [node, host] of Object.entries(place)) {
    if (!nodes.includes(node))
      throw new RuntimeError(`--place ${node}=${host}: the fabric has no node ${node}`);
    const m = machines.find((x) => x.hostname === host);
    if (!m)
      throw new RuntimeError(
        `--place ${node}=${host}: no ready swarm machine is named ${host} (${machines.map((x) => x.hostname).join(', ')})`,
      );
    out.set(node, m.id);
  }
  return out;
}

async function swarmMachines(d: Docker, self: string): Promise<Machine[]> {
  const nodes = (await d.listNodes()) as Array<{
    ID: string;
    Spec?: { Availability?: string };
    Status?: { State?: string };
    Description?: { Hostname?: string; Resources?: { NanoCPUs?: number } };
  }>;
  const usable = nodes
    .filter((n) => n.Status?.State === 'ready' && n.Spec?.Availability === 'active')
    .map((n) => ({
      id: n.ID,
      hostname: n.Description?.Hostname ?? n.ID,
      cpus: Math.max(1, (n.Description?.Resources?.NanoCPUs ?? 1e9) / 1e9),
      local: n.ID === self,
    }))
    .sort((a, b) => Number(b.local) - Number(a.local) || (a.hostname < b.hostname ? -1 : 1));
  if (usable.length === 0) throw new RuntimeError('the swarm has no machine that is ready and active');
  return usable;
}

/** A port free on `host` now, for the orchestrator to listen on once the relay knows it. */
function freePort(host: string): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const s = createServer();
    s.once('error', (err) =>
      reject(new RuntimeError(`cannot listen on ${host} (${GWBRIDGE}): ${(err as Error).message}`)),
    );
    s.listen(0, host, () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolvePort(port));
    });
  });
}

/** a run's Docker secret */
interface SwarmSecret {
  id: string;
  name: string;
}

/** where a task finds the run's secret (a Docker secret's file, in memory) */
const SECRET_IN_TASK = '/run/secrets/dcemu-secret';
const secretEnv = { [SECRET_FILE_ENV]: SECRET_IN_TASK };

/**
 * Least privilege for a task (orchestrator/runtime/hardening.ts): an unprivileged user, no
 * capabilities, a read-only root file system, and the run's secret readable by that user alone.
 * Swarm services have no no-new-privileges option in Docker 20.10's API (docs/security.md).
 */
function hardenedSpec(secret: SwarmSecret): Partial<Dockerode.ContainerSpec> {
  const { uid, gid } = containerIds();
  return {
    User: `${uid}:${gid}`,
    ReadOnly: true,
    CapabilityDrop: ['ALL'],
    Secrets: [
      {
        SecretID: secret.id,
        SecretName: secret.name,
        File: { Name: 'dcemu-secret', UID: String(uid), GID: String(gid), Mode: 0o400 },
      },
    ],
  } as Partial<Dockerode.ContainerSpec>;
}

async function startRelay(
  d: Docker,
  runId: string,
  net: FabricNetwork,
  image: string,
  target: string,
  self: string,
  secret: SwarmSecret,
): Promise<string> {
  const svc = (await d.createService(
    oneTask(
      `${runId}-control`,
      { [RUN_LABEL]: runId, [NODE_LABEL]: RELAY },
      {
        Image: image,
        Args: [`${APP_DIR}/dist/orchestrator/runtime/control-relay.js`],
        Env: [
          `DCEMU_RELAY_TARGET=${target}`,
          `DCEMU_RELAY_PORT=${RELAY_PORT}`,
          `${SECRET_FILE_ENV}=${SECRET_IN_TASK}`,
        ],
        ...hardenedSpec(secret),
      },
      self,
      net,
    ),
  )) as { id: string };
  // its address on the overlay, once it runs
  return pollUntil(
    async () => {
      const task = latest(await tasksOf(d, [svc.id]), svc.id);
      if (task && ENDED.has(task.Status.State))
        throw new RuntimeError(
          `the control relay task ${task.Status.State}: ${task.Status.Err ?? 'no reason given'}`,
        );
      return task?.Status.State === 'running' ? addressOn(task, net.id) : undefined;
    },
    () => 'the control relay task did not start within 2 minutes',
  );
}

/**
 * Polls every POLL_MS until `check` gives a value; `check` throws for a task the swarm could not run.
 * After TASK_START_MS the wait fails with what `late` says.
 */
async function pollUntil<T>(check: () => Promise<T | undefined>, late: () => string): Promise<T> {
  const deadline = Date.now() + TASK_START_MS;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new RuntimeError(late());
    await sleep(POLL_MS);
  }
}

const ENDED = new Set(['complete', 'shutdown', 'failed', 'rejected', 'orphaned', 'remove']);

async function tasksOf(d: Docker, services: string[]): Promise<Task[]> {
  if (services.length === 0) return [];
  return (await d.listTasks({ filters: { service: services } })) as Task[];
}

/** The newest task of a service (a forced update replaces its task). */
function latest(tasks: Task[], service: string): Task | undefined {
  let best: Task | undefined;
  for (const t of tasks) if (t.ServiceID === service && (!best || t.CreatedAt > best.CreatedAt)) best = t;
  return best;
}

function addressOn(task: Task, network: string): string | undefined {
  const a = task.NetworksAttachments?.find((n) => n.Network.ID === network)?.Addresses?.[0];
  return a?.split('/')[0];
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** `hostname=url,hostname=url` (DCEMU_SWARM_DAEMONS) as a map. */
export function parseDaemons(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (text ?? '').split(',')) {
    const item = part.trim();
    if (!item) continue;
    const eq = item.indexOf('=');
    if (eq <= 0) throw new RuntimeError(`DCEMU_SWARM_DAEMONS: expected hostname=url, got '${item}'`);
    out[item.slice(0, eq)] = item.slice(eq + 1);
  }
  return out;
}

/** Docker options for an endpoint URL: tcp://host:port, ssh://user@host[:port], unix:///path. */
export function daemonOptions(url: string): Dockerode.DockerOptions {
  const u = new URL(url);
  switch (u.protocol) {
    case 'tcp:':
    case 'http:':
      return { host: u.hostname, port: Number(u.port || 2375), protocol: 'http' };
    case 'ssh:':
      return {
        protocol: 'ssh',
        host: u.hostname,
        port: Number(u.port || 22),
        username: u.username || undefined,
      };
    case 'unix:':
      return { socketPath: u.pathname };
    default:
      throw new RuntimeError(`DCEMU_SWARM_DAEMONS: ${url}: expected tcp://, ssh:// or unix://`);
  }
}

/** The Docker daemon of each swarm machine: this one's, or the URL named for it. */
class Daemons {
  private readonly clients = new Map<string, Docker>();

  constructor(
    local: Docker,
    private readonly machines: Machine[],
    private readonly urls: Record<string, string>,
  ) {
    for (const m of machines) if (m.local) this.clients.set(m.id, local);
  }

  of(machine: string, node: string): Docker {
    const client = this.known(machine);
    if (client) return client;
    const m = this.machines.find((x) => x.id === machine);
    throw new RuntimeError(
      `node ${node} runs on swarm machine ${m?.hostname ?? machine}: a fault on it needs that machine's Docker daemon; name it in DCEMU_SWARM_DAEMONS (${m?.hostname ?? machine}=tcp://<address>:2375 or ssh://<user>@<address>)`,
    );
  }

  /** the daemons dcemu knows of the machines (by hostname) other than this one */
  farClients(hostnames: Set<string>): Docker[] {
    return this.machines
      .filter((m) => !m.local && hostnames.has(m.hostname))
      .map((m) => this.known(m.id))
      .filter((c): c is Docker => c !== null);
  }

  /** the machine's daemon, if dcemu knows one (this machine's, a URL named for it, the lab's) */
  known(machine: string): Docker | null {
    const c = this.clients.get(machine);
    if (c) return c;
    const m = this.machines.find((x) => x.id === machine);
    const url = m && this.urls[m.hostname];
    if (!m || !url) return null;
    const client = new Dockerode(daemonOptions(url)) as unknown as Docker;
    this.clients.set(machine, client);
    return client;
  }
}

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

class StartedServices implements StartedRuntime {
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

/**
 * A task that ended before its node ran: the daemon could not make or start its container (not a
 * node that exited, not an image a machine lacks, not a task the swarm could not place).
 */
export function startFailure(t: Pick<Task, 'Status'>): boolean {
  const err = t.Status.Err ?? '';
  return (
    (t.Status.State === 'failed' || t.Status.State === 'rejected') &&
    /start|mount|create/i.test(err) &&
    !/non-zero exit|no such image|not found|pull access|no suitable node/i.test(err)
  );
}

function taskFailure(name: string, t: Task): string {
  const err = t.Status.Err ?? 'no reason given';
  const hint = /no such image|not found|pull access/i.test(err)
    ? ": the image must be on every machine of the swarm (docs/containers.md: 'docker save | docker load', or a registry and --image)"
    : '';
  return `node ${name}: its swarm task ${t.Status.State} (${err})${hint}`;
}

/**
 * Removes the services of a run (every dcemu run's when `runId` is null) when this daemon manages a
 * swarm, and then the run's Docker secret (a secret a service uses cannot go); returns how many
 * services. Their tasks' containers stop and go with them.
 */
export async function removeServices(runId: string | null): Promise<number> {
  const d = await docker();
  const label = runId === null ? RUN_LABEL : `${RUN_LABEL}=${runId}`;
  // not a manager (or in no swarm): the daemon refuses the listing, and there is nothing to remove
  const services = await d.listServices({ filters: { label: [label] } }).catch(() => []);
  await Promise.all(
    services.map((s) =>
      d
        .getService(s.ID)
        .remove()
        .catch(() => {}),
    ),
  );
  const secrets = (await d.listSecrets({ filters: { label: [label] } }).catch(() => [])) as Array<{
    ID: string;
  }>;
  for (const s of secrets)
    await d
      .getSecret(s.ID)
      .remove()
      .catch(() => {});
  return services.length;
}

/**
 * Removes a swarm run: its services (which stop their tasks), then its containers and its overlay
 * network. Returns what the daemon keeps.
 */
export async function removeSwarmRun(runId: string): Promise<string[]> {
  await removeServices(runId);
  // the swarm's agents remove the tasks' containers one at a time: removing them here, a few at a
  // time, is quicker, and their network goes after them
  return (await removeRun(runId)).kept;
}

/**
 * Removes every swarm run on this daemon (`dcemu swarm leave`): the runs its dcemu services and
 * overlay networks name. A run of the docker runtime or of compose on the same daemon is not the
 * swarm's: it stays, running or not, and what the daemon keeps of it is not `leave`'s to report.
 */
export async function removeSwarmRuns(): Promise<string[]> {
  const d = await docker();
  const services = await d.listServices({ filters: { label: [RUN_LABEL] } }).catch(() => []);
  const overlays = await d.listNetworks({ filters: { label: [RUN_LABEL], driver: ['overlay'] } });
  const runs = new Set<string>();
  for (const s of services) {
    const run = s.Spec?.Labels?.[RUN_LABEL];
    if (run) runs.add(run);
  }
  for (const n of overlays) {
    const run = n.Labels?.[RUN_LABEL];
    if (run) runs.add(run);
  }
  const kept: string[] = [];
  for (const run of runs) kept.push(...(await removeSwarmRun(run)));
  return kept;
}
