/**
 * What every topology builder shares: making a node and wiring a link on each end's next free port.
 * Port numbers follow creation order, which is part of each builder's contract.
 */
import type { LinkParams, TopoLink, TopoNode } from '../../topology/types.js';

export function makeNode(
  name: string,
  id: number,
  role: TopoNode['role'],
  tier: number,
  pod?: number,
): TopoNode {
  return pod === undefined ? { name, id, role, tier, ports: [] } : { name, id, role, tier, pod, ports: [] };
}

/** Links `a` to `b` on each node's next free port, with the given direction at each end. */
export function connect(
  links: TopoLink[],
  a: TopoNode,
  aDir: 'up' | 'down',
  b: TopoNode,
  bDir: 'up' | 'down',
  params: LinkParams,
): void {
  const link = links.length;
  const ap = a.ports.length;
  const bp = b.ports.length;
  a.ports.push({ index: ap, peer: b.name, peerPort: bp, dir: aDir, link });
  b.ports.push({ index: bp, peer: a.name, peerPort: ap, dir: bDir, link });
  // Copy only the link fields, so extra properties on the caller's object do not leak into the topology.
  const { rateBps, propNs } = params;
  links.push({ a: { node: a.name, port: ap }, b: { node: b.name, port: bp }, rateBps, propNs });
}

/** Links `lower` (its port points 'up') to `upper` (its port points 'down'). */
export function connectUp(links: TopoLink[], lower: TopoNode, upper: TopoNode, params: LinkParams): void {
  connect(links, lower, 'up', upper, 'down', params);
}

/** The index of `node`'s port whose peer is `peer` (the two are linked). */
export function portToward(node: TopoNode, peer: string): number {
  const port = node.ports.find((p) => p.peer === peer);
  if (port === undefined) throw new Error(`${node.name} has no link to ${peer}`);
  return port.index;
}

export function requirePositiveInt(builder: string, what: string, v: number): void {
  if (!Number.isInteger(v) || v < 1)
    throw new RangeError(`${builder}: ${what} must be a positive integer, got ${v}`);
}
