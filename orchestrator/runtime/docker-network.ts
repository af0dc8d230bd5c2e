/**
 * The fabric network of a docker run: one internal bridge network (no route out of it) with its own
 * subnet inside 198.18.0.0/15, the range set aside for benchmarking network devices (RFC 2544), so it
 * meets no real address. The subnet is the first free block no docker network and no interface of
 * this machine uses; the gateway (.1) is the host's own address on the bridge, where the orchestrator
 * listens for control connections; node i gets the fixed address .10+i.
 */
import { createServer } from 'node:net';
import { networkInterfaces } from 'node:os';
import { ipv4, ipv4String } from '../../core/ipv4.js';
import { RuntimeError } from '../engine/errors.js';
import { type Docker, NODES_LABEL, RUN_LABEL } from './docker-client.js';

/** 198.18.0.0/15: RFC 2544 benchmarking addresses */
const RANGE_BASE = ipv4('198.18.0.0');
const RANGE_SIZE = 1 << 17;
/** node addresses start here; .1 is the gateway, the rest is left for people poking around */
const FIRST_NODE = 10;
/**
 * Frames are batched up to 64 per datagram (~2 KB): with jumbo frames on the bridge no datagram is
 * fragmented. The bridge and veths exist only on this machine.
 */
const MTU = 9000;

/** A docker run's network: a bridge on this machine, internal (no route out), jumbo frames. */
const BRIDGE = {
  Driver: 'bridge',
  Internal: true,
  Options: { 'com.docker.network.driver.mtu': String(MTU) },
};
/**
 * A swarm run's network: an overlay across the swarm's machines, attachable (so a task's container can
 * be disconnected and connected again), with the default MTU (VXLAN over the machines' own network).
 * Not internal: its tasks then also sit on their machine's `docker_gwbridge`, through which the control
 * relay reaches the orchestrator (see swarm.ts); nodes send only to the addresses they are given.
 */
const OVERLAY = { Driver: 'overlay', Attachable: true, Internal: false };

export interface FabricNetwork {
  name: string;
  id: string;
  subnet: string;
  gateway: string;
  /** fixed address of node `i` (its index in the run's node list) */
  address(i: number): string;
}

/**
 * Creates the run's network, labelled with its run and its nodes (the endpoint names teardown may have
 * to force out, see `removeLabelled`). Two runs choosing the same free block at once: the daemon
 * refuses the second ("pool overlaps"), which then takes the next block.
 */
export async function createFabricNetwork(
  d: Docker,
  runId: string,
  names: string[],
  opts: { overlay?: boolean } = {},
): Promise<FabricNetwork> {
  const nodes = names.length;
  const size = blockSize(nodes);
  for (let attempt = 0; attempt < 8; attempt++) {
    const base = freeBlock(await usedRanges(d), size);
    if (base === null)
      throw new RuntimeError(
        `no free /${32 - Math.log2(size)} left in 198.18.0.0/15 for ${nodes} nodes; remove old runs with 'dcemu clean'`,
      );
    const subnet = `${ipv4String(base)}/${32 - Math.log2(size)}`;
    const gateway = ipv4String(base + 1);
    try {
      const net = await d.createNetwork({
        Name: runId,
        CheckDuplicate: true,
        ...(opts.overlay ? OVERLAY : BRIDGE),
        IPAM: { Driver: 'default', Config: [{ Subnet: subnet, Gateway: gateway }] },
        Labels: { [RUN_LABEL]: runId, [NODES_LABEL]: names.join(',') },
      });
      if (!opts.overlay) await hostHasAddress(gateway);
      return { name: runId, id: net.id, subnet, gateway, address: (i) => ipv4String(base + FIRST_NODE + i) };
    } catch (err) {
      const e = err as { statusCode?: number; message: string };
      if (/overlap/i.test(e.message)) continue;
      if (err instanceof RuntimeError) throw err;
      throw new RuntimeError(`cannot create docker network ${runId} (${subnet}): ${e.message.trim()}`);
    }
  }
  throw new RuntimeError(`cannot find a free subnet in 198.18.0.0/15: every try overlapped another network`);
}

