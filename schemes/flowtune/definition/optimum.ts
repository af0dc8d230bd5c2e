/**
 * The proportional-fair optimum of a set of flows on capacitated links, computed independently of
 * NED (the allocator's own optimizer, arbiter/ned.ts), so that the summary's optimality and
 * convergence figures do not measure NED against itself.
 *
 * The problem (Flowtune §3): maximize Σ log x_f subject to Σ_{f through l} x_f ≤ c_l. Its dual is
 * minimize D(p) = Σ_l c_l p_l − Σ_f log(Σ_{l on f} p_l) over prices p ≥ 0, with x_f = 1 / Σ_{l on f} p_l.
 * This solves the dual by exact coordinate descent (cyclic, one link at a time): with the other prices
 * fixed, D is convex in p_l and its minimum over p_l ≥ 0 is where link l is exactly full,
 * Σ_{f through l} 1 / (q_f + p_l) = c_l (q_f: the rest of f's path's price), or p_l = 0 where the
 * link is not full at price 0. A safeguarded Newton step finds each root. NED instead moves every
 * price at once by a Newton-like step over the link's load; the two share only the problem.
 *
 * Sweeps stop when every link's KKT condition holds to `tolerance` (a priced link full, an unpriced
 * one not over), or after `maxSweeps`. The prices are kept between calls (warm start), so a flow set
 * that changes by one flow settles in a few sweeps.
 */
export class ProportionalFair {
  /** link prices, per link index */
  readonly price: Float64Array;
  private readonly paths = new Map<number, readonly number[]>();
  /** flows through each link */
  private readonly through: Array<Set<number>>;
  sweeps = 0;

  constructor(
    /** capacity per link (any unit: the rates come out in it) */
    readonly capacity: readonly number[],
    readonly tolerance = 1e-9,
    readonly maxSweeps = 100_000,
  ) {
    this.price = new Float64Array(capacity.length);
    this.through = capacity.map(() => new Set<number>());
  }

  /** a flow on its path; a flow already in the problem moves to the new path (a reroute) */
  add(flow: number, path: readonly number[]): void {
    if (path.length === 0) throw new Error(`flow ${flow} crosses no link`);
    this.remove(flow);
    this.paths.set(flow, path);
    for (const l of path) this.through[l].add(flow);
  }

  remove(flow: number): void {
    const path = this.paths.get(flow);
    if (path === undefined) return;
    this.paths.delete(flow);
    for (const l of path) this.through[l].delete(flow);
  }

  get flows(): number {
    return this.paths.size;
  }

  /** the price of a flow's path */
  private pathPrice(flow: number): number {
    let q = 0;
    for (const l of this.paths.get(flow)!) q += this.price[l];
    return q;
  }

  /** the optimal rates (solving first), per flow */
  solve(): Map<number, number> {
    for (let l = 0; l < this.price.length; l++) if (this.through[l].size === 0) this.price[l] = 0;
    for (let sweep = 0; sweep < this.maxSweeps; sweep++) {
      this.sweeps++;
      for (let l = 0; l < this.price.length; l++) if (this.through[l].size > 0) this.settle(l);
      if (this.satisfied()) break;
    }
    const out = new Map<number, number>();
    for (const f of this.paths.keys()) out.set(f, 1 / this.pathPrice(f));
    return out;
  }

  /** link l's price that makes it exactly full given the others (0 where it is not full at 0) */
  private settle(l: number): void {
    const c = this.capacity[l];
    const q: number[] = [];
    let free = false;
    for (const f of this.through[l]) {
      const rest = this.pathPrice(f) - this.price[l];
      q.push(rest);
      if (rest <= 0) free = true;
    }
    const load = (p: number) => {
      let s = 0;
      for (const x of q) s += 1 / (x + p);
      return s;
    };
    // a flow with no other price would take any rate at price 0: the link must be priced
    if (!free && load(0) <= c) {
      this.price[l] = 0;
      return;
    }
    // g(p) = load(p) − c is decreasing and convex in p: bracket [lo, hi], Newton inside it
    let lo = 0;
    let hi = q.length / c; // load(hi) ≤ n / hi = c
    let p = Math.min(Math.max(this.price[l], lo), hi);
    if (!(p > 0)) p = hi / 2;
    for (let k = 0; k < 200; k++) {
      let g = -c;
      let dg = 0;
      for (const x of q) {
        const r = 1 / (x + p);
        g += r;
        dg -= r * r;
      }
      if (g > 0) lo = p;
      else hi = p;
      if (Math.abs(g) <= 1e-15 * c || hi - lo <= 1e-15 * hi) break;
      const next = p - g / dg;
      p = next > lo && next < hi ? next : (lo + hi) / 2;
    }
    this.price[l] = p;
  }

  /** every link's KKT condition within the tolerance */
  private satisfied(): boolean {
    const rate = new Map<number, number>();
    for (const f of this.paths.keys()) rate.set(f, 1 / this.pathPrice(f));
    for (let l = 0; l < this.price.length; l++) {
      let load = 0;
      for (const f of this.through[l]) load += rate.get(f)!;
      const c = this.capacity[l];
      if (load > c * (1 + this.tolerance)) return false;
      if (this.price[l] > 0 && load < c * (1 - this.tolerance)) return false;
    }
    return true;
  }
}
