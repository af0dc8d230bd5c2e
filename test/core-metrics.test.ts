import { describe, expect, it } from 'vitest';
import { Metrics, Series } from '../core/metrics.js';

describe('Series', () => {
  it('starts empty', () => {
    const s = new Series();
    expect(s.length).toBe(0);
    expect(s.toArrays()).toEqual({ t: [], v: [] });
  });

  it('keeps every sample in order while growing past its initial capacity', () => {
    const s = new Series();
    const n = 5000;
    for (let i = 0; i < n; i++) s.push(i * 10, i * 0.5 - 7);
    expect(s.length).toBe(n);
    const { t, v } = s.toArrays();
    expect(t).toHaveLength(n);
    expect(v).toHaveLength(n);
    for (let i = 0; i < n; i++) {
      if (t[i] !== i * 10 || v[i] !== i * 0.5 - 7) expect.fail(`sample ${i} is (${t[i]}, ${v[i]})`);
    }
    // samples around the growth boundaries survive the copies
    expect([t[1023], t[1024], t[2047], t[2048]]).toEqual([10230, 10240, 20470, 20480]);
  });

  it('returns plain arrays that do not alias its storage', () => {
    const s = new Series();
    s.push(1, 2);
    const a = s.toArrays();
    expect(Array.isArray(a.t)).toBe(true);
    a.t[0] = 99;
    s.push(3, 4);
    expect(s.toArrays()).toEqual({ t: [1, 3], v: [2, 4] });
  });

  it('keeps full float precision', () => {
    const s = new Series();
    s.push(2 ** 40 + 0.25, Math.PI);
    expect(s.toArrays()).toEqual({ t: [2 ** 40 + 0.25], v: [Math.PI] });
  });
});

describe('Metrics', () => {
  it('counts by one or by an amount, and reads zero for unknown counters', () => {
    const m = new Metrics();
    expect(m.get('drops')).toBe(0);
    m.inc('drops');
    m.inc('drops');
    m.inc('bytes', 1500);
    m.inc('bytes', 64);
    m.inc('zero', 0);
    expect(m.get('drops')).toBe(2);
    expect(m.get('bytes')).toBe(1564);
    expect(m.get('zero')).toBe(0);
    expect(m.counters).toEqual({ drops: 2, bytes: 1564, zero: 0 });
  });

  it('handles counter names that collide with Object.prototype members', () => {
    const m = new Metrics();
    expect(m.get('constructor')).toBe(0);
    expect(m.get('toString')).toBe(0);
    m.inc('constructor');
    m.inc('__proto__', 3);
    expect(m.get('constructor')).toBe(1);
    expect(m.get('__proto__')).toBe(3);
  });

  it('returns the same histogram for the same name', () => {
    const m = new Metrics();
    const h = m.histogram('fct');
    h.record(10);
    expect(m.histogram('fct')).toBe(h);
    expect(m.histogram('other')).not.toBe(h);
    expect(m.histogram('fct').n).toBe(1);
  });

  it('snapshots counters and histograms as plain data that later updates do not change', () => {
    const m = new Metrics();
    m.inc('a', 5);
    for (const v of [1, 2, 3, 100]) m.histogram('lat').record(v);
    m.histogram('empty');
    const snap = m.snapshot();
    expect(snap.counters).toEqual({ a: 5 });
    expect(Object.keys(snap.histograms).sort()).toEqual(['empty', 'lat']);
    expect(snap.histograms.lat.n).toBe(4);
    expect(snap.histograms.lat.max).toBe(100);
    expect(snap.histograms.lat.sum).toBe(106);
    expect(snap.histograms.empty.n).toBe(0);
    m.inc('a');
    m.inc('b');
    m.histogram('lat').record(5);
    expect(snap.counters).toEqual({ a: 5 });
    expect(snap.histograms.lat.n).toBe(4);
    // it survives a JSON round trip (it travels over the control channel)
    expect(JSON.parse(JSON.stringify(snap))).toEqual(snap);
  });
});
