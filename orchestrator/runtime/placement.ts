/**
 * Where a runtime that spans machines puts each node (the swarm runtime): a rack — a top-of-rack
 * switch and the hosts below it — stays on one machine, so the busiest links (host to ToR) never cross
 * the network between machines; racks and the other switches go to the machine with the least load
 * so far, largest groups first, so the placement is the same on every run of the same fabric.
 */
import type { Topology } from '../../topology/types.js';

/** Groups of nodes that should share a machine: each ToR with its hosts, every other node alone. */
export function racks(topology: Topology): string[][] {
  const byName = new Map(topology.nodes.map((n) => [n.name, n]));
  const rackOf = new Map<string, string[]>();
  const placed = new Set<string>();
  for (const h of topology.nodes) {
    if (h.tier !== 0) continue;
    const up = h.ports.filter((p) => p.dir === 'up').map((p) => byName.get(p.peer)!);
    // a host homed on one ToR joins its rack; a multi-homed host stays alone
    if (up.length !== 1 || up[0].tier !== 1) continue;
    const rack = rackOf.get(up[0].name) ?? [up[0].name];
    rack.push(h.name);
    rackOf.set(up[0].name, rack);
    placed.add(h.name).add(up[0].name);
  }
  return [...rackOf.values(), ...topology.nodes.filter((n) => !placed.has(n.name)).map((n) => [n.name])];
}

/** A machine that can run nodes, with its share of them (CPUs, say). */
export interface Machine {
  id: string;
  weight: number;
}

/**
 * Assigns each group to a machine: largest group first, to the machine whose load (nodes / weight)
 * after taking it is least; ties go to the earlier machine. Returns node name -> machine id.
 */
export function place(groups: string[][], machines: Machine[]): Map<string, string> {
  if (machines.length === 0) throw new Error('no machine to place nodes on');
  const load = machines.map(() => 0);
  const at = new Map<string, string>();
  const order = groups.map((g, i) => ({ g, i })).sort((a, b) => b.g.length - a.g.length || a.i - b.i);
  for (const { g } of order) {
    let best = 0;
    for (let m = 1; m < machines.length; m++)
      if ((load[m] + g.length) / machines[m].weight < (load[best] + g.length) / machines[best].weight)
        best = m;
    load[best] += g.length;
    for (const name of g) at.set(name, machines[best].id);
  }
  return at;
}
