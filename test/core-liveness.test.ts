import { describe, expect, it } from 'vitest';
import { IdealClock } from '../core/clock.js';
import { type Frame, FrameType, Priority, WireSize } from '../core/frame.js';
import { LivenessDetector, type LivenessPort } from '../core/liveness.js';
import { Scheduler } from '../core/scheduler.js';

const I = 1000;
const M = 3;

function setup(portCount = 2) {
  const sched = new Scheduler({ now: () => 0, realMs: (ns) => ns / 1e6 }, true);
  const clock = new IdealClock(sched);
  const sent: Array<{ port: number; now: number; frame: Frame }> = [];
  const ports: LivenessPort[] = Array.from({ length: portCount }, (_, index) => ({
    index,
    send: (frame: Frame) => {
      sent.push({ port: index, now: sched.current, frame });
      return true;
    },
  }));
  const downs: Array<{ port: number; now: number; silent: number }> = [];
  const ups: Array<{ port: number; now: number }> = [];
  const det = new LivenessDetector({ intervalNs: I, multiplier: M }, clock, ports, 42, {
    portDown: (port, now, silent) => downs.push({ port, now, silent }),
    portUp: (port, now) => ups.push({ port, now }),
  });
  /** the peer of `port` sends a frame every `every` ns in [from, to) */
  const hear = (port: number, from: number, to: number, every: number) => {
    for (let t = from; t < to; t += every) sched.at(t, (now) => det.heard(port, now));
  };
  /** `port` carries traffic every `every` ns in [from, to) */
  const busy = (port: number, from: number, to: number, every: number) => {
    for (let t = from; t < to; t += every) sched.at(t, (now) => det.sent(port, now));
  };
  return { sched, det, sent, downs, ups, hear, busy };
}

describe('LivenessDetector keepalives', () => {
  it('keeps ticking where floating point makes (b + c) - b < c', () => {
    // b + 10000 - b is 9999.999999999942 here: the detector must still send and move on (a tick that
    // re-armed itself at the same time would loop forever)
    const b = 523253.1569175558;
    const sched = new Scheduler({ now: () => 0, realMs: (ns) => ns / 1e6 }, true);
    const sent: number[] = [];
    const port: LivenessPort = {
      index: 0,
      send: () => {
        sent.push(sched.current);
        return true;
      },
    };
    const det = new LivenessDetector(
      { intervalNs: 10_000, multiplier: 3 },
      new IdealClock(sched),
      [port],
      1,
      {
        portDown: () => {},
        portUp: () => {},
      },
    );
    det.start(b);
    sched.runDue(b + 25_000);
    expect(sent).toEqual([b, b + 10_000, b + 20_000]);
  });

  it('sends a keepalive on every idle port each interval', () => {
    const { sched, det, sent } = setup(2);
    det.start(0);
    sched.runDue(10 * I);
    // ticks at 0, 1000, ..., 10000 on both ports
    expect(sent.filter((s) => s.port === 0).map((s) => s.now)).toEqual(
      Array.from({ length: 11 }, (_, i) => i * I),
    );
    expect(sent.filter((s) => s.port === 1)).toHaveLength(11);
    expect(det.keepalivesSent).toBe(22);
    const ka = sent[0].frame;
    expect(ka.t).toBe(FrameType.Keepalive);
    expect(ka.p).toBe(Priority.Control);
    expect(ka.z).toBe(WireSize.Small);
    expect(ka.s).toBe(42);
    // each keepalive is a fresh frame (ports may stamp and keep them)
    expect(sent[0].frame).not.toBe(sent[2].frame);
  });

  it('sends no keepalives on a busy port', () => {
    const { sched, det, sent, busy } = setup(2);
    det.start(0);
    busy(0, 150, 10 * I, 300);
    sched.runDue(10 * I);
    // only the first tick, before any traffic, finds port 0 idle
    expect(sent.filter((s) => s.port === 0).map((s) => s.now)).toEqual([0]);
    expect(sent.filter((s) => s.port === 1)).toHaveLength(11);
  });

  it('resumes keepalives once a port has been idle for one interval', () => {
    const { sched, det, sent, busy } = setup(1);
    det.start(0);
    busy(0, 100, 3500, 200); // last traffic at 3500 - 200 + 100 = 3300
    sched.runDue(6 * I);
    // one interval after the last traffic, then every interval
    expect(sent.map((s) => s.now)).toEqual([0, 4300, 5300]);
  });

  it('counts receptions as no substitute for sending', () => {
    const { sched, det, sent, hear } = setup(1);
    det.start(0);
    hear(0, 100, 5 * I, 100);
    sched.runDue(5 * I);
    expect(sent).toHaveLength(6);
  });
});

