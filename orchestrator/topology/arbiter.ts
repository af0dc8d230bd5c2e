/**
 * Arbiters on a topology: a scheme's central control processes (F10's controller, and the arbiters
 * and allocators of the schemes to come), each attached by its own emulated links, like a server
 * with one NIC per link. A control link joins a switch and an arbiter; at the switch it is the last
 * port and points 'control', so no routing table ever uses it. `dataPlane` gives the topology the
 * arbiters schedule over: the same nodes, ids and port indices, without them.
 */
import type { LinkParams, Topology, TopoNode } from '../../topology/types.js';

export interface ArbiterSpec {
  /** derivable: `arb0`, `arb1`, ... */
  name: string;
  /** the switches it has a control link to, with the links' parameters */
  links: Array<{ to: string } & LinkParams>;
}

/** A copy of `topo` with the arbiters appended (ids after every other node) and their control links. */
export function attachArbiters(topo: Topology, specs: ArbiterSpec[]): Topology {
  if (specs.length === 0) return topo;
  const nodes: TopoNode[] = topo.nodes.map((n) => ({ ...n, ports: n.ports.map((p) => ({ ...p })) }));
  const links = topo.links.map((l) => ({ ...l, a: { ...l.a }, b: { ...l.b } }));
  const byName = new Map(nodes.map((n) => [n.name, n]));
  for (const spec of specs) {
    if (byName.has(spec.name)) throw new Error(`arbiter ${spec.name}: a node has that name already`);
    const arb: TopoNode = { name: spec.name, id: nodes.length, role: 'arbiter', tier: 0, ports: [] };
    nodes.push(arb);
    byName.set(arb.name, arb);
    for (const l of spec.links) {
      const sw = byName.get(l.to);
      if (sw?.role !== 'switch') throw new Error(`arbiter ${spec.name}: ${l.to} is not a switch`);
      const link = links.length;
      const swPort = sw.ports.length;
      const arbPort = arb.ports.length;
      sw.ports.push({ index: swPort, peer: arb.name, peerPort: arbPort, dir: 'control', link });
      arb.ports.push({ index: arbPort, peer: sw.name, peerPort: swPort, dir: 'control', link });
      links.push({
        a: { node: sw.name, port: swPort },
        b: { node: arb.name, port: arbPort },
        rateBps: l.rateBps,
        propNs: l.propNs,
      });
    }
  }
  return { ...topo, nodes, links };
}

/** The topology without its arbiters and their control links (node ids and data port indices unchanged). */
export function dataPlane(topo: Topology): Topology {
  const arbiters = new Set(topo.nodes.filter((n) => n.role === 'arbiter').map((n) => n.name));
  if (arbiters.size === 0) return topo;
  const links = topo.links.filter((l) => !arbiters.has(l.a.node) && !arbiters.has(l.b.node));
  if (links.some((l, i) => l !== topo.links[i]))
    throw new Error('dataPlane: control links must come after every data link');
  return {
    ...topo,
    nodes: topo.nodes
      .filter((n) => !arbiters.has(n.name))
      .map((n) => ({ ...n, ports: n.ports.filter((p) => p.dir !== 'control') })),
    links,
  };
}
