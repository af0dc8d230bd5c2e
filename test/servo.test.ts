/**
 * PI servo against sequences computed by hand from linuxptp's pi.c / servo.c, plus a closed loop with a
 * simulated slave clock to show the sign convention (apply -ppb, step by -offset on 'jump') converges.
 */
import { describe, expect, it } from 'vitest';
import { createServo, defaultServoConfig, HW_GAINS, type ServoConfig, SW_GAINS } from '../core/servo.js';

const S = 1e9; // ns per second

function hw(overrides: Partial<ServoConfig> = {}): ServoConfig {
  return { ...defaultServoConfig('hardware'), ...overrides };
}

describe('defaults', () => {
  it('carries pi.c scales and ptp4l config.c exponents, caps and thresholds', () => {
    expect(HW_GAINS).toEqual({
      kpScale: 0.7,
      kpExponent: -0.3,
      kpNormMax: 0.7,
      kiScale: 0.3,
      kiExponent: 0.4,
      kiNormMax: 0.3,
    });
    expect(SW_GAINS.kpScale).toBe(0.1);
    expect(SW_GAINS.kiScale).toBe(0.001);
    const sw = defaultServoConfig('software');
    expect(sw.kpNormMax).toBe(0.7);
    expect(sw.kiNormMax).toBe(0.3);
    expect(sw.maxFrequencyPpb).toBe(900_000);
    expect(sw.stepThresholdNs).toBe(0);
    expect(sw.firstStepThresholdNs).toBe(20_000);
  });
});

