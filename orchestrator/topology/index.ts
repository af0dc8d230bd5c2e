/**
 * The topology package: builders, routing and validation, plus the two renderings `dcemu topo` prints.
 * Graphviz output draws the fabric in tiers (core at the top, hosts at the bottom) so a wiring mistake
 * is visible at a glance; JSON output is the plain data itself.
 */
import type { Topology } from '../../topology/types.js';

export type { LinkParams, NodeRole, TopoLink, Topology, TopoNode, TopoPort } from '../../topology/types.js';
export { type ArbiterSpec, attachArbiters, dataPlane } from './arbiter.js';
export { dumbbell } from './dumbbell.js';
export { f10Tree } from './f10.js';
export { verifyF10 } from './f10-verify.js';
export { fatTree } from './fattree.js';
export { leafSpine } from './leafspine.js';
export { hostPath, routingTable, validateTopology } from './routing.js';
export { star } from './star.js';

/** Graphviz source: an undirected graph, hosts as ellipses, switches as boxes, one rank per tier. */
export function toDot(topo: Topology): string {
  const q = (s: string): string => JSON.stringify(s);
  const lines = [`graph ${q(topo.kind)} {`, '  node [fontname="Helvetica"];'];
  for (const n of topo.nodes) {
    // F10 switches show their address: level, location, index and subtree type (F10 figure 2)
    const a = n.f10;
    const label = a ? ` label=${q(`${n.name}\nloc ${a.location} idx ${a.index} ${a.type}`)}` : '';
    const shape = n.role === 'host' ? 'ellipse' : n.role === 'arbiter' ? 'diamond' : 'box';
    lines.push(`  ${q(n.name)} [shape=${shape}${label}];`);
  }
  const tiers = new Map<number, string[]>();
  for (const n of topo.nodes) {
    const names = tiers.get(n.tier) ?? [];
    names.push(q(n.name));
    tiers.set(n.tier, names);
  }
  for (const [, names] of [...tiers].sort(([a], [b]) => b - a))
    lines.push(`  {rank=same; ${names.join('; ')};}`);
  // dot ranks an edge's first node above its second, even in an undirected graph: name the upper end first.
  const tierOf = new Map(topo.nodes.map((n) => [n.name, n.tier]));
  for (const link of topo.links) {
    const [hi, lo] =
      (tierOf.get(link.a.node) ?? 0) >= (tierOf.get(link.b.node) ?? 0) ? [link.a, link.b] : [link.b, link.a];
    lines.push(`  ${q(hi.node)} -- ${q(lo.node)} [label=${q(gbit(link.rateBps))}];`);
  }
  lines.push('}');
  return lines.join('\n') + '\n';
}

/** The topology as pretty-printed JSON, exactly the plain data (parse it back with JSON.parse). */
export function toJson(topo: Topology): string {
  return JSON.stringify(topo, null, 2);
}

/** A rate in Gbit/s as a short label: 10e9 -> '10G', 2.5e9 -> '2.5G', 1e8 -> '0.1G'. */
function gbit(rateBps: number): string {
  return `${Number((rateBps / 1e9).toFixed(3))}G`;
}
