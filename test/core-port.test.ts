import { describe, expect, it } from 'vitest';
import { type Discipline, StrictPriority } from '../core/discipline.js';
import { WireVerdict } from '../core/fault-filter.js';
import { Ecn, type Frame, makeFrame } from '../core/frame.js';
import { EgressPort, type PortParams } from '../core/port.js';
import { Scheduler } from '../core/scheduler.js';

interface Out {
  /** scheduler time at which the sink got the frame */
  at: number;
  port: number;
  frame: Frame;
}

/**
 * A port on a manual scheduler. The default rate is 8 Gbit/s, i.e. exactly 1 ns per byte, so
 * serialization times read directly as frame sizes. Sends go through the scheduler (`offer`) so that
 * `sched.current` tells when the sink received each frame.
 */
function setup(params: Partial<PortParams> = {}, random?: () => number, discipline?: Discipline) {
  const sched = new Scheduler({ now: () => 0, realMs: (ns) => ns / 1e6 }, true);
  const out: Out[] = [];
  const full: PortParams = {
    rateBps: 8e9,
    propNs: 50,
    bufferBytes: 1_000_000,
    ecnBytes: 0,
    commitAheadNs: 0,
    ...params,
  };
  const port = new EgressPort(
    3,
    full,
    sched,
    (p, f) => out.push({ at: sched.current, port: p, frame: f }),
    discipline,
    random,
  );
  const results: boolean[] = [];
  const offer = (t: number, frame: Frame) => {
    sched.at(t, (now) => results.push(port.send(frame, now)));
  };
  return { sched, port, out, offer, results };
}

let nextQ = 0;
function frame(z: number, extra: Partial<Frame> = {}): Frame {
  return makeFrame({ t: 0, s: 1, d: 2, z, q: nextQ++, ...extra });
}

describe('EgressPort timing', () => {
  it('rejects a non-positive rate', () => {
    const sched = new Scheduler({ now: () => 0, realMs: (ns) => ns / 1e6 }, true);
    const p = { rateBps: 0, propNs: 0, bufferBytes: 1, ecnBytes: 0, commitAheadNs: 0 };
    expect(() => new EgressPort(0, p, sched, () => {})).toThrow(RangeError);
    expect(() => new EgressPort(0, { ...p, rateBps: Number.NaN }, sched, () => {})).toThrow(RangeError);
  });

  it('charges size*8/rate of serialization', () => {
    const { port } = setup({ rateBps: 10e9 });
    expect(port.serializationNs(1500)).toBeCloseTo(1200, 9);
    expect(port.serializationNs(64)).toBeCloseTo(51.2, 9);
  });

  it('stamps a lone frame with txStart + serialization + propagation', () => {
    const { sched, out, offer, port } = setup({ propNs: 50 });
    const f = frame(1000);
    offer(100, f);
    sched.runDue(1e9);
    expect(out).toHaveLength(1);
    expect(out[0].frame).toBe(f);
    expect(out[0].port).toBe(3);
    expect(out[0].at).toBe(100);
    expect(f.a).toBe(100 + 1000 + 50);
    expect(port.stats.txFrames).toBe(1);
    expect(port.stats.txBytes).toBe(1000);
  });

  it('queues back-to-back frames behind each other', () => {
    const { sched, out, offer } = setup({ propNs: 50 });
    offer(0, frame(1000));
    offer(0, frame(500));
    offer(0, frame(250));
    // the link is idle again from 1750: a later frame starts when it is offered
    offer(3000, frame(100));
    sched.runDue(1e9);
    expect(out.map((o) => o.frame.a)).toEqual([1050, 1550, 1800, 3150]);
    // with no commit-ahead each frame is handed over when its transmission starts
    expect(out.map((o) => o.at)).toEqual([0, 1000, 1500, 3000]);
  });

  it('a frame offered while the link is busy starts when the link frees', () => {
    const { sched, out, offer } = setup({ propNs: 0 });
    offer(0, frame(1000));
    offer(400, frame(1000));
    sched.runDue(1e9);
    expect(out.map((o) => o.frame.a)).toEqual([1000, 2000]);
    expect(out[1].at).toBe(1000);
  });

  it('serves waiting frames in strict priority order, FIFO within a class', () => {
    const { sched, out, offer } = setup();
    offer(0, frame(1000, { p: 0, f: 1 })); // starts at once
    offer(0, frame(100, { p: 0, f: 2 }));
    offer(0, frame(100, { p: 3, f: 3 }));
    offer(0, frame(100, { p: 7, f: 4 }));
    offer(0, frame(100, { p: 3, f: 5 }));
    offer(10, frame(100, { p: 5, f: 6 }));
    sched.runDue(1e9);
    expect(out.map((o) => o.frame.f)).toEqual([1, 4, 6, 3, 5, 2]);
    // departures stay back to back whatever the order
    expect(out.map((o) => o.frame.a)).toEqual([1050, 1150, 1250, 1350, 1450, 1550]);
  });
});

