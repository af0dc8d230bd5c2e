import { describe, expect, it } from 'vitest';
import { IdealClock } from '../core/clock.js';
import { type Frame, FrameType, makeFrame, Priority, WireSize } from '../core/frame.js';
import type { LivenessPort } from '../core/liveness.js';
import { Scheduler } from '../core/scheduler.js';
import type { F10DetectorConfig } from '../schemes/f10/config.js';
import { F10Detector, LinkState, STABLE_WINDOWS } from '../schemes/f10/detector.js';

/** §5.4 defaults of the task: t = 10 µs, c = 2, d = 3, keepalive 2.5 µs */
const T = 10_000;
const KA = 2_500;
const H = 4;
const CFG: F10DetectorConfig = {
  windowNs: T,
  keepUp: 2,
  bringUp: 3,
  keepaliveNs: KA,
  holdWindows: H,
  maxHoldWindows: 4 * H,
};
/** one-way wire delay; 700 ns keeps arrivals off window boundaries */
const DELAY = 700;

function newSched() {
  return new Scheduler({ now: () => 0, realMs: (ns) => ns / 1e6 }, true);
}

interface Log {
  downs: Array<{ port: number; now: number; silent: number }>;
  ups: Array<{ port: number; now: number }>;
  sent: Array<{ port: number; now: number; frame: Frame }>;
}

function newLog(): Log {
  return { downs: [], ups: [], sent: [] };
}

function events(log: Log) {
  return {
    portDown: (port: number, now: number, silent: number) => log.downs.push({ port, now, silent }),
    portUp: (port: number, now: number) => log.ups.push({ port, now }),
  };
}

/** One detector whose ports send into a log; the test plays the peers with `hear`. */
function single(portCount = 1, cfg = CFG) {
  const sched = newSched();
  const log = newLog();
  let det!: F10Detector;
  const ports: LivenessPort[] = Array.from({ length: portCount }, (_, index) => ({
    index,
    send: (frame: Frame) => {
      log.sent.push({ port: index, now: sched.current, frame });
      det.sent(index, sched.current);
      return true;
    },
  }));
  det = new F10Detector(cfg, new IdealClock(sched), ports, 42, events(log));
  /** the peer sends a frame every `every` ns in [from, to) */
  const hear = (port: number, from: number, to: number, every: number, frame?: Frame) => {
    for (let t = from; t < to; t += every) sched.at(t, (now) => det.heard(port, now, frame));
  };
  const keepalives = (port: number) =>
    log.sent.filter((s) => s.port === port && s.frame.t === FrameType.Keepalive);
  return { sched, det, log, hear, keepalives };
}

/** One direction of the fake wire: cut, or dropping the frames `drop(n)` says (n counts frames sent). */
interface Direction {
  cut: boolean;
  drop: (n: number) => boolean;
  n: number;
}

/** Two detectors back to back through a fake wire with DELAY each way; port 0 on both. */
function pair(cfg = CFG) {
  const sched = newSched();
  const clock = new IdealClock(sched);
  const ab: Direction = { cut: false, drop: () => false, n: 0 };
  const ba: Direction = { cut: false, drop: () => false, n: 0 };
  const logA = newLog();
  const logB = newLog();
  let a!: F10Detector;
  let b!: F10Detector;
  const port = (
    dir: Direction,
    log: Log,
    self: () => F10Detector,
    peer: () => F10Detector,
  ): LivenessPort => ({
    index: 0,
    send: (frame: Frame) => {
      const now = sched.current;
      log.sent.push({ port: 0, now, frame });
      self().sent(0, now);
      if (!dir.cut && !dir.drop(dir.n++)) sched.at(now + DELAY, (t) => peer().heard(0, t, frame));
      return true;
    },
  });
  const portA = port(
    ab,
    logA,
    () => a,
    () => b,
  );
  a = new F10Detector(cfg, clock, [portA], 1, events(logA));
  b = new F10Detector(
    cfg,
    clock,
    [
      port(
        ba,
        logB,
        () => b,
        () => a,
      ),
    ],
    2,
    events(logB),
  );
  a.start(0);
  b.start(0);
  /** A sends a data frame every `every` ns in [from, to) */
  const data = (from: number, to: number, every: number) => {
    for (let t = from; t < to; t += every)
      sched.at(t, () => portA.send(makeFrame({ t: FrameType.Data, s: 1, d: 2, z: WireSize.Mtu })));
  };
  return { sched, a, b, ab, ba, logA, logB, data };
}

