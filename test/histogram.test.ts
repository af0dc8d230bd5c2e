import { describe, expect, it } from 'vitest';
import { Histogram } from '../core/histogram.js';

describe('Histogram', () => {
  it('returns quantiles within 1/64 relative error over many magnitudes', () => {
    const h = new Histogram();
    const values: number[] = [];
    for (let i = 1; i <= 10000; i++) {
      const v = i * 37.3;
      values.push(v);
      h.record(v);
    }
    for (const q of [0.01, 0.25, 0.5, 0.9, 0.99, 0.999]) {
      const exact = values[Math.ceil(q * values.length) - 1];
      expect(Math.abs(h.quantile(q) - exact) / exact).toBeLessThan(1 / 64);
    }
    expect(h.quantile(1)).toBe(values[values.length - 1]);
  });

  it('is exact for small integers and merges snapshots', () => {
    const a = new Histogram();
    const b = new Histogram();
    for (let i = 0; i < 50; i++) a.record(i);
    for (let i = 50; i < 100; i++) b.record(i * 1000);
    a.merge(b.snapshot());
    expect(a.n).toBe(100);
    expect(a.quantile(0.1)).toBe(9);
    expect(a.quantile(0.5)).toBe(49);
    expect(a.max).toBe(99000);
    expect(Math.abs(a.quantile(0.75) - 74000) / 74000).toBeLessThan(1 / 64);
  });

  it('is empty-safe', () => {
    expect(new Histogram().quantile(0.5)).toBe(0);
  });
});
