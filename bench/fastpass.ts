/**
 * Fastpass arbiter figures (SIGCOMM'14 §7.3), one core:
 * - fastpass_alloc_timeslots_per_s: timeslots the allocator hands out per second for 256 endpoints
 *   under saturated all-to-all demand (max-min, one switch). The paper: 8 alloc-cores serve 221
 *   endpoints at 10 Gbit/s, ~23 million timeslots per second per core.
 * - fastpass_pathsel_us_per_timeslot: edge-colouring one full timeslot of 16 racks x 32 endpoints
 *   (every endpoint sends to a random one in another rack). The paper: under 12 µs (Figure 12).
 */

import { Rng } from '../core/random.js';
import { TimeslotAllocator } from '../schemes/fastpass/arbiter/allocator.js';
import { colourEdges } from '../schemes/fastpass/arbiter/pathsel.js';

export function benchAllocator(ms = 1500, endpoints = 256): number {
  const a = new TimeslotAllocator({
    endpoints,
    rackOf: new Array(endpoints).fill(0),
    rackCapacity: 0,
    policy: 'max-min',
  });
  const fill = () => {
    for (let s = 0; s < endpoints; s++) for (let d = 0; d < endpoints; d++) if (s !== d) a.demand(s, d, 1000);
  };
  fill();
  let slot = 0;
  const before = a.allocated;
  const t0 = performance.now();
  while (performance.now() - t0 < ms) {
    for (let i = 0; i < 16; i++) {
      a.allocate(slot);
      slot += 8;
    }
    if (a.pending() < endpoints * endpoints * 100) fill();
  }
  return ((a.allocated - before) * 1000) / (performance.now() - t0);
}

export function benchPathsel(ms = 1500, racks = 16, perRack = 32): number {
  const rng = new Rng(1);
  const n = racks * perRack;
  // a full timeslot: a random permutation of the endpoints, only the cross-rack packets are coloured
  const timeslots: Array<[number[], number[]]> = [];
  for (let k = 0; k < 64; k++) {
    const perm = Array.from({ length: n }, (_, i) => i);
    for (let i = n - 1; i > 0; i--) {
      const j = Math.floor(rng.next() * (i + 1));
      [perm[i], perm[j]] = [perm[j], perm[i]];
    }
    const l: number[] = [];
    const r: number[] = [];
    for (let s = 0; s < n; s++) {
      const rs = Math.floor(s / perRack);
      const rd = Math.floor(perm[s] / perRack);
      if (rs !== rd) {
        l.push(rs);
        r.push(rd);
      }
    }
    timeslots.push([l, r]);
  }
  let done = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < ms) {
    const [l, r] = timeslots[done % timeslots.length];
    // a full-bisection fabric of 16 racks of 32 has 32 spines: 32 colours
    colourEdges(racks, l, r, perRack);
    done++;
  }
  return ((performance.now() - t0) * 1000) / done;
}
