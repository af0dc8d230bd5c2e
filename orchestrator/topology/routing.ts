/**
 * Up/down routing over a topology, and the checks that make it safe to hand a topology to the runtimes.
 * A switch forwards a frame down when the destination host lies below it (ECMP over every down port that
 * leads there) and otherwise up (ECMP over every up port). Because frames never turn from down back to
 * up, this is loop-free on any topology whose 'down' ports form a DAG, which `validateTopology` checks
 * along with the wiring itself (and, on an F10 tree, that the addresses match it: `verifyF10`). Ports are
 * named `node:index` in messages, as everywhere else.
 */
import type { RoutingTable } from '../../core/messages.js';
import type { Topology, TopoNode } from '../../topology/types.js';
import { verifyF10 } from './f10-verify.js';

/** Routing table of one switch: for each host id below it, the down ports leading there; its up ports. */
export function routingTable(topo: Topology, switchName: string): RoutingTable {
  const g = new Graph(topo);
  const sw = g.byName.get(switchName);
  if (sw?.role !== 'switch') throw new Error(`routingTable: no switch named ${switchName}`);
  return g.table(sw);
}

/**
 * Links on a shortest up/down path between two hosts (0 for the same host, -1 when there is none): any
 * number of up hops, then any number of down hops. Same leaf = 2, different leaves = 4, different FatTree
 * pods = 6, opposite dumbbell sides = 3.
 */
export function hostPath(topo: Topology, srcHost: string, dstHost: string): number {
  const g = new Graph(topo);
  const src = g.host(srcHost);
  const dst = g.host(dstHost);
  if (src === dst) return 0;
  // Breadth-first over (node, phase) states: in the 'up' phase both directions are allowed, the first
  // down hop switches to the 'down' phase for good. Hosts end a path, they never forward.
  const seen = new Set<string>([`${src.name}/up`]);
  let frontier: Array<{ node: TopoNode; phase: 'up' | 'down' }> = [{ node: src, phase: 'up' }];
  for (let hops = 1; frontier.length > 0; hops++) {
    const next: typeof frontier = [];
    for (const { node, phase } of frontier) {
      for (const port of node.ports) {
        if (port.dir === 'control' || (port.dir === 'up' && phase === 'down')) continue;
        const peer = g.byName.get(port.peer);
        if (!peer) continue;
        if (peer === dst) return hops;
        if (peer.role === 'host') continue;
        const key = `${peer.name}/${port.dir}`;
        if (seen.has(key)) continue;
        seen.add(key);
        next.push({ node: peer, phase: port.dir });
      }
    }
    frontier = next;
  }
  return -1;
}

/** Human-readable problems with a topology; empty when the runtimes can use it as it is. */
export function validateTopology(topo: Topology): string[] {
  const problems: string[] = [];
  const g = new Graph(topo);
  checkNodes(topo, problems);
  for (const node of topo.nodes) checkPorts(topo, g, node, problems);
  checkLinks(topo, g, problems);
  // Routing last: a miswired port shows up above and, if it matters, again here as the host it cuts off.
  // Walking down from every switch first is what finds the cycles.
  for (const node of topo.nodes) g.hostsBelow(node);
  for (const name of g.downCycles) problems.push(`'down' ports form a cycle through ${name}`);
  const switches = topo.nodes.filter((n) => n.role === 'switch');
  for (const host of topo.nodes.filter((n) => n.role === 'host')) {
    const from = switches.filter((sw) => !g.routes(sw, host)).map((sw) => sw.name);
    if (from.length > 0) {
      problems.push(`host ${host.name} is unreachable by up/down routing from ${from.join(', ')}`);
    }
  }
  // An F10 tree's switches act on their addresses, so the addresses must match the wiring (F10 §8).
  if (topo.f10) problems.push(...verifyF10(topo));
  return problems;
}

