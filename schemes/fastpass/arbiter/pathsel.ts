/**
 * Fastpass path selection (SIGCOMM'14 §4): the packets of one timeslot that cross racks form a
 * bipartite multigraph of ToRs (source ToR → destination ToR); an edge colouring gives every packet a
 * colour such that no two packets of one ToR share a colour, and a colour is a spine, so no link
 * carries two packets in the timeslot. Fast colouring by Euler splits: pad the graph to be D-regular,
 * split an even-degree regular graph into two halves along its Euler circuits (alternate edges of each
 * closed trail), colour the halves apart; an odd degree first peels off one perfect matching (every
 * regular bipartite graph has one) as a colour of its own — the general-degree case of §4. Links faster
 * than the host links count as several virtual spines (§4: "replace each physical switch with
 * high-capacity links with multiple switches with low capacity links").
 *
 * Pure logic over numbers: `colourEdges` returns one colour per edge, below the graph's maximum degree;
 * `selectPaths` turns a batch of allocations into planes and cores.
 */
import type { FastpassFabric } from '../wire.js';

/**
 * Colours the edges `left[i] → right[i]` (vertices 0..n-1 on each side) so that no two edges at a
 * vertex share a colour, with as many colours as the maximum degree D (König). Returns the colours.
 * When `maxColours` allows, the graph is padded to the next power of two above D instead, so that
 * Euler splits alone colour it (no perfect matching to search for), at the price of colours beyond D.
 */
export function colourEdges(
  n: number,
  left: ArrayLike<number>,
  right: ArrayLike<number>,
  maxColours = 0,
): Int32Array {
  const m = left.length;
  const colours = new Int32Array(m);
  if (m === 0) return colours;
  const g = Graph.shared(n, m);
  const degL = g.degL;
  const degR = g.degR;
  for (let i = 0; i < m; i++) {
    degL[left[i]]++;
    degR[right[i]]++;
  }
  let D = 0;
  for (let v = 0; v < n; v++) D = Math.max(D, degL[v], degR[v]);
  const pow2 = 2 ** Math.ceil(Math.log2(D));
  if (pow2 <= maxColours) D = pow2;
  // pad to D-regular with dummy edges between vertices short of degree D (both sides lack the same total)
  g.grow(n * D);
  const us = g.us;
  const vs = g.vs;
  for (let i = 0; i < m; i++) {
    us[i] = left[i];
    vs[i] = right[i];
  }
  let e = m;
  let j = 0;
  for (let u = 0; u < n; u++) {
    while (degL[u] < D) {
      while (degR[j] >= D) j++;
      const k = Math.min(D - degL[u], D - degR[j]);
      for (let t = 0; t < k; t++) {
        us[e] = u;
        vs[e++] = j;
      }
      degL[u] += k;
      degR[j] += k;
    }
  }
  for (let i = 0; i < e; i++) g.order[i] = i;
  g.colour(0, e, D, 0, g.out);
  colours.set(g.out.subarray(0, m));
  return colours;
}

/** The multigraph being coloured, with buffers kept from call to call (one per process: no threads). */
class Graph {
  private static cached: Graph | null = null;

  /** a graph for `n` vertices a side and at least `m` edges, its degree counts zeroed */
  static shared(n: number, m: number): Graph {
    let g = Graph.cached;
    if (g === null || g.n !== n) Graph.cached = g = new Graph(n);
    g.grow(m);
    g.degL.fill(0);
    g.degR.fill(0);
    return g;
  }

  readonly degL: Int32Array;
  readonly degR: Int32Array;
  /** per vertex (left u, right n + v): incident edge ids of the current subgraph */
  private readonly adjStart: Int32Array;
  private readonly ptr: Int32Array;
  private adj = new Int32Array(0);
  private used = new Uint8Array(0);
  us = new Int32Array(0);
  vs = new Int32Array(0);
  out = new Int32Array(0);
  order = new Int32Array(0);
  private tmp = new Int32Array(0);
  private readonly matchOfRight: Int32Array;
  private readonly matchOfLeft: Int32Array;
  /** per edge: the edge paired with it at its left end, at its right end (Euler splits) */
  private pairL = new Int32Array(0);
  private pairR = new Int32Array(0);
  private readonly seen: Int32Array;

  private constructor(private readonly n: number) {
    this.degL = new Int32Array(n);
    this.degR = new Int32Array(n);
    this.adjStart = new Int32Array(2 * n + 1);
    this.ptr = new Int32Array(2 * n);
    this.matchOfRight = new Int32Array(n);
    this.matchOfLeft = new Int32Array(n);
    this.seen = new Int32Array(n);
  }

