/**
 * What every node process shares: the control connection, the physical clock and scheduler, the UDP
 * endpoint, the egress ports with their wire filters, the liveness detector, logging and the
 * stop/report protocol. A role (host, switch, ...) plugs in through `Role` (core/role.ts) and sees
 * only its ports, its node clock and the frames addressed to it; the fault layer stays below it.
 *
 * This file starts a node process (on its own or pooled) and connects it to its orchestrator; the node
 * it runs is a `NodeProcess` (core/node-process.ts).
 */
import { readFileSync } from 'node:fs';
import { KEY_ENV, nodeKey, parseSecret, SECRET_FILE_ENV } from './auth.js';
import { ControlClient, RefusedError } from './control.js';
import type { NodeConfig } from './messages.js';
import { NodeProcess } from './node-process.js';
import type { RoleSetup } from './role.js';

export type { DisciplineFactory, NodeContext, Role, RoleFactory, RoleSetup } from './role.js';

/**
 * Entry point of a node process: connects to the orchestrator named in the environment and runs. A
 * pooled process (`DCEMU_POOLED=1`, started by the process runtime's pool for a command of many runs:
 * orchestrator/runtime/pool.ts) runs one node after another instead, each named by its orchestrator
 * over the IPC channel: the next run skips Node's start-up, and its code is already compiled and warm.
 */
export async function runNode(
  kind: string,
  setup: (config: NodeConfig) => Promise<RoleSetup>,
): Promise<void> {
  if (process.env.DCEMU_POOLED === '1' && process.send) {
    servePool(kind, setup);
    return;
  }
  const control = process.env.DCEMU_CONTROL;
  const name = process.env.DCEMU_NODE;
  if (!control || !name) {
    process.stderr.write(
      `dcemu ${kind}: DCEMU_CONTROL and DCEMU_NODE must be set (started by the orchestrator)\n`,
    );
    process.exit(2);
  }
  watchParent();
  // a container's node ends a moment after the one before it in the run (`DCEMU_EXIT_STAGGER_MS`, set
  // by the docker runtime: containers of one network that end together can make the daemon keep it,
  // see STAY_DEADLINE_MS in core/node-process.ts)
  const stagger = Number(process.env.DCEMU_EXIT_STAGGER_MS ?? 0);
  // a compose node's process (`DCEMU_EXIT_DELAY_MS`, set per node by `dcemu compose`) ends that long
  // after its node, whatever ended it: compose stops the containers all at once, and their exits would
  // otherwise reach the daemon together (see STAY_DEADLINE_MS in core/node-process.ts)
  const delay = Number(process.env.DCEMU_EXIT_DELAY_MS ?? 0);
  const exit = (code: number) =>
    delay > 0 ? setTimeout(() => process.exit(code), delay) : process.exit(code);
  const node = await startNode(kind, setup, control, name, stagger, exit);
  if (!node) return;
  // SIGTERM that reaches the node itself (`timeout` or a supervisor signalling the whole process
  // group, `docker stop`): it reports what it carried before it ends, as on the orchestrator's stop,
  // so an interrupted run keeps every node's counters
  process.on('SIGTERM', () => void node.stop('SIGTERM'));
  // Ctrl-C is the orchestrator's to handle: it stops its nodes over the control channel and collects
  // their reports (the process runtime gives each node its own process group; a node started by
  // someone else, under compose, may still share a terminal's)
  process.on('SIGINT', () => {});
}

/**
 * Connects node `name` to its orchestrator at `control` and runs it until it ends, when `end` gets its
 * exit code (null: it could not reach the orchestrator, and `end` has been called).
 */
async function startNode(
  kind: string,
  setup: (config: NodeConfig) => Promise<RoleSetup>,
  control: string,
  name: string,
  stagger: number,
  end: (code: number) => void,
): Promise<NodeProcess | null> {
  const [host, port] = splitHostPort(control);
  let client: ControlClient;
  try {
    client = await connectPatiently(host, port, name);
  } catch (err) {
    process.stderr.write(
      `dcemu ${kind} ${name}: cannot join the run at ${control}: ${(err as Error).message}\n`,
    );
    end(2);
    return null;
  }
  const node = new NodeProcess(client, setup, end);
  // A node never outlives its orchestrator (docs/architecture.md: processes): losing the control channel ends the process
  client.on('close', () => {
    if (stagger > 0) setTimeout(() => node.exit(0), stagger);
    else node.exit(0);
  });
  client.onMessage((m) => node.handle(m));
  return node;
}

/** What a pooled process is told over its IPC channel. */
export type PoolOrder =
  | {
      type: 'assign';
      /** the node's environment: its control address and name, as a process of its own gets them */
      env: Record<string, string>;
    }
  /** the node stops and reports (a pooled process's SIGTERM: one sent to it might reach the next node) */
  | { type: 'stop' }
  | { type: 'end' };

/** What a pooled process tells its pool: its node ended (the exit code a process of its own had). */
export interface PoolReport {
  type: 'released';
  code: number;
}