/** Names, dense ids (hosts first, then switches, then arbiters), the shape of hosts, control links. */
function checkNodes(topo: Topology, problems: string[]): void {
  const first = new Map<string, number>();
  let firstSwitch: TopoNode | undefined;
  let firstArbiter: TopoNode | undefined;
  const role = new Map(topo.nodes.map((n) => [n.name, n.role]));
  for (const [i, node] of topo.nodes.entries()) {
    const dup = first.get(node.name);
    if (dup === undefined) first.set(node.name, i);
    else problems.push(`duplicate node name ${node.name} (nodes ${dup} and ${i})`);
    if (node.id !== i)
      problems.push(`node ${node.name} has id ${node.id}, expected ${i} (ids follow node order)`);
    // a control port joins a switch and an arbiter, and nothing else does
    for (const p of node.ports) {
      const pair = [node.role, role.get(p.peer)].sort().join('-');
      if ((p.dir === 'control') !== (pair === 'arbiter-switch'))
        problems.push(
          p.dir === 'control'
            ? `port ${node.name}:${p.index} points 'control' but joins a ${pair.replace('-', ' and a ')}`
            : `port ${node.name}:${p.index} joins a switch and an arbiter; it must point 'control'`,
        );
    }
    if (node.role === 'arbiter') {
      firstArbiter ??= node;
      continue;
    }
    if (firstArbiter)
      problems.push(`${node.role} ${node.name} comes after arbiter ${firstArbiter.name}; arbiters come last`);
    if (node.role === 'switch') {
      firstSwitch ??= node;
      continue;
    }
    if (firstSwitch)
      problems.push(`host ${node.name} comes after switch ${firstSwitch.name}; hosts come first`);
    if (node.ports.length !== 1)
      problems.push(`host ${node.name} has ${node.ports.length} ports, expected 1`);
    else if (node.ports[0].dir !== 'up')
      problems.push(`host port ${node.name}:0 points 'down'; a NIC points 'up'`);
  }
}

/** Each port: its index, a reciprocal peer, and a link whose ends are this port and its peer. */
function checkPorts(topo: Topology, g: Graph, node: TopoNode, problems: string[]): void {
  for (const [i, port] of node.ports.entries()) {
    const here = `${node.name}:${i}`;
    if (port.index !== i) problems.push(`port ${here} has index ${port.index}, expected ${i}`);
    const there = `${port.peer}:${port.peerPort}`;
    const peer = g.byName.get(port.peer);
    const back = peer?.ports[port.peerPort];
    if (!peer) problems.push(`port ${here} peers with ${port.peer}, which does not exist`);
    else if (!back) problems.push(`port ${here} peers with ${there}, which does not exist`);
    else if (back.peer !== node.name || back.peerPort !== i) {
      problems.push(
        `port ${here} peers with ${there}, but ${there} peers with ${back.peer}:${back.peerPort}`,
      );
    } else if (port.dir === 'down' && back.dir === 'down') {
      problems.push(`ports ${here} and ${there} both point 'down'`);
    }
    const link = topo.links[port.link];
    if (!link) {
      problems.push(`port ${here} uses link ${port.link}, which does not exist`);
      continue;
    }
    const ends = [`${link.a.node}:${link.a.port}`, `${link.b.node}:${link.b.port}`].sort();
    const expected = [here, there].sort();
    if (ends[0] !== expected[0] || ends[1] !== expected[1]) {
      problems.push(
        `port ${here} uses link ${port.link}, whose ends are ${ends.join(' and ')}, not ${here} and ${there}`,
      );
    }
  }
}

