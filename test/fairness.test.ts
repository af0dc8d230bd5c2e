/**
 * summary.fairness from synthetic per-source byte counts: the standard deviation of the active
 * senders' throughputs per interval, and the convergence after each change of the active senders
 * (within 10% of an equal share, for good until the next change).
 */
// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { describe, expect, it } from 'vitest';
import type { NodeReport } from '../core/messages.js';
import { fairness } from '../orchestrator/engine/fairness.js';

const US = 1_000;
const I = 100 * US;

/** one receiver's report: bytes per interval from each source */
const receiver = (bySource: Array<[number, number[]]>) => ({ bySource }) as unknown as NodeReport;

describe('summary.fairness', () => {
  it('times convergence from each change to the end of the first interval of equal shares that last', () => {
    // src 1 alone until 300 µs; src 2 joins at 300 µs and needs two intervals to get its share, one
    // bad interval after that resets the clock; both run to 1 ms
    const flows = [
      { src: 1, start: 0, finish: -1 },
      { src: 2, start: 300 * US, finish: -1 },
    ];
    const r = receiver([
      [1, [100, 100, 100, 90, 70, 50, 50, 80, 50, 50]],
      [2, [0, 0, 0, 10, 30, 50, 50, 20, 50, 50]],
    ]);
    const f = fairness([r], flows, I, 1000 * US)!;
    // fair in [500, 700) µs, not in [700, 800), fair again from 800 µs: known at 900 µs
    expect(f.convergence).toEqual([{ t: 300 * US, active: 2, convergedNs: 600 * US }]);
    expect(f.intervals).toBe(7);
    expect(f.byActive['2'].intervals).toBe(7);
  });

  it('says null when the shares never settle, and counts a sender once however many flows it has', () => {
    const flows = [
      { src: 1, start: 0, finish: 500 * US },
      { src: 1, start: 0, finish: -1 },
      { src: 2, start: 0, finish: 500 * US },
      { src: 3, start: 0, finish: -1 },
    ];
    const r = receiver([
      [1, [60, 30, 60, 30, 60, 50, 50, 50, 50, 50]],
      [2, [30, 60, 30, 60, 30, 0, 0, 0, 0, 0]],
      [3, [30, 30, 30, 30, 30, 50, 50, 50, 50, 50]],
    ]);
    const f = fairness([r], flows, I, 1000 * US)!;
    expect(f.convergence).toEqual([
      { t: 0, active: 3, convergedNs: null },
      { t: 500 * US, active: 2, convergedNs: 100 * US },
    ]);
  });
});
