/**
 * `dcemu swarm lab up [--nodes N] | down`: a Swarm of several machines on one box, to try and test
 * multi-machine runs without a second computer (docs/containers.md). Each extra machine is a Docker
 * daemon of its own in a network namespace and a UTS namespace (its own interface and hostname, so the
 * swarm sees a machine of its own); they and this machine share a bridge on a /24 inside
 * 198.18.0.0/15. `up` makes the bridge, the namespaces and the daemons, makes this machine the swarm's
 * manager on the bridge (`swarm init`), joins every lab daemon as a worker (`swarm join`), their
 * swarm networks on subnets distinct from each other's, and carries dcemu's image to them. Runs find
 * the lab daemons by themselves (`labDaemons`), for faults on their tasks and for the image.
 *
 * Everything the lab makes is named `dcemu-lab…` (namespaces, links, folders under LAB_DIR and
 * DATA_DIR) or commented `dcemu-lab` (the firewall rule), and recorded in LAB_DIR/lab.json before it is
 * made, so `down` removes it all also after a crash or a killed `up`, and finds by name what the record
 * missed.
 *
 * A lab daemon needs its own UTS namespace (else both machines report the same hostname) and must be
 * entered with `nsenter --net` rather than `ip netns exec`, which remounts /sys (and the daemon then
 * fails with "Devices cgroup isn't mounted"). The bridge's traffic passes the host's FORWARD chain
 * (br_netfilter), whose policy Docker sets to DROP: one rule accepts what stays on the lab bridge.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Dockerode from 'dockerode';
import { execa } from 'execa';
import { ipv4, ipv4String } from '../../core/ipv4.js';
import { RuntimeError } from '../engine/errors.js';
import { type Docker, docker } from './docker-client.js';
import { freeTopSubnet } from './docker-network.js';
import { ensureImage } from './image.js';
import { carryImage } from './image-carry.js';
import { pidAlive } from './process.js';
import { LAB_DIR, type LabMachine, type LabState, readState, writeState } from './swarm-lab-state.js';
import { swarmInit, swarmJoin, swarmLeave, swarmSubnets } from './swarm-setup.js';

/** the lab daemons' data and exec roots */
const DATA_DIR = '/var/lib/dcemu-lab';
const PREFIX = 'dcemu-lab';
const BRIDGE = `${PREFIX}0`;
/** the firewall rule that lets what stays on the lab bridge pass (FORWARD's policy is Docker's DROP) */
const FORWARD_RULE = [
  'FORWARD',
  '-i',
  BRIDGE,
  '-o',
  BRIDGE,
  '-m',
  'comment',
  '--comment',
  PREFIX,
  '-j',
  'ACCEPT',
];
const DAEMON_START_MS = 60_000;
const DAEMON_STOP_MS = 20_000;
const MAX_NODES = 8;

async function run(cmd: string, args: string[], what: string): Promise<string> {
  const r = await execa(cmd, args, { reject: false });
  if (r.exitCode !== 0)
    throw new RuntimeError(
      `swarm lab: cannot ${what}: ${cmd} ${args.join(' ')}: ${(r.stderr || r.stdout).trim()}`,
    );
  return r.stdout;
}

/** runs a command whose failure `down` does not mind (what it removes may be gone already) */
async function quiet(cmd: string, args: string[]): Promise<boolean> {
  return (await execa(cmd, args, { reject: false })).exitCode === 0;
}

async function needTools(): Promise<void> {
  if (process.getuid?.() !== 0)
    throw new RuntimeError(
      'swarm lab: needs root (it makes network namespaces and starts Docker daemons); run it with sudo',
    );
  for (const tool of ['ip', 'nsenter', 'unshare', 'dockerd', 'iptables'])
    if (!(await quiet('sh', ['-c', `command -v ${tool}`])))
      throw new RuntimeError(`swarm lab: needs '${tool}' on this machine, and it is not on the PATH`);
}

function daemonOf(m: LabMachine): Docker {
  return new Dockerode({ socketPath: m.socket }) as unknown as Docker;
}

async function answers(d: Docker): Promise<boolean> {
  return d
    .ping()
    .then(() => true)
    .catch(() => false);
}

/** Starts machine `m`'s daemon in its namespaces; resolves when it answers. */
async function startDaemon(m: LabMachine): Promise<void> {
  const root = join(DATA_DIR, m.name);
  mkdirSync(join(root, 'data'), { recursive: true });
  mkdirSync(join(root, 'exec'), { recursive: true });
  const log = openSync(join(LAB_DIR, `${m.name}.log`), 'a');
  const child = spawn(
    'nsenter',
    [
      `--net=/var/run/netns/${m.name}`,
      'unshare',
      '--uts',
      'sh',
      '-c',
      `hostname ${m.name} && exec dockerd --bridge=none --data-root ${root}/data --exec-root ${root}/exec --pidfile ${LAB_DIR}/${m.name}.pid -H unix://${m.socket}`,
    ],
    { detached: true, stdio: ['ignore', log, log] },
  );
  child.unref();
  const d = daemonOf(m);
  for (const until = Date.now() + DAEMON_START_MS; Date.now() < until; ) {
    if (await answers(d)) return;
    if (child.exitCode !== null) break;
    await sleep(200);
  }
  const tail = readFileSync(join(LAB_DIR, `${m.name}.log`), 'utf8')
    .trim()
    .split('\n')
    .slice(-3)
    .join(' | ');
  throw new RuntimeError(`swarm lab: the Docker daemon of ${m.name} did not start: ${tail}`);
}

