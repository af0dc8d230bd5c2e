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
 *
 * Beside it: the tasks' specs and polling (swarm-tasks.ts), the machines and their daemons
 * (swarm-daemons.ts), the started run (swarm-services.ts) and the removal of runs (swarm-removal.ts).
 */
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { formatSecret, newSecret, SECRET_FILE_ENV } from '../../core/auth.js';
import { ipv4, ipv4String } from '../../core/ipv4.js';
import { RuntimeError } from '../engine/errors.js';
import { inAllowedRange } from './addresses.js';
import { RELAY_PORT } from './control-relay.js';
import { CREATE_CONCURRENCY, NODE_UDP_PORT } from './docker.js';
import {
  type Docker,
  docker,
  keptMessage,
  mapBounded,
  NODE_LABEL,
  RUN_LABEL,
  removeRun,
  startedLine,
} from './docker-client.js';
import { createFabricNetwork, type FabricNetwork } from './docker-network.js';
import { lendFolder } from './hardening.js';
import { APP_DIR, ensureImage } from './image.js';
import { carryImage } from './image-carry.js';
import { place, placementGroups } from './placement.js';
import { Daemons, type Machine, parseDaemons, pinned, swarmMachines } from './swarm-daemons.js';
import { labDaemons } from './swarm-lab-state.js';
import { removeSwarmRun } from './swarm-removal.js';
import { StartedServices } from './swarm-services.js';
import {
  addressOn,
  ENDED,
  hardenedSpec,
  latest,
  oneTask,
  pollUntil,
  SECRET_IN_TASK,
  type SwarmSecret,
  serviceSpec,
  tasksOf,
} from './swarm-tasks.js';
import type { NodeLaunch, Runtime, RuntimeSite, StartedRuntime } from './types.js';

/** the bridge through which a swarm task reaches its own machine (Docker's name for it) */
export const GWBRIDGE = 'docker_gwbridge';
/** the relay task's "node" label: not a node of the fabric */
const RELAY = '(control relay)';

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
