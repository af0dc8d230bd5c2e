/**
 * Star builder: one switch `sw0` with every host attached, the smallest fabric with a shared egress
 * queue (incast onto one host port). Host i sits on switch port i.
 */

import type { LinkParams, TopoLink, Topology, TopoNode } from '../../topology/types.js';
import { connectUp, makeNode, requirePositiveInt } from './build.js';

export function star(p: { hosts: number; host: LinkParams }): Topology {
  requirePositiveInt('star', 'hosts', p.hosts);
  const hosts: TopoNode[] = [];
  for (let i = 0; i < p.hosts; i++) hosts.push(makeNode(`h${i}`, i, 'host', 0));
  const sw = makeNode('sw0', p.hosts, 'switch', 1);
  const links: TopoLink[] = [];
  for (const h of hosts) connectUp(links, h, sw, p.host);
  return { kind: 'star', nodes: [...hosts, sw], links };
}
