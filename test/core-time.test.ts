import { describe, expect, it } from 'vitest';
import {
  formatNs,
  monotonicEpoch,
  PhysClock,
  parseBytes,
  parseDurationNs,
  parseRateBps,
} from '../core/time.js';

describe('parseDurationNs', () => {
  it('parses every unit, decimals, exponents and spaces', () => {
    expect(parseDurationNs('100ns')).toBe(100);
    expect(parseDurationNs('100')).toBe(100);
    expect(parseDurationNs('2.5us')).toBe(2500);
    expect(parseDurationNs('2.5\u00b5s')).toBe(2500); // micro sign
    expect(parseDurationNs('2.5\u03bcs')).toBe(2500); // Greek mu, as most keyboards type it
    expect(parseDurationNs('30ms')).toBe(30e6);
    expect(parseDurationNs('1s')).toBe(1e9);
    expect(parseDurationNs('.5s')).toBe(5e8);
    expect(parseDurationNs('1e3us')).toBe(1e6);
    expect(parseDurationNs('1.5e-3s')).toBe(1.5e6);
    expect(parseDurationNs('  10 us  ')).toBe(10_000);
    expect(parseDurationNs('10US')).toBe(10_000);
    expect(parseDurationNs('10Ms')).toBe(10e6);
  });

  it('passes numbers through as ns', () => {
    expect(parseDurationNs(1234.5)).toBe(1234.5);
    expect(parseDurationNs(0)).toBe(0);
  });

  it('rejects what is not a duration with a message naming the value', () => {
    for (const bad of [
      '',
      ' ',
      'us',
      'ten us',
      '10 min',
      '10h',
      '-5us',
      '1..5ms',
      '5 u s',
      '10us extra',
      '1,5ms',
    ]) {
      expect(() => parseDurationNs(bad), bad).toThrow(RangeError);
    }
    expect(() => parseDurationNs('10 min')).toThrow(/not a duration: '10 min'/);
  });
});

describe('parseRateBps', () => {
  it('parses prefixes and unit spellings', () => {
    expect(parseRateBps('10Gbps')).toBe(10e9);
    expect(parseRateBps('100Mbit/s')).toBe(100e6);
    expect(parseRateBps('40G')).toBe(40e9);
    expect(parseRateBps('1.5 Tbps')).toBe(1.5e12);
    expect(parseRateBps('64kb/s')).toBe(64e3);
    expect(parseRateBps('500')).toBe(500);
    expect(parseRateBps('500bps')).toBe(500);
    expect(parseRateBps('10gbps')).toBe(10e9);
    expect(parseRateBps(2.5e9)).toBe(2.5e9);
  });

  it('rejects what is not a rate', () => {
    for (const bad of ['', 'fast', 'G', '10Pbps', '10 Gbps/s', '-1Gbps', '10Gbps!', '10 GiB']) {
      expect(() => parseRateBps(bad), bad).toThrow(RangeError);
    }
    expect(() => parseRateBps('fast')).toThrow(/not a rate: 'fast'/);
  });
});

describe('parseBytes', () => {
  it('parses decimal and binary units', () => {
    expect(parseBytes('1500')).toBe(1500);
    expect(parseBytes('1500B')).toBe(1500);
    expect(parseBytes('150KB')).toBe(150_000);
    expect(parseBytes('150k')).toBe(150_000);
    expect(parseBytes('4MB')).toBe(4_000_000);
    expect(parseBytes('1GB')).toBe(1e9);
    expect(parseBytes('1KiB')).toBe(1024);
    expect(parseBytes('2MiB')).toBe(2 * 1048576);
    expect(parseBytes('1GiB')).toBe(1073741824);
    expect(parseBytes('1.5 kib')).toBe(1536);
    expect(parseBytes('0.0015KB')).toBe(2); // rounded to whole bytes
    expect(parseBytes(9000)).toBe(9000);
  });

  it('rejects what is not a size', () => {
    for (const bad of ['', 'big', 'KB', '10TB', '10 bytes', '-1KB', '5iB', '5i', '1KiBB', '1 K B']) {
      expect(() => parseBytes(bad), bad).toThrow(RangeError);
    }
    expect(() => parseBytes('big')).toThrow(/not a size: 'big'/);
  });
});

describe('PhysClock', () => {
  it('rejects a non-positive dilation factor', () => {
    const epoch = monotonicEpoch();
    expect(() => new PhysClock(epoch, 0)).toThrow(RangeError);
    expect(() => new PhysClock(epoch, -1)).toThrow(RangeError);
    expect(() => new PhysClock(epoch, Number.NaN)).toThrow(RangeError);
  });

  it('maps virtual ns to real ms and back through the dilation factor', () => {
    const c = new PhysClock(monotonicEpoch(), 1000);
    expect(c.tdf).toBe(1000);
    // one real millisecond is one virtual microsecond
    expect(c.realMs(1000)).toBe(1);
    expect(c.virtualNs(1)).toBe(1000);
    expect(c.realMs(1.2e3 * 1500)).toBeCloseTo(1500 * 1.2, 9);
    for (const ns of [0, 1, 1234.5, 1e9]) expect(c.virtualNs(c.realMs(ns))).toBeCloseTo(ns, 6);
    const real = new PhysClock(monotonicEpoch(), 1);
    expect(real.realMs(1e6)).toBe(1);
    expect(real.virtualNs(1)).toBe(1e6);
  });

  it('reads dilated time since the epoch, monotonically', () => {
    const [sec] = process.hrtime();
    // an epoch 2-3 s ago whose nanosecond part is at least now's: the borrow must work
    const epoch = { sec: sec - 3, nsec: 999_999_999 };
    const c = new PhysClock(epoch, 1000);
    const t0 = c.now();
    // 2 to 3 s of real time (plus slack) have passed: 2e6..3e6 virtual ns at tdf 1000
    expect(t0).toBeGreaterThanOrEqual(2e6);
    expect(t0).toBeLessThan(3e6 + 1e6);
    let prev = t0;
    for (let i = 0; i < 1000; i++) {
      const t = c.now();
      expect(t).toBeGreaterThanOrEqual(prev);
      prev = t;
    }
    const fast = new PhysClock(epoch, 1);
    expect(fast.now()).toBeGreaterThan(prev * 999);
  });

  it('starts near zero at a fresh epoch', () => {
    const c = new PhysClock(monotonicEpoch(), 1000);
    const t = c.now();
    expect(t).toBeGreaterThanOrEqual(0);
    expect(t).toBeLessThan(1e6); // under a real second
  });
});

describe('formatNs', () => {
  it('picks a readable unit', () => {
    expect(formatNs(999)).toBe('999 ns');
    expect(formatNs(1500)).toBe('1.5 µs');
    expect(formatNs(2.5e6)).toBe('2.50 ms');
    expect(formatNs(3e9)).toBe('3.00 s');
    expect(formatNs(-1500)).toBe('-1.5 µs');
    expect(formatNs(Number.POSITIVE_INFINITY)).toBe('Infinity');
  });
});
