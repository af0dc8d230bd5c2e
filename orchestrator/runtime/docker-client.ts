/**
 * How dcemu reaches the Docker daemon: through testcontainers' runtime client (its dockerode inside
 * for what testcontainers has no verb for: pause, kill, network connect, events), set up for a machine
 * without registries and cleaning up after itself. Everything a run creates carries the label
 * `dcemu=<runId>`, so `removeRun` / `removeAllRuns` find it again even after an orchestrator that was
 * killed with SIGKILL.
 */
import { type ContainerRuntimeClient, getContainerRuntimeClient } from 'testcontainers';
import { RuntimeError } from '../errors.js';

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
const REMOVE_ROUNDS = 20;
const REMOVE_PAUSE_MS = 250;

/**
 * Removes every container and network labelled `dcemu=<runId>` (or every one labelled `dcemu` when
 * `runId` is null); returns how many of each it removed. Idempotent. The daemon may still list a
 * network for a moment after its last endpoint went (or refuse to remove it while one is being torn
 * down): removal is repeated until a listing shows nothing of the run, and what the daemon still
 * keeps after that is an error naming it, never a silent leftover.
 */
async function removeLabelled(runId: string | null): Promise<{ containers: number; networks: number }> {
  const d = await docker();
  const label = runId === null ? RUN_LABEL : `${RUN_LABEL}=${runId}`;
  const removed = { containers: new Set<string>(), networks: new Set<string>() };
  let left: string[] = [];
  for (let round = 0; round < REMOVE_ROUNDS; round++) {
    // the first re-listing comes at once: it nearly always shows nothing
    if (round > 1) await new Promise((r) => setTimeout(r, REMOVE_PAUSE_MS));
    const containers = await d.listContainers({ all: true, filters: { label: [label] } });
    await Promise.all(
      containers.map((c) =>
        d
          .getContainer(c.Id)
          .remove({ force: true })
          .then(() => removed.containers.add(c.Id))
          .catch((err: { statusCode?: number }) => {
            // already gone, or being removed by a concurrent teardown: the next listing tells
            if (err.statusCode !== 404 && err.statusCode !== 409) throw err;
          }),
      ),
    );
    const networks = await d.listNetworks({ filters: { label: [label] } });
    const refused: string[] = [];
    await Promise.all(
      networks.map((n) =>
        d
          .getNetwork(n.Id)
          .remove()
          .then(() => removed.networks.add(n.Id))
          .catch((err: { statusCode?: number; message?: string }) => {
            // 403/409: an endpoint is still being released; try again in the next round
            if (err.statusCode === 403 || err.statusCode === 409) refused.push(`${n.Name} (${err.message})`);
            else if (err.statusCode !== 404) throw err;
          }),
      ),
    );
    if (containers.length === 0 && networks.length === 0)
      return { containers: removed.containers.size, networks: removed.networks.size };
    left = [
      ...containers.map((c) => c.Names?.[0] ?? c.Id),
      ...(refused.length ? refused : networks.map((n) => n.Name)),
    ];
  }
  throw new RuntimeError(
    `the Docker daemon still keeps ${left.join(', ')} after ${REMOVE_ROUNDS} removals; remove them with 'dcemu clean'`,
  );
}

/** Removes one run's containers and network (teardown, and after a failed start). */
export function removeRun(runId: string): Promise<{ containers: number; networks: number }> {
  return removeLabelled(runId);
}

/** Removes the containers and networks of every dcemu run on this daemon (`dcemu clean`). */
export function removeAllRuns(): Promise<{ containers: number; networks: number }> {
  return removeLabelled(null);
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
