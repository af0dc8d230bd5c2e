/**
 * Fastpass's arbiter algorithms in one process: the timeslot allocator (maximal matchings from the
 * bitmap table, max-min and min-FCT orders, the rack tier's bandwidth check) and path selection (edge
 * colourings by Euler splits, power-of-two and general degrees).
 */
import { describe, expect, it } from 'vitest';
import { type Allocation, TimeslotAllocator } from '../arbiter/fastpass/allocator.js';
import { colourEdges } from '../arbiter/fastpass/pathsel.js';
import { Rng } from '../core/random.js';

function oneRack(n: number, policy: 'max-min' | 'min-fct' = 'max-min') {
  return new TimeslotAllocator({ endpoints: n, rackOf: new Array(n).fill(0), rackCapacity: 0, policy });
}

/** every timeslot holds a matching: no source or destination twice */
function expectMatchings(allocs: Allocation[]): void {
  const seen = new Set<string>();
  for (const a of allocs) {
    for (const key of [`s${a.slot}:${a.src}`, `d${a.slot}:${a.dst}`]) {
      expect(seen.has(key), key).toBe(false);
      seen.add(key);
    }
  }
}

describe('Fastpass timeslot allocator (§3)', () => {
  it('allocates the paper’s figure 4 example as a maximal matching', () => {
    const a = oneRack(4);
    // demands in least-recently-allocated order: 1→2, 3→1, 0→1 (dst 1 taken), 2→3, 0→0 none
    a.demand(1, 2, 1);
    a.demand(3, 1, 1);
    a.demand(0, 1, 1);
    a.demand(2, 3, 1);
    const got = a.allocateBatch(0);
    expect(got.filter((x) => x.slot === 0).map((x) => `${x.src}>${x.dst}`)).toEqual(['1>2', '3>1', '2>3']);
    // 0→1 waits for the next timeslot of the batch: destination 1 is busy in timeslot 0
    expect(got.find((x) => x.src === 0)).toEqual({ slot: 1, src: 0, dst: 1 });
    expectMatchings(got);
    expect(a.pending()).toBe(0);
  });

  it('shares a receiver max-min fairly across batches (least recently allocated first)', () => {
    const a = oneRack(5);
    for (let s = 1; s <= 4; s++) a.demand(s, 0, 1000);
    const per = new Map<number, number>();
    for (let b = 0; b < 40; b++) {
      const got = a.allocateBatch(b * 8);
      expect(got.length).toBe(8);
      expectMatchings(got);
      for (const x of got) per.set(x.src, (per.get(x.src) ?? 0) + 1);
    }
    // 320 timeslots of the receiver, 80 to each sender exactly
    expect([...per.values()]).toEqual([80, 80, 80, 80]);
    expect(a.pending()).toBe(4000 - 320);
  });

  it('min-FCT serves the pair with the fewest remaining timeslots first', () => {
    const a = oneRack(3, 'min-fct');
    a.demand(1, 0, 20);
    a.demand(2, 0, 3);
    const got = a.allocateBatch(0);
    expect(got.slice(0, 3).map((x) => x.src)).toEqual([2, 2, 2]);
    expect(got.slice(3).every((x) => x.src === 1)).toBe(true);
    expect(got.length).toBe(8);
  });

  it('keeps cross-rack pairs within the racks’ uplinks (the tier check of footnote 2)', () => {
    // two racks of 4, one uplink timeslot per timeslot: 4 senders in rack 0 to 4 receivers in rack 1
    const a = new TimeslotAllocator({
      endpoints: 8,
      rackOf: [0, 0, 0, 0, 1, 1, 1, 1],
      rackCapacity: 1,
      policy: 'max-min',
    });
    for (let s = 0; s < 4; s++) a.demand(s, 4 + s, 100);
    a.demand(0, 1, 100); // inside the rack: no uplink needed
    const got = a.allocateBatch(0);
    expectMatchings(got);
    for (let slot = 0; slot < 8; slot++) {
      const cross = got.filter((x) => x.slot === slot && x.dst >= 4);
      expect(cross.length).toBeLessThanOrEqual(1);
    }
    expect(got.filter((x) => x.dst >= 4).length).toBe(8);
    a.setRackCapacity(0);
    expect(a.allocateBatch(8).filter((x) => x.dst >= 4)).toEqual([]);
  });

  it('forgets a reset source’s demand', () => {
    const a = oneRack(3);
    a.demand(1, 0, 10);
    a.demand(2, 0, 10);
    a.clearSource(1);
    expect(a.pending()).toBe(10);
    expect(a.allocateBatch(0).every((x) => x.src === 2)).toBe(true);
  });

  it('fills every timeslot of a saturated all-to-all batch', () => {
    const n = 16;
    const a = oneRack(n);
    for (let s = 0; s < n; s++) for (let d = 0; d < n; d++) if (s !== d) a.demand(s, d, 50);
    for (let b = 0; b < 10; b++) {
      const got = a.allocateBatch(b * 8);
      expectMatchings(got);
      // greedy maximal matchings: at least half of a perfect one per timeslot, here nearly all
      expect(got.length).toBeGreaterThanOrEqual(n * 8 * 0.9);
    }
  });
});

/** checks a colouring: proper, and within the maximum degree */
function checkColouring(n: number, l: number[], r: number[]): number {
  const c = colourEdges(n, l, r);
  const deg = new Map<string, number>();
  for (let i = 0; i < l.length; i++) {
    deg.set(`l${l[i]}`, (deg.get(`l${l[i]}`) ?? 0) + 1);
    deg.set(`r${r[i]}`, (deg.get(`r${r[i]}`) ?? 0) + 1);
  }
  const D = Math.max(0, ...deg.values());
  const seen = new Set<string>();
  for (let i = 0; i < l.length; i++) {
    expect(c[i]).toBeGreaterThanOrEqual(0);
    expect(c[i]).toBeLessThan(D);
    for (const key of [`l${l[i]}:${c[i]}`, `r${r[i]}:${c[i]}`]) {
      expect(seen.has(key), key).toBe(false);
      seen.add(key);
    }
  }
  return D;
}

describe('Fastpass path selection (§4)', () => {
  it('colours the paper’s figure 5 graph with as many spines as its degree', () => {
    // ToR graph: 0→1, 0→2, 1→0, 1→2, 2→0, 2→1 (degree 2)
    expect(checkColouring(3, [0, 0, 1, 1, 2, 2], [1, 2, 0, 2, 0, 1])).toBe(2);
  });

  it('colours power-of-two, odd and irregular multigraphs properly with D colours', () => {
    const rng = new Rng(7);
    for (const [n, m] of [
      [4, 16],
      [8, 24],
      [5, 17],
      [16, 200],
      [3, 1],
    ]) {
      const l: number[] = [];
      const r: number[] = [];
      for (let i = 0; i < m; i++) {
        l.push(Math.floor(rng.next() * n));
        r.push(Math.floor(rng.next() * n));
      }
      checkColouring(n, l, r);
    }
  });

  it('colours parallel edges (one ToR pair with many packets) apart', () => {
    const c = colourEdges(2, [0, 0, 0], [1, 1, 1]);
    expect(new Set(c).size).toBe(3);
  });
});
