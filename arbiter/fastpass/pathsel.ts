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
 * Pure logic over numbers: `colour` returns one colour per edge, below the graph's maximum degree.
 */

/**
 * Colours the edges `left[i] → right[i]` (vertices 0..n-1 on each side) so that no two edges at a
 * vertex share a colour, with as many colours as the maximum degree (König). Returns the colours.
 */
export function colourEdges(n: number, left: ArrayLike<number>, right: ArrayLike<number>): Int32Array {
  const m = left.length;
  const colours = new Int32Array(m);
  if (m === 0) return colours;
  const degL = new Int32Array(n);
  const degR = new Int32Array(n);
  for (let i = 0; i < m; i++) {
    degL[left[i]]++;
    degR[right[i]]++;
  }
  let D = 0;
  for (let v = 0; v < n; v++) D = Math.max(D, degL[v], degR[v]);
  // pad to D-regular with dummy edges between vertices short of degree D (both sides lack the same total)
  const us: number[] = Array.from(left);
  const vs: number[] = Array.from(right);
  let j = 0;
  for (let u = 0; u < n; u++) {
    while (degL[u] < D) {
      while (degR[j] >= D) j++;
      const k = Math.min(D - degL[u], D - degR[j]);
      for (let t = 0; t < k; t++) {
        us.push(u);
        vs.push(j);
      }
      degL[u] += k;
      degR[j] += k;
    }
  }
  const g = new Graph(n, us, vs);
  const all = new Int32Array(us.length);
  for (let i = 0; i < all.length; i++) all[i] = i;
  const out = new Int32Array(us.length);
  g.colour(all, D, 0, out);
  colours.set(out.subarray(0, m));
  return colours;
}

class Graph {
  /** per vertex (left u, right n + v): incident edge ids of the current subgraph */
  private readonly adjStart: Int32Array;
  private readonly adj: Int32Array;
  private readonly ptr: Int32Array;
  private readonly used: Uint8Array;

  constructor(
    private readonly n: number,
    private readonly us: number[],
    private readonly vs: number[],
  ) {
    this.adjStart = new Int32Array(2 * n + 1);
    this.adj = new Int32Array(2 * us.length);
    this.ptr = new Int32Array(2 * n);
    this.used = new Uint8Array(us.length);
  }

  colour(edges: Int32Array, d: number, base: number, out: Int32Array): void {
    if (edges.length === 0 || d === 0) return;
    if (d === 1) {
      for (const e of edges) out[e] = base;
      return;
    }
    if (d % 2 === 1) {
      const matching = this.perfectMatching(edges);
      const inM = new Set(matching);
      for (const e of matching) out[e] = base;
      const rest = edges.filter((e) => !inM.has(e));
      this.colour(rest, d - 1, base + 1, out);
      return;
    }
    const [a, b] = this.eulerSplit(edges);
    this.colour(a, d / 2, base, out);
    this.colour(b, d / 2, base + d / 2, out);
  }

  /** builds the adjacency of the subgraph `edges` */
  private index(edges: Int32Array): void {
    const n2 = 2 * this.n;
    const start = this.adjStart;
    start.fill(0);
    for (const e of edges) {
      start[this.us[e] + 1]++;
      start[this.n + this.vs[e] + 1]++;
    }
    for (let v = 0; v < n2; v++) start[v + 1] += start[v];
    const fill = this.ptr;
    for (let v = 0; v < n2; v++) fill[v] = start[v];
    for (const e of edges) {
      this.adj[fill[this.us[e]]++] = e;
      this.adj[fill[this.n + this.vs[e]]++] = e;
    }
    for (let v = 0; v < n2; v++) fill[v] = start[v];
    for (const e of edges) this.used[e] = 0;
  }

  /**
   * Splits an even-degree regular subgraph in two of half the degree: walk closed trails, giving their
   * edges alternately to each half. A closed trail of a bipartite graph is even, so every passage
   * through a vertex (and the trail's start and end) puts one edge in each half.
   */
  private eulerSplit(edges: Int32Array): [Int32Array, Int32Array] {
    this.index(edges);
    const a = new Int32Array(edges.length / 2);
    const b = new Int32Array(edges.length / 2);
    let na = 0;
    let nb = 0;
    const n = this.n;
    const n2 = 2 * n;
    for (let start = 0; start < n2; start++) {
      for (;;) {
        const first = this.nextEdge(start);
        if (first < 0) break;
        let cur = start;
        let e = first;
        let side = 0;
        while (e >= 0) {
          this.used[e] = 1;
          if (side === 0) a[na++] = e;
          else b[nb++] = e;
          side ^= 1;
          cur = cur < n ? n + this.vs[e] : this.us[e];
          e = this.nextEdge(cur);
        }
      }
    }
    return [a.subarray(0, na), b.subarray(0, nb)];
  }

  private nextEdge(v: number): number {
    const end = this.adjStart[v + 1];
    let p = this.ptr[v];
    while (p < end && this.used[this.adj[p]] === 1) p++;
    this.ptr[v] = p;
    return p < end ? this.adj[p] : -1;
  }

  /** a perfect matching of a regular bipartite subgraph (augmenting paths; one exists by Hall) */
  private perfectMatching(edges: Int32Array): number[] {
    this.index(edges);
    const n = this.n;
    const matchEdgeOfRight = new Int32Array(n).fill(-1);
    const matchEdgeOfLeft = new Int32Array(n).fill(-1);
    const seen = new Int32Array(n).fill(-1);
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
      if (this.adjStart[u + 1] === this.adjStart[u]) continue;
      if (!tryLeft(u, u)) throw new Error('pathsel: a regular bipartite graph without a perfect matching');
    }
    const out: number[] = [];
    for (let u = 0; u < n; u++) if (matchEdgeOfLeft[u] >= 0) out.push(matchEdgeOfLeft[u]);
    return out;
  }
}
