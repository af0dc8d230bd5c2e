/**
 * What bounds a scheme's delays on a topology's data plane: the longest of the shortest paths between
 * two hosts, in links, and the slowest and longest links.
 */

import { WireSize } from '../../core/frame.js';
import type { TopoLink, Topology, TopoNode } from '../../topology/types.js';
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

/**
 * The longest unloaded round trip between two hosts, along fewest-links paths: per link, its
 * propagation and one `frameBytes` frame's serialization, each way.
 */
export function baseRttNs(topo: Topology, frameBytes: number = WireSize.Mtu): number {
  const data = dataPlane(topo);
  let worst = 0;
  for (const h of data.nodes)
    if (h.role === 'host')
      for (const ns of alongHostPaths(
        data,
        h,
        (acc, l) => acc + l.propNs + (frameBytes * 8e9) / l.rateBps,
      ).values())
        if (ns > worst) worst = ns;
  return 2 * worst;
}

/** Links on the longest shortest path between two hosts (BFS from every host; hosts never forward). */
function hostDiameter(topo: Topology): number {
  let longest = 0;
  for (const h of topo.nodes)
    if (h.role === 'host')
      for (const links of alongHostPaths(topo, h, (n) => n + 1).values())
        if (links > longest) longest = links;
  return longest;
}

/**
 * From `host` along the fewest-links path to every other host (breadth first over `data`, a data
 * plane: hosts never forward, control links are skipped): what `along` accumulates over the path's
 * links, by host.
 */
export function alongHostPaths(
  data: Topology,
  host: TopoNode,
  along: (acc: number, link: TopoLink) => number,
): Map<TopoNode, number> {
  const byName = new Map(data.nodes.map((n) => [n.name, n]));
  const at = new Map<string, number>([[host.name, 0]]);
  const out = new Map<TopoNode, number>();
  const queue = [host.name];
  for (let i = 0; i < queue.length; i++) {
    const n = byName.get(queue[i])!;
    const v = at.get(n.name)!;
    if (n.role === 'host' && n !== host) {
      out.set(n, v);
      continue;
    }
    for (const port of n.ports) {
      if (port.dir === 'control' || at.has(port.peer)) continue;
      at.set(port.peer, along(v, data.links[port.link]));
      queue.push(port.peer);
    }
  }
  return out;
}
