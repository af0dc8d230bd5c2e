/**
 * flowtune_ned_iteration_us (TR'16 §6.1): one NED iteration and its F-NORM normalization for 384
 * endpoints and 3072 flows on one core — 12 racks of 32 hosts under 8 spines at 10 Gbit/s, every flow
 * between two random hosts of different racks through a random spine (4 links: host up, ToR up,
 * spine down, host down). The paper: 8.29 µs on 4 cores; the aim here: ≤ 35 µs on one.
 */

import { Rng } from '../core/random.js';
import { Ned } from '../schemes/flowtune/arbiter/ned.js';

export function benchNed(ms = 1500, hosts = 384, racks = 12, spines = 8, flows = 3072): number {
  const perRack = hosts / racks;
  // links: host up [0, hosts), host down [hosts, 2 hosts), ToR up [2h, 2h + racks·spines), spine down after
  const up = (h: number) => h;
  const down = (h: number) => hosts + h;
  const torUp = (r: number, s: number) => 2 * hosts + r * spines + s;
  const spineDown = (s: number, r: number) => 2 * hosts + racks * spines + s * racks + r;
  const capacity = new Float64Array(2 * hosts + 2 * racks * spines).fill(10);
  const ned = new Ned(capacity, 0.4, flows);
  const rng = new Rng(5);
  for (let f = 0; f < flows; f++) {
    const a = Math.floor(rng.next() * hosts);
    let b = Math.floor(rng.next() * hosts);
    while (Math.floor(b / perRack) === Math.floor(a / perRack)) b = Math.floor(rng.next() * hosts);
    const s = Math.floor(rng.next() * spines);
    ned.add(f, [up(a), torUp(Math.floor(a / perRack), s), spineDown(s, Math.floor(b / perRack)), down(b)]);
  }
  let n = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < ms) {
    for (let i = 0; i < 100; i++) {
      ned.iterate();
      ned.normalize('f-norm');
    }
    n += 100;
  }
  return ((performance.now() - t0) * 1000) / n;
}
