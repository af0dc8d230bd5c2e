/**
 * A log-linear histogram for non-negative values (ns, bytes, ratios): 1/64 relative precision, fixed
 * memory, O(1) record, mergeable across processes. Shaped after HdrHistogram's idea (sub-buckets
 * inside powers of two) without its dependencies.
 */

const SUB_BITS = 6;
const SUB = 1 << SUB_BITS; // 64 sub-buckets per power of two

export interface HistogramSnapshot {
  /** sparse [bucketIndex, count] pairs */
  b: Array<[number, number]>;
  n: number;
  sum: number;
  max: number;
}

function bucketOf(v: number): number {
  if (v < SUB) return Math.max(0, Math.floor(v));
  // v = m * 2^e with m in [SUB, 2*SUB): bucket by (e, m)
  const e = Math.max(0, Math.floor(Math.log2(v)) - SUB_BITS);
  const m = Math.floor(v / 2 ** e) - SUB;
  return SUB + e * SUB + Math.min(SUB - 1, Math.max(0, m));
}

function lowerBoundOf(b: number): number {
  if (b < SUB) return b;
  const e = Math.floor((b - SUB) / SUB);
  const m = (b - SUB) % SUB;
  return (SUB + m) * 2 ** e;
}

export class Histogram {
  private counts = new Map<number, number>();
  n = 0;
  sum = 0;
  max = 0;

  record(v: number, count = 1): void {
    if (!(v >= 0)) v = 0;
    const b = bucketOf(v);
    this.counts.set(b, (this.counts.get(b) ?? 0) + count);
    this.n += count;
    this.sum += v * count;
    if (v > this.max) this.max = v;
  }

  /** Value at quantile q in [0,1]: the midpoint of the bucket holding it, capped at the max seen. */
  quantile(q: number): number {
    if (this.n === 0) return 0;
    const rank = Math.max(1, Math.ceil(q * this.n));
    const keys = [...this.counts.keys()].sort((a, b) => a - b);
    let seen = 0;
    for (const k of keys) {
      seen += this.counts.get(k)!;
      if (seen >= rank) {
        const lo = lowerBoundOf(k);
        const hi = lowerBoundOf(k + 1);
        return Math.min(this.max, k < SUB ? lo : (lo + hi) / 2);
      }
    }
    return this.max;
  }

  mean(): number {
    return this.n === 0 ? 0 : this.sum / this.n;
  }

  snapshot(): HistogramSnapshot {
    return { b: [...this.counts.entries()], n: this.n, sum: this.sum, max: this.max };
  }

  merge(s: HistogramSnapshot | Histogram): void {
    const snap = s instanceof Histogram ? s.snapshot() : s;
    for (const [k, c] of snap.b) this.counts.set(k, (this.counts.get(k) ?? 0) + c);
    this.n += snap.n;
    this.sum += snap.sum;
    if (snap.max > this.max) this.max = snap.max;
  }

  static from(s: HistogramSnapshot): Histogram {
    const h = new Histogram();
    h.merge(s);
    return h;
  }
}
