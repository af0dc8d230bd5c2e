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

/**
 * Pods: what stays connected when the top tier's switches are taken out (a FatTree's pods, each with
 * its edge and aggregation switches and hosts; a leaf-spine's racks), in topology order; the top tier's
 * switches alone. Kept on one machine, a pod's links never cross between machines: only the links to
 * the top tier can.
 */
export function pods(topology: Topology): string[][] {
  const top = Math.max(...topology.nodes.map((n) => n.tier));
  const byName = new Map(topology.nodes.map((n) => [n.name, n]));
  const seen = new Set<string>();
  const groups: string[][] = [];
  for (const n of topology.nodes) {
    if (n.tier === top || seen.has(n.name)) continue;
    const group: string[] = [];
    const stack = [n.name];
    seen.add(n.name);
    while (stack.length > 0) {
      const at = stack.pop()!;
      group.push(at);
      for (const p of byName.get(at)!.ports) {
        const peer = byName.get(p.peer);
        if (peer && peer.tier !== top && !seen.has(peer.name)) {
          seen.add(peer.name);
          stack.push(peer.name);
        }
      }
    }
    const order = new Map(topology.nodes.map((x, i) => [x.name, i]));
    groups.push(group.sort((a, b) => order.get(a)! - order.get(b)!));
  }
  return [...groups, ...topology.nodes.filter((n) => n.tier === top).map((n) => [n.name])];
}

/**
 * The groups to place over `machines` machines: pods when there are at least as many pods (of more
 * than one node) as machines, so each machine gets whole pods; racks otherwise.
 */
export function placementGroups(
  rackGroups: string[][],
  podGroups: string[][] | undefined,
  machines: number,
): string[][] {
  if (!podGroups) return rackGroups;
  return podGroups.filter((g) => g.length > 1).length >= machines ? podGroups : rackGroups;
}

/** A machine that can run nodes, with its share of them (CPUs, say). */
export interface Machine {
  id: string;
  weight: number;
}

/**
 * Assigns each group to a machine: groups holding a pinned node first, to its machine (the first pin
 * of the group wins); then the rest, largest group first, to the machine whose load (nodes / weight)
 * after taking it is least; ties go to the earlier machine. Returns node name -> machine id.
 */
export function place(
  groups: string[][],
  machines: Machine[],
  pins: ReadonlyMap<string, string> = new Map(),
): Map<string, string> {
  if (machines.length === 0) throw new Error('no machine to place nodes on');
  const load = machines.map(() => 0);
  const at = new Map<string, string>();
  const put = (g: string[], m: number): void => {
    load[m] += g.length;
    for (const name of g) at.set(name, machines[m].id);
  };
  const free: Array<{ g: string[]; i: number }> = [];
  groups.forEach((g, i) => {
    const pin = g.map((n) => pins.get(n)).find((m) => m !== undefined);
    const m = pin === undefined ? -1 : machines.findIndex((x) => x.id === pin);
    if (m >= 0) put(g, m);
    else free.push({ g, i });
  });
  free.sort((a, b) => b.g.length - a.g.length || a.i - b.i);
  for (const { g } of free) {
    let best = 0;
    for (let m = 1; m < machines.length; m++)
      if ((load[m] + g.length) / machines[m].weight < (load[best] + g.length) / machines[best].weight)
        best = m;
    put(g, best);
  }
  return at;
}