describe('LivenessDetector failure detection', () => {
  it('keeps a port that hears frames up and reports a silent one down exactly once', () => {
    const { sched, det, downs, ups, hear } = setup(2);
    det.start(0);
    hear(0, 500, 20 * I, 500);
    sched.runDue(20 * I);
    expect(downs).toHaveLength(1);
    expect(downs[0].port).toBe(1);
    // silent since start: at least M intervals, within M+1
    expect(downs[0].now).toBeGreaterThanOrEqual(M * I);
    expect(downs[0].now).toBeLessThanOrEqual((M + 1) * I);
    expect(downs[0].silent).toBe(downs[0].now);
    expect(det.up).toEqual([true, false]);
    expect(ups).toHaveLength(0);
  });

  it('detects within (multiplier+1) intervals of the last frame, wherever it falls in a tick', () => {
    for (const offset of [0, 1, 250, 500, 999]) {
      const { sched, det, downs } = setup(1);
      det.start(0);
      const last = 5 * I + offset;
      for (let t = 0; t <= last; t += 500) sched.at(t, (now) => det.heard(0, now));
      sched.at(last, (now) => det.heard(0, now));
      sched.runDue(30 * I);
      expect(downs, `offset ${offset}`).toHaveLength(1);
      const latency = downs[0].now - last;
      expect(latency, `offset ${offset}`).toBeGreaterThanOrEqual(M * I);
      expect(latency, `offset ${offset}`).toBeLessThanOrEqual((M + 1) * I);
      expect(downs[0].silent).toBe(latency);
      // as documented: a detection timer of exactly multiplier intervals
      expect(latency, `offset ${offset}`).toBe(M * I);
    }
  });

  it('does not report a port heard within the last multiplier intervals', () => {
    const { sched, det, downs } = setup(1);
    det.start(0);
    sched.at(2500, (now) => det.heard(0, now));
    sched.runDue(2500 + M * I - 1);
    expect(downs).toHaveLength(0);
    expect(det.up[0]).toBe(true);
    sched.runDue(2500 + M * I);
    expect(downs.map((d) => d.now)).toEqual([2500 + M * I]);
  });

  it('a frame heard just before the deadline postpones it', () => {
    const { sched, det, downs } = setup(1);
    det.start(0);
    sched.at(M * I - 1, (now) => det.heard(0, now));
    sched.runDue(2 * M * I - 2);
    expect(downs).toHaveLength(0);
    sched.runDue(2 * M * I);
    expect(downs.map((d) => d.now)).toEqual([2 * M * I - 1]);
  });

  it('brings a port back up on the next frame heard, and can take it down again', () => {
    const { sched, det, downs, ups, hear } = setup(1);
    det.start(0);
    sched.runDue(10 * I);
    expect(downs).toHaveLength(1);
    hear(0, 10_500, 10_501, 1);
    sched.runDue(10_500);
    expect(ups).toEqual([{ port: 0, now: 10_500 }]);
    expect(det.up[0]).toBe(true);
    // more frames while up raise no further events
    hear(0, 10_600, 12_000, 100);
    sched.runDue(12_000);
    expect(ups).toHaveLength(1);
    // silent again after 11_900
    sched.runDue(30 * I);
    expect(downs).toHaveLength(2);
    expect(downs[1].now - 11_900).toBeGreaterThanOrEqual(M * I);
    expect(downs[1].now - 11_900).toBeLessThanOrEqual((M + 1) * I);
  });

  it('keeps sending keepalives on an idle port at least every interval while another port fails', () => {
    const { sched, det, sent, downs, hear } = setup(2);
    det.start(0);
    hear(0, 0, 20 * I, 400); // port 0 stays up, port 1 hears only until 2_345
    sched.at(2345, (now) => det.heard(1, now));
    sched.runDue(20 * I);
    expect(downs.map((d) => d.port)).toEqual([1]);
    for (const port of [0, 1]) {
      const times = sent.filter((s) => s.port === port).map((s) => s.now);
      expect(times[0]).toBe(0);
      for (let k = 1; k < times.length; k++) expect(times[k] - times[k - 1]).toBeLessThanOrEqual(I);
      expect(times[times.length - 1]).toBeGreaterThan(19 * I);
    }
  });

  it('stop() ends keepalives and detection', () => {
    const { sched, det, sent, downs } = setup(1);
    det.start(0);
    sched.runDue(2 * I);
    const n = sent.length;
    det.stop();
    sched.runDue(20 * I);
    expect(sent).toHaveLength(n);
    expect(downs).toHaveLength(0);
    expect(sched.pending).toBe(0);
  });

  it('starts counting silence at start()', () => {
    const { sched, det, downs } = setup(1);
    sched.at(50 * I, () => det.start(50 * I));
    sched.runDue(50 * I + M * I - 1);
    expect(downs).toHaveLength(0);
    sched.runDue(50 * I + (M + 1) * I);
    expect(downs).toHaveLength(1);
  });
});

describe('LivenessDetector.staysUp', () => {
  it('says a frame finds its port up only within the detection time after the frame before it, never before it', () => {
    const { det } = setup();
    expect(det.quietDetectNs).toBe(I * M);
    expect(det.staysUp(0, 5000, 4000)).toBe(true);
    expect(det.staysUp(0, 4000 + I * M - 1, 4000)).toBe(true);
    // the tick at last + detection takes the port down first: that frame brings it up again
    expect(det.staysUp(0, 4000 + I * M, 4000)).toBe(false);
    expect(det.staysUp(0, 3999, 4000)).toBe(false);
    expect(det.staysUp(0, 5000, Number.NEGATIVE_INFINITY)).toBe(false);
    expect(det.staysUp(7, 5000, 4000)).toBe(false);
  });
});