/**
 * The lab's network: its bridge (this machine's side of it at `state.address`), and on it each machine's
 * namespace with its own Docker daemon; `check` before each machine (an interrupt stops there).
 */
async function labNetwork(state: LabState, check: () => void): Promise<void> {
  await run('ip', ['link', 'add', BRIDGE, 'type', 'bridge'], 'make the lab bridge');
  await run('ip', ['addr', 'add', `${state.address}/24`, 'dev', BRIDGE], 'address the lab bridge');
  await run('ip', ['link', 'set', BRIDGE, 'up'], 'bring the lab bridge up');
  await run('iptables', ['-I', ...FORWARD_RULE], 'let traffic across the lab bridge pass');
  for (const m of state.machines) {
    check();
    await run('ip', ['netns', 'add', m.name], `make the namespace of ${m.name}`);
    await run(
      'ip',
      ['link', 'add', m.name, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', m.name],
      `link ${m.name}`,
    );
    await run('ip', ['link', 'set', m.name, 'master', BRIDGE, 'up'], `link ${m.name}`);
    await run('ip', ['-n', m.name, 'addr', 'add', `${m.address}/24`, 'dev', 'eth0'], `address ${m.name}`);
    await run('ip', ['-n', m.name, 'link', 'set', 'eth0', 'up'], `link ${m.name}`);
    await run('ip', ['-n', m.name, 'link', 'set', 'lo', 'up'], `link ${m.name}`);
    await startDaemon(m);
  }
}

/**
 * Makes the lab: `nodes` extra machines joined to this machine's swarm, which `up` creates (this
 * daemon must be in no swarm: a swarm advertised elsewhere is not one the lab's machines can join).
 */
export async function labUp(opts: {
  nodes: number;
  say: (s: string) => void;
  /** an interrupt: `up` stops at its next step and removes what it made */
  signal?: AbortSignal;
}): Promise<LabState> {
  const { say } = opts;
  const check = (): void => {
    if (opts.signal?.aborted) throw new RuntimeError('swarm lab: interrupted; what it had made is removed');
  };
  if (!Number.isInteger(opts.nodes) || opts.nodes < 1 || opts.nodes > MAX_NODES)
    throw new RuntimeError(`swarm lab: --nodes must be a whole number from 1 to ${MAX_NODES}`);
  await needTools();
  if (readState() || existsSync(`/var/run/netns/${PREFIX}1`))
    throw new RuntimeError("swarm lab: a lab is up already (or its remains): 'dcemu swarm lab down' first");
  const d = await docker();
  const info = (await d.info()) as { Swarm?: { LocalNodeState?: string } };
  if (info.Swarm?.LocalNodeState === 'active')
    throw new RuntimeError(
      "swarm lab: this Docker daemon is in a swarm already; the lab makes its own: 'dcemu swarm leave' first",
    );
  const subnet = await freeTopSubnet(d);
  const base = ipv4(subnet.split('/')[0]);
  const state: LabState = {
    subnet,
    address: ipv4String(base + 1),
    madeSwarm: false,
    machines: Array.from({ length: opts.nodes }, (_, i) => ({
      name: `${PREFIX}${i + 1}`,
      address: ipv4String(base + 2 + i),
      socket: join(LAB_DIR, `${PREFIX}${i + 1}.sock`),
    })),
  };
  writeState(state);
  try {
    await labNetwork(state, check);
    say(
      `lab bridge ${BRIDGE}: ${subnet}; ${state.machines.map((m) => `${m.name} at ${m.address}`).join(', ')}`,
    );
    // the swarm: this machine its manager on the lab bridge; every subnet taken so far is avoided by
    // the next machine's bridge
    check();
    state.madeSwarm = true;
    writeState(state);
    const token = await swarmInit({ advertiseAddr: state.address, avoid: [subnet], say });
    const mine = await swarmSubnets(d);
    state.gwbridge = mine.gwbridge;
    state.pool = mine.pool;
    writeState(state);
    const taken = [subnet, mine.gwbridge, mine.pool].filter((s): s is string => !!s);
    check();
    const image = await ensureImage({ log: say });
    for (const m of state.machines) {
      check();
      const far = daemonOf(m);
      await swarmJoin({
        manager: state.address,
        token,
        advertiseAddr: m.address,
        avoid: taken,
        say: (s) => say(`${m.name}: ${s}`),
        client: far,
      });
      m.gwbridge = (await swarmSubnets(far)).gwbridge;
      if (m.gwbridge) taken.push(m.gwbridge);
      writeState(state);
      const c = await carryImage(d, far, image, m.name);
      if (c.carried)
        say(
          `${m.name}: image ${image} carried (${(c.bytes / 2 ** 20).toFixed(0)} MiB in ${(c.ms / 1000).toFixed(1)} s)`,
        );
    }
    say(
      `lab up: a swarm of ${state.machines.length + 1} machines; runs with --runtime swarm use them (their daemons found by themselves), 'dcemu swarm lab down' removes it`,
    );
    return state;
  } catch (err) {
    say(`lab up failed: removing what it made`);
    await labDown(() => {}).catch(() => {});
    throw err;
  }
}

/** pids of the processes in a network namespace */
async function pidsIn(ns: string): Promise<number[]> {
  const r = await execa('ip', ['netns', 'pids', ns], { reject: false });
  return r.stdout
    .split('\n')
    .map((s) => Number(s.trim()))
    .filter((n) => n > 0);
}

/** Ends everything in namespace `ns`: SIGTERM (a daemon stops its containers), SIGKILL after a while. */
async function endNamespace(ns: string): Promise<void> {
  for (const [signal, wait] of [
    ['SIGTERM', DAEMON_STOP_MS],
    ['SIGKILL', 5_000],
  ] as const) {
    const pids = await pidsIn(ns);
    if (pids.length === 0) return;
    for (const p of pids) {
      try {
        process.kill(p, signal);
      } catch {}
    }
    for (const until = Date.now() + wait; Date.now() < until; ) {
      if (!pids.some(pidAlive)) break;
      await sleep(100);
    }
  }
}

/** Mounts under `dir` (a lab daemon's roots), deepest first. */
function mountsUnder(dir: string): string[] {
  return readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[1])
    .filter((p): p is string => !!p && (p === dir || p.startsWith(`${dir}/`)))
    .sort((a, b) => b.length - a.length);
}