  /** room for `m` edges (keeps what the first edges hold) */
  grow(m: number): void {
    if (this.us.length >= m) return;
    const cap = Math.max(m, 2 * this.us.length);
    const us = new Int32Array(cap);
    us.set(this.us);
    const vs = new Int32Array(cap);
    vs.set(this.vs);
    this.us = us;
    this.vs = vs;
    this.adj = new Int32Array(2 * cap);
    this.used = new Uint8Array(cap);
    this.out = new Int32Array(cap);
    this.order = new Int32Array(cap);
    this.tmp = new Int32Array(cap);
    this.pairL = new Int32Array(cap);
    this.pairR = new Int32Array(cap);
  }

  colour(lo: number, hi: number, d: number, base: number, out: Int32Array): void {
    if (hi <= lo || d === 0) return;
    const order = this.order;
    if (d === 1) {
      for (let i = lo; i < hi; i++) out[order[i]] = base;
      return;
    }
    if (d % 2 === 1) {
      // one perfect matching is a colour of its own; it moves to the front of the range
      this.perfectMatching(lo, hi);
      const k = lo + this.n;
      for (let i = lo; i < k; i++) out[order[i]] = base;
      this.colour(k, hi, d - 1, base + 1, out);
      return;
    }
    // degree 2: the split's halves are the two colours
    const mid = this.eulerSplit(lo, hi, d === 2 ? out : null, base);
    if (d === 2) return;
    this.colour(lo, mid, d / 2, base, out);
    this.colour(mid, hi, d / 2, base + d / 2, out);
  }

  /** builds the adjacency of the subgraph order[lo, hi) */
  private index(lo: number, hi: number): void {
    const n2 = 2 * this.n;
    const start = this.adjStart;
    const us = this.us;
    const vs = this.vs;
    const n = this.n;
    const order = this.order;
    start.fill(0);
    for (let i = lo; i < hi; i++) {
      const e = order[i];
      start[us[e] + 1]++;
      start[n + vs[e] + 1]++;
    }
    for (let v = 0; v < n2; v++) start[v + 1] += start[v];
    const fill = this.ptr;
    for (let v = 0; v < n2; v++) fill[v] = start[v];
    const adj = this.adj;
    const used = this.used;
    for (let i = lo; i < hi; i++) {
      const e = order[i];
      adj[fill[us[e]]++] = e;
      adj[fill[n + vs[e]]++] = e;
      used[e] = 0;
    }
    for (let v = 0; v < n2; v++) fill[v] = start[v];
  }

  /**
   * Splits an even-degree regular subgraph in two of half the degree. Its Euler circuits are walked
   * without building adjacency lists: at every vertex the incident edges are paired up as they come,
   * and "the edge paired with this one at its other end" links the edges into closed trails (each
   * alternates left and right pairings, so it is even). Its edges go alternately to the two halves, so
   * at every vertex the two edges of a pair land in different halves. The first half ends up in
   * order[lo, mid), the second in order[mid, hi); returns mid.
   */
  private eulerSplit(lo: number, hi: number, out: Int32Array | null = null, base = 0): number {
    const order = this.order;
    const tmp = this.tmp;
    const us = this.us;
    const vs = this.vs;
    const pendL = this.matchOfLeft.fill(-1);
    const pendR = this.matchOfRight.fill(-1);
    const atL = this.pairL;
    const atR = this.pairR;
    const used = this.used;
    for (let i = lo; i < hi; i++) {
      const e = order[i];
      used[e] = 0;
      const u = us[e];
      const v = vs[e];
      const pl = pendL[u];
      if (pl < 0) pendL[u] = e;
      else {
        atL[e] = pl;
        atL[pl] = e;
        pendL[u] = -1;
      }
      const pr = pendR[v];
      if (pr < 0) pendR[v] = e;
      else {
        atR[e] = pr;
        atR[pr] = e;
        pendR[v] = -1;
      }
    }
    const mid = lo + ((hi - lo) >> 1);
    if (out !== null) {
      // colour the two halves at once: nothing to reorder
      for (let i = lo; i < hi; i++) {
        let e = order[i];
        let right = true;
        while (used[e] === 0) {
          used[e] = 1;
          out[e] = right ? base : base + 1;
          e = right ? atR[e] : atL[e];
          right = !right;
        }
      }
      return mid;
    }
    let na = lo;
    let nb = mid;
    for (let i = lo; i < hi; i++) {
      let e = order[i];
      if (used[e] === 1) continue;
      // one closed trail: leave by the right end, come back by the left, and so on
      let right = true;
      while (used[e] === 0) {
        used[e] = 1;
        if (right) tmp[na++] = e;
        else tmp[nb++] = e;
        e = right ? atR[e] : atL[e];
        right = !right;
      }
    }
    order.set(tmp.subarray(lo, hi), lo);
    return mid;
  }

