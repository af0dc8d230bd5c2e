/**
 * Three-tier k-ary FatTree builder (Al-Fares et al.): k pods of k/2 edge and k/2 aggregation switches,
 * (k/2)^2 core switches and k^3/4 hosts. Core j connects to aggregation switch floor(j/(k/2)) of every
 * pod, the standard wiring that gives every pair of pods (k/2)^2 disjoint core paths. Ports are ordered
 * down first, then up; a core's ports follow pod order.
 */

import type { LinkParams, TopoLink, Topology, TopoNode } from '../../topology/types.js';
import { connectUp, makeNode } from './build.js';

export function fatTree(p: { k: number; host: LinkParams; fabric: LinkParams }): Topology {
  const { k } = p;
  if (!Number.isInteger(k) || k < 2 || k % 2 !== 0) {
    throw new RangeError(`fatTree: k must be an even integer >= 2, got ${k}`);
  }
  const half = k / 2;
  const hosts: TopoNode[] = [];
  const edges: TopoNode[] = [];
  const aggs: TopoNode[] = [];
  const cores: TopoNode[] = [];
  // Ids are dense in `nodes` order (hosts first), so allocate them in that order. Switches of a tier are
  // numbered pod-major, so edge/agg `pod*half + i` is switch i of that pod.
  let id = 0;
  for (let i = 0; i < k * half * half; i++)
    hosts.push(makeNode(`h${i}`, id++, 'host', 0, Math.floor(i / (half * half))));
  for (let i = 0; i < k * half; i++)
    edges.push(makeNode(`edge${i}`, id++, 'switch', 1, Math.floor(i / half)));
  for (let i = 0; i < k * half; i++) aggs.push(makeNode(`agg${i}`, id++, 'switch', 2, Math.floor(i / half)));
  for (let i = 0; i < half * half; i++) cores.push(makeNode(`core${i}`, id++, 'switch', 3));

  // Ports are numbered in creation order, so wiring tier by tier from the bottom puts every switch's down
  // ports before its up ports. Within a tier the loop order fixes the rest: an aggregation switch's down
  // ports follow edge order, and with cores in the outer loop its up ports follow core order while each
  // core's ports follow pod order.
  const links: TopoLink[] = [];
  for (const [i, h] of hosts.entries()) connectUp(links, h, edges[Math.floor(i / half)], p.host);
  for (let pod = 0; pod < k; pod++) {
    for (let e = 0; e < half; e++) {
      for (let a = 0; a < half; a++) connectUp(links, edges[pod * half + e], aggs[pod * half + a], p.fabric);
    }
  }
  for (const [j, core] of cores.entries()) {
    for (let pod = 0; pod < k; pod++)
      connectUp(links, aggs[pod * half + Math.floor(j / half)], core, p.fabric);
  }
  return { kind: 'fat-tree', nodes: [...hosts, ...edges, ...aggs, ...cores], links };
}
