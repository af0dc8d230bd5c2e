/**
 * The compute model (docs/compute.md) on a conservative scheduler and a real
 * egress port: code that charges work keeps the node's core busy, its sends leave when the work ends,
 * the node's later code waits in the order it was due, and hardware (the port's serialization) goes on.
 */
import { describe, expect, it } from 'vitest';
import { makeFrame } from '../core/frame.js';
import { EgressPort } from '../core/port.js';
import { Scheduler } from '../core/scheduler.js';

function setup(model: 'none' | 'cost' | 'measured' = 'cost', scale = 1) {
  const sched = new Scheduler(null);
  sched.setCompute({ model, scale });
  const out: Array<[number, number]> = [];
  // 8 Gbit/s: 1 ns per byte; 50 ns of propagation
  const params = { rateBps: 8e9, propNs: 50, bufferBytes: 1e6, ecnBytes: 0, commitAheadNs: 0 };
  const port = new EgressPort(0, params, sched, (_p, f) => out.push([sched.current, f.q]));
  const frame = (q: number) => makeFrame({ t: 0, s: 1, d: 2, z: 100, q });
  return { sched, port, out, frame };
}

describe('compute model', () => {
  it('sends what the code sent when its work ends; the port serializes meanwhile', () => {
    const { sched, port, out, frame } = setup();
    sched.runCode(0, (now) => {
      port.send(frame(1), now);
      sched.charge(1000);
      port.send(frame(2), now);
    });
    sched.runBefore(10_000);
    // both leave at 1000 (the whole handler is one piece of work), back to back on the wire
    expect(out).toEqual([
      [1000, 1],
      [1100, 2],
    ]);
    expect(sched.computeSnapshot()).toEqual({
      model: 'cost',
      busyNs: 1000,
      charged: 1,
      waited: 0,
      maxWaitNs: 0,
    });
  });

  it('makes the node’s later code wait, in the order it was due, and leaves hardware alone', () => {
    const { sched, port, out, frame } = setup('cost', 2);
    const log: string[] = [];
    // a frame committed before the work: the port sends it while the core computes
    sched.atHardware(0, (now) => port.send(frame(0), now));
    sched.runCode(10, () => {
      log.push('work@10');
      sched.charge(500); // × scale 2: busy until 1010
      sched.at(300, (now) => log.push(`timer@${now}`));
      sched.at(200, (now) => log.push(`early@${now}`));
    });
    // a frame for the node's code arrives at 400 (its delivery is hardware, its handling is code)
    sched.atHardware(400, (t) => sched.runCode(t, (now) => log.push(`frame@${now}`)));
    sched.runBefore(10_000);
    expect(out).toEqual([[0, 0]]);
    expect(log).toEqual(['work@10', 'early@1010', 'timer@1010', 'frame@1010']);
    const c = sched.computeSnapshot();
    expect([c.busyNs, c.waited, c.maxWaitNs]).toEqual([1000, 3, 810]);
  });

  it('runs work charged to worker cores beside the main core: only the code’s own sends wait for it', () => {
    const { sched, port, out, frame } = setup();
    sched.setCores('alloc', 1);
    sched.setCores('pathsel', 2);
    const log: string[] = [];
    sched.runCode(0, (now) => {
      sched.charge(100); // main core: 0-100
      sched.charge(1000, 'alloc'); // 100-1100
      sched.chargeEach('pathsel', [300, 200, 400]); // 1100-1400, 1100-1300, then 1300-1700
      port.send(frame(1), now);
    });
    // a frame for the code at 150: the main core is free again (its work ended at 100)
    sched.atHardware(150, (t) => sched.runCode(t, (now) => log.push(`frame@${now}`)));
    sched.runBefore(10_000);
    expect(log).toEqual(['frame@150']);
    expect(out).toEqual([[1700, 1]]);
    expect(sched.computeSnapshot()).toEqual({
      model: 'cost',
      busyNs: 100,
      charged: 3,
      waited: 0,
      maxWaitNs: 0,
      pools: { alloc: { cores: 1, busyNs: 1000 }, pathsel: { cores: 2, busyNs: 900 } },
    });
    expect(() => sched.runCode(2000, () => sched.charge(1, 'comm'))).toThrow("no cores named 'comm'");
  });

  it('costs nothing without a model, and charges are ignored by the measured model', () => {
    const none = setup('none');
    none.sched.runCode(0, (now) => {
      none.sched.charge(1000);
      none.port.send(none.frame(1), now);
    });
    none.sched.runBefore(10_000);
    expect(none.out).toEqual([[0, 1]]);
    expect(none.sched.computes).toBe(false);

    const measured = setup('measured');
    measured.sched.runCode(0, (now) => {
      measured.sched.charge(1_000_000_000);
      measured.port.send(measured.frame(1), now);
    });
    measured.sched.runBefore(Number.POSITIVE_INFINITY);
    const c = measured.sched.computeSnapshot();
    // the handler's own CPU time: well under a second
    expect(c.busyNs).toBeGreaterThan(0);
    expect(c.busyNs).toBeLessThan(1e8);
    expect(measured.out[0][0]).toBe(c.busyNs);
  });

  it('is refused in dilated mode by the scenario (here: the scheduler ignores it)', () => {
    const sched = new Scheduler({ now: () => 0, realMs: (ns) => ns / 1e6 }, true);
    sched.setCompute({ model: 'cost', scale: 1 });
    expect(sched.computes).toBe(false);
  });
});