/** Each link: both ends exist and point back at it, and its parameters are usable. */
function checkLinks(topo: Topology, g: Graph, problems: string[]): void {
  for (const [l, link] of topo.links.entries()) {
    for (const end of [link.a, link.b]) {
      const port = g.byName.get(end.node)?.ports[end.port];
      if (!port) problems.push(`link ${l} ends at ${end.node}:${end.port}, which does not exist`);
      else if (port.link !== l)
        problems.push(`link ${l} ends at ${end.node}:${end.port}, which uses link ${port.link}`);
    }
    // Written so NaN fails too.
    if (!(link.rateBps > 0 && Number.isFinite(link.rateBps)))
      problems.push(`link ${l} rate is ${link.rateBps} bit/s`);
    if (!(link.propNs >= 0 && Number.isFinite(link.propNs)))
      problems.push(`link ${l} delay is ${link.propNs} ns`);
  }
}

/** A topology indexed by name, with the memoised host sets the routing questions are answered from. */
class Graph {
  readonly byName = new Map<string, TopoNode>();
  /** nodes where following 'down' ports came back to a node already on the path */
  readonly downCycles = new Set<string>();
  private readonly below = new Map<string, Set<number>>();
  private readonly routed = new Map<string, boolean>();

  constructor(topo: Topology) {
    // The first of duplicate names wins; validateTopology reports the duplicate.
    for (const node of topo.nodes) if (!this.byName.has(node.name)) this.byName.set(node.name, node);
  }

  host(name: string): TopoNode {
    const node = this.byName.get(name);
    if (node?.role !== 'host') throw new Error(`no host named ${name}`);
    return node;
  }

  table(sw: TopoNode): RoutingTable {
    const down: Record<number, number[]> = {};
    const up: number[] = [];
    const neighbours: number[] = [];
    for (const port of sw.ports) {
      if (port.dir === 'control') continue;
      if (this.byName.get(port.peer)?.role === 'switch') neighbours.push(port.index);
      if (port.dir === 'up') {
        up.push(port.index);
        continue;
      }
      const peer = this.byName.get(port.peer);
      if (!peer) continue;
      for (const h of this.hostsBelow(peer, new Set([sw.name]))) (down[h] ??= []).push(port.index);
    }
    const hosts = [...this.byName.values()].filter((n) => n.role === 'host').map((n) => n.id);
    return { down, up, hosts, neighbours };
  }

  /** Host ids reachable from `node` through 'down' ports only (a host is below itself). */
  hostsBelow(node: TopoNode, path = new Set<string>()): Set<number> {
    if (node.role === 'host') return new Set([node.id]);
    const memo = this.below.get(node.name);
    if (memo) return memo;
    if (path.has(node.name)) {
      this.downCycles.add(node.name);
      return new Set();
    }
    path.add(node.name);
    const hosts = new Set<number>();
    for (const port of node.ports) {
      const peer = port.dir === 'down' ? this.byName.get(port.peer) : undefined;
      if (peer) for (const h of this.hostsBelow(peer, path)) hosts.add(h);
    }
    path.delete(node.name);
    this.below.set(node.name, hosts);
    return hosts;
  }

  /**
   * Whether every frame for `host` that reaches `sw` gets there: the host is below it, or it has up ports
   * and the routing at every one of their peers delivers (ECMP may pick any of them). A frame that would
   * climb back to a switch already on its way up loops, so that branch fails; the answer of a switch that
   * does not hold the host below it can only ever depend on such a branch failing, so memoising stays sound.
   */
  routes(sw: TopoNode, host: TopoNode, path = new Set<string>()): boolean {
    if (this.hostsBelow(sw).has(host.id)) return true;
    const key = `${sw.name}>${host.name}`;
    const memo = this.routed.get(key);
    if (memo !== undefined) return memo;
    if (path.has(sw.name)) return false;
    path.add(sw.name);
    const ups = sw.ports.filter((p) => p.dir === 'up');
    const ok =
      ups.length > 0 &&
      ups.every((p) => {
        const peer = this.byName.get(p.peer);
        if (!peer) return false;
        return peer.role === 'host' ? peer === host : this.routes(peer, host, path);
      });
    path.delete(sw.name);
    this.routed.set(key, ok);
    return ok;
  }
}
