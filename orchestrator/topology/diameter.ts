/** The longest of the shortest paths between two hosts, in links: what bounds a scheme's one-way delay. */
import type { Topology } from './types.js';

/** Links on the longest shortest path between two hosts (BFS from every host; hosts never forward). */
export function hostDiameter(topo: Topology): number {
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
