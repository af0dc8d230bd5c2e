/**
 * Tests for the emulated oscillator and the node system clock on top of it (docs/architecture.md: time): exact readings
 * worked out by hand, the statistics of the random-walk wander, faults taking effect from their time
 * only, and node-clock timers that fire when the node clock (not physical time) reaches their target.
 */
import { describe, expect, it } from 'vitest';
import { EmulatedClock } from '../core/emulated-clock.js';
import { Oscillator, type OscillatorParams } from '../core/oscillator.js';
import { Scheduler } from '../core/scheduler.js';

function osc(p: Partial<OscillatorParams> = {}, stepNs?: number): Oscillator {
  return new Oscillator(
    { offsetNs: 0, freqPpm: 0, wanderPpmPerSqrtS: 0, granularityNs: 0, seed: 1, ...p },
    stepNs,
  );
}

function manual(start = 0) {
  const clock = { t: start };
  const sched = new Scheduler({ now: () => clock.t, realMs: (ns) => ns / 1e6 }, true);
  return { clock, sched };
}

/** Runs `fn` as an event at physical time `t`, so that `sched.current` is `t` inside it. */
function atPhys(sched: Scheduler, t: number, fn: () => void): void {
  sched.at(t, fn);
  sched.runDue(t);
}

describe('Oscillator', () => {
  it('reads offset + phys * (1 + freq) without wander', () => {
    const o = osc({ offsetNs: 1000, freqPpm: 50 });
    expect(o.read(0)).toBe(1000);
    expect(o.read(1e9)).toBeCloseTo(1000 + 1e9 * (1 + 50e-6), 6);
    expect(o.read(1e6)).toBeCloseTo(1000 + 1e6 + 50, 9);
    expect(o.rateAt(5e8)).toBeCloseTo(1 + 50e-6, 15);
    // before time 0 it extrapolates the same line
    expect(o.read(-1e6)).toBeCloseTo(1000 - 1e6 - 50, 9);
  });

  it('wanders with std-dev wanderPpmPerSqrtS over one second', () => {
    const wander = 0.5;
    const n = 1000;
    let sum = 0;
    let sum2 = 0;
    for (let seed = 1; seed <= n; seed++) {
      const o = osc({ freqPpm: 20, wanderPpmPerSqrtS: wander, seed }, 1e6);
      // the walk starts at the base frequency
      const r0 = o.rateAt(0);
      expect(r0).toBe(1 + 20e-6);
      // (read the start first: after 1000 steps it has left the 256-breakpoint ring)
      const dPpm = (o.rateAt(1e9) - r0) * 1e6;
      sum += dPpm;
      sum2 += dPpm * dPpm;
    }
    const mean = sum / n;
    const std = Math.sqrt(sum2 / n - mean * mean);
    expect(Math.abs(std - wander) / wander).toBeLessThan(0.1);
    // the mean of 1000 changes has std-dev wander/sqrt(1000) ≈ 0.016 ppm
    expect(Math.abs(mean)).toBeLessThan(0.08);
  });

  it('is deterministic per seed whatever the read pattern', () => {
    const a = osc({ freqPpm: 3, wanderPpmPerSqrtS: 2, seed: 7 });
    const b = osc({ freqPpm: 3, wanderPpmPerSqrtS: 2, seed: 7 });
    for (let t = 0; t <= 1e6; t += 777) a.read(t);
    expect(b.read(1e6)).toBe(a.read(1e6));
    expect(osc({ freqPpm: 3, wanderPpmPerSqrtS: 2, seed: 8 }).read(1e6)).not.toBe(a.read(1e6));
  });

  it('re-reads the past exactly within the ring, monotonically everywhere', () => {
    const o = osc({ offsetNs: 5e6, freqPpm: -30, wanderPpmPerSqrtS: 5, seed: 3 }, 1000);
    const times: number[] = [];
    const vals: number[] = [];
    for (let t = 0; t <= 400_000; t += 333.3) {
      times.push(t);
      vals.push(o.read(t));
    }
    // reads within the last 256 breakpoints (256 µs at 1 µs steps) come back identical
    for (let i = 0; i < times.length; i++) {
      if (times[i] >= 400_000 - 250_000) expect(o.read(times[i])).toBe(vals[i]);
    }
    // older ones extrapolate from the oldest kept breakpoint: still finite and monotonic
    let prev = Number.NEGATIVE_INFINITY;
    for (let t = -1000; t <= 400_000; t += 97) {
      const v = o.read(t);
      expect(v).toBeGreaterThan(prev);
      prev = v;
    }
    // the frequency stays near the base: the walk moved by ~5 ppm * sqrt(0.4 ms / 1 s) ≈ 0.1 ppm
    expect(Math.abs((o.rateAt(400_000) - 1) * 1e6 + 30)).toBeLessThan(1);
  });

  it('changes frequency from the given time only', () => {
    const o = osc({ offsetNs: 1000, freqPpm: 50 });
    const before = o.read(1e6);
    const at = o.read(2e6);
    o.setFrequencyPpm(-20, 2e6);
    expect(o.read(1e6)).toBe(before);
    expect(o.read(2e6)).toBe(at);
    expect(o.rateAt(1e6)).toBeCloseTo(1 + 50e-6, 15);
    expect(o.rateAt(2e6)).toBeCloseTo(1 - 20e-6, 15);
    expect(o.read(3e6)).toBeCloseTo(at + 1e6 * (1 - 20e-6), 6);
    expect(o.read(3e6)).toBeCloseTo(1000 + 2e6 * (1 + 50e-6) + 1e6 * (1 - 20e-6), 6);
  });

  it('steps phase from the given time only', () => {
    const o = osc({ freqPpm: 10 });
    o.stepPhase(-500, 1e6);
    expect(o.read(1e6 - 1)).toBeCloseTo((1e6 - 1) * (1 + 10e-6), 6);
    expect(o.read(1e6)).toBeCloseTo(1e6 * (1 + 10e-6) - 500, 6);
    expect(o.read(2e6)).toBeCloseTo(2e6 * (1 + 10e-6) - 500, 6);
  });

  it('moves a fault in the already-read past up to the newest breakpoint', () => {
    const o = osc({ wanderPpmPerSqrtS: 1, seed: 4 }, 1000);
    const v = o.read(10_500); // lays breakpoints up to 10 000
    o.stepPhase(100, 5000);
    expect(o.read(9000)).toBeLessThan(9000 + 1);
    expect(o.read(10_500)).toBeCloseTo(v + 100, 9);
  });
});

