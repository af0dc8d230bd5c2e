import { describe, expect, it } from 'vitest';
import { FrameFifo, StrictPriority } from '../core/discipline.js';
import { type Frame, makeFrame, PRIORITIES } from '../core/frame.js';

const frame = (q: number, p = 0): Frame => makeFrame({ t: 0, s: 0, d: 1, z: 100, q, p });

describe('FrameFifo', () => {
  it('is empty at first', () => {
    const q = new FrameFifo();
    expect(q.length).toBe(0);
    expect(q.peek()).toBeUndefined();
    expect(q.shift()).toBeUndefined();
    expect(q.length).toBe(0);
  });

  it('keeps FIFO order while growing past its initial capacity', () => {
    const q = new FrameFifo();
    for (let i = 0; i < 1000; i++) q.push(frame(i));
    expect(q.length).toBe(1000);
    expect(q.peek()?.q).toBe(0);
    for (let i = 0; i < 1000; i++) expect(q.shift()?.q).toBe(i);
    expect(q.length).toBe(0);
    expect(q.shift()).toBeUndefined();
  });

  it('keeps FIFO order when it grows while wrapped around', () => {
    const q = new FrameFifo();
    let pushed = 0;
    let popped = 0;
    // fill, drain part, refill past the end of the ring so that head > 0, then force growth
    for (; pushed < 64; pushed++) q.push(frame(pushed));
    for (; popped < 40; popped++) expect(q.shift()?.q).toBe(popped);
    for (; pushed < 64 + 40; pushed++) q.push(frame(pushed)); // exactly full, wrapped
    expect(q.length).toBe(64);
    for (; pushed < 300; pushed++) q.push(frame(pushed)); // grows from a wrapped state
    expect(q.length).toBe(300 - 40);
    expect(q.peek()?.q).toBe(40);
    for (; popped < 300; popped++) expect(q.shift()?.q).toBe(popped);
    expect(q.length).toBe(0);
  });

  it('survives a long interleaving of pushes and shifts', () => {
    const q = new FrameFifo();
    let pushed = 0;
    let popped = 0;
    let s = 7;
    for (let i = 0; i < 20000; i++) {
      s = (s * 1103515245 + 12345) % 2147483648;
      if (s % 3 !== 0 || q.length === 0) q.push(frame(pushed++));
      else if (q.shift()?.q !== popped++) expect.fail(`step ${i}: out of order`);
      if (q.length !== pushed - popped) expect.fail(`step ${i}: length ${q.length}, want ${pushed - popped}`);
    }
    while (q.length > 0) expect(q.shift()?.q).toBe(popped++);
    expect(popped).toBe(pushed);
  });
});

describe('StrictPriority', () => {
  it('serves the highest class first, FIFO within a class', () => {
    const sp = new StrictPriority();
    const order: Array<[number, number]> = [
      [1, 0],
      [2, 7],
      [3, 3],
      [4, 0],
      [5, 7],
      [6, 3],
      [7, 5],
    ];
    for (const [q, p] of order) sp.enqueue(frame(q, p));
    expect(sp.length).toBe(7);
    expect(sp.depth(7)).toBe(2);
    expect(sp.depth(3)).toBe(2);
    expect(sp.depth(1)).toBe(0);
    const out: number[] = [];
    for (let f = sp.dequeue(); f !== null; f = sp.dequeue()) out.push(f.q);
    expect(out).toEqual([2, 5, 7, 3, 6, 1, 4]);
    expect(sp.length).toBe(0);
    expect(sp.dequeue()).toBeNull();
  });

  it('a newly arrived higher class overtakes waiting lower ones', () => {
    const sp = new StrictPriority();
    sp.enqueue(frame(1, 0));
    sp.enqueue(frame(2, 0));
    expect(sp.dequeue()?.q).toBe(1);
    sp.enqueue(frame(3, 6));
    expect(sp.dequeue()?.q).toBe(3);
    expect(sp.dequeue()?.q).toBe(2);
  });

  it('has every class 0..7 and is always eligible', () => {
    const sp = new StrictPriority();
    for (let p = 0; p < PRIORITIES; p++) sp.enqueue(frame(p, p));
    for (let p = 0; p < PRIORITIES; p++) expect(sp.depth(p)).toBe(1);
    expect(sp.nextEligible(1234)).toBe(1234);
    const out: number[] = [];
    for (let f = sp.dequeue(); f !== null; f = sp.dequeue()) out.push(f.p);
    expect(out).toEqual([7, 6, 5, 4, 3, 2, 1, 0]);
  });
});
