/**
 * Dumbbell builder: two switches `sw0` and `sw1` joined by one bottleneck link, n hosts on each side
 * (h0..h(n-1) on sw0, then the rest on sw1). The switches are peers, so the bottleneck port is 'up' at
 * both ends: a switch sends there exactly the traffic its own hosts cannot take, and up/down routing never
 * bounces a frame back across it. Host ports come first on each switch, the bottleneck port last.
 */

import type { LinkParams, TopoLink, Topology, TopoNode } from '../../topology/types.js';
import { connect, makeNode, requirePositiveInt } from './build.js';

export function dumbbell(p: { hostsPerSide: number; host: LinkParams; bottleneck: LinkParams }): Topology {
  const n = p.hostsPerSide;
  requirePositiveInt('dumbbell', 'hostsPerSide', n);
  const hosts: TopoNode[] = [];
  for (let i = 0; i < 2 * n; i++) hosts.push(makeNode(`h${i}`, i, 'host', 0));
  const sws = [0, 1].map((i) => makeNode(`sw${i}`, 2 * n + i, 'switch', 1));
  const links: TopoLink[] = [];
  for (const [i, h] of hosts.entries()) connect(links, h, 'up', sws[i < n ? 0 : 1], 'down', p.host);
  connect(links, sws[0], 'up', sws[1], 'up', p.bottleneck);
  return { kind: 'dumbbell', nodes: [...hosts, ...sws], links };
}
