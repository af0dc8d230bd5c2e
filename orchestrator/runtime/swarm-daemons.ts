/**
 * A swarm's machines (swarm.ts): the ready ones and where `--place` pins a node, and the Docker daemon
 * of each (this one's, or the URL `DCEMU_SWARM_DAEMONS` names for it) that faults on its tasks need.
 */
import Dockerode from 'dockerode';
import { RuntimeError } from '../engine/errors.js';
import type { Docker } from './docker-client.js';

/** A swarm machine: its node id, hostname and whether it is this one. */
export interface Machine {
  id: string;
  hostname: string;
  cpus: number;
  local: boolean;
}

/**
 * `--place` as node -> machine id, checked: every node and machine named exists (the machine ready
 * and active in the swarm).
 */
export function pinned(
  place: Record<string, string>,
  machines: Machine[],
  nodes: string[],
): Map<string, string> {
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

export async function swarmMachines(d: Docker, self: string): Promise<Machine[]> {
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
export class Daemons {
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
