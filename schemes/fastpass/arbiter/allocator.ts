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
 * Pure logic: no clock, no I/O. Max-min keeps its order with little sorting: pairs live in a queue
 * ordered by their last allocated timeslot, a batch visits it front to back, and only the pairs it
 * allocates move, to the back — the pipelined allocator's "only demands allocated in timeslot t change
 * order" (§3.1). A batch stops early once every source or every destination is full.
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
  /** timeslots taken in the batch being allocated */
  took = 0;
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
  /**
   * pairs with demand, in visiting order (max-min: least recently allocated first): q[head..]; a
   * batch keeps the pairs it got nothing for in place and appends the ones it allocated
   */
  private q: Pair[] = [];
  private head = 0;
  /** per endpoint: pairs with demand it is the source / destination of; endpoints with any */
  private readonly srcLive: Int32Array;
  /** the last batch's timeslots (see allocate) */
  readonly outSlot: Float64Array;
  readonly outSrc: Int32Array;
  readonly outDst: Int32Array;
  private readonly dstLive: Int32Array;
  private liveSrcs = 0;
  private liveDsts = 0;
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
    // a batch allocates at most one timeslot per source and timeslot
    this.outSlot = new Float64Array(this.n * BATCH);
    this.outSrc = new Int32Array(this.n * BATCH);
    this.outDst = new Int32Array(this.n * BATCH);
    this.srcLive = new Int32Array(this.n);
    this.dstLive = new Int32Array(this.n);
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
    if (p.demand === 0) this.live(p, 1);
    p.demand += slots;
    this.pendingTotal += slots;
    if (!p.queued) {
      p.queued = true;
      this.q.push(p);
    }
  }

  /** a pair's demand became positive (+1) or ran out (-1): the endpoints' live counts follow */
  private live(p: Pair, d: 1 | -1): void {
    if ((this.srcLive[p.src] += d) === (d > 0 ? 1 : 0)) this.liveSrcs += d;
    if ((this.dstLive[p.dst] += d) === (d > 0 ? 1 : 0)) this.liveDsts += d;
  }

  /** forgets every demand of `src` (its session was reset: it asks again from zero) */
  clearSource(src: number): void {
    for (let i = this.head; i < this.q.length; i++) {
      const p = this.q[i];
      if (p.src !== src || p.demand === 0) continue;
      this.pendingTotal -= p.demand;
      p.demand = 0;
      this.live(p, -1);
    }
  }

  /** pending timeslots of one pair, and of all */
  pending(src?: number, dst?: number): number {
    if (src === undefined || dst === undefined) return this.pendingTotal;
    return this.pairs.get(src * this.n + dst)?.demand ?? 0;
  }

  /**
   * Allocates timeslots `first` .. `first + 7` (a batch) and returns them. Max-min fills the batch in
   * passes over the pairs in order, one timeslot per pair per pass (the first free one in the
   * bitmaps), so a pair does not take a whole batch while others wait: the order holds timeslot by
   * timeslot, as Figure 4 allocates one timeslot at a time. Min-FCT lets each pair, fewest remaining
   * first, take all the timeslots it can.
   */
  allocateBatch(first: number): Allocation[] {
    const n = this.allocate(first);
    const out: Allocation[] = new Array(n);
    for (let i = 0; i < n; i++) out[i] = { slot: this.outSlot[i], src: this.outSrc[i], dst: this.outDst[i] };
    return out;
  }

  /**
   * As allocateBatch, without an object per timeslot (the arbiter's hot path): returns how many were
   * allocated, in `outSlot`, `outSrc`, `outDst`.
   */
  allocate(first: number): number {
    if (this.pendingTotal === 0) {
      this.compact();
      return 0;
    }
    this.resetBitmaps(first);
    if (this.policy === 'min-fct') {
      this.q = this.q.slice(this.head).sort(byFewestRemaining);
      this.head = 0;
    }
    return this.fill(first);
  }

  /** the passes over the pairs in order (see allocateBatch) */
  private fill(first: number): number {
    const outSlot = this.outSlot;
    const outSrc = this.outSrc;
    const outDst = this.outDst;
    let count = 0;
    const q = this.q;
    const head = this.head;
    const cap = this.capacity;
    const blockedCross = cap === 0 ? FULL : 0;
    // once every live source or every live destination is full, nothing more fits
    let fullSrc = 0;
    let fullDst = 0;
    const moved: Pair[] = [];
    // max-min: one timeslot per pair per pass; min-FCT: the shortest takes all it can first
    const perVisit = this.policy === 'min-fct' ? BATCH : 1;
    let end = head;
    let progress = true;
    for (let pass = 0; pass < BATCH && progress; pass++) {
      progress = false;
      for (let i = head; i < q.length; i++) {
        if (fullSrc >= this.liveSrcs || fullDst >= this.liveDsts) break;
        if (i >= end) end = i + 1;
        const p = q[i];
        if (p.demand === 0) continue;
        const s = p.src;
        const d = p.dst;
        let busy = this.srcBusy[s] | this.dstBusy[d];
        let rs = 0;
        let rd = 0;
        if (p.crossRack) {
          rs = this.rackOf[s];
          rd = this.rackOf[d];
          busy |= this.upFull[rs] | this.downFull[rd] | blockedCross;
        }
        let free = ~busy & FULL;
        for (let k = 0; k < perVisit && free !== 0; k++) {
          const bit = 31 - Math.clz32(free & -free);
          const m = 1 << bit;
          free &= ~m;
          outSlot[count] = first + bit;
          outSrc[count] = s;
          outDst[count++] = d;
          p.last = first + bit;
          if (p.took++ === 0) moved.push(p);
          this.pendingTotal--;
          this.allocated++;
          progress = true;
          if ((this.srcBusy[s] |= m) === FULL) fullSrc++;
          if ((this.dstBusy[d] |= m) === FULL) fullDst++;
          if (p.crossRack) {
            if (++this.upUsed[rs * BATCH + bit] >= cap) {
              this.upFull[rs] |= m;
              free &= ~m;
            }
            if (++this.downUsed[rd * BATCH + bit] >= cap) this.downFull[rd] |= m;
          }
          if (--p.demand === 0) {
            // a source or destination out of demand no longer counts toward "all full"
            if (this.srcLive[s] === 1 && this.srcBusy[s] === FULL) fullSrc--;
            if (this.dstLive[d] === 1 && this.dstBusy[d] === FULL) fullDst--;
            this.live(p, -1);
            break;
          }
        }
      }
    }
    // next order: the visited pairs that got nothing keep their place (just before the pairs not
    // visited), the ones that got timeslots follow at the back by their last timeslot
    let w = end;
    for (let i = end - 1; i >= head; i--) {
      const p = q[i];
      if (p.took === 0 && p.demand > 0) q[--w] = p;
      else if (p.demand === 0) p.queued = false;
    }
    this.head = w;
    moved.sort((a, b) => a.last - b.last);
    for (const p of moved) {
      p.took = 0;
      if (p.demand > 0) q.push(p);
      else p.queued = false;
    }
    if (this.head > 1024 && this.head * 2 > q.length) {
      this.q = q.slice(this.head);
      this.head = 0;
    }
    return count;
  }

  /**
   * Clears the bitmaps for a batch; the timeslots kept free for FCP (`reserve`) start out busy: an
   * endpoint's as a destination and as a source, a rack's toward and from the spines.
   */
  private resetBitmaps(first: number): void {
    const e = this.reserveEvery;
    for (let x = 0; x < this.n; x++) {
      this.srcBusy[x] = e > 0 ? this.reserved(first, x + 1) : 0;
      this.dstBusy[x] = e > 0 ? this.reserved(first, x) : 0;
    }
    this.upUsed.fill(0);
    this.downUsed.fill(0);
    for (let r = 0; r < this.racks; r++) {
      this.upFull[r] = e > 0 ? this.reserved(first, this.n + 2 * r) : 0;
      this.downFull[r] = e > 0 ? this.reserved(first, this.n + 2 * r + 1) : 0;
    }
  }

  /** the batch's timeslots (a mask) an endpoint keeps free: one in `reserveEvery`, at phase `k` */
  private reserved(first: number, k: number): number {
    const e = this.reserveEvery;
    let m = 0;
    for (let bit = (e - ((first + k) % e)) % e; bit < BATCH; bit += e) m |= 1 << bit;
    return m;
  }

  private compact(): void {
    if (this.q.length === 0) return;
    for (let i = this.head; i < this.q.length; i++) this.q[i].queued = false;
    this.q = [];
    this.head = 0;
  }
}

/** min-FCT: fewest remaining timeslots first, then least recently allocated, then pair order */
function byFewestRemaining(a: Pair, b: Pair): number {
  return a.demand - b.demand || a.last - b.last || a.src - b.src || a.dst - b.dst;
}