/** The lab's namespaces, recorded or found by name. */
async function labNamespaces(state: LabState | null): Promise<string[]> {
  const found = new Set(state?.machines.map((m) => m.name) ?? []);
  const r = await execa('ip', ['netns', 'list'], { reject: false });
  for (const line of r.stdout.split('\n')) {
    const name = line.split(' ')[0];
    if (name && new RegExp(`^${PREFIX}\\d+$`).test(name)) found.add(name);
  }
  return [...found];
}

/**
 * Removes the lab: each lab machine leaves the swarm and is removed from its list, its daemon and
 * everything in its namespace ends, then the namespaces, links, bridge, firewall rule and folders go;
 * this machine leaves the swarm if `up` made it. Returns what it removed, one line each.
 */
export async function labDown(say: (s: string) => void): Promise<string[]> {
  await needTools();
  const state = readState();
  const namespaces = await labNamespaces(state);
  const removed: string[] = [];
  if (!state && namespaces.length === 0 && !(await quiet('ip', ['link', 'show', BRIDGE]))) {
    say('no lab is up: nothing to remove');
    return removed;
  }
  // the lab machines leave first (their bridges go with dcemu's leave), then the manager forgets them
  for (const ns of namespaces) {
    const m = state?.machines.find((x) => x.name === ns) ?? { name: ns, socket: join(LAB_DIR, `${ns}.sock`) };
    if (existsSync(m.socket) && (await answers(daemonOf(m as LabMachine))))
      // its bridge goes with its daemon and namespace below: a few tries, not the 10 s a machine kept
      // running is given
      await swarmLeave((s) => say(`${ns}: ${s}`), daemonOf(m as LabMachine), { lab: true }).catch(
        (err: Error) =>
          say(`${ns}: cannot leave the swarm (${err.message.split('\n')[0]}); its daemon is stopped anyway`),
      );
  }
  const d = await docker().catch(() => null);
  if (d) {
    const nodes = (await d.listNodes().catch(() => [])) as Array<{
      ID: string;
      Description?: { Hostname?: string };
    }>;
    for (const n of nodes)
      if (namespaces.includes(n.Description?.Hostname ?? '')) {
        await d
          .getNode(n.ID)
          .remove({ force: true })
          .catch(() => {});
        removed.push(`swarm node ${n.Description?.Hostname}`);
      }
    if (state?.madeSwarm) {
      await swarmLeave(say, d);
      removed.push("this machine's swarm");
    }
  }
  for (const ns of namespaces) {
    await endNamespace(ns);
    const root = join(DATA_DIR, ns);
    for (const mnt of mountsUnder(root)) await quiet('umount', ['-l', mnt]);
    rmSync(root, { recursive: true, force: true });
    await quiet('ip', ['link', 'del', ns]);
    if (await quiet('ip', ['netns', 'del', ns])) removed.push(`${ns} (namespace, daemon, data)`);
  }
  if (await quiet('ip', ['link', 'del', BRIDGE])) removed.push(`bridge ${BRIDGE}`);
  while (await quiet('iptables', ['-D', ...FORWARD_RULE])) removed.push('firewall rule');
  if (existsSync(DATA_DIR) && readdirSync(DATA_DIR).length === 0) rmSync(DATA_DIR, { recursive: true });
  rmSync(LAB_DIR, { recursive: true, force: true });
  say(`lab down: removed ${removed.length > 0 ? removed.join(', ') : 'its record'}`);
  return removed;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
