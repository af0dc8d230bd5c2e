/**
 * Moving median (linuxptp mmedian.c): odd and even windows, ring wrap-around, ties, reset.
 */
import { describe, expect, it } from 'vitest';
import { MovingMedian } from '../core/median.js';

describe('MovingMedian', () => {
  it('returns the middle value for odd counts and the mean of the middle two for even counts', () => {
    const m = new MovingMedian(5);
    expect(m.push(10)).toBe(10);
    expect(m.push(30)).toBe(20);
    expect(m.push(20)).toBe(20);
    expect(m.push(5)).toBe(15); // 5 10 20 30
    expect(m.push(100)).toBe(20); // 5 10 20 30 100
    expect(m.count).toBe(5);
  });

  it('drops the oldest value once the ring wraps', () => {
    const m = new MovingMedian(3);
    m.push(1);
    m.push(2);
    expect(m.push(3)).toBe(2);
    expect(m.push(100)).toBe(3); // 2 3 100
    expect(m.push(101)).toBe(100); // 3 100 101
    expect(m.push(-5)).toBe(100); // 100 101 -5
    expect(m.push(-6)).toBe(-5); // 101 -5 -6
    expect(m.push(-7)).toBe(-6); // -5 -6 -7
    expect(m.count).toBe(3);
  });

  it('matches a brute-force median over a long pseudo-random sequence', () => {
    for (const len of [1, 2, 4, 7, 10]) {
      const m = new MovingMedian(len);
      const seen: number[] = [];
      let x = 12345;
      for (let i = 0; i < 500; i++) {
        x = (x * 1103515245 + 12345) % 2147483648;
        const v = (x % 64) - 20; // small range: plenty of ties
        seen.push(v);
        const win = seen.slice(-len).sort((a, b) => a - b);
        const h = win.length >> 1;
        const want = win.length % 2 ? win[h] : (win[h - 1] + win[h]) / 2;
        expect(m.push(v)).toBe(want);
      }
    }
  });

  it('forgets everything on reset', () => {
    const m = new MovingMedian(4);
    m.push(1000);
    m.push(2000);
    m.push(3000);
    m.reset();
    expect(m.count).toBe(0);
    expect(m.push(7)).toBe(7);
    expect(m.push(9)).toBe(8);
    expect(m.count).toBe(2);
  });

  it('rejects lengths below 1', () => {
    expect(() => new MovingMedian(0)).toThrow(RangeError);
    expect(() => new MovingMedian(2.5)).toThrow(RangeError);
  });
});