const keepalive = (q: number) => makeFrame({ t: FrameType.Keepalive, s: 9, d: -1, z: WireSize.Small, q });

describe('F10Detector keepalives', () => {
  it('keeps a steady link carrying only keepalives up for many windows, four keepalives a window', () => {
    const { sched, a, b, logA, logB } = pair();
    sched.runDue(1000 * T);
    expect(logA.downs).toHaveLength(0);
    expect(logB.downs).toHaveLength(0);
    expect(a.up).toEqual([true]);
    expect(b.up).toEqual([true]);
    // one every KA from 0 to 1000 T inclusive
    expect(a.keepalivesSent).toBe(4001);
    expect(b.keepalivesSent).toBe(4001);
    const ka = logA.sent[0].frame;
    expect(ka).toMatchObject({ t: FrameType.Keepalive, s: 1, d: -1, p: Priority.Control, z: WireSize.Small });
    expect(logA.sent.every((s) => s.frame.q === LinkState.Up)).toBe(true);
    // fresh frames (ports may stamp and keep them)
    expect(logA.sent[0].frame).not.toBe(logA.sent[1].frame);
  });

  it('sends no keepalives on a busy Up port, and resumes once it is idle', () => {
    const { sched, b, logA, logB, data } = pair();
    data(10 * T + 100, 50 * T, 1000); // last data frame at 49_100 + ... = 499_100
    sched.runDue(60 * T);
    const kaTimes = logA.sent.filter((s) => s.frame.t === FrameType.Keepalive).map((s) => s.now);
    expect(kaTimes.filter((t) => t > 10 * T + 100 && t < 50 * T)).toEqual([]);
    // idle again one keepalive interval after the last data frame
    expect(kaTimes.find((t) => t >= 50 * T)).toBe(49 * T + 9100 + KA);
    // the peer, not busy, kept sending; it heard data instead of keepalives and stayed up
    expect(logB.sent.filter((s) => s.now > 10 * T && s.now < 50 * T)).toHaveLength(40 * 4 - 1);
    expect(b.up).toEqual([true]);
    expect(logB.downs).toHaveLength(0);
  });

  it('keeps sending "failure detected" keepalives every keepaliveNs on a Down port, however busy', () => {
    const { sched, det, log, keepalives } = single(1);
    det.start(0);
    sched.runDue(2 * T);
    expect(det.state).toEqual([LinkState.Down]);
    const downAt = log.downs[0].now;
    for (let t = downAt + 100; t < 20 * T; t += 300) sched.at(t, (now) => det.sent(0, now));
    sched.runDue(20 * T);
    const after = keepalives(0).filter((s) => s.now >= downAt);
    expect(after.map((s) => s.now)).toEqual(Array.from({ length: after.length }, (_, k) => downAt + k * KA));
    expect(after.length).toBe((20 * T - downAt) / KA + 1);
    expect(after.every((s) => s.frame.q === LinkState.Down)).toBe(true);
  });
});

