/**
 * Fastpass timeslot allocation (SIGCOMM'14 §3): the arbiter keeps every (source, destination) pair's
 * pending demand in timeslots and, for each batch of 8 timeslots, builds a maximal matching greedily
 * with the bitmap table of §3.1: one 8-bit busy mask per source and per destination, the first free
 * timeslot of a pair is the lowest clear bit of their OR ("find first set"). The policy is the order
 * pairs are visited in: max-min fairness visits the least recently allocated pair first, min-FCT the
 * pair with the fewest remaining timeslots first (§3.1). An oversubscribed two-tier fabric is a tree
 * of racks (§3, footnote 2): a pair between racks also needs a free uplink of its source rack and a
 * free downlink of its destination rack in that timeslot, so the allocated matching is always one
 * path selection can route without queueing (the rearrangeably non-blocking tier, §3).
 *
 * Pure logic: no clock, no I/O. Max-min keeps its order without sorting: pairs live in a queue ordered
 * by their last allocated timeslot, a batch visits it front to back, and the pairs it allocates move to
 * the back in the order they were allocated — the pipelined allocator's "only demands allocated in
 * timeslot t change order" (§3.1). A batch stops early once every source or every destination is full.
 */

export const BATCH = 8;
const FULL = (1 << BATCH) - 1;

export type AllocPolicy = 'max-min' | 'min-fct';

export interface AllocatorInit {
  /** endpoints are 0..endpoints-1 (host ids) */
  endpoints: number;
  /** each endpoint's rack (its ToR); -1: every endpoint in one rack */
  rackOf: readonly number[];
  /** timeslots a rack's uplinks (and downlinks) carry per timeslot: live spines × fabric/host rate */
  rackCapacity: number;
  policy: AllocPolicy;
  /**
   * share of every endpoint's timeslots left unallocated, as a destination and as a source, and of
   * every rack's timeslots to and from the spines, for the unscheduled FCP frames on those links (§7.1: "Fastpass reserving about 1% of the achieved throughput
   * for FCP traffic"); 0: none
   */
  reserve?: number;
}

/** One allocated timeslot: `slot` is absolute (batch start + bit). */
export interface Allocation {
  slot: number;
  src: number;
  dst: number;
}

class Pair {
  /** timeslots requested and not allocated yet */
  demand = 0;
  /** last timeslot allocated to the pair (-1: never) */
  last = -1;
  /** in the active queue */
  queued = false;
  constructor(
    readonly src: number,
    readonly dst: number,
    readonly crossRack: boolean,
  ) {}
}

export class TimeslotAllocator {
  readonly policy: AllocPolicy;
  private readonly n: number;
  private readonly rackOf: Int32Array;
  private readonly racks: number;
  private capacity: number;
  private readonly pairs = new Map<number, Pair>();
  /** pairs with demand, in visiting order (max-min: least recently allocated first) */
  private active: Pair[] = [];
  private readonly srcBusy: Uint8Array;
  private readonly dstBusy: Uint8Array;
  /** per rack and timeslot of the batch: uplinks / downlinks taken; masks of the full timeslots */
  private readonly upUsed: Uint16Array;
  private readonly downUsed: Uint16Array;
  private readonly upFull: Uint8Array;
  private readonly downFull: Uint8Array;
  /** every endpoint skips one timeslot in this many (0: none), at its own phase */
  private readonly reserveEvery: number;
  /** total timeslots pending over all pairs */
  private pendingTotal = 0;
  allocated = 0;

  constructor(init: AllocatorInit) {
    this.n = init.endpoints;
    this.policy = init.policy;
    this.rackOf = Int32Array.from(init.rackOf);
    this.racks = Math.max(1, ...this.rackOf.map((r) => r + 1));
    this.capacity = init.rackCapacity;
    const r = init.reserve ?? 0;
    this.reserveEvery = r > 0 ? Math.max(2, Math.round(1 / r)) : 0;
    this.srcBusy = new Uint8Array(this.n);
    this.dstBusy = new Uint8Array(this.n);
    this.upUsed = new Uint16Array(this.racks * BATCH);
    this.downUsed = new Uint16Array(this.racks * BATCH);
    this.upFull = new Uint8Array(this.racks);
    this.downFull = new Uint8Array(this.racks);
  }

  /** A rack's uplinks changed (a spine isolated or back): timeslots per timeslot between racks. */
  setRackCapacity(c: number): void {
    this.capacity = Math.max(0, Math.floor(c));
  }

  get rackCapacity(): number {
    return this.capacity;
  }

  /** adds `slots` timeslots of demand from `src` to `dst` */
  demand(src: number, dst: number, slots: number): void {
    if (slots <= 0 || src === dst || src < 0 || dst < 0 || src >= this.n || dst >= this.n) return;
    const key = src * this.n + dst;
    let p = this.pairs.get(key);
    if (p === undefined) {
      p = new Pair(src, dst, this.rackOf[src] !== this.rackOf[dst]);
      this.pairs.set(key, p);
    }
    p.demand += slots;
    this.pendingTotal += slots;
    if (!p.queued) {
      p.queued = true;
      this.active.push(p);
    }
  }