  /**
   * A perfect matching of the regular bipartite subgraph order[lo, hi) (augmenting paths; one exists
   * by Hall), moved to the front of the range: order[lo, lo + n).
   */
  private perfectMatching(lo: number, hi: number): void {
    this.index(lo, hi);
    const n = this.n;
    const matchEdgeOfRight = this.matchOfRight.fill(-1);
    const matchEdgeOfLeft = this.matchOfLeft.fill(-1);
    const seen = this.seen.fill(-1);
    const tryLeft = (u: number, stamp: number): boolean => {
      for (let p = this.adjStart[u]; p < this.adjStart[u + 1]; p++) {
        const e = this.adj[p];
        const v = this.vs[e];
        if (seen[v] === stamp) continue;
        seen[v] = stamp;
        const other = matchEdgeOfRight[v];
        if (other < 0 || tryLeft(this.us[other], stamp)) {
          matchEdgeOfRight[v] = e;
          matchEdgeOfLeft[u] = e;
          return true;
        }
      }
      return false;
    };
    for (let u = 0; u < n; u++) {
      if (!tryLeft(u, u)) throw new Error('pathsel: a regular bipartite graph without a perfect matching');
    }
    const used = this.used;
    for (let i = lo; i < hi; i++) used[this.order[i]] = 0;
    let k = lo;
    for (let u = 0; u < n; u++) {
      this.tmp[k++] = matchEdgeOfLeft[u];
      used[matchEdgeOfLeft[u]] = 1;
    }
    for (let i = lo; i < hi; i++) if (used[this.order[i]] === 0) this.tmp[k++] = this.order[i];
    for (let i = lo; i < hi; i++) this.order[i] = this.tmp[i];
  }
}

/** One timeslot allocation, as path selection reads it. */
export interface PathRequest {
  slot: number;
  src: number;
  dst: number;
}

/**
 * Paths for a batch of allocations (§4): per timeslot, the packets between racks are edge-coloured
 * on the ToR graph, a colour being a plane (a spine, or the pods' aggregation switch of that index;
 * `spineFactor` colours share one when fabric links are faster than host links); in a FatTree, the
 * packets of each plane that cross pods are then coloured again on the graph of its aggregation
 * switches, a colour being one of the plane's cores ("paths can be assigned hierarchically"). Colours
 * start at 0 in every timeslot, so they rotate over the usable planes and cores from one timeslot to
 * the next: every link gets its share of idle timeslots for the unscheduled FCP frames. Returns per
 * allocation its plane (-1 inside a rack, or none usable) and its core (0 when it crosses no core).
 */
export function selectPaths(
  f: FastpassFabric,
  allocs: readonly PathRequest[],
  first: number,
  batch: number,
  usable: readonly number[],
): { plane: Int32Array; core: Int32Array } {
  const plane = new Int32Array(allocs.length).fill(-1);
  const core = new Int32Array(allocs.length);
  const racks = f.leafUp.length;
  const k = f.spineFactor;
  const n = usable.length;
  const p = f.pods;
  for (let slot = first; slot < first + batch; slot++) {
    const idx: number[] = [];
    const l: number[] = [];
    const r: number[] = [];
    for (let i = 0; i < allocs.length; i++) {
      const a = allocs[i];
      if (a.slot !== slot) continue;
      const rs = f.hosts[a.src].rack;
      const rd = f.hosts[a.dst].rack;
      if (rs === rd) continue;
      idx.push(i);
      l.push(rs);
      r.push(rd);
    }
    if (idx.length === 0 || n === 0) continue;
    const colours = colourEdges(racks, l, r, n * k);
    for (let j = 0; j < idx.length; j++) {
      const v = Math.floor(colours[j] / k);
      plane[idx[j]] = v < n ? usable[(v + slot) % n] : -1;
    }
    if (p === undefined) continue;
    // second level: per plane, the packets between pods, coloured on the pods' aggregation switches
    for (const a of usable) {
      const jdx: number[] = [];
      const pl: number[] = [];
      const pr: number[] = [];
      for (let j = 0; j < idx.length; j++) {
        const i = idx[j];
        if (plane[i] !== a) continue;
        const pa = p.podOf[l[j]];
        const pb = p.podOf[r[j]];
        if (pa === pb) continue;
        jdx.push(i);
        pl.push(pa);
        pr.push(pb);
      }
      if (jdx.length === 0) continue;
      const cc = colourEdges(p.aggDown.length, pl, pr, p.coresPerAgg * k);
      for (let j = 0; j < jdx.length; j++) core[jdx[j]] = (Math.floor(cc[j] / k) + slot) % p.coresPerAgg;
    }
  }
  return { plane, core };
}
