/**
 * Two-tier leaf-spine (folded Clos) builder: every leaf connects to every spine with one link, hosts hang
 * off the leaves. Port order is part of the contract, since routing tables and fault commands name ports
 * by index: a leaf's host-facing ports come first, then its uplinks to spine0..; a spine's ports follow
 * leaf order.
 */

import type { LinkParams, TopoLink, Topology, TopoNode } from '../../topology/types.js';
import { connectUp, makeNode, requirePositiveInt } from './build.js';

export function leafSpine(p: {
  leaves: number;
  spines: number;
  hostsPerLeaf: number;
  host: LinkParams;
  fabric: LinkParams;
}): Topology {
  requirePositiveInt('leafSpine', 'leaves', p.leaves);
  requirePositiveInt('leafSpine', 'spines', p.spines);
  requirePositiveInt('leafSpine', 'hostsPerLeaf', p.hostsPerLeaf);
  const hosts: TopoNode[] = [];
  const leaves: TopoNode[] = [];
  const spines: TopoNode[] = [];
  // Ids are dense in `nodes` order (hosts first), so allocate them in that order.
  let id = 0;
  for (let i = 0; i < p.leaves * p.hostsPerLeaf; i++) hosts.push(makeNode(`h${i}`, id++, 'host', 0));
  for (let i = 0; i < p.leaves; i++) leaves.push(makeNode(`leaf${i}`, id++, 'switch', 1));
  for (let i = 0; i < p.spines; i++) spines.push(makeNode(`spine${i}`, id++, 'switch', 2));

  // Ports are numbered in creation order: wiring all host links before any fabric link puts each leaf's
  // host-facing ports first, and iterating leaves in the outer loop orders each spine's ports by leaf.
  const links: TopoLink[] = [];
  for (const [i, h] of hosts.entries()) connectUp(links, h, leaves[Math.floor(i / p.hostsPerLeaf)], p.host);
  for (const leaf of leaves) for (const spine of spines) connectUp(links, leaf, spine, p.fabric);
  return { kind: 'leaf-spine', nodes: [...hosts, ...leaves, ...spines], links };
}