  /** forgets every demand of `src` (its session was reset: it asks again from zero) */
  clearSource(src: number): void {
    for (const p of this.active) {
      if (p.src !== src) continue;
      this.pendingTotal -= p.demand;
      p.demand = 0;
    }
  }

  /** pending timeslots of one pair, and of all */
  pending(src?: number, dst?: number): number {
    if (src === undefined || dst === undefined) return this.pendingTotal;
    return this.pairs.get(src * this.n + dst)?.demand ?? 0;
  }

  /**
   * Allocates timeslots `first` .. `first + 7` (a batch) and returns them, ordered by pair visit. Each
   * visited pair takes as many of the batch's timeslots as its demand and the bitmaps allow (§3.1).
   */
  allocateBatch(first: number, out: Allocation[] = []): Allocation[] {
    if (this.pendingTotal === 0) {
      this.compact();
      return out;
    }
    this.srcBusy.fill(0);
    this.dstBusy.fill(0);
    this.upUsed.fill(0);
    this.downUsed.fill(0);
    this.upFull.fill(0);
    this.downFull.fill(0);
    if (this.policy === 'min-fct') this.active.sort(byFewestRemaining);
    const cap = this.capacity;
    const blockedCross = cap === 0 ? FULL : 0;
    const order = this.active;
    const kept: Pair[] = [];
    const moved: Pair[] = [];
    // distinct sources and destinations with demand: once all are full, nothing more fits
    let fullSrc = 0;
    let fullDst = 0;
    const srcs = new Set<number>();
    const dsts = new Set<number>();
    for (const p of order) {
      if (p.demand > 0) {
        srcs.add(p.src);
        dsts.add(p.dst);
      }
    }
    let i = 0;
    for (; i < order.length; i++) {
      if (fullSrc === srcs.size || fullDst === dsts.size) break;
      const p = order[i];
      if (p.demand === 0) {
        p.queued = false;
        continue;
      }
      const s = p.src;
      const d = p.dst;
      let busy = this.srcBusy[s] | this.dstBusy[d];
      if (this.reserveEvery > 0) busy |= this.reserved(first, d) | this.reserved(first, s + 1);
      let rs = 0;
      let rd = 0;
      if (p.crossRack) {
        rs = this.rackOf[s];
        rd = this.rackOf[d];
        busy |= this.upFull[rs] | this.downFull[rd] | blockedCross;
        // the racks' links to the spines keep their share of free timeslots for FCP too
        if (this.reserveEvery > 0)
          busy |= this.reserved(first, this.n + 2 * rs) | this.reserved(first, this.n + 2 * rd + 1);
      }
      let free = ~busy & FULL;
      let took = 0;
      while (free !== 0 && p.demand > 0) {
        const bit = 31 - Math.clz32(free & -free);
        free &= free - 1;
        out.push({ slot: first + bit, src: s, dst: d });
        p.demand--;
        took++;
        p.last = first + bit;
        const m = 1 << bit;
        this.srcBusy[s] |= m;
        this.dstBusy[d] |= m;
        if (p.crossRack) {
          if (++this.upUsed[rs * BATCH + bit] >= cap) this.upFull[rs] |= m;
          if (++this.downUsed[rd * BATCH + bit] >= cap) this.downFull[rd] |= m;
        }
      }
      if (took > 0) {
        this.pendingTotal -= took;
        this.allocated += took;
        if (this.srcBusy[s] === FULL) fullSrc++;
        if (this.dstBusy[d] === FULL) fullDst++;
      }
      if (p.demand === 0) p.queued = false;
      else if (took > 0) moved.push(p);
      else kept.push(p);
    }
    // the pairs not visited keep their place after the visited ones that were not allocated
    for (; i < order.length; i++) kept.push(order[i]);
    for (const p of moved) kept.push(p);
    this.active = kept.filter((p) => p.queued);
    return out;
  }

  /** the batch's timeslots (a mask) an endpoint keeps free: one in `reserveEvery`, at phase `k` */
  private reserved(first: number, k: number): number {
    const e = this.reserveEvery;
    let m = 0;
    for (let bit = (e - ((first + k) % e)) % e; bit < BATCH; bit += e) m |= 1 << bit;
    return m;
  }

  private compact(): void {
    if (this.active.length === 0) return;
    for (const p of this.active) p.queued = false;
    this.active = [];
  }
}

/** min-FCT: fewest remaining timeslots first, then least recently allocated, then pair order */
function byFewestRemaining(a: Pair, b: Pair): number {
  return a.demand - b.demand || a.last - b.last || a.src - b.src || a.dst - b.dst;
}
