/**
 * How dcemu reaches the Docker daemon: through testcontainers' runtime client (its dockerode inside
 * for what testcontainers has no verb for: pause, kill, network connect, events), set up for a machine
 * without registries and cleaning up after itself. Everything a run creates carries the label
 * `dcemu=<runId>`, so `removeRun` / `removeAllRuns` find it again even after an orchestrator that was
 * killed with SIGKILL.
 */
import { constants } from 'node:os';
import { type ContainerRuntimeClient, getContainerRuntimeClient } from 'testcontainers';
import { RuntimeError } from '../engine/errors.js';

export type Docker = ContainerRuntimeClient['container']['dockerode'];

/** the label on every container and network of a run; its value is the run id */
export const RUN_LABEL = 'dcemu';
/** the label naming the node a container runs */
export const NODE_LABEL = 'dcemu.node';

let client: Promise<ContainerRuntimeClient> | null = null;

/**
 * The daemon client, connected once per process. A daemon that does not answer is a one-line
 * `RuntimeError`, not a stack trace.
 */
export function dockerClient(): Promise<ContainerRuntimeClient> {
  // No reaper container (Ryuk): it would have to be pulled from a registry, and dcemu removes what it
  // created itself, by label. Set before testcontainers first looks.
  process.env.TESTCONTAINERS_RYUK_DISABLED = 'true';
  // testcontainers resolves the host that mapped ports appear on; inside a container it looks for the
  // `bridge` network's gateway, which a daemon started with --bridge=none lacks, and then would run an
  // alpine container to find it. dcemu maps no ports, so any host will do.
  process.env.TESTCONTAINERS_HOST_OVERRIDE ??= 'localhost';
  client ??= getContainerRuntimeClient().catch((err: Error) => {
    client = null;
    const where = process.env.DOCKER_HOST ?? 'unix:///var/run/docker.sock';
    throw new RuntimeError(
      `no Docker daemon answers at ${where} (${err.message}); start dockerd or set DOCKER_HOST, or use --runtime process`,
    );
  });
  return client;
}

export async function docker(): Promise<Docker> {
  return (await dockerClient()).container.dockerode;
}

/** how often removal is checked and repeated before dcemu gives up on a daemon that keeps something */
const REMOVE_ROUNDS = 12;
const REMOVE_PAUSE_MS = 250;
/** removals at once of stopped containers (running ones go one at a time: removeLabelled) */
const REMOVE_CONCURRENCY = 4;
/** the states of a container whose network endpoint is still there (it goes when the container stops) */
const HOLDS_ENDPOINT: ReadonlySet<string> = new Set(['running', 'paused', 'restarting']);

/**
 * the label on a run's network listing its nodes: the names of the endpoints its containers had
 * (`<runId>-<node>`), for a force-disconnect when the daemon keeps one after its container is gone
 */
export const NODES_LABEL = 'dcemu.nodes';

/** What a removal left on the daemon, each thing named with what the daemon said. */
export interface Removal {
  containers: number;
  networks: number;
  /** what the daemon still keeps after every try, one line each (empty when all went) */
  kept: string[];
}

/** The few daemon calls removal makes (dockerode's, or a test's stand-in). */
export interface RemovalClient {
  listContainers(opts: object): Promise<Array<{ Id: string; Names?: string[]; State?: string }>>;
  getContainer(id: string): { remove(opts: object): Promise<unknown>; unpause(): Promise<unknown> };
  listNetworks(opts: object): Promise<Array<{ Id: string; Name: string; Labels?: Record<string, string> }>>;
  getNetwork(id: string): { remove(): Promise<unknown>; disconnect(opts: object): Promise<unknown> };
}

