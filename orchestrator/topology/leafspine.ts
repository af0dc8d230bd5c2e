/**
 * Two-tier leaf-spine (folded Clos) builder: every leaf connects to every spine with one link, hosts hang
 * off the leaves. Port order is part of the contract, since routing tables and fault commands name ports
 * by index: a leaf's host-facing ports come first, then its uplinks to spine0..; a spine's ports follow
 * leaf order.
 */
import type { LinkParams, TopoLink, Topology, TopoNode } from './types.js';

export function leafSpine(p: {
  leaves: number;
  spines: number;
  hostsPerLeaf: number;
  host: LinkParams;
  fabric: LinkParams;
}): Topology {
  positiveInt('leaves', p.leaves);
  positiveInt('spines', p.spines);
  positiveInt('hostsPerLeaf', p.hostsPerLeaf);
  const hosts: TopoNode[] = [];
  const leaves: TopoNode[] = [];
  const spines: TopoNode[] = [];
  // Ids are dense in `nodes` order (hosts first), so allocate them in that order.
  let id = 0;
  for (let i = 0; i < p.leaves * p.hostsPerLeaf; i++) hosts.push(node(`h${i}`, id++, 'host', 0));
  for (let i = 0; i < p.leaves; i++) leaves.push(node(`leaf${i}`, id++, 'switch', 1));
  for (let i = 0; i < p.spines; i++) spines.push(node(`spine${i}`, id++, 'switch', 2));

  // Ports are numbered in creation order: wiring all host links before any fabric link puts each leaf's
  // host-facing ports first, and iterating leaves in the outer loop orders each spine's ports by leaf.
  const links: TopoLink[] = [];
  for (const [i, h] of hosts.entries()) connect(links, h, leaves[Math.floor(i / p.hostsPerLeaf)], p.host);
  for (const leaf of leaves) for (const spine of spines) connect(links, leaf, spine, p.fabric);
  return { kind: 'leaf-spine', nodes: [...hosts, ...leaves, ...spines], links };
}

function positiveInt(what: string, v: number): void {
  if (!Number.isInteger(v) || v < 1)
    throw new RangeError(`leafSpine: ${what} must be a positive integer, got ${v}`);
}

function node(name: string, id: number, role: TopoNode['role'], tier: number): TopoNode {
  return { name, id, role, tier, ports: [] };
}

/** Links `lower` (its port points 'up') to `upper` (its port points 'down') on each node's next free port. */
function connect(links: TopoLink[], lower: TopoNode, upper: TopoNode, params: LinkParams): void {
  const link = links.length;
  const lp = lower.ports.length;
  const up = upper.ports.length;
  lower.ports.push({ index: lp, peer: upper.name, peerPort: up, dir: 'up', link });
  upper.ports.push({ index: up, peer: lower.name, peerPort: lp, dir: 'down', link });
  // Copy only the link fields, so extra properties on the caller's object do not leak into the topology.
  const { rateBps, propNs } = params;
  links.push({ a: { node: lower.name, port: lp }, b: { node: upper.name, port: up }, rateBps, propNs });
}