describe('PI servo (pi_sample)', () => {
  it('(a) stores the first sample and reports unlocked with ppb 0', () => {
    const s = createServo(hw());
    expect(s.state).toBe('unlocked');
    const r = s.sample(1000, 0);
    expect(r.state).toBe('unlocked');
    expect(r.ppb).toBe(0);
    expect(s.state).toBe('unlocked');
  });

  it('(b) estimates drift from two samples and locks below the first step threshold', () => {
    const s = createServo(hw());
    s.sample(1000, 0);
    // drift = 0 + (1e9 - 0) * (1100 - 1000) / 1e9 = 100 ppb
    const r = s.sample(1100, S);
    expect(r.state).toBe('locked');
    expect(r.ppb).toBe(100);
  });

  it('(c) asks for a jump when the second offset exceeds the first step threshold', () => {
    const s = createServo(hw());
    s.sample(50_000, 0);
    const r = s.sample(50_100, S);
    expect(r.state).toBe('jump');
    expect(r.ppb).toBe(100);
    // pi.c tests the offset of the second sample: a large first offset alone does not step
    const t = createServo(hw());
    t.sample(50_000, 0);
    const u = t.sample(1100, S);
    expect(u.state).toBe('locked');
    expect(u.ppb).toBe(-48_900);
  });

  it('(c) never steps on the first update when firstStepThreshold is 0', () => {
    const s = createServo(hw({ firstStepThresholdNs: 0 }));
    s.sample(50_000, 0);
    expect(s.sample(50_100, S).state).toBe('locked');
  });

  it('(d) runs the PI step on the third sample and integrates ki*offset into drift', () => {
    const s = createServo(hw());
    s.syncInterval(1); // kp = 0.7 * 1^-0.3 = 0.7, ki = 0.3 * 1^0.4 = 0.3
    s.sample(1000, 0);
    s.sample(1100, S);
    const r = s.sample(10, 2 * S);
    expect(r.state).toBe('locked');
    expect(r.ppb).toBe(0.7 * 10 + 100 + 0.3 * 10);
    // with offset 0 only the drift remains: 100 + 3
    expect(s.sample(0, 3 * S).ppb).toBe(103);
  });

  it('scales both PI terms by weight', () => {
    const s = createServo(hw());
    s.sample(1000, 0);
    s.sample(1100, S);
    expect(s.sample(10, 2 * S, 0.5).ppb).toBe(0.7 * 10 * 0.5 + 100 + 0.3 * 10 * 0.5);
    expect(s.sample(0, 3 * S).ppb).toBe(101.5);
  });

  it('(e) clamps to max frequency without winding up the integrator', () => {
    const s = createServo(hw({ maxFrequencyPpb: 1000 }));
    s.sample(1000, 0);
    s.sample(1100, S);
    let r = s.sample(1e6, 2 * S);
    expect(r.ppb).toBe(1000);
    expect(r.state).toBe('locked');
    r = s.sample(-1e6, 3 * S);
    expect(r.ppb).toBe(-1000);
    // drift untouched by the two saturated samples
    expect(s.sample(0, 4 * S).ppb).toBe(100);
  });

  it('(e) clamps the drift estimate itself', () => {
    const s = createServo(hw({ maxFrequencyPpb: 1000 }));
    s.sample(0, 0);
    // 1 us over 1 s would be 1000 ppb; 5 us is 5000 ppb -> clamped
    expect(s.sample(5000, S).ppb).toBe(1000);
    expect(s.sample(0, 2 * S).ppb).toBe(1000);
  });

  it('(f) restarts when a locked offset exceeds the step threshold, then steps on re-estimation', () => {
    const s = createServo(hw({ stepThresholdNs: 1000 }));
    s.sample(100, 0);
    s.sample(200, S); // drift 100, locked
    expect(s.state).toBe('locked');
    const r = s.sample(5000, 2 * S);
    expect(r.state).toBe('unlocked');
    expect(r.ppb).toBe(100); // pi.c returns last_freq, unchanged
    // count is back to 0: this sample is stored as the first one
    const first = s.sample(5000, 3 * S);
    expect(first.state).toBe('unlocked');
    expect(first.ppb).toBe(100);
    // drift refined, not replaced: 100 + (1e9 - 100) * 100 / 1e9; step_threshold applies outside the
    // first update too, so this asks for a jump
    const second = s.sample(5100, 4 * S);
    expect(second.state).toBe('jump');
    expect(second.ppb).toBe(100 + ((1e9 - 100) * 100) / 1e9);
  });

  it('reset() keeps the drift and does not re-arm the first step threshold', () => {
    const s = createServo(hw());
    s.sample(1000, 0);
    s.sample(1100, S);
    s.reset();
    expect(s.sample(50_000, 2 * S).state).toBe('unlocked');
    const r = s.sample(50_100, 3 * S);
    // first_update was cleared by the earlier lock and stepThreshold is 0: no jump
    expect(r.state).toBe('locked');
    expect(r.ppb).toBe(100 + ((1e9 - 100) * 100) / 1e9);
  });

  it('(g) syncInterval scales the gains as pi_sync_interval', () => {
    // kp and ki measured from two samples: offset o gives kp*o + D + ki*o, then offset 0 gives D + ki*o
    function gains(cfg: ServoConfig, interval: number): { kp: number; ki: number } {
      const s = createServo(cfg);
      s.syncInterval(interval);
      s.sample(1000, 0);
      const d = s.sample(1100, S).ppb;
      const a = s.sample(1000, 2 * S).ppb;
      const b = s.sample(0, 3 * S).ppb;
      return { kp: (a - b) / 1000, ki: (b - d) / 1000 };
    }
    // exponents 0: kp = min(0.7, 0.7 / 0.125 = 5.6) = 0.7, ki = min(0.3, 0.3 / 0.125 = 2.4) = 0.3
    const flat = gains(hw({ kpExponent: 0, kiExponent: 0 }), 0.125);
    expect(flat.kp).toBeCloseTo(0.7, 9);
    expect(flat.ki).toBeCloseTo(0.3, 9);
    // ptp4l exponents: kp = 0.7 * 0.125^-0.3 = 0.7 * 2^0.9 = 1.306246188 (< 5.6),
    // ki = 0.3 * 0.125^0.4 = 0.3 * 2^-1.2 = 0.130582585 (< 2.4)
    const fast = gains(hw(), 0.125);
    expect(fast.kp).toBeCloseTo(1.306246188, 8);
    expect(fast.ki).toBeCloseTo(0.130582585, 8);
    // 4 s: kp = min(0.7 * 4^-0.3 = 0.46183, 0.7 / 4 = 0.175) = 0.175,
    // ki = min(0.3 * 4^0.4 = 0.52233, 0.3 / 4 = 0.075) = 0.075
    const slow = gains(hw(), 4);
    expect(slow.kp).toBeCloseTo(0.175, 9);
    expect(slow.ki).toBeCloseTo(0.075, 9);
    expect(() => createServo(hw()).syncInterval(0)).toThrow(RangeError);
  });

  it('(h) restarts when local timestamps do not increase', () => {
    const s = createServo(hw());
    s.sample(1000, 5 * S);
    expect(s.sample(1100, 5 * S).state).toBe('unlocked');
    // back at count 0: the next sample is the first again
    expect(s.sample(1000, 6 * S).state).toBe('unlocked');
    expect(s.sample(1100, 4 * S).state).toBe('unlocked');
    s.sample(1000, 7 * S);
    const r = s.sample(1100, 8 * S);
    expect(r.state).toBe('locked');
    expect(r.ppb).toBe(100);
  });

  it('waits 0.016 / ki seconds before estimating frequency (software gains at 1 s: 16 s)', () => {
    const s = createServo(defaultServoConfig('software'));
    s.syncInterval(1); // ki = 0.001
    s.sample(0, 0);
    // localdiff * 1.001 < 16 s for 1..15 s: unlocked, sample 0 kept, sample 1 overwritten
    for (let k = 1; k <= 15; k++) expect(s.sample(10 * k, k * S).state).toBe('unlocked');
    // 16 s: drift = (1e9) * 160 / 16e9 = 10 ppb
    const r = s.sample(160, 16 * S);
    expect(r.state).toBe('locked');
    expect(r.ppb).toBe(10);
  });

  it('(i) closes the loop on a +40 ppm slave with 5 us initial offset at 1/16 s', () => {
    const dt = 1 / 16;
    const errPpb = 40_000;
    const s = createServo(defaultServoConfig('hardware'));
    s.syncInterval(dt);
    let offset = 5000; // slave minus master, ns
    let freq = 0; // applied frequency adjustment, ppb
    let t = 0; // master time, s
    let jumps = 0;
    for (let n = 0; n < 200; n++) {
      const r = s.sample(offset, t * S + offset);
      if (r.state === 'jump') {
        offset -= offset;
        jumps++;
      }
      freq = -r.ppb;
      // the slave gains (error + adjustment) ns per second of master time
      offset += (errPpb + freq) * dt;
      t += dt;
    }
    // 12.5 us at the frequency estimate stays under the 20 us first step threshold
    expect(jumps).toBe(0);
    expect(s.state).toBe('locked');
    expect(Math.abs(offset)).toBeLessThan(1);
    expect(Math.abs(freq + errPpb)).toBeLessThan(10);
  });

  it('(i) steps by -offset when the first offset is beyond the threshold', () => {
    const dt = 1 / 16;
    const s = createServo(defaultServoConfig('hardware'));
    s.syncInterval(dt);
    let offset = 1_000_000;
    let freq = 0;
    let t = 0;
    const states: string[] = [];
    for (let n = 0; n < 200; n++) {
      const r = s.sample(offset, t * S + offset);
      states.push(r.state);
      if (r.state === 'jump') offset -= offset;
      freq = -r.ppb;
      offset += (40_000 + freq) * dt;
      t += dt;
    }
    expect(states.filter((x) => x === 'jump')).toHaveLength(1);
    expect(Math.abs(offset)).toBeLessThan(1);
    expect(Math.abs(freq + 40_000)).toBeLessThan(10);
  });
});
