/**
 * Flowtune's rate allocator (TR'16 §3–§4): Newton-Exact-Diagonal over link prices, for weighted
 * proportional fairness (U_s(x) = w_s log x), and the rate normalizers that keep every link within its
 * capacity.
 *
 * One NED iteration (Algorithm 1): every flow takes the rate its path's prices give it,
 * x_s = w_s / Σ_{ℓ∈L(s)} p_ℓ (eq. 3); then every link's price moves by its over-allocation
 * G_ℓ = Σ x_s − c_ℓ scaled by the exact diagonal of the Hessian, H_ℓℓ = Σ ∂x_s/∂p_ℓ = −Σ x_s²/w_s:
 * p_ℓ ← max(0, p_ℓ − γ G_ℓ / H_ℓℓ) (eq. 4). The allocator is online: flowlets come and go between
 * iterations and prices are never reset (they start at 1 when the allocator starts).
 *
 * Normalization (§4): U-NORM scales every rate by the most over-allocated link's ratio
 * r* = max_ℓ Σx/c (eq. 8); F-NORM scales each flow by the ratio of the most congested link on its own
 * path (eq. 9), so only the flows through congested links slow down.
 *
 * Pure logic over typed arrays (the bench's hot path): flows live in dense slots, their links in a
 * fixed-width table; rates are in the capacities' unit (here Gbit/s).
 */

/** links a flow's path may have at most (host, ToR, spine, ToR, host: 4; a FatTree: 6) */
export const MAX_PATH = 8;

/** the path stride of two-tier fabrics: host up, ToR up, spine down, host down */
const STRIDE_4 = 4;

export type Normalize = 'f-norm' | 'u-norm' | 'none';

export class Ned {
  /** per link, and one more: the padding link shorter paths end in (price 0, never updated) */
  readonly price: Float64Array;
  /** per link: the allocated load Σ x_s of the last iteration, and its ratio to capacity */
  readonly load: Float64Array;
  readonly ratio: Float64Array;
  /** per link, interleaved: [load, Σ x²/w] of the iteration being computed (one cache line for both) */
  private readonly acc: Float64Array;
  /** per slot: flow id, weight, rate, normalized rate, links (padded to `stride` with the padding link) */
  private ids: Int32Array;
  private weight: Float64Array;
  private rate: Float64Array;
  private norm: Float64Array;
  private path: Int32Array;
  /** per slot: the slowest link of its path (a rate never exceeds it) */
  private capMin: Float64Array;
  private count = 0;
  private readonly slotOf = new Map<number, number>();
  /** links per path slot: 4 (unrolled) until a longer path comes, then MAX_PATH */
  private stride = STRIDE_4;
  /** the padding link's index (= the number of real links) */
  private readonly pad: number;
  /** per link: 1 / capacity (0 for a link of no capacity) */
  private readonly invCap: Float64Array;
  iterations = 0;

  constructor(
    readonly capacity: Float64Array,
    readonly gamma: number,
    capacityFlows = 1024,
  ) {
    const n = capacity.length;
    this.pad = n;
    this.invCap = capacity.map((c) => (c > 0 ? 1 / c : 0));
    this.price = new Float64Array(n + 1).fill(1);
    this.price[n] = 0;
    this.load = new Float64Array(n + 1);
    this.ratio = new Float64Array(n + 1);
    this.acc = new Float64Array(2 * (n + 1));
    this.ids = new Int32Array(capacityFlows);
    this.weight = new Float64Array(capacityFlows);
    this.rate = new Float64Array(capacityFlows);
    this.norm = new Float64Array(capacityFlows);
    this.path = new Int32Array(capacityFlows * this.stride);
    this.capMin = new Float64Array(capacityFlows);
  }

  get flows(): number {
    return this.count;
  }

  has(id: number): boolean {
    return this.slotOf.has(id);
  }

  /** a flowlet starts: its rate comes from the current prices (§3: "initial rates ... using current prices") */
  add(id: number, links: readonly number[], weight = 1): void {
    if (links.length === 0 || links.length > MAX_PATH)
      throw new RangeError(`ned: a path of ${links.length} links`);
    for (const l of links)
      if (!(Number.isInteger(l) && l >= 0 && l < this.pad)) throw new RangeError(`ned: no link ${l}`);
    if (this.slotOf.has(id)) this.remove(id);
    if (links.length > this.stride) this.widen();
    if (this.count === this.ids.length) this.grow();
    const s = this.count++;
    this.slotOf.set(id, s);
    this.ids[s] = id;
    this.weight[s] = weight;
    let cap = Number.POSITIVE_INFINITY;
    const base = s * this.stride;
    for (let i = 0; i < this.stride; i++) {
      const l = i < links.length ? links[i] : this.pad;
      this.path[base + i] = l;
      if (i < links.length) cap = Math.min(cap, this.capacity[l]);
    }
    this.capMin[s] = cap;
    this.rate[s] = this.rateOf(s);
    this.norm[s] = this.rate[s];
  }