describe('EmulatedClock', () => {
  it('starts at the oscillator reading and follows its rate', () => {
    const { sched } = manual();
    const c = new EmulatedClock(sched, osc({ offsetNs: 1000, freqPpm: 100 }));
    expect(c.now()).toBe(1000);
    expect(c.read(1e6)).toBeCloseTo(1000 + 1e6 * (1 + 100e-6), 9);
    expect(c.trueErrorNs(1e6)).toBeCloseTo(1100, 9);
    expect(c.trueErrorNs(1e9)).toBeCloseTo(1000 + 100e3, 6);
  });

  it('cancels the oscillator frequency error with setFrequencyPpb', () => {
    const { sched } = manual();
    const c = new EmulatedClock(sched, osc({ offsetNs: 1000, freqPpm: 100 }));
    let e0 = 0;
    atPhys(sched, 1e6, () => {
      e0 = c.trueErrorNs(sched.current);
      c.setFrequencyPpb(-100_000);
      expect(c.frequencyPpb()).toBe(-100_000);
    });
    expect(e0).toBeCloseTo(1100, 9);
    // rate (1 + 100e-6)(1 - 100e-6) = 1 - 1e-8: the error stays put to within 1e-8 of the time passed
    for (const t of [2e6, 1e7, 1e8, 1e9]) {
      expect(Math.abs(c.trueErrorNs(t) - e0)).toBeLessThanOrEqual(1e-8 * (t - 1e6) + 1e-6);
    }
    // the adjustment starts at the anchor: the past is unchanged
    expect(c.read(5e5)).toBeCloseTo(1000 + 5e5 * (1 + 100e-6), 9);
  });

  it('steps by delta', () => {
    const { sched } = manual();
    const c = new EmulatedClock(sched, osc({ freqPpm: 100 }));
    atPhys(sched, 1e6, () => {
      const before = c.now();
      c.step(-12_345);
      expect(c.now()).toBeCloseTo(before - 12_345, 9);
    });
    expect(c.read(2e6)).toBeCloseTo(2e6 * (1 + 100e-6) - 12_345, 6);
    // a late timestamp from before the step still reads the old clock
    expect(c.read(9e5)).toBeCloseTo(9e5 * (1 + 100e-6), 6);
  });

  it('keeps recent adjustments for reads in the past', () => {
    const { sched } = manual();
    const c = new EmulatedClock(sched, osc());
    for (let i = 1; i <= 40; i++) atPhys(sched, i * 1000, () => c.step(10));
    // the last 32 anchors (steps 9..40) are remembered: just before step i the clock is 10 * (i - 1) ahead
    for (let i = 10; i <= 40; i++) expect(c.trueErrorNs(i * 1000 - 1)).toBeCloseTo(10 * (i - 1), 6);
    expect(c.trueErrorNs(40_500)).toBeCloseTo(400, 6);
    // older times extrapolate from the oldest kept anchor (step 9)
    expect(c.trueErrorNs(100)).toBeCloseTo(90, 6);
  });

  it('applies an out-of-order adjustment on top of the later ones', () => {
    const { sched } = manual();
    const c = new EmulatedClock(sched, osc());
    atPhys(sched, 2e6, () => c.step(1000));
    atPhys(sched, 3e6, () => c.setFrequencyPpb(500_000));
    // an event stamped before both (e.g. a late frame) steps the clock: now() must show it, and the
    // earlier step and the rate stay; the current line is extended back to 1e6
    atPhys(sched, 1e6, () => {
      c.step(100);
      expect(c.now()).toBeCloseTo(3e6 + 1000 - 2e6 * 1.0005 + 100, 6);
    });
    expect(c.frequencyPpb()).toBe(500_000);
    expect(c.read(4e6)).toBeCloseTo(4e6 + 1000 + 100 + 1e6 * 500e-6, 6);
  });

  it('floors reads to the granularity', () => {
    const { sched } = manual();
    const c = new EmulatedClock(sched, osc({ offsetNs: 123, freqPpm: 7 }), 1000);
    for (const t of [0, 999, 1e6 + 17, 3.3e7]) {
      const raw = 123 + t * (1 + 7e-6);
      const v = c.read(t);
      expect(v % 1000).toBe(0);
      expect(v).toBeLessThanOrEqual(raw);
      expect(v).toBeGreaterThan(raw - 1000);
    }
    // the default comes from the oscillator params
    const d = new EmulatedClock(sched, osc({ offsetNs: 123, granularityNs: 100 }));
    expect(d.granularityNs).toBe(100);
    expect(d.read(1000)).toBe(1100);
  });

  it('fires at(T) when the node clock reads T and hands node time to the handler', () => {
    const { sched } = manual();
    const c = new EmulatedClock(sched, osc({ freqPpm: 100 }));
    const fired: Array<[number, number, unknown, unknown]> = [];
    c.at(1e6, (now, a, b) => fired.push([now, sched.current, a, b]), 'x', 42);
    expect(c.toPhys(1e6)).toBeCloseTo(1e6 / (1 + 100e-6), 6);
    sched.runDue(999_000);
    expect(fired).toHaveLength(0);
    sched.runDue(2e6);
    expect(fired).toHaveLength(1);
    const [now, phys, a, b] = fired[0];
    expect(phys).toBeCloseTo(1e6 / (1 + 100e-6), 6);
    expect(now).toBeCloseTo(1e6, 6);
    expect([a, b]).toEqual(['x', 42]);
  });

  it('after(dt) counts node time from now', () => {
    const { sched } = manual();
    const c = new EmulatedClock(sched, osc({ offsetNs: 5000, freqPpm: -50 }));
    let got = 0;
    c.after(1e5, (now) => (got = now));
    sched.runDue(1e6);
    expect(got).toBeCloseTo(5000 + 1e5, 6);
    expect(c.trueErrorNs(sched.current)).toBeCloseTo(5000 - 1e5 / (1 - 50e-6) + 1e5, 6);
  });

  it('fires at the first granule at or after T', () => {
    const { sched } = manual();
    const c = new EmulatedClock(sched, osc(), 1000);
    let got = 0;
    c.at(1500, (now) => (got = now));
    sched.runDue(1e6);
    expect(got).toBe(2000);
    expect(sched.current).toBeCloseTo(2000, 6);
  });

  it('does not fire early when the clock slows down after scheduling', () => {
    const { sched } = manual();
    const c = new EmulatedClock(sched, osc({ freqPpm: 100 }));
    const fired: number[][] = [];
    c.at(1e6, (now) => fired.push([now, sched.current]));
    atPhys(sched, 5e5, () => c.setFrequencyPpb(-200_000));
    sched.runDue(1e7);
    expect(fired).toHaveLength(1);
    const [now, phys] = fired[0];
    expect(now).toBeGreaterThanOrEqual(1e6 - 1);
    expect(now).toBeCloseTo(1e6, 6);
    // node(5e5) = 5e5 * 1.0001; the rest at rate 1.0001 * 0.9998
    expect(phys).toBeCloseTo(5e5 + (1e6 - 5e5 * 1.0001) / (1.0001 * 0.9998), 4);
  });

  it('does not fire early after a backward step', () => {
    const { sched } = manual();
    const c = new EmulatedClock(sched, osc());
    const fired: number[][] = [];
    c.at(1e6, (now) => fired.push([now, sched.current]));
    atPhys(sched, 5e5, () => c.step(-1000));
    sched.runDue(1e7);
    expect(fired).toHaveLength(1);
    expect(fired[0][0]).toBeCloseTo(1e6, 6);
    expect(fired[0][1]).toBeCloseTo(1e6 + 1000, 6);
  });

  it('does not fire late when the clock speeds up or steps forward', () => {
    const { sched } = manual();
    const c = new EmulatedClock(sched, osc());
    const fired: number[][] = [];
    c.at(1e6, (now) => fired.push([now, sched.current]));
    c.at(2e6, (now) => fired.push([now, sched.current]));
    atPhys(sched, 5e5, () => c.setFrequencyPpb(1e6)); // +1000 ppm
    atPhys(sched, 1.5e6, () => c.step(1e6)); // the second timer's time has come
    sched.runDue(1e7);
    expect(fired).toHaveLength(2);
    expect(fired[0][0]).toBeCloseTo(1e6, 6);
    expect(fired[0][1]).toBeCloseTo(5e5 + 5e5 / 1.001, 4);
    expect(fired[1][0]).toBeGreaterThanOrEqual(2e6);
    expect(fired[1][1]).toBe(1.5e6);
  });

  it('cancels timers, also after a re-schedule', () => {
    const { sched } = manual();
    const c = new EmulatedClock(sched, osc({ freqPpm: 100 }));
    let n = 0;
    const t1 = c.at(1e6, () => n++);
    c.cancel(t1);
    c.cancel(t1); // twice is harmless
    c.cancel(null);
    const t2 = c.at(2e6, () => n++);
    atPhys(sched, 1e6, () => c.step(-1e5));
    // t2's first physical time (≈ 1.9998e6) passes: it re-schedules instead of firing
    sched.runDue(1.9999e6);
    expect(n).toBe(0);
    expect(sched.pending).toBe(1);
    c.cancel(t2);
    sched.runDue(1e8);
    expect(n).toBe(0);
    expect(sched.pending).toBe(0);
  });
});

