/**
 * Moving median over the last N values, as linuxptp's `mmedian.c` (Miroslav Lichvar) used by ptp4l for
 * the path delay (delay_filter moving_median, delay_filter_length 10 by default): a median shrugs off the
 * occasional queued packet that a mean would smear over the window. Like mmedian.c it keeps the values in
 * a ring and a parallel array of ring indices sorted by value, updated by one removal and one insertion
 * step per push: O(N) work, no allocation after construction.
 */

export class MovingMedian {
  private readonly len: number;
  // values in arrival order, circular
  private readonly samples: Float64Array;
  // ring indices ordered by their value, first `cnt` entries valid
  private readonly order: Int32Array;
  private cnt = 0;
  private index = 0;

  constructor(length: number) {
    // mmedian_create refuses length < 1
    if (!Number.isInteger(length) || length < 1) {
      throw new RangeError(`moving median length must be a positive integer, got ${length}`);
    }
    this.len = length;
    this.samples = new Float64Array(length);
    this.order = new Int32Array(length);
  }

  /** Adds `v` and returns the median of the last `length` values (mean of the middle two for an even count). */
  push(v: number): number {
    const samples = this.samples;
    const order = this.order;
    const index = this.index;
    samples[index] = v;
    let i: number;
    if (this.cnt < this.len) {
      this.cnt++;
    } else {
      // the slot being overwritten drops out of the sorted order
      for (i = 0; i < this.cnt; i++) if (order[i] === index) break;
      for (; i + 1 < this.cnt; i++) order[i] = order[i + 1];
    }
    // insertion step from the top; ties keep arrival order as in mmedian.c
    for (i = this.cnt - 1; i > 0; i--) {
      if (samples[order[i - 1]] <= v) break;
      order[i] = order[i - 1];
    }
    order[i] = index;
    this.index = index + 1 === this.len ? 0 : index + 1;

    const half = this.cnt >> 1;
    if (this.cnt & 1) return samples[order[half]];
    // mmedian.c divides integer-ns tmv_t by 2 (truncating); values here are doubles, so take the exact mean
    return (samples[order[half - 1]] + samples[order[half]]) / 2;
  }

  /** Forgets all values (mmedian_reset). */
  reset(): void {
    this.cnt = 0;
    this.index = 0;
  }

  /** Number of values currently in the window (at most `length`). */
  get count(): number {
    return this.cnt;
  }
}