  /** a flowlet ends */
  remove(id: number): void {
    const s = this.slotOf.get(id);
    if (s === undefined) return;
    this.slotOf.delete(id);
    const last = --this.count;
    if (s !== last) {
      const k = this.stride;
      this.ids[s] = this.ids[last];
      this.weight[s] = this.weight[last];
      this.rate[s] = this.rate[last];
      this.norm[s] = this.norm[last];
      this.capMin[s] = this.capMin[last];
      this.path.copyWithin(s * k, last * k, last * k + k);
      this.slotOf.set(this.ids[s], s);
    }
  }

  /** eq. 3 for slot s: w / Σ prices, bounded by the slowest link of its path (prices may all be 0) */
  private rateOf(s: number): number {
    let sum = 0;
    const base = s * this.stride;
    for (let i = 0; i < this.stride; i++) sum += this.price[this.path[base + i]];
    const cap = this.capMin[s];
    const x = sum > 0 ? this.weight[s] / sum : cap;
    return Math.min(x, cap);
  }

  /** One NED iteration: rates from prices (eq. 3), then prices from the over-allocation (eq. 4). */
  iterate(): void {
    this.iterations++;
    const acc = this.acc;
    acc.fill(0);
    if (this.stride === STRIDE_4) this.rates4();
    else this.ratesWide();
    const price = this.price;
    const g = this.gamma;
    const cap = this.capacity;
    const load = this.load;
    for (let l = 0; l < this.pad; l++) {
      // H_ll = -Σ x²/w; a link no flow crosses keeps its price
      const ld = acc[2 * l];
      const h = acc[2 * l + 1];
      load[l] = ld;
      if (h === 0) continue;
      const p = price[l] + (g * (ld - cap[l])) / h;
      price[l] = Math.max(p, 0);
    }
  }

  /** eq. 3 for every flow, and the links' sums, for paths of at most 4 links (unrolled: the hot path) */
  private rates4(): void {
    const acc = this.acc;
    const path = this.path;
    const price = this.price;
    const weight = this.weight;
    const rate = this.rate;
    const capMin = this.capMin;
    const count = this.count;
    for (let s = 0; s < count; s++) {
      const b = s << 2;
      const p0 = path[b];
      const p1 = path[b + 1];
      const p2 = path[b + 2];
      const p3 = path[b + 3];
      const sum = price[p0] + price[p1] + price[p2] + price[p3];
      const l0 = p0 << 1;
      const l1 = p1 << 1;
      const l2 = p2 << 1;
      const l3 = p3 << 1;
      const cap = capMin[s];
      const w = weight[s];
      let x = sum > 0 ? w / sum : cap;
      if (x > cap) x = cap;
      rate[s] = x;
      const d = w === 1 ? x * x : (x * x) / w;
      acc[l0] += x;
      acc[l0 + 1] += d;
      acc[l1] += x;
      acc[l1 + 1] += d;
      acc[l2] += x;
      acc[l2 + 1] += d;
      acc[l3] += x;
      acc[l3 + 1] += d;
    }
  }

  private ratesWide(): void {
    const acc = this.acc;
    const path = this.path;
    const price = this.price;
    const k = this.stride;
    for (let s = 0; s < this.count; s++) {
      const base = s * k;
      let sum = 0;
      for (let i = base; i < base + k; i++) sum += price[path[i]];
      const cap = this.capMin[s];
      const w = this.weight[s];
      let x = sum > 0 ? w / sum : cap;
      if (x > cap) x = cap;
      this.rate[s] = x;
      const d = (x * x) / w;
      for (let i = base; i < base + k; i++) {
        const l = path[i] << 1;
        acc[l] += x;
        acc[l + 1] += d;
      }
    }
  }