describe('EgressPort send jitter (jitter.send)', () => {
  it('hands each frame to the queue a drawn delay later, never before one handed over earlier', () => {
    const { sched, out, offer, port, results } = setup({ propNs: 0 });
    const delays = [500, 100, 0, 2000];
    port.setLateness(() => delays.shift()!);
    const fs = [frame(100), frame(100), frame(100), frame(100)];
    offer(0, fs[0]);
    offer(10, fs[1]);
    offer(700, fs[2]);
    offer(700, fs[3]);
    sched.runDue(1e9);
    expect(results).toEqual([true, true, true, true]);
    // 500; max(110, 500) = 500 behind it; 700 (no delay); 2700
    expect(out.map((o) => o.frame)).toEqual(fs);
    expect(out.map((o) => o.at)).toEqual([500, 600, 700, 2700]);
  });

  it('draws below zero count as no delay', () => {
    const { sched, out, offer, port } = setup({ propNs: 0 });
    port.setLateness(() => -300);
    offer(50, frame(100));
    sched.runDue(1e9);
    expect(out.map((o) => o.at)).toEqual([50]);
  });
});

describe('EgressPort buffer and ECN', () => {
  it('drops at the tail when the buffer is full and counts the drop', () => {
    const { sched, out, offer, port, results } = setup({ bufferBytes: 2500 });
    for (let i = 0; i < 5; i++) offer(0, frame(1000));
    sched.runDue(0);
    // the first frame is on the wire at once; two more fit in the 2500-byte buffer
    expect(results).toEqual([true, true, true, false, false]);
    expect(port.stats.dropsCongestion).toBe(2);
    // once the second frame starts at 1000 there is room again
    offer(1000, frame(1000));
    offer(1000, frame(1000));
    sched.runDue(1e9);
    expect(results.slice(5)).toEqual([true, false]);
    expect(port.stats.dropsCongestion).toBe(3);
    expect(out).toHaveLength(4);
    expect(port.stats.txFrames).toBe(4);
    expect(port.stats.maxBytes).toBe(2000);
  });

  it('lets a discipline push out what it holds to make room, and counts what it pushed out as drops', () => {
    /** pushes out its latest lower-class frames for a higher-class arrival (as pFabric does by priority) */
    class PushOut extends StrictPriority {
      pushOut(arriving: Frame, needBytes: number): { frames: number; bytes: number } {
        const q = this.queues[0];
        if (arriving.p === 0 || q.length === 0) return { frames: 0, bytes: 0 };
        const held: Frame[] = [];
        while (q.length > 0) held.push(q.shift()!);
        const victim = held.pop()!;
        for (const f of held) q.push(f);
        this.length--;
        expect(victim.z).toBeGreaterThanOrEqual(needBytes);
        return { frames: 1, bytes: victim.z };
      }
    }
    const { sched, out, offer, port, results } = setup({ bufferBytes: 2500 }, undefined, new PushOut());
    for (let i = 0; i < 3; i++) offer(0, frame(1000));
    // full: a low-class arrival is dropped at the tail, a high-class one pushes out the latest low one
    offer(0, frame(1000));
    offer(0, frame(1000, { p: 5 }));
    sched.runDue(1e9);
    expect(results).toEqual([true, true, true, false, true]);
    expect(port.stats.dropsCongestion).toBe(2);
    expect(out.map((o) => o.frame.p)).toEqual([0, 5, 0]);
    expect(port.stats.maxBytes).toBe(2000);
  });

  it('drops a frame that alone exceeds the buffer', () => {
    const { sched, offer, port, results, out } = setup({ bufferBytes: 1000 });
    offer(0, frame(1001));
    offer(0, frame(1000));
    sched.runDue(1e9);
    expect(results).toEqual([false, true]);
    expect(port.stats.dropsCongestion).toBe(1);
    expect(out).toHaveLength(1);
  });

  it('marks ECT frames CE when the queue holds at least ecnBytes, never non-ECT ones', () => {
    const { sched, out, offer, port } = setup({ ecnBytes: 1500 });
    offer(0, frame(1000, { e: Ecn.Ect, f: 1 })); // on the wire: occupancy stays 0
    offer(0, frame(1000, { e: Ecn.Ect, f: 2 })); // occupancy 0
    offer(0, frame(1000, { e: Ecn.Ect, f: 3 })); // occupancy 1000 < 1500
    offer(0, frame(1000, { e: Ecn.Ect, f: 4 })); // occupancy 2000: marked
    offer(0, frame(1000, { e: Ecn.NotEct, f: 5 })); // not ECN-capable: left alone
    offer(0, frame(1000, { e: Ecn.Ce, f: 6 })); // already CE: not counted again
    offer(0, frame(1000, { e: Ecn.Ect, f: 7 })); // marked
    sched.runDue(1e9);
    const e = Object.fromEntries(out.map((o) => [o.frame.f, o.frame.e]));
    expect(e).toEqual({ 1: 1, 2: 1, 3: 1, 4: 3, 5: 0, 6: 3, 7: 3 });
    expect(port.stats.ecnMarks).toBe(2);
  });

  it('marks at exactly the threshold', () => {
    const { sched, out, offer } = setup({ ecnBytes: 1000 });
    offer(0, frame(1000, { e: Ecn.Ect }));
    offer(0, frame(1000, { e: Ecn.Ect }));
    offer(0, frame(1000, { e: Ecn.Ect })); // occupancy exactly 1000
    sched.runDue(1e9);
    expect(out.map((o) => o.frame.e)).toEqual([1, 1, 3]);
  });

  it('does not mark when ECN is disabled', () => {
    const { sched, out, offer, port } = setup({ ecnBytes: 0 });
    for (let i = 0; i < 5; i++) offer(0, frame(1000, { e: Ecn.Ect }));
    sched.runDue(1e9);
    expect(out.every((o) => o.frame.e === Ecn.Ect)).toBe(true);
    expect(port.stats.ecnMarks).toBe(0);
  });

  it('accounts occupancy of waiting frames as the port drains them', () => {
    const { sched, port } = setup();
    for (let i = 0; i < 3; i++) port.send(frame(1000), 0);
    expect(port.occupancy(0)).toBe(2000);
    sched.runDue(1000);
    expect(port.occupancy(1000)).toBe(1000);
    sched.runDue(1999);
    expect(port.occupancy(1999)).toBe(1000);
    sched.runDue(2000);
    expect(port.occupancy(2000)).toBe(0);
    expect(port.stats.maxBytes).toBe(2000);
  });

  it('accounts committed frames until their transmission starts', () => {
    const { port, out } = setup({ commitAheadNs: 1e6 });
    for (let i = 0; i < 3; i++) port.send(frame(1000), 0);
    // everything is committed at once with a deep pipeline
    expect(out).toHaveLength(3);
    expect(port.occupancy(0)).toBe(2000);
    expect(port.occupancy(999)).toBe(2000);
    expect(port.occupancy(1000)).toBe(1000);
    expect(port.occupancy(2500)).toBe(0);
  });

  it('counts committed frames against the buffer', () => {
    const { port } = setup({ commitAheadNs: 1e6, bufferBytes: 2000 });
    expect(port.send(frame(1000), 0)).toBe(true); // on the wire
    expect(port.send(frame(1000), 0)).toBe(true); // committed, waits until 1000
    expect(port.send(frame(1000), 0)).toBe(true);
    expect(port.send(frame(1000), 0)).toBe(false);
    expect(port.send(frame(1000), 1000)).toBe(true);
    expect(port.stats.dropsCongestion).toBe(1);
  });

  it('clear() empties the port without counting drops', () => {
    const { sched, port, out } = setup();
    for (let i = 0; i < 4; i++) port.send(frame(1000), 0);
    expect(out).toHaveLength(1);
    port.clear();
    expect(port.occupancy(0)).toBe(0);
    sched.runDue(1e9);
    expect(out).toHaveLength(1);
    expect(port.stats.dropsCongestion).toBe(0);
  });
});