describe('F10Detector failure detection', () => {
  it('declares a link silenced mid-window down at the end of that window or the next', () => {
    // frames every 1 µs until the cut; the window of the cut [5T, 6T) holds 1 frame (< c) or 6 (>= c)
    for (const [cut, downAt, silent] of [
      [5 * T + 500, 6 * T, T],
      [5 * T + 5500, 7 * T, 7 * T - (5 * T + 5000)],
    ]) {
      const { sched, det, log, hear } = single(1);
      det.start(0);
      hear(0, 0, cut, 1000);
      sched.runDue(20 * T);
      expect(log.downs, `cut ${cut}`).toEqual([{ port: 0, now: downAt, silent }]);
      expect(det.up).toEqual([false]);
      expect(det.downs).toEqual([1]);
    }
  });

  it('detects a dead link within 2 windows, at a window end, wherever it dies (defaults)', () => {
    for (let x = 20 * T + 37; x < 22 * T; x += 411) {
      const { sched, a, b, ab, ba, logA, logB } = pair();
      sched.at(x, () => {
        ab.cut = true;
        ba.cut = true;
      });
      sched.runDue(30 * T);
      for (const log of [logA, logB]) {
        expect(log.downs, `x ${x}`).toHaveLength(1);
        const d = log.downs[0];
        expect(d.now - x, `x ${x}`).toBeGreaterThan(0);
        expect(d.now - x, `x ${x}`).toBeLessThanOrEqual(2 * T);
        expect(d.now % T, `x ${x}`).toBe(0);
        expect(d.silent, `x ${x}`).toBeGreaterThan(0);
      }
      expect(a.up).toEqual([false]);
      expect(b.up).toEqual([false]);
    }
  });

  it('takes down a lossy link delivering fewer than c frames per window, keeps one delivering c', () => {
    // keepalives go out 4 per window: keeping 1 in 4 delivers 1 < c, keeping 1 in 2 delivers 2 = c
    const lossy = pair();
    lossy.ab.drop = (n) => n % 4 !== 0;
    lossy.sched.runDue(300 * T);
    // the first window only primes the counters: the first verdict is at the end of the second
    expect(lossy.logB.downs.map((d) => d.now)).toEqual([2 * T]);
    // B's "failure detected" takes A down; 1 frame per window (< d) never brings B back
    expect(lossy.logA.downs.map((d) => d.now)).toEqual([2 * T + DELAY]);
    expect(lossy.logA.ups).toHaveLength(0);
    expect(lossy.logB.ups).toHaveLength(0);
    expect(lossy.b.state).toEqual([LinkState.Down]);

    const ok = pair();
    ok.ab.drop = (n) => n % 2 !== 0;
    ok.sched.runDue(300 * T);
    expect(ok.logB.downs).toHaveLength(0);
    expect(ok.logA.downs).toHaveLength(0);
    expect(ok.b.up).toEqual([true]);
  });

  it("counts a corrupted frame's transitions only when set to (§5.4's two settings)", () => {
    // frames every 1 µs, all corrupted from 5T on: valid packets stop (the last at 49 µs), transitions do not
    const run = (counts: F10DetectorConfig['counts']) => {
      const { sched, det, log, hear } = single(1, { ...CFG, counts });
      det.start(0);
      hear(0, 0, 5 * T, 1000);
      for (let t = 5 * T; t < 20 * T; t += 1000) sched.at(t, (now) => det.garbled?.(0, now));
      sched.runDue(20 * T);
      return log.downs;
    };
    expect(run('packets')).toEqual([{ port: 0, now: 6 * T, silent: 11_000 }]);
    expect(run(undefined)).toEqual([{ port: 0, now: 6 * T, silent: 11_000 }]);
    expect(run('transitions')).toEqual([]);
    // a link that carries nothing shows no transitions either: down as with packets
    const { sched, det, log, hear } = single(1, { ...CFG, counts: 'transitions' });
    det.start(0);
    hear(0, 0, 5 * T, 1000);
    sched.runDue(20 * T);
    expect(log.downs).toEqual([{ port: 0, now: 6 * T, silent: 11_000 }]);
  });

  it('detects a one-directional cut at both ends', () => {
    const { sched, a, b, ab, logA, logB } = pair();
    sched.at(50 * T + 300, () => (ab.cut = true));
    sched.runDue(60 * T);
    // B stops hearing A: down by counting, within 2 windows
    expect(logB.downs).toHaveLength(1);
    expect(logB.downs[0].now).toBeLessThanOrEqual(52 * T);
    // A still hears B, and goes down on B's "failure detected" one wire delay later
    expect(logA.downs).toEqual([{ port: 0, now: logB.downs[0].now + DELAY, silent: 0 }]);
    expect(a.up).toEqual([false]);
    expect(b.up).toEqual([false]);
  });

  it('goes down at once on a keepalive saying Down, and ignores (but answers) Init while Up', () => {
    const { sched, det, log, keepalives } = single(1);
    det.start(0);
    sched.at(1234, (now) => det.heard(0, now, keepalive(LinkState.Init)));
    sched.runDue(1234);
    expect(det.state).toEqual([LinkState.Up]);
    expect(keepalives(0).map((s) => [s.now, s.frame.q])).toEqual([
      [0, LinkState.Up],
      [1234, LinkState.Up],
    ]);
    sched.at(5678, (now) => det.heard(0, now, keepalive(LinkState.Down)));
    sched.runDue(5678);
    expect(log.downs).toEqual([{ port: 0, now: 5678, silent: 0 }]);
    expect(keepalives(0).at(-1)).toMatchObject({ now: 5678, frame: { q: LinkState.Down } });
  });

  it('counts data frames as valid frames', () => {
    const { sched, det, log, hear } = single(1);
    det.start(0);
    hear(0, 100, 100 * T, 4000, makeFrame({ t: FrameType.Data, s: 9, d: 42, z: WireSize.Mtu }));
    sched.runDue(100 * T);
    expect(log.downs).toHaveLength(0);
  });
});