  /**
   * The rates to hand out (§4), from the last iteration's rates and loads: per flow, its rate over the
   * worst ratio of load to capacity on its path (F-NORM), over the worst of the network (U-NORM), or
   * as computed. Returns the normalized rates by slot; `rateOf(id)` reads one.
   */
  normalize(kind: Normalize): Float64Array {
    const ratio = this.ratio;
    let worst = 0;
    const load = this.load;
    const inv = this.invCap;
    for (let l = 0; l < this.pad; l++) {
      const q = load[l] * inv[l];
      ratio[l] = q;
      if (q > worst) worst = q;
    }
    ratio[this.pad] = 0;
    const rate = this.rate;
    const norm = this.norm;
    const count = this.count;
    if (kind === 'none') {
      norm.set(rate.subarray(0, count));
      return norm;
    }
    if (kind === 'u-norm') {
      const r = worst > 0 ? worst : 1;
      for (let s = 0; s < count; s++) norm[s] = rate[s] / r;
      return norm;
    }
    const path = this.path;
    const k = this.stride;
    if (k === STRIDE_4) {
      for (let s = 0; s < count; s++) {
        const b = s << 2;
        const q0 = ratio[path[b]];
        const q1 = ratio[path[b + 1]];
        const q2 = ratio[path[b + 2]];
        const q3 = ratio[path[b + 3]];
        // biome-ignore lint/complexity/useMathMinMax: measured 2 µs of the bench's 30 faster than Math.max
        const a = q0 > q1 ? q0 : q1;
        // biome-ignore lint/complexity/useMathMinMax: as above
        const c = q2 > q3 ? q2 : q3;
        // biome-ignore lint/complexity/useMathMinMax: as above
        const r = a > c ? a : c;
        norm[s] = r > 0 ? rate[s] / r : rate[s];
      }
      return norm;
    }
    for (let s = 0; s < count; s++) {
      const base = s * k;
      let r = 0;
      for (let i = base; i < base + k; i++) {
        const q = ratio[path[i]];
        if (q > r) r = q;
      }
      norm[s] = r > 0 ? rate[s] / r : rate[s];
    }
    return norm;
  }

  /**
   * Over-allocation of the last iteration (§6.6, figure 12): Σ over links of max(0, load − capacity),
   * of the rates as computed and of the rates `normalize` handed out (both in the capacities' unit).
   */
  overAllocation(): { before: number; after: number } {
    const cap = this.capacity;
    const after = this.acc;
    after.fill(0);
    const path = this.path;
    const k = this.stride;
    for (let s = 0; s < this.count; s++) {
      const base = s * k;
      for (let i = base; i < base + k; i++) after[path[i]] += this.norm[s];
    }
    let before = 0;
    let over = 0;
    for (let l = 0; l < this.pad; l++) {
      if (this.load[l] > cap[l]) before += this.load[l] - cap[l];
      if (after[l] > cap[l] * (1 + 1e-9)) over += after[l] - cap[l];
    }
    return { before, after: over };
  }

  /** the normalized rate of flow `id` from the last `normalize` (undefined: no such flow) */
  rateOfFlow(id: number): number | undefined {
    const s = this.slotOf.get(id);
    return s === undefined ? undefined : this.norm[s];
  }

  /** every flow's id and normalized rate, without allocating (the allocator's every iteration) */
  forEachRate(fn: (id: number, rate: number) => void): void {
    for (let s = 0; s < this.count; s++) fn(this.ids[s], this.norm[s]);
  }

  /** every flow: [id, normalized rate] */
  *entries(): IterableIterator<[number, number]> {
    for (let s = 0; s < this.count; s++) yield [this.ids[s], this.norm[s]];
  }

  private grow(): void {
    this.resize(this.ids.length * 2, this.stride);
  }

  /** a path longer than 4 links: every slot takes MAX_PATH links (the general loops) */
  private widen(): void {
    const old = this.path;
    const k = this.stride;
    this.resize(this.ids.length, MAX_PATH);
    for (let s = 0; s < this.count; s++)
      for (let i = 0; i < MAX_PATH; i++) this.path[s * MAX_PATH + i] = i < k ? old[s * k + i] : this.pad;
  }

  private resize(n: number, stride: number): void {
    const g = <T extends Int32Array | Float64Array>(a: T): T => {
      const b = new (a.constructor as new (k: number) => T)(n);
      b.set(a.subarray(0, Math.min(a.length, n)));
      return b;
    };
    this.ids = g(this.ids);
    this.weight = g(this.weight);
    this.rate = g(this.rate);
    this.norm = g(this.norm);
    this.capMin = g(this.capMin);
    if (stride === this.stride) {
      const p = new Int32Array(n * stride);
      p.set(this.path);
      this.path = p;
    } else {
      this.path = new Int32Array(n * stride);
      this.stride = stride;
    }
  }
}