/** A listed container's name, without the daemon's leading slash (its id if it has none). */
function containerName(c: { Id: string; Names?: string[] }): string {
  return (c.Names?.[0] ?? c.Id).replace(/^\//, '');
}

/** The endpoint names a run's network may still hold: its containers' names. */
function endpointNames(
  network: { Name: string; Labels?: Record<string, string> },
  listed: string[],
): string[] {
  const nodes = network.Labels?.[NODES_LABEL];
  const names = new Set(listed);
  if (nodes) for (const n of nodes.split(',')) if (n) names.add(`${network.Name}-${n}`);
  return [...names];
}

/**
 * Removes every container and network labelled `dcemu=<runId>` (or every one labelled `dcemu` when
 * `runId` is null); returns how many of each it removed and what the daemon still keeps. Idempotent,
 * and never throws for what the daemon keeps: the caller says it.
 *
 * Containers go first, a few at a time (force: a running one is killed), then the networks. Docker 20.10 sometimes keeps a network's endpoint after its container is gone — "has
 * active endpoints" while `docker network inspect` lists no container (seen after the runc shim of a
 * killed container failed to clean up, moby#33156, #42119). Such a ghost endpoint is removed by a
 * forced disconnect by its name, the container's name, which the daemon accepts for a container it no
 * longer has: the names come from the containers listed here and from the network's own label
 * (`dcemu.nodes`), so `dcemu clean` finds them also after the containers were removed long ago.
 */
export async function removeLabelled(
  runId: string | null,
  d: RemovalClient,
  pauseMs = REMOVE_PAUSE_MS,
): Promise<Removal> {
  const label = runId === null ? RUN_LABEL : `${RUN_LABEL}=${runId}`;
  const removed = { containers: new Set<string>(), networks: new Set<string>() };
  /** container names seen in any round: the endpoint names a ghost may carry */
  const seen = new Set<string>();
  let kept: string[] = [];
  for (let round = 0; round < REMOVE_ROUNDS; round++) {
    // the first re-listing comes at once: it nearly always shows nothing
    if (round > 1) await new Promise((r) => setTimeout(r, pauseMs));
    const containers = await d.listContainers({ all: true, filters: { label: [label] } });
    const refusedContainers: string[] = [];
    const removeOne = async (c: (typeof containers)[number]) => {
      const name = containerName(c);
      seen.add(name);
      const container = d.getContainer(c.Id);
      // a paused container is thawed first: a SIGKILL waits in the frozen cgroup otherwise
      if (c.State === 'paused') await container.unpause().catch(() => {});
      await container
        .remove({ force: true })
        .then(() => removed.containers.add(c.Id))
        .catch((err: { statusCode?: number; message?: string }) => {
          // already gone (404), or being removed by a concurrent teardown (409): the next listing tells
          if (err.statusCode !== 404) refusedContainers.push(`container ${name} (${oneLine(err)})`);
        });
    };
    // A container still running holds its network endpoint, which its removal deletes: those go one
    // at a time, as the daemon's count of a network's endpoints can miss concurrent deletions and keep
    // the network (docs/containers.md, Cleanup). A stopped one's endpoint went with its stop: those go
    // a few at a time.
    const holding = (c: (typeof containers)[number]) => HOLDS_ENDPOINT.has(c.State ?? '');
    await mapBounded(containers.filter(holding), 1, removeOne);
    await mapBounded(
      containers.filter((c) => !holding(c)),
      REMOVE_CONCURRENCY,
      removeOne,
    );
    const networks = await d.listNetworks({ filters: { label: [label] } });
    const refusedNetworks: string[] = [];
    await Promise.all(
      networks.map(async (n) => {
        const net = d.getNetwork(n.Id);
        try {
          await net.remove();
          removed.networks.add(n.Id);
        } catch (err) {
          const e = err as { statusCode?: number; message?: string };
          if (e.statusCode === 404) return;
          refusedNetworks.push(`network ${n.Name} (${oneLine(e)})`);
          // a container being removed this round still holds its endpoint: only once none is listed
          // does a refusal mean a ghost endpoint
          if (containers.length > 0 || !/active endpoints/i.test(e.message ?? '')) return;
          const listedHere = [...seen].filter((name) => name.startsWith(`${n.Name}-`));
          for (const name of endpointNames(n, listedHere))
            await net.disconnect({ Container: name, Force: true }).catch(() => {});
        }
      }),
    );
    if (containers.length === 0 && networks.length === 0)
      return { containers: removed.containers.size, networks: removed.networks.size, kept: [] };
    kept = [
      ...(refusedContainers.length
        ? refusedContainers
        : containers.map((c) => `container ${containerName(c)}`)),
      ...(refusedNetworks.length ? refusedNetworks : networks.map((n) => `network ${n.Name}`)),
    ];
  }
  return { containers: removed.containers.size, networks: removed.networks.size, kept };
}

/** What the daemon keeps (`Removal.kept`) in one line, with how to clear it. */
export function keptMessage(kept: string[]): string {
  return `${kept.join('; ')}: the Docker daemon keeps it after every removal and forced disconnect; restart the daemon (e.g. 'systemctl restart docker', or stop and start dockerd), then run 'dcemu clean'. Later runs are not blocked: each takes its own subnet`;
}

function oneLine(err: { message?: string }): string {
  return (err.message ?? String(err))
    .split('\n')[0]
    .replace(/^\(HTTP code \d+\) [a-z ]+- /, '')
    .trim();
}

/** Removes one run's containers and network (teardown, and after a failed start). */
export async function removeRun(runId: string): Promise<Removal> {
  return removeLabelled(runId, await docker());
}

/** Removes the containers and networks of every dcemu run on this daemon (`dcemu clean`). */
export async function removeAllRuns(): Promise<Removal> {
  return removeLabelled(null, await docker());
}

/** Containers of a run still present (any state). */
export async function runContainers(runId: string): Promise<number> {
  const d = await docker();
  return (await d.listContainers({ all: true, filters: { label: [`${RUN_LABEL}=${runId}`] } })).length;
}

/**
 * Splits a container's log as the daemon sends it without a TTY: frames of an 8-byte header (stream
 * 1 stdout, 2 stderr; big-endian length at byte 4) and the payload.
 */
export function demuxLogs(buf: Buffer): { stdout: Buffer; stderr: Buffer } {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  for (let i = 0; i + 8 <= buf.length; ) {
    const len = buf.readUInt32BE(i + 4);
    const payload = buf.subarray(i + 8, i + 8 + len);
    (buf[i] === 2 ? err : out).push(payload);
    i += 8 + len;
  }
  return { stdout: Buffer.concat(out), stderr: Buffer.concat(err) };
}

/** Runs `fn` over `items` with at most `limit` at once; rejects with the first failure after all settle. */
export async function mapBounded<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  let failure: unknown = null;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      try {
        results[i] = await fn(items[i]);
      } catch (err) {
        failure ??= err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure) throw failure;
  return results;
}

/** "22 containers started in 7.5 s", or after an interrupted start-up "6 of 22 containers started in 2.2 s" */
export function startedLine(started: number, of: number, what: string, t0: number): string {
  return `${started < of ? `${started} of ${of}` : started} ${what} started in ${((Date.now() - t0) / 1000).toFixed(1)} s`;
}

/** A dockerode rejection handler that swallows one HTTP status (304 not modified, 409 conflict). */
export function ignore(status: number): (err: { statusCode?: number }) => void {
  return (err) => {
    if (err.statusCode !== status) throw err;
  };
}

/** The name of signal number `n` (a container's exit code above 128 is 128 + its signal). */
export function signalName(n: number): string | null {
  for (const [name, v] of Object.entries(constants.signals)) if (v === n) return name;
  return null;
}