/**
 * A pooled process: it waits for a node to run, runs it, tells the pool it ended and waits for the
 * next. It ends when told to, when its orchestrator is gone (the IPC channel closes, or its parent
 * changes) or on a SIGTERM between nodes; a node that fails for real (a crash, a kill) ends it too.
 */
function servePool(kind: string, setup: (config: NodeConfig) => Promise<RoleSetup>): void {
  let node: NodeProcess | null = null;
  let running = false;
  let stopAsked = false;
  let envKeys: string[] = [];
  process.on('SIGTERM', () => (node ? void node.stop('SIGTERM') : process.exit(0)));
  process.on('SIGINT', () => {});
  process.on('disconnect', () => process.exit(0));
  watchParent();
  const send = process.send!.bind(process);
  process.on('message', (order: PoolOrder) => {
    if (order.type === 'end') {
      if (!running) process.exit(0);
      return;
    }
    if (order.type === 'stop') {
      // a node still reaching its orchestrator stops as soon as it can
      if (node) void node.stop('SIGTERM');
      else stopAsked = running;
      return;
    }
    if (order.type !== 'assign' || running) return;
    running = true;
    stopAsked = false;
    for (const k of envKeys) delete process.env[k];
    envKeys = Object.keys(order.env);
    Object.assign(process.env, order.env);
    const end = (code: number) => {
      node = null;
      running = false;
      send({ type: 'released', code } satisfies PoolReport);
    };
    void startNode(kind, setup, order.env.DCEMU_CONTROL, order.env.DCEMU_NODE, 0, end).then((n) => {
      if (!running || !n) return;
      node = n;
      if (stopAsked) void n.stop('SIGTERM');
    });
  });
}

/**
 * A node started by the process runtime also ends when its parent, the orchestrator, is gone: even
 * before its control connection is up (an orchestrator killed during start-up), within ~250 ms.
 */
function watchParent(): void {
  const parent = Number(process.env.DCEMU_PARENT_PID);
  if (!(parent > 0)) return;
  const check = setInterval(() => {
    if (process.ppid !== parent) process.exit(0);
  }, 250);
  check.unref();
}

/**
 * How long a node keeps trying to reach its orchestrator. Under compose (dcemu compose) nodes start
 * beside the orchestrator, not after it listens; the process and docker runtimes listen first, so there
 * the first attempt succeeds. Bounded, so a node whose orchestrator never comes still ends.
 */
const CONNECT_PATIENCE_MS = 20_000;
const CONNECT_RETRY_MS = 250;
/** failures that mean "not listening (yet)" or "not reachable yet", worth another try */
const RETRYABLE = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'EAI_AGAIN']);

async function connectPatiently(host: string, port: number, name: string): Promise<ControlClient> {
  const deadline = Date.now() + CONNECT_PATIENCE_MS;
  const given = takeKey();
  for (;;) {
    try {
      // a run's secret in a file (containers) is read anew on every try: under compose the orchestrator
      // writes its run's secret as it starts, and a node may come up before it did
      const key = given ?? (await keyFromFile(name, deadline));
      return await ControlClient.connect(host, port, name, key);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? '';
      const again = RETRYABLE.has(code) || (given === null && err instanceof RefusedError);
      if (!again || Date.now() + CONNECT_RETRY_MS > deadline) throw err;
      await new Promise((r) => setTimeout(r, CONNECT_RETRY_MS));
    }
  }
}

/**
 * The node's key when its environment carries it (the process runtime), removed from the environment
 * at once so nothing the node runs later finds it there; null when it comes from a secret file.
 */
function takeKey(): Buffer | null {
  const hex = process.env[KEY_ENV];
  delete process.env[KEY_ENV];
  if (hex !== undefined) {
    if (!/^[0-9a-f]{64}$/.test(hex)) throw new Error(`${KEY_ENV} is not a key (64 hex digits)`);
    return Buffer.from(hex, 'hex');
  }
  if (!process.env[SECRET_FILE_ENV])
    throw new Error(`${KEY_ENV} or ${SECRET_FILE_ENV} must be set (started by the orchestrator)`);
  return null;
}

/** node `name`'s key from the run's secret file, waiting for the file until `deadline` */
async function keyFromFile(name: string, deadline: number): Promise<Buffer> {
  const file = process.env[SECRET_FILE_ENV] ?? '';
  for (;;) {
    let text: string | null = null;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || Date.now() + CONNECT_RETRY_MS > deadline)
        throw new Error(`cannot read the run's secret from ${file}: ${(err as Error).message}`);
    }
    if (text !== null) {
      const secret = parseSecret(text);
      if (!secret) throw new Error(`${file} does not hold a run's secret (64 hex digits)`);
      return nodeKey(secret, name);
    }
    await new Promise((r) => setTimeout(r, CONNECT_RETRY_MS));
  }
}

function splitHostPort(s: string): [string, number] {
  const i = s.lastIndexOf(':');
  return [s.slice(0, i), Number(s.slice(i + 1))];
}
