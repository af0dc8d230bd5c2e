/**
 * What a chaos partition cuts (docs/chaos.md): the links between two groups of nodes, and the groups
 * that cut a set of nodes off from their neighbours. The draw (model.ts) and the reduction of a
 * reproducer (faults.ts) both ask.
 */
import type { Topology } from '../../topology/types.js';

/** The links between two sets of nodes, in the topology's order, each as [a, b] as the topology has it. */
export function cutLinks(
  topo: Topology,
  a: readonly string[],
  b: readonly string[],
): Array<[string, string]> {
  const [sa, sb] = [new Set(a), new Set(b)];
  return topo.links
    .filter((l) => (sa.has(l.a.node) && sb.has(l.b.node)) || (sb.has(l.a.node) && sa.has(l.b.node)))
    .map((l) => [l.a.node, l.b.node]);
}

/**
 * The partition that cuts `cut` off: the cut nodes and their neighbours outside it (in topology
 * order). A control link to an arbiter stays unless the arbiter is cut: a partition of the data plane
 * leaves the controller's reach, as the link classes do.
 */
export function partitionOf(topo: Topology, cut: readonly string[]): [string[], string[]] {
  const inCut = new Set(cut);
  const role = new Map(topo.nodes.map((n) => [n.name, n.role]));
  const near = new Set<string>();
  for (const n of topo.nodes)
    if (inCut.has(n.name))
      for (const p of n.ports)
        if (!inCut.has(p.peer) && (n.role === 'arbiter' || role.get(p.peer) !== 'arbiter')) near.add(p.peer);
  const order = (s: Set<string>) => topo.nodes.map((n) => n.name).filter((x) => s.has(x));
  return [order(inCut), order(near)];
}