/**
 * The orchestrator listens on the gateway address, which the bridge driver puts on the host's side of
 * the bridge also for internal networks (checked with Docker 20.10): traffic from a container to it
 * stays on this machine (the INPUT chain; Docker's isolation rules only drop forwarded traffic). The
 * proof is a listen: until a container is attached the bridge is down, and `os.networkInterfaces()`
 * does not list the addresses of interfaces that are down.
 */
async function hostHasAddress(ip: string): Promise<void> {
  let last: Error | null = null;
  for (let i = 0; i < 20; i++) {
    try {
      await new Promise<void>((resolve, reject) => {
        const server = createServer();
        server.once('error', reject);
        server.listen(0, ip, () => server.close(() => resolve()));
      });
      return;
    } catch (err) {
      last = err as Error;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new RuntimeError(
    `cannot listen on ${ip}, the run's gateway (${last?.message}): this Docker does not give internal networks a host-side address, so nodes could not reach the orchestrator`,
  );
}

/** Smallest power-of-two block (at least a /24) holding the gateway, FIRST_NODE offset, nodes and broadcast. */
export function blockSize(nodes: number): number {
  let size = 256;
  while (size < FIRST_NODE + nodes + 1) size *= 2;
  if (size > RANGE_SIZE) throw new RuntimeError(`${nodes} nodes do not fit in 198.18.0.0/15`);
  return size;
}

/**
 * First aligned block of `size` addresses in the range that overlaps none of `used`; the last one
 * with `fromTop` (what a swarm's machines keep for good, away from the runs' blocks at the bottom).
 */
export function freeBlock(used: Array<[number, number]>, size: number, fromTop = false): number | null {
  const count = RANGE_SIZE / size;
  for (let k = 0; k < count; k++) {
    const base = RANGE_BASE + (fromTop ? count - 1 - k : k) * size;
    const end = base + size;
    if (!used.some(([lo, hi]) => lo < end && base < hi)) return base;
  }
  return null;
}

/** A free /24 of 198.18.0.0/15 on this daemon and machine, from the top of the range ('a.b.c.0/24'). */
export async function freeTopSubnet(d: Docker, taken: string[] = []): Promise<string> {
  const used = await usedRanges(d);
  for (const t of taken) {
    const r = cidrRange(t);
    if (r) used.push(r);
  }
  const base = freeBlock(used, 256, true);
  if (base === null) throw new RuntimeError('no free /24 left in 198.18.0.0/15');
  return `${ipv4String(base)}/24`;
}

/** [first, end) address ranges taken by docker networks and by this machine's interfaces. */
async function usedRanges(d: Docker): Promise<Array<[number, number]>> {
  const ranges: Array<[number, number]> = [];
  for (const n of await d.listNetworks()) {
    for (const c of n.IPAM?.Config ?? []) {
      const r = c.Subnet ? cidrRange(c.Subnet) : null;
      if (r) ranges.push(r);
    }
  }
  for (const addrs of Object.values(networkInterfaces())) {
    for (const a of addrs ?? []) {
      const r = a.family === 'IPv4' && a.cidr ? cidrRange(a.cidr) : null;
      if (r) ranges.push(r);
    }
  }
  return ranges;
}

/** whether two IPv4 CIDRs share an address */
export function overlaps(a: string, b: string): boolean {
  const x = cidrRange(a);
  const y = cidrRange(b);
  return !!x && !!y && x[0] < y[1] && y[0] < x[1];
}

function cidrRange(cidr: string): [number, number] | null {
  const m = /^(\d+\.\d+\.\d+\.\d+)\/(\d+)$/.exec(cidr);
  if (!m) return null; // IPv6
  const bits = Number(m[2]);
  const size = 2 ** (32 - bits);
  const base = Math.floor(ipv4(m[1]) / size) * size;
  return [base, base + size];
}
