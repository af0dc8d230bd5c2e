/**
 * Flowtune's allocator in one process: NED converges to weighted proportional fairness (the known
 * optima of one bottleneck and of a parking lot), stays online as flowlets come and go, and the
 * normalizers keep every link within its capacity (F-NORM losing less throughput than U-NORM).
 */
import { describe, expect, it } from 'vitest';
import { Ned } from '../arbiter/flowtune/ned.js';

const caps = (...c: number[]) => Float64Array.from(c);

function run(ned: Ned, n: number): void {
  for (let i = 0; i < n; i++) ned.iterate();
  ned.normalize('none');
}

describe('Flowtune NED (§3)', () => {
  it('shares one bottleneck equally among equal weights, and by weight', () => {
    const ned = new Ned(caps(10), 0.4);
    for (let f = 0; f < 4; f++) ned.add(f, [0]);
    run(ned, 60);
    for (let f = 0; f < 4; f++) expect(ned.rateOfFlow(f)).toBeCloseTo(2.5, 3);
    ned.add(9, [0], 2);
    run(ned, 60);
    expect(ned.rateOfFlow(9)).toBeCloseTo(10 / 3, 3);
    expect(ned.rateOfFlow(0)).toBeCloseTo(10 / 6, 3);
  });

  it('reaches the proportionally fair optimum of a parking lot (1/3 for the long flow, 2/3 for the short ones)', () => {
    const ned = new Ned(caps(1, 1), 0.4);
    ned.add(0, [0, 1]);
    ned.add(1, [0]);
    ned.add(2, [1]);
    run(ned, 200);
    expect(ned.rateOfFlow(0)).toBeCloseTo(1 / 3, 3);
    expect(ned.rateOfFlow(1)).toBeCloseTo(2 / 3, 3);
    expect(ned.rateOfFlow(2)).toBeCloseTo(2 / 3, 3);
  });

  it('is online: a flow that leaves gives its share back without restarting the prices', () => {
    const ned = new Ned(caps(10), 0.4);
    ned.add(1, [0]);
    ned.add(2, [0]);
    run(ned, 50);
    const price = ned.price[0];
    ned.remove(1);
    expect(ned.price[0]).toBe(price);
    run(ned, 50);
    expect(ned.rateOfFlow(2)).toBeCloseTo(10, 3);
    expect(ned.has(1)).toBe(false);
  });
});

describe('Flowtune normalization (§4)', () => {
  it('F-NORM and U-NORM keep every link within capacity right after a change; F-NORM keeps more throughput', () => {
    // three links; flows 0..3 on link 0, flow 4 across links 0 and 1, flows 5..7 on link 2 alone
    const setup = () => {
      const ned = new Ned(caps(10, 10, 10), 0.4);
      for (let f = 0; f < 4; f++) ned.add(f, [0]);
      ned.add(4, [0, 1]);
      for (let f = 5; f < 8; f++) ned.add(f, [2]);
      run(ned, 100);
      // a burst of arrivals on link 0: the old prices over-allocate it for a while
      for (let f = 10; f < 16; f++) ned.add(f, [0]);
      ned.iterate();
      return ned;
    };
    const total = (ned: Ned) => [...ned.entries()].reduce((a, [, x]) => a + x, 0);
    const loadOn = (ned: Ned, links: Record<number, number[]>, l: number) =>
      [...ned.entries()].filter(([id]) => (links[id] ?? [0]).includes(l)).reduce((a, [, x]) => a + x, 0);
    const paths: Record<number, number[]> = { 4: [0, 1], 5: [2], 6: [2], 7: [2] };
    const raw = setup();
    raw.normalize('none');
    expect(loadOn(raw, paths, 0)).toBeGreaterThan(10);
    const f = setup();
    f.normalize('f-norm');
    const u = setup();
    u.normalize('u-norm');
    for (const n of [f, u])
      for (const l of [0, 1, 2]) expect(loadOn(n, paths, l)).toBeLessThanOrEqual(10 + 1e-9);
    // U-NORM slows link 2's flows too, F-NORM only those through the congested link
    expect(total(f)).toBeGreaterThan(total(u));
    expect(f.rateOfFlow(5)).toBeCloseTo(10 / 3, 3);
  });
});