describe('F10Detector recovery', () => {
  /** cuts A→B, heals it `cutWindows` later at phase 300 in a window; returns heal → B up, ns */
  function flap(p: ReturnType<typeof pair>, cutWindows = 40): number {
    const { sched, ab, logB } = p;
    const cutAt = Math.ceil(sched.current / T) * T + 300;
    sched.at(cutAt, () => (ab.cut = true));
    const healAt = cutAt + cutWindows * T;
    sched.at(healAt, () => (ab.cut = false));
    const ups = logB.ups.length;
    sched.runDue(healAt + 40 * T);
    expect(p.a.up).toEqual([true]);
    expect(p.b.up).toEqual([true]);
    expect(logB.ups).toHaveLength(ups + 1);
    return logB.ups[ups].now - healAt;
  }

  it('brings both ends back up with a three-way handshake after the wire heals, without flapping', () => {
    const p = pair();
    const { sched, a, b, logA, logB } = p;
    const healToUp = flap(p);
    // B waits its hold-down (H good windows after the partial one), then the handshake:
    // B Down→Init on A's Init, A Init→Up on B's Init (one delay), B Init→Up on A's Up (one more)
    expect(healToUp).toBeGreaterThanOrEqual(H * T);
    expect(healToUp).toBeLessThanOrEqual((H + 2) * T);
    expect(logA.ups).toHaveLength(1);
    expect(logB.ups[0].now - logA.ups[0].now).toBe(DELAY);
    sched.runDue(sched.current + 500 * T);
    expect(logA.downs).toHaveLength(1);
    expect(logB.downs).toHaveLength(1);
    expect(logA.ups).toHaveLength(1);
    expect(logB.ups).toHaveLength(1);
    expect([a.state, b.state]).toEqual([[LinkState.Up], [LinkState.Up]]);
    // back up, keepalives say so
    expect(logB.sent.at(-1)!.frame.q).toBe(LinkState.Up);
  });

  it('doubles the hold-down on each flap up to the maximum, and resets it after a stable period', () => {
    const p = pair();
    const { sched, a, b, logB } = p;
    const windows = (ns: number) => Math.floor(ns / T);
    // each cut comes about 23 windows after the link came up (< STABLE_WINDOWS): holds 4, 8, 16, 16
    const times = [flap(p), flap(p), flap(p), flap(p)];
    expect(times.map(windows)).toEqual([H, 2 * H, 4 * H, 4 * H]);
    expect(b.hold).toEqual([4 * H]);
    expect(a.hold).toEqual([4 * H]);
    // stable for STABLE_WINDOWS: back to H
    const upAt = logB.ups.at(-1)!.now;
    sched.runDue(upAt + (STABLE_WINDOWS - 1) * T);
    expect(b.hold).toEqual([4 * H]);
    sched.runDue(upAt + (STABLE_WINDOWS + 1) * T);
    expect(b.hold).toEqual([H]);
    expect(a.hold).toEqual([H]);
    expect(windows(flap(p))).toBe(H);
    expect(b.downs).toEqual([5]);
    expect(a.downs).toEqual([5]);
  });

  it('keeps a Down port down until each window of its hold-down had d frames', () => {
    const { sched, det, log, hear } = single(1);
    det.start(0);
    sched.runDue(3 * T);
    expect(det.state).toEqual([LinkState.Down]);
    // the peer reports Down, but only 2 frames (< d) per window: never Init
    hear(0, 3 * T + 100, 30 * T, T / 2, keepalive(LinkState.Down));
    sched.runDue(30 * T);
    expect(det.state).toEqual([LinkState.Down]);
    // 4 frames per window: after H good windows, the next Down heard moves it to Init, then Up on Up
    hear(0, 30 * T + 100, 40 * T, KA, keepalive(LinkState.Down));
    sched.runDue(30 * T + H * T);
    expect(det.state).toEqual([LinkState.Down]);
    sched.runDue(30 * T + H * T + 100);
    expect(det.state).toEqual([LinkState.Init]);
    sched.at(40 * T, (now) => det.heard(0, now, keepalive(LinkState.Up)));
    sched.runDue(40 * T);
    expect(log.ups).toEqual([{ port: 0, now: 40 * T }]);
  });

  it('falls back from Init to Down on a window with fewer than d frames', () => {
    const { sched, det, hear } = single(1);
    det.start(0);
    hear(0, 2 * T + 100, 20 * T, KA, keepalive(LinkState.Down));
    sched.runDue(20 * T - 1);
    expect(det.state).toEqual([LinkState.Init]);
    sched.runDue(22 * T);
    expect(det.state).toEqual([LinkState.Down]);
  });
});

