/**
 * Dumbbell builder: two switches `sw0` and `sw1` joined by one bottleneck link, n hosts on each side
 * (h0..h(n-1) on sw0, then the rest on sw1). The switches are peers, so the bottleneck port is 'up' at
 * both ends: a switch sends there exactly the traffic its own hosts cannot take, and up/down routing never
 * bounces a frame back across it. Host ports come first on each switch, the bottleneck port last.
 */
import type { LinkParams, TopoLink, Topology, TopoNode } from './types.js';

export function dumbbell(p: { hostsPerSide: number; host: LinkParams; bottleneck: LinkParams }): Topology {
  const n = p.hostsPerSide;
  if (!Number.isInteger(n) || n < 1)
    throw new RangeError(`dumbbell: hostsPerSide must be a positive integer, got ${n}`);
  const hosts: TopoNode[] = [];
  for (let i = 0; i < 2 * n; i++) hosts.push({ name: `h${i}`, id: i, role: 'host', tier: 0, ports: [] });
  const sws: TopoNode[] = [0, 1].map((i) => ({
    name: `sw${i}`,
    id: 2 * n + i,
    role: 'switch',
    tier: 1,
    ports: [],
  }));
  const links: TopoLink[] = [];
  for (const [i, h] of hosts.entries()) connect(links, h, 'up', sws[i < n ? 0 : 1], 'down', p.host);
  connect(links, sws[0], 'up', sws[1], 'up', p.bottleneck);
  return { kind: 'dumbbell', nodes: [...hosts, ...sws], links };
}

/** Links `a` to `b` on each node's next free port, with the given direction at each end. */
function connect(
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
