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

export type Normalize = 'f-norm' | 'u-norm' | 'none';

export class Ned {
  readonly price: Float64Array;
  /** per link: the allocated load Σ x_s of the last iteration, and its ratio to capacity */
  readonly load: Float64Array;
  readonly ratio: Float64Array;
  /** per link, interleaved: [load, Σ x²/w] of the iteration being computed (one cache line for both) */
  private readonly acc: Float64Array;
  /** per slot: flow id, weight, rate, normalized rate, path length, links */
  private ids: Int32Array;
  private weight: Float64Array;
  private rate: Float64Array;
  private norm: Float64Array;
  private pathLen: Uint8Array;
  private path: Int32Array;
  /** per slot: the slowest link of its path (a rate never exceeds it) */
  private capMin: Float64Array;
  private count = 0;
  private readonly slotOf = new Map<number, number>();
  iterations = 0;

  constructor(
    readonly capacity: Float64Array,
    readonly gamma: number,
    capacityFlows = 1024,
  ) {
    const n = capacity.length;
    this.price = new Float64Array(n).fill(1);
    this.load = new Float64Array(n);
    this.ratio = new Float64Array(n);
    this.acc = new Float64Array(2 * n);
    this.ids = new Int32Array(capacityFlows);
    this.weight = new Float64Array(capacityFlows);
    this.rate = new Float64Array(capacityFlows);
    this.norm = new Float64Array(capacityFlows);
    this.pathLen = new Uint8Array(capacityFlows);
    this.path = new Int32Array(capacityFlows * MAX_PATH);
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
    if (this.slotOf.has(id)) this.remove(id);
    if (this.count === this.ids.length) this.grow();
    const s = this.count++;
    this.slotOf.set(id, s);
    this.ids[s] = id;
    this.weight[s] = weight;
    this.pathLen[s] = links.length;
    let cap = Number.POSITIVE_INFINITY;
    for (let i = 0; i < links.length; i++) {
      this.path[s * MAX_PATH + i] = links[i];
      cap = Math.min(cap, this.capacity[links[i]]);
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
      this.ids[s] = this.ids[last];
      this.weight[s] = this.weight[last];
      this.rate[s] = this.rate[last];
      this.norm[s] = this.norm[last];
      this.pathLen[s] = this.pathLen[last];
      this.capMin[s] = this.capMin[last];
      this.path.copyWithin(s * MAX_PATH, last * MAX_PATH, last * MAX_PATH + MAX_PATH);
      this.slotOf.set(this.ids[s], s);
    }
  }

  /** eq. 3 for slot s: w / Σ prices, bounded by the slowest link of its path (prices may all be 0) */
  private rateOf(s: number): number {
    let sum = 0;
    const base = s * MAX_PATH;
    for (let i = 0; i < this.pathLen[s]; i++) sum += this.price[this.path[base + i]];
    const cap = this.capMin[s];
    const x = sum > 0 ? this.weight[s] / sum : cap;
    return Math.min(x, cap);
  }

  /** One NED iteration: rates from prices (eq. 3), then prices from the over-allocation (eq. 4). */
  iterate(): void {
    this.iterations++;
    const acc = this.acc;
    acc.fill(0);
    const path = this.path;
    const price = this.price;
    const pathLen = this.pathLen;
    const weight = this.weight;
    const rate = this.rate;
    const capMin = this.capMin;
    const count = this.count;
    for (let s = 0; s < count; s++) {
      const base = s * MAX_PATH;
      const end = base + pathLen[s];
      let sum = 0;
      for (let i = base; i < end; i++) sum += price[path[i]];
      const cap = capMin[s];
      const w = weight[s];
      let x = sum > 0 ? w / sum : cap;
      if (x > cap) x = cap;
      rate[s] = x;
      const d = (x * x) / w;
      for (let i = base; i < end; i++) {
        const l = path[i] << 1;
        acc[l] += x;
        acc[l + 1] += d;
      }
    }
    const g = this.gamma;
    const cap = this.capacity;
    const load = this.load;
    for (let l = 0; l < price.length; l++) {
      // H_ll = -Σ x²/w; a link no flow crosses keeps its price
      const ld = acc[2 * l];
      const h = acc[2 * l + 1];
      load[l] = ld;
      if (h === 0) continue;
      price[l] = Math.max(price[l] + (g * (ld - cap[l])) / h, 0);
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
    for (let l = 0; l < ratio.length; l++) {
      ratio[l] = this.capacity[l] > 0 ? this.load[l] / this.capacity[l] : 0;
      if (ratio[l] > worst) worst = ratio[l];
    }
    const path = this.path;
    const pathLen = this.pathLen;
    const rate = this.rate;
    const norm = this.norm;
    const count = this.count;
    for (let s = 0; s < count; s++) {
      let r = 1;
      if (kind === 'u-norm') r = worst;
      else if (kind === 'f-norm') {
        r = 0;
        const base = s * MAX_PATH;
        const end = base + pathLen[s];
        for (let i = base; i < end; i++) {
          const q = ratio[path[i]];
          if (q > r) r = q;
        }
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
    for (let s = 0; s < this.count; s++) {
      const base = s * MAX_PATH;
      for (let i = base; i < base + this.pathLen[s]; i++) after[path[i]] += this.norm[s];
    }
    let before = 0;
    let over = 0;
    for (let l = 0; l < cap.length; l++) {
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

  /** every flow: [id, normalized rate] */
  *entries(): IterableIterator<[number, number]> {
    for (let s = 0; s < this.count; s++) yield [this.ids[s], this.norm[s]];
  }

  private grow(): void {
    const n = this.ids.length * 2;
    const g = <T extends Int32Array | Float64Array | Uint8Array>(a: T, m = 1): T => {
      const b = new (a.constructor as new (k: number) => T)(n * m);
      b.set(a);
      return b;
    };
    this.ids = g(this.ids);
    this.weight = g(this.weight);
    this.rate = g(this.rate);
    this.norm = g(this.norm);
    this.pathLen = g(this.pathLen);
    this.path = g(this.path, MAX_PATH);
    this.capMin = g(this.capMin);
  }
}
