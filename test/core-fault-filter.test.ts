import { describe, expect, it } from 'vitest';
import { WIRE_OK, WireFilter, WireVerdict } from '../core/fault-filter.js';
import { makeFrame } from '../core/frame.js';

/** A random function that replays `draws` and counts how often it was called. */
function scripted(draws: number[]) {
  const r = { calls: 0, fn: () => draws[r.calls++ % draws.length] };
  return r;
}

const frame = (a = 1000) => makeFrame({ t: 0, s: 1, d: 2, z: 100, a });

describe('WireFilter', () => {
  it('passes frames untouched by default without drawing random numbers', () => {
    const rnd = scripted([0]);
    const w = new WireFilter(rnd.fn);
    const f = frame();
    expect(w.apply(f)).toBe(WireVerdict.Pass);
    expect(f.a).toBe(1000);
    expect(f.c).toBe(0);
    expect(rnd.calls).toBe(0);
    expect(w.droppedDown + w.droppedLoss + w.corrupted).toBe(0);
  });

  it('drops everything while down, before any loss draw', () => {
    const rnd = scripted([0]);
    const w = new WireFilter(rnd.fn);
    w.set({ down: true, loss: 1, corrupt: 1 });
    for (let i = 0; i < 3; i++) expect(w.apply(frame())).toBe(WireVerdict.Down);
    expect(w.droppedDown).toBe(3);
    expect(w.droppedLoss).toBe(0);
    expect(rnd.calls).toBe(0);
    w.set({ down: false, loss: 0, corrupt: 0 });
    expect(w.apply(frame())).toBe(WireVerdict.Pass);
  });

  it('loses a frame when the draw is below the loss probability', () => {
    const rnd = scripted([0.29, 0.3, 0.31, 0]);
    const w = new WireFilter(rnd.fn);
    w.set({ loss: 0.3 });
    const verdicts = [0, 1, 2, 3].map(() => w.apply(frame()));
    expect(verdicts).toEqual([WireVerdict.Lost, WireVerdict.Pass, WireVerdict.Pass, WireVerdict.Lost]);
    expect(w.droppedLoss).toBe(2);
    expect(rnd.calls).toBe(4);
  });

  it('corrupts a frame (c=1) when the draw is below the corruption probability', () => {
    const rnd = scripted([0.05, 0.5]);
    const w = new WireFilter(rnd.fn);
    w.set({ corrupt: 0.1 });
    const a = frame();
    const b = frame();
    expect(w.apply(a)).toBe(WireVerdict.Pass);
    expect(w.apply(b)).toBe(WireVerdict.Pass);
    expect(a.c).toBe(1);
    expect(b.c).toBe(0);
    expect(w.corrupted).toBe(1);
  });

  it('draws loss first, then corruption, and a lost frame is not corrupted', () => {
    // frame 1: loss draw 0.9 (kept), corrupt draw 0.1 (corrupted); frame 2: loss draw 0.1 (lost)
    const rnd = scripted([0.9, 0.1, 0.1]);
    const w = new WireFilter(rnd.fn);
    w.set({ loss: 0.5, corrupt: 0.5 });
    const f1 = frame();
    const f2 = frame();
    expect(w.apply(f1)).toBe(WireVerdict.Pass);
    expect(f1.c).toBe(1);
    expect(w.apply(f2)).toBe(WireVerdict.Lost);
    expect(f2.c).toBe(0);
    expect(rnd.calls).toBe(3);
    expect([w.droppedLoss, w.corrupted]).toEqual([1, 1]);
  });

  it('adds the extra delay to the arrival stamp of passing frames only', () => {
    const rnd = scripted([0.9, 0.1]);
    const w = new WireFilter(rnd.fn);
    w.set({ delayNs: 2500 });
    const f = frame(1000);
    w.apply(f);
    expect(f.a).toBe(3500);
    w.set({ loss: 0.5 });
    const kept = frame(0);
    const lost = frame(0);
    w.apply(kept);
    w.apply(lost);
    expect(kept.a).toBe(2500);
    expect(lost.a).toBe(0);
  });

  it('set() merges a patch, reset() restores the healthy state', () => {
    const w = new WireFilter(() => 0);
    w.set({ loss: 0.2 });
    w.set({ delayNs: 10 });
    expect(w.state).toEqual({ down: false, loss: 0.2, corrupt: 0, delayNs: 10, ptpLoss: 0 });
    w.reset();
    expect(w.state).toEqual(WIRE_OK);
    // the shared default is never mutated
    w.state.loss = 1;
    expect(WIRE_OK.loss).toBe(0);
    expect(Object.isFrozen(WIRE_OK)).toBe(true);
  });

  it('a certain loss drops everything, a zero loss nothing', () => {
    let x = 0;
    const w = new WireFilter(() => (x = (x + 0.37) % 1));
    w.set({ loss: 1 });
    for (let i = 0; i < 50; i++) expect(w.apply(frame())).toBe(WireVerdict.Lost);
    w.set({ loss: 0 });
    for (let i = 0; i < 50; i++) expect(w.apply(frame())).toBe(WireVerdict.Pass);
    expect(w.droppedLoss).toBe(50);
  });
});