describe('EmulatedClock timers for a node time already passed', () => {
  it('fire now, never in the physical past (after(0) with a coarse granularity)', () => {
    const { clock, sched } = manual();
    const c = new EmulatedClock(sched, osc({ granularityNs: 8 }));
    let firedAt = -1;
    // at 1003 ns the clock reads 1000 (floored): a timer for "now" is 3 ns in the past by the oscillator
    atPhys(sched, 1003, () => {
      c.after(0, () => {
        firedAt = sched.current;
      });
    });
    clock.t = 2000;
    sched.runDue(2000);
    expect(firedAt).toBe(1003);
    expect(sched.fidelity.causalityMisses).toBe(0);
  });
});

describe('EmulatedClock handlers', () => {
  it('read at least the granule they were promised, so a pacer waiting for its time never spins', () => {
    const { clock, sched } = manual();
    // a drifting, wandering, stepped clock read to 8 ns: the physical time a timer fires at is float
    // arithmetic, and the clock there may read a hair below its granule
    const c = new EmulatedClock(
      sched,
      osc({ freqPpm: 37.3, wanderPpmPerSqrtS: 3, granularityNs: 8, seed: 7 }),
    );
    atPhys(sched, 5e5, () => c.step(-60_000));
    let early = 0;
    let fires = 0;
    // a pacer like TOP's: waits for `next` (not on a granule), re-arming while the clock reads less
    let next = 1e6 + 0.37;
    const pace = (): void => {
      if (++fires > 100_000) return;
      const now = c.now();
      if (now < next) {
        early++;
        c.at(next, pace);
        return;
      }
      next = now + 1267.3;
      c.at(next, pace);
    };
    atPhys(sched, 6e5, () => c.at(next, pace));
    clock.t = 2e7;
    sched.runDue(2e7);
    expect(early).toBe(0);
    // one fire per 1267.3 ns of node time from 1 ms to about 20 ms
    expect(fires).toBeGreaterThan(14_000);
    expect(fires).toBeLessThan(16_000);
  });
});
