/**
 * What bounds a scheme's delays on a topology's data plane: the longest of the shortest paths between
 * two hosts, in links, and the slowest and longest links.
 */

import type { Topology } from '../../topology/types.js';
import { dataPlane } from './arbiter.js';

export interface PathFigures {
  /** links on the longest host-to-host shortest path */
  diameter: number;
  /** slowest and fastest data link, bit/s */
  minRateBps: number;
  maxRateBps: number;
  /** slowest host link, bit/s */
  hostRateBps: number;
  /** longest propagation delay of a data link, ns */
  maxPropNs: number;
}

export function pathFigures(topo: Topology): PathFigures {
  const data = dataPlane(topo);
  const hosts = new Set(data.nodes.filter((n) => n.role === 'host').map((n) => n.name));
  const hostLinks = data.links.filter((l) => hosts.has(l.a.node) || hosts.has(l.b.node));
  return {
    diameter: hostDiameter(data),
    minRateBps: Math.min(...data.links.map((l) => l.rateBps)),
    maxRateBps: Math.max(...data.links.map((l) => l.rateBps)),
    hostRateBps: Math.min(...hostLinks.map((l) => l.rateBps)),
    maxPropNs: Math.max(...data.links.map((l) => l.propNs)),
  };
}

/** Links on the longest shortest path between two hosts (BFS from every host; hosts never forward). */
function hostDiameter(topo: Topology): number {
  const hosts = topo.nodes.filter((n) => n.role === 'host');
  const byName = new Map(topo.nodes.map((n) => [n.name, n]));
  let longest = 0;
  for (const h of hosts) {
    const dist = new Map<string, number>([[h.name, 0]]);
    const queue = [h.name];
    for (let i = 0; i < queue.length; i++) {
      const n = byName.get(queue[i])!;
      const d = dist.get(n.name)!;
      if (n.role === 'host' && n !== h) {
        if (d > longest) longest = d;
        continue;
      }
      for (const port of n.ports) {
        if (port.dir === 'control' || dist.has(port.peer)) continue;
        dist.set(port.peer, d + 1);
        queue.push(port.peer);
      }
    }
  }
  return longest;
}