describe('EgressPort commit-ahead', () => {
  it('hands a queued frame to the sink commitAheadNs before its start', () => {
    const { sched, out, offer } = setup({ commitAheadNs: 300, propNs: 50 });
    for (let i = 0; i < 4; i++) offer(0, frame(1000));
    sched.runDue(0);
    expect(out).toHaveLength(1);
    sched.runDue(699);
    expect(out).toHaveLength(1);
    sched.runDue(700);
    expect(out).toHaveLength(2);
    sched.runDue(1e9);
    expect(out.map((o) => o.at)).toEqual([0, 700, 1700, 2700]);
    // the stamps do not depend on when the frames were committed
    expect(out.map((o) => o.frame.a)).toEqual([1050, 2050, 3050, 4050]);
  });

  it('commits everything in the window at once', () => {
    const { out, port } = setup({ commitAheadNs: 2500 });
    for (let i = 0; i < 5; i++) port.send(frame(1000), 0);
    // starts at 0, 1000, 2000 are within 2500 ns; 3000 and 4000 are not yet
    expect(out).toHaveLength(3);
  });

  it('the commit window includes its end and nothing beyond', () => {
    for (const [ahead, committed] of [
      [999, 1],
      [1000, 2],
      [1999, 2],
      [2000, 3],
    ]) {
      const { out, port } = setup({ commitAheadNs: ahead });
      for (let i = 0; i < 3; i++) port.send(frame(1000), 0);
      expect(out, `commitAheadNs ${ahead}`).toHaveLength(committed);
    }
  });

  it('a later high-priority frame cannot overtake a committed one', () => {
    const ahead = setup({ commitAheadNs: 600 });
    const none = setup({ commitAheadNs: 0 });
    for (const s of [ahead, none]) {
      s.offer(0, frame(1000, { f: 1 }));
      s.offer(0, frame(1000, { f: 2 }));
      s.offer(0, frame(1000, { f: 3 }));
      s.offer(500, frame(100, { f: 9, p: 7 }));
      s.sched.runDue(1e9);
    }
    // with 600 ns of pipeline, frame 2 (start 1000) was committed at 400, before frame 9 came
    expect(ahead.out.map((o) => o.frame.f)).toEqual([1, 2, 9, 3]);
    expect(none.out.map((o) => o.frame.f)).toEqual([1, 9, 2, 3]);
  });

  it('re-arms its wake-up when a frame arrives while the link is idle', () => {
    const { sched, out, offer } = setup({ commitAheadNs: 100 });
    offer(0, frame(1000));
    offer(0, frame(1000)); // committed at 900
    offer(5000, frame(1000)); // idle link: leaves at once
    offer(5000, frame(1000)); // committed at 5900
    sched.runDue(1e9);
    expect(out.map((o) => o.at)).toEqual([0, 900, 5000, 5900]);
    expect(out.map((o) => o.frame.a)).toEqual([1050, 2050, 6050, 7050]);
  });
});

