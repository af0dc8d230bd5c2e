/**
 * A swarm run's tasks (swarm.ts): the one-task service each node and the control relay runs as,
 * hardened and given the run's secret, and the polling that waits for a task and tells why one failed.
 */
import { resolve } from 'node:path';
import type Dockerode from 'dockerode';
import { SECRET_FILE_ENV } from '../../core/auth.js';
import { nodeOptions } from '../../core/paths.js';
import { RuntimeError } from '../engine/errors.js';
import { STOP_TIMEOUT_S } from './docker.js';
import { type Docker, NODE_LABEL, RUN_LABEL } from './docker-client.js';
import type { FabricNetwork } from './docker-network.js';
import { containerIds } from './hardening.js';
import { imageEntry } from './image.js';
import type { NodeLaunch } from './types.js';

/** how often the tasks are polled for their state */
export const POLL_MS = 200;
/** a task that is not running after this long fails the start, naming what the swarm says */
export const TASK_START_MS = 120_000;

/** A swarm task as the API lists it (the fields dcemu reads). */
export interface Task {
  ID: string;
  ServiceID: string;
  NodeID: string;
  CreatedAt: string;
  DesiredState: string;
  Status: { State: string; Err?: string; ContainerStatus?: { ContainerID?: string; ExitCode?: number } };
  NetworksAttachments?: Array<{ Network: { ID: string }; Addresses?: string[] }>;
}

/**
 * A service of one task pinned to a machine, on the run's overlay, never restarted, with no virtual
 * IP (peers are addressed by the addresses nodes report: no load balancer).
 */
export function oneTask(
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

export function serviceSpec(
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

/** a run's Docker secret */
export interface SwarmSecret {
  id: string;
  name: string;
}

/** where a task finds the run's secret (a Docker secret's file, in memory) */
export const SECRET_IN_TASK = '/run/secrets/dcemu-secret';
const secretEnv = { [SECRET_FILE_ENV]: SECRET_IN_TASK };

/**
 * Least privilege for a task (orchestrator/runtime/hardening.ts): an unprivileged user, no
 * capabilities, a read-only root file system, and the run's secret readable by that user alone.
 * Swarm services have no no-new-privileges option in Docker 20.10's API (docs/security.md).
 */
export function hardenedSpec(secret: SwarmSecret): Partial<Dockerode.ContainerSpec> {
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

/**
 * Polls every POLL_MS until `check` gives a value; `check` throws for a task the swarm could not run.
 * After TASK_START_MS the wait fails with what `late` says.
 */
export async function pollUntil<T>(check: () => Promise<T | undefined>, late: () => string): Promise<T> {
  const deadline = Date.now() + TASK_START_MS;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new RuntimeError(late());
    await sleep(POLL_MS);
  }
}

export const ENDED = new Set(['complete', 'shutdown', 'failed', 'rejected', 'orphaned', 'remove']);

export async function tasksOf(d: Docker, services: string[]): Promise<Task[]> {
  if (services.length === 0) return [];
  return (await d.listTasks({ filters: { service: services } })) as Task[];
}

/** The newest task of a service (a forced update replaces its task). */
export function latest(tasks: Task[], service: string): Task | undefined {
  let best: Task | undefined;
  for (const t of tasks) if (t.ServiceID === service && (!best || t.CreatedAt > best.CreatedAt)) best = t;
  return best;
}

export function addressOn(task: Task, network: string): string | undefined {
  const a = task.NetworksAttachments?.find((n) => n.Network.ID === network)?.Addresses?.[0];
  return a?.split('/')[0];
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
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

export function taskFailure(name: string, t: Task): string {
  const err = t.Status.Err ?? 'no reason given';
  const hint = /no such image|not found|pull access/i.test(err)
    ? ": the image must be on every machine of the swarm (docs/containers.md: 'docker save | docker load', or a registry and --image)"
    : '';
  return `node ${name}: its swarm task ${t.Status.State} (${err})${hint}`;
}
