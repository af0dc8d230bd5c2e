/**
 * Per-process metrics: named counters, named histograms and sampled time series. Hot paths bump plain
 * number fields; the control channel ships `snapshot()` to the orchestrator, which merges them.
 */
import { Histogram, type HistogramSnapshot } from './histogram.js';

export interface MetricsSnapshot {
  counters: Record<string, number>;
  histograms: Record<string, HistogramSnapshot>;
}

export class Metrics {
  readonly counters: Record<string, number> = Object.create(null);
  private readonly histograms = new Map<string, Histogram>();

  inc(name: string, by = 1): void {
    this.counters[name] = (this.counters[name] ?? 0) + by;
  }

  get(name: string): number {
    return this.counters[name] ?? 0;
  }

  histogram(name: string): Histogram {
    let h = this.histograms.get(name);
    if (!h) {
      h = new Histogram();
      this.histograms.set(name, h);
    }
    return h;
  }

  snapshot(): MetricsSnapshot {
    const histograms: Record<string, HistogramSnapshot> = {};
    for (const [k, h] of this.histograms) histograms[k] = h.snapshot();
    return { counters: { ...this.counters }, histograms };
  }
}

/**
 * A sampled series of (time, value) pairs kept in preallocated growable typed arrays; `every` thins
 * it to keep result files small while percentiles still see every sample.
 */
export class Series {
  private t = new Float64Array(1024);
  private v = new Float64Array(1024);
  length = 0;

  push(time: number, value: number): void {
    if (this.length === this.t.length) {
      const t = new Float64Array(this.length * 2);
      const v = new Float64Array(this.length * 2);
      t.set(this.t);
      v.set(this.v);
      this.t = t;
      this.v = v;
    }
    this.t[this.length] = time;
    this.v[this.length] = value;
    this.length++;
  }

  toArrays(): { t: number[]; v: number[] } {
    return { t: Array.from(this.t.subarray(0, this.length)), v: Array.from(this.v.subarray(0, this.length)) };
  }
}