describe('F10Detector timing', () => {
  it('keeps ticking at windows that do not fall on round numbers', () => {
    const b = 523253.1569175558;
    const { sched, det, log, keepalives } = single(1);
    det.start(b);
    sched.runDue(b + 25_000);
    expect(keepalives(0).map((s) => s.now)).toEqual(Array.from({ length: 11 }, (_, k) => b + k * KA));
    // silent since start: the first window only primes, down at the end of the second
    expect(log.downs.map((d) => d.now)).toEqual([b + 2 * T]);
  });

  it('stop() ends keepalives and detection', () => {
    const { sched, det, log } = single(2);
    det.start(0);
    sched.runDue(T / 2);
    const n = log.sent.length;
    det.stop();
    sched.runDue(20 * T);
    expect(log.sent).toHaveLength(n);
    expect(log.downs).toHaveLength(0);
    expect(sched.pending).toBe(0);
  });

  it('rejects a configuration it cannot run, naming the value and unit', () => {
    const { sched } = single(1);
    expect(
      () => new F10Detector({ ...CFG, windowNs: 0 }, new IdealClock(sched), [], 1, events(newLog())),
    ).toThrow(/windowNs 0 ns/);
    expect(
      () => new F10Detector({ ...CFG, maxHoldWindows: 2 }, new IdealClock(sched), [], 1, events(newLog())),
    ).toThrow(/maxHoldWindows \(2\)/);
  });
});

describe('a switch with a control link (its own, slower detector)', () => {
  it('keeps each port to its own cadence: fabric ports every 2.5 µs, the control link every 25 µs', async () => {
    const { f10DetectorFactory } = await import('../schemes/f10/detector-factory.js');
    const sched = newSched();
    const log = newLog();
    const control: F10DetectorConfig = { ...CFG, windowNs: 10 * T, keepaliveNs: 10 * KA };
    const config = {
      id: 7,
      ports: [{ dir: 'up' }, { dir: 'control' }],
      scheme: { kind: 'f10', config: { detector: CFG, controlDetector: control } },
    } as unknown as Parameters<typeof f10DetectorFactory>[0];
    let det!: NonNullable<ReturnType<typeof f10DetectorFactory>>;
    const ports: LivenessPort[] = [0, 1].map((index) => ({
      index,
      send: (frame: Frame) => {
        log.sent.push({ port: index, now: sched.current, frame });
        det.sent(index, sched.current);
        return true;
      },
    }));
    det = f10DetectorFactory(config, new IdealClock(sched), ports, events(log))!;
    det.start(0);
    // both peers keep sending at their own cadence until 300 µs, then both links fall silent
    for (let t = DELAY; t < 300_000; t += KA) sched.at(t, (now) => det.heard(0, now));
    for (let t = DELAY; t < 300_000; t += 10 * KA) sched.at(t, (now) => det.heard(1, now));
    sched.runDue(600_000);
    const kas = (port: number) => log.sent.filter((s) => s.port === port && s.now < 300_000).length;
    expect(kas(0)).toBe(120);
    expect(kas(1)).toBe(12);
    expect(det.keepalivesSent).toBeGreaterThanOrEqual(132);
    // each declared down within two of its own windows of the silence
    const down = (port: number) => log.downs.find((d) => d.port === port)!.now;
    expect(down(0) - 300_000).toBeLessThanOrEqual(2 * T);
    expect(down(1) - 300_000).toBeGreaterThan(2 * T);
    expect(down(1) - 300_000).toBeLessThanOrEqual(20 * T);
    expect(det.up).toEqual([false, false]);
  });
});