describe('EgressPort causality', () => {
  it('queues a frame offered earlier than an accepted one at the later time (the order the port saw)', () => {
    const { sched, port, out } = setup({ propNs: 0 });
    const first = frame(1000);
    const late = frame(1000);
    expect(port.send(first, 1000)).toBe(true);
    expect(port.send(late, 500)).toBe(true);
    sched.runDue(1e9);
    expect(out.map((o) => o.frame)).toEqual([first, late]);
    expect(first.a).toBe(2000);
    expect(late.a).toBe(3000);
  });

  it('promises the next departure plus the shortest frame and the propagation delay', () => {
    const { sched, port, offer } = setup({ propNs: 1000 });
    // 8 Gbit/s: 64 B take 64 ns; an idle port can send at the next event
    expect(port.promise(5000)).toBe(5000 + 64 + 1000);
    // a committed frame keeps the link busy: nothing new starts before it ends
    offer(5000, frame(1500));
    sched.runDue(5000);
    expect(port.promise(5000)).toBe(5000 + 1500 + 64 + 1000);
  });
});

describe('EgressPort wire filter', () => {
  it('a down wire swallows committed frames but they still use the link', () => {
    const { sched, port, out, offer } = setup();
    port.wire.set({ down: true });
    offer(0, frame(1000));
    offer(0, frame(1000));
    sched.runDue(1e9);
    expect(out).toHaveLength(0);
    expect(port.wire.droppedDown).toBe(2);
    expect(port.stats.txFrames).toBe(2);
    port.wire.reset();
    offer(2000, frame(1000));
    sched.runDue(1e9);
    expect(out).toHaveLength(1);
    expect(out[0].frame.a).toBe(2000 + 1000 + 50);
  });

  it('uses the injected random function for loss and adds the extra delay', () => {
    const draws = [0.1, 0.9];
    let i = 0;
    const { sched, port, out, offer } = setup({}, () => draws[i++ % draws.length]);
    port.wire.set({ loss: 0.5, delayNs: 7 });
    offer(0, frame(100, { f: 1 }));
    offer(0, frame(100, { f: 2 }));
    sched.runDue(1e9);
    expect(out.map((o) => o.frame.f)).toEqual([2]);
    expect(out[0].frame.a).toBe(200 + 50 + 7);
    expect(port.wire.droppedLoss).toBe(1);
    expect(port.wire.apply(frame(1))).toBe(WireVerdict.Lost);
  });

  it('hands every frame to the capture at its transmission start, with the wire’s verdict', () => {
    const draws = [0.1, 0.9];
    let i = 0;
    const { sched, port, out, offer } = setup({}, () => draws[i++ % draws.length]);
    const seen: Array<[number, number, number, number]> = [];
    port.capture = (p, f, txStart, verdict) => seen.push([p, f.f, txStart, verdict]);
    port.wire.set({ loss: 0.5 });
    offer(10, frame(100, { f: 1 }));
    offer(10, frame(100, { f: 2 }));
    sched.runDue(1e9);
    port.wire.set({ down: true });
    offer(500, frame(100, { f: 3 }));
    sched.runDue(1e9);
    // 8 Gbit/s: the second frame starts when the first is serialized, 100 ns later
    expect(seen).toEqual([
      [3, 1, 10, WireVerdict.Lost],
      [3, 2, 110, WireVerdict.Pass],
      [3, 3, 500, WireVerdict.Down],
    ]);
    expect(out.map((o) => o.frame.f)).toEqual([2]);
  });
});
