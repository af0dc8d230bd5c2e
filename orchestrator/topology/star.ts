/**
 * Star builder: one switch `sw0` with every host attached, the smallest fabric with a shared egress
 * queue (incast onto one host port). Host i sits on switch port i.
 */
import type { LinkParams, TopoLink, Topology, TopoNode } from './types.js';

export function star(p: { hosts: number; host: LinkParams }): Topology {
  if (!Number.isInteger(p.hosts) || p.hosts < 1) {
    throw new RangeError(`star: hosts must be a positive integer, got ${p.hosts}`);
  }
  const hosts: TopoNode[] = [];
  for (let i = 0; i < p.hosts; i++) hosts.push({ name: `h${i}`, id: i, role: 'host', tier: 0, ports: [] });
  const sw: TopoNode = { name: 'sw0', id: p.hosts, role: 'switch', tier: 1, ports: [] };
  const links: TopoLink[] = [];
  for (const h of hosts) connect(links, h, sw, p.host);
  return { kind: 'star', nodes: [...hosts, sw], links };
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
