/**
 * ExpressPass's credit limiter in one process: the discipline alone (credits at the configured share
 * of the link, the 8-credit cap, data passing while credits wait) and behind a real egress port, where
 * a credit the bucket cannot pay yet is committed for the instant it can (with a commit window) or
 * woken for (without one), never spun on.
 */
// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { describe, expect, it } from 'vitest';
import { IdealClock } from '../core/clock.js';
import { type Frame, FrameType, makeFrame } from '../core/frame.js';
import { Metrics } from '../core/metrics.js';
import { EgressPort } from '../core/port.js';
import { Scheduler } from '../core/scheduler.js';
import { SizeCdf } from '../host/cdf.js';
import type { Transport } from '../host/transport/types.js';
import { chosenVariants, VARIANTS } from '../schemes/expresspass/definition/variants.js';
import { CreditLimited } from '../schemes/expresspass/discipline.js';
import { ExpressPassTransport } from '../schemes/expresspass/host/transport.js';
import {
  CREDIT_BYTES,
  TopClasses,
  type TopHostConfig,
  TopUnscheduled,
  XpClass,
  type XpControl,
  XpCtl,
  type XpData,
  type XpHostConfig,
} from '../schemes/expresspass/wire.js';

const credit = (q: number): Frame => makeFrame({ t: 3, s: 1, d: 2, z: CREDIT_BYTES, p: XpClass.Credit, q });
const data = (q: number): Frame => makeFrame({ t: 0, s: 2, d: 1, z: 1500, p: XpClass.Data, q });

// 8 Gbit/s = 1 byte/ns; a share of 84/1584 gives credits 84/1584 byte/ns: one credit per 1584 ns
const RATE = 8e9;
const SHARE = CREDIT_BYTES / (CREDIT_BYTES + 1500);

describe('CreditLimited', () => {
  it('lets a burst through, then one credit per 1584 ns, and refuses the ninth waiting credit', () => {
    const d = new CreditLimited(RATE, SHARE, 8, 2 * CREDIT_BYTES);
    for (let i = 0; i < 10; i++) expect(d.enqueue(credit(i))).toBe(i < 8);
    expect(d.refused).toBe(2);
    expect(d.maxQueued).toBe(8);
    expect(d.dequeue(0)?.q).toBe(0);
    expect(d.dequeue(0)?.q).toBe(1);
    // the bucket is empty: the next credit is due a full credit time later
    expect(d.dequeue(0)).toBeNull();
    expect(d.nextEligible(0)).toBe(1584);
    expect(d.dequeue(1584)?.q).toBe(2);
    expect(d.nextEligible(1584)).toBe(3168);
  });

  it('sends data while the credits wait for the bucket', () => {
    const d = new CreditLimited(RATE, SHARE, 8, CREDIT_BYTES);
    d.enqueue(credit(0));
    d.enqueue(credit(1));
    d.enqueue(data(9));
    expect(d.dequeue(0)?.q).toBe(0);
    expect(d.dequeue(10)?.q).toBe(9);
    expect(d.dequeue(20)).toBeNull();
    expect(d.length).toBe(1);
  });

  it('paces credits behind a real port, with and without a commit window', () => {
    for (const commitAheadNs of [0, 2000]) {
      const sched = new Scheduler(null);
      const starts: number[] = [];
      const port = new EgressPort(
        0,
        { rateBps: RATE, propNs: 0, bufferBytes: 1_000_000, ecnBytes: 0, commitAheadNs },
        sched,
        () => {},
        new CreditLimited(RATE, SHARE, 8, CREDIT_BYTES),
      );
      port.onDepart = (_p, _f, txStart) => starts.push(txStart);
      sched.at(0, (now) => {
        for (let i = 0; i < 4; i++) port.send(credit(i), now);
      });
      sched.runBefore(10_000);
      expect(starts, `commit ahead ${commitAheadNs}`).toEqual([0, 1584, 3168, 4752]);
    }
  });
});

describe("TOP's hypothetical switch (§3.1 R2: tokens dropped after waiting too long)", () => {
  it('keeps its promise when every head expired at the time it promised and a token comes before it', () => {
    // one credit class, 1,000 ns of sojourn at most; the burst of one credit spent at 0
    const d = new CreditLimited(RATE, SHARE, 8, CREDIT_BYTES, XpClass.Credit, XpClass.Credit, 1000);
    const at = (q: number, a: number) => ({ ...credit(q), a });
    d.enqueue(at(0, 0));
    expect(d.dequeue(0)?.q).toBe(0);
    // the next credit arrives at 100: the bucket pays for it at 1,584, when it has waited past 1,000
    d.enqueue(at(1, 100));
    expect(d.dequeue(100)).toBeNull();
    expect(d.nextEligible(100)).toBe(1584);
    // at 1,584 it is dropped, and nothing is left to send
    expect(d.dequeue(1584)).toBeNull();
    expect([d.length, d.expired]).toEqual([0, 1]);
    // a credit arriving at 1,200, before that look: due when the bucket holds a credit again (1,584),
    // and sent then; it was not before (the look at 1,584 had moved the books there)
    d.enqueue(at(2, 1200));
    expect(d.dequeue(1200)).toBeNull();
    const due = d.nextEligible(1200);
    expect(due).toBe(1584);
    expect(d.dequeue(due)?.q).toBe(2);
  });
});

describe('TOP ports with unscheduled packets (§4.4)', () => {
  it('hold one unscheduled packet: the next is refused while scheduled data queues on', () => {
    const d = new CreditLimited(RATE, SHARE, 8, CREDIT_BYTES, TopUnscheduled.lo, TopClasses.hi, 0, 0);
    const unscheduled = (q: number): Frame =>
      makeFrame({ t: 0, s: 2, d: 1, z: 1500, p: TopUnscheduled.unscheduled, q });
    const scheduled = (q: number): Frame =>
      makeFrame({ t: 0, s: 2, d: 1, z: 1500, p: TopUnscheduled.data, q });
    expect(d.enqueue(unscheduled(0))).toBe(true);
    expect(d.enqueue(unscheduled(1))).toBe(false);
    for (let i = 0; i < 3; i++) expect(d.enqueue(scheduled(10 + i))).toBe(true);
    // scheduled data goes first; the unscheduled packet only when nothing else waits
    expect([0, 1, 2, 3].map((t) => d.dequeue(t)?.q)).toEqual([10, 11, 12, 0]);
    expect(d.enqueue(unscheduled(2))).toBe(true);
  });
});

describe("TOP's ideal switch (§3.2: an infinite number of priorities)", () => {
  it('sends the token with the fewest packets left first and, full, drops its least urgent', () => {
    // one token class holding 3, ranked by `k`; a burst of one token, then one per 1,584 ns
    const d = new CreditLimited(RATE, SHARE, 8, CREDIT_BYTES, TopClasses.hi, TopClasses.hi, 0, -1, 3);
    const token = (q: number, k: number): Frame => ({
      ...makeFrame({ t: 3, s: 1, d: 2, z: CREDIT_BYTES, p: TopClasses.hi, q }),
      x: { xp: XpCtl.Credit, k } satisfies XpControl,
    });
    expect(d.enqueue(token(0, 50))).toBe(true);
    expect(d.enqueue(token(1, 7))).toBe(true);
    expect(d.enqueue(token(2, 7))).toBe(true);
    // full: an arrival less urgent than every waiting token is refused; a more urgent one pushes out
    // the least urgent (50 packets left)
    expect(d.enqueue(token(3, 60))).toBe(false);
    expect(d.enqueue(token(4, 3))).toBe(true);
    expect([d.refused, d.length, d.discarded()]).toEqual([2, 3, CREDIT_BYTES]);
    // fewest packets left first, the earlier on a tie, at the limiter's pace; data meanwhile
    d.enqueue(data(9));
    expect(d.dequeue(0)?.q).toBe(4);
    expect(d.dequeue(0)?.q).toBe(9);
    expect(d.nextEligible(0)).toBe(1584);
    expect([d.dequeue(1584)?.q, d.dequeue(3168)?.q]).toEqual([1, 2]);
    expect(d.length).toBe(0);
  });
});

describe('TOP class boundaries (§3.2)', () => {
  it('split the web-search bytes in equal shares: the byte quantiles of the distribution', () => {
    const cdf = SizeCdf.load('websearch');
    expect(cdf.bytesUpTo(30_000_000)).toBeCloseTo(cdf.mean(), 6);
    expect(cdf.bytesUpTo(0)).toBe(0);
    const at = [1, 2, 3, 4, 5].map((i) => cdf.byteQuantile(i / 6));
    expect(at).toEqual([2633914, 4904080, 7967569, 11808660, 22797418]);
    for (const [i, b] of at.entries()) expect(cdf.bytesUpTo(b) / cdf.mean()).toBeCloseTo((i + 1) / 6, 5);
  });
});

describe('TOP receiver (§4.4)', () => {
  /** a receiver (host 1) alone: its tokens are recorded, no data comes back */
  function receiver(top: Partial<TopHostConfig> = {}): {
    t: { now: number };
    sched: Scheduler;
    rx: Transport;
    tokens: Frame[];
  } {
    const t = { now: 0 };
    const sched = new Scheduler({ now: () => t.now, realMs: (ns) => ns / 1e6 }, true);
    const tokens: Frame[] = [];
    const cfg: XpHostConfig = {
      nic: { creditShare: SHARE, queueCredits: 8, burstCredits: 2 },
      maxCreditsPerS: (10e9 * SHARE) / (8 * CREDIT_BYTES),
      alpha: 1,
      wInit: 1 / 16,
      wMin: 0.01,
      wMax: 0.5,
      targetLossScaling: 0.125,
      jitter: 0.1,
      timeoutNs: 200_000,
      top: {
        thresholds: [5, 50],
        expiryNs: 0,
        targetLoss: 0.1,
        unscheduled: 0,
        objective: 'fct',
        deadlineThresholdsNs: [],
        ...top,
      },
    };
    const rx = new ExpressPassTransport(
      cfg,
      {
        hostId: 1,
        clock: new IdealClock(sched),
        nic: {
          send: (f: Frame) => {
            tokens.push(f);
            return true;
          },
        },
        metrics: new Metrics(),
        delivered: () => {},
        acked: () => {},
        physNow: () => sched.current,
      },
      undefined as unknown as Transport,
    );
    return { t, sched, rx, tokens };
  }
  const request = (src: number, flow: number, packets: number, deadlineNs?: number): Frame =>
    makeFrame({
      t: FrameType.Control,
      s: src,
      d: 1,
      f: flow,
      z: CREDIT_BYTES,
      p: XpClass.Request,
      x: {
        xp: XpCtl.Request,
        b: packets * 1460,
        ...(deadlineNs !== undefined && { dl: deadlineNs }),
      } satisfies XpControl,
    });

  it('gives every slot to the flow with the fewest packets left until its tokens cover them', () => {
    const { t, sched, rx, tokens } = receiver();
    sched.at(0, (now) => {
      rx.onFrame(request(3, 30, 100), now);
      rx.onFrame(request(2, 20, 10), now);
    });
    t.now = 30_000;
    sched.runDue(t.now);
    // 10 packets left and the 10% target loss: 11 tokens; then the 100-packet flow, one per slot
    const flows = tokens.map((f) => f.f);
    expect(flows.slice(0, 11)).toEqual(Array(11).fill(20));
    expect(new Set(flows.slice(11))).toEqual(new Set([30]));
    // at the link's full token rate, back to back: 30 µs / 1.267 µs per credit at 10 Gbit/s (±10% jitter)
    expect(tokens.length).toBeGreaterThanOrEqual(22);
    expect(tokens.length).toBeLessThanOrEqual(26);
    // classes by packets left against the boundaries [5, 50]: 10 left one below the top, 100 two
    expect(tokens[0].p).toBe(TopClasses.hi - 1);
    expect(tokens[tokens.length - 1].p).toBe(TopClasses.hi - 2);
    expect(sched.pending).toBeGreaterThan(0);
  });

  it('serves deadlines earliest first, and a flow that can no longer meet its own last, in the lowest class', () => {
    // boundaries on time left: under 50 µs the top class, under 500 µs the next, the rest the third
    const { t, sched, rx, tokens } = receiver({
      objective: 'deadline',
      deadlineThresholdsNs: [50_000, 500_000],
    });
    sched.at(0, (now) => {
      rx.onFrame(request(2, 20, 10, 1_000_000), now);
      rx.onFrame(request(3, 30, 10, 100_000), now);
      // 100 packets take 127 µs at the link's rate: a 20 µs deadline is lost already
      rx.onFrame(request(4, 40, 100, 20_000), now);
    });
    t.now = 40_000;
    sched.runDue(t.now);
    const flows = tokens.map((f) => f.f);
    expect(flows.slice(0, 11)).toEqual(Array(11).fill(30));
    expect(flows.slice(11, 22)).toEqual(Array(11).fill(20));
    expect(new Set(flows.slice(22))).toEqual(new Set([40]));
    const classOf = (flow: number) => new Set(tokens.filter((f) => f.f === flow).map((f) => f.p));
    expect(classOf(30)).toEqual(new Set([TopClasses.hi - 1]));
    expect(classOf(20)).toEqual(new Set([TopClasses.hi - 2]));
    expect(classOf(40)).toEqual(new Set([TopClasses.hi - 2]));
  });

  it('signals a segment missing while later ones arrive, once per round trip (§4.4)', () => {
    const { t, sched, rx, tokens } = receiver();
    // data answering tokens sent 20 µs before: the receiver's round trip
    const seg = (q: number, c: number): Frame =>
      makeFrame({
        t: FrameType.Data,
        s: 2,
        d: 1,
        f: 20,
        q,
        z: 1500,
        p: XpClass.Data,
        x: { c, ts: t.now - 20_000 } satisfies XpData,
      });
    // frames handled as an event at their time: the receiver's clock reads it
    const at = (ns: number, ...frames: Array<() => Frame>) => {
      sched.at(ns, (now) => {
        for (const f of frames) rx.onFrame(f(), now);
      });
      t.now = ns;
      sched.runDue(ns);
    };
    const signals = () =>
      tokens.filter((f) => (f.x as XpControl).xp === XpCtl.Loss).map((f) => (f.x as XpControl).m);
    sched.at(0, (now) => rx.onFrame(request(2, 20, 10), now));
    // 0 and 1 arrive, 2 and 3 are lost; 4 shows nothing yet (3 behind is the rule), 5 shows 2, 6 shows 3
    at(
      30_000,
      () => seg(0, 1),
      () => seg(1, 2),
      () => seg(4, 5),
    );
    expect(signals()).toEqual([]);
    at(31_000, () => seg(5, 6));
    expect(signals()).toEqual([2]);
    at(32_000, () => seg(6, 7));
    expect(signals()).toEqual([2, 3]);
    // within the round trip: not again; a round trip later: both again, in the signal class
    at(40_000, () => seg(7, 8));
    expect(signals()).toEqual([2, 3]);
    at(60_000, () => seg(8, 9));
    expect(signals()).toEqual([2, 3, 2, 3]);
    const lossFrames = tokens.filter((f) => (f.x as XpControl).xp === XpCtl.Loss);
    expect(lossFrames.every((f) => f.p === XpClass.Request && f.d === 2 && f.f === 20)).toBe(true);
  });

  it('sends a signalled segment on the next token, at most once per round trip', () => {
    const { t, sched, rx: host, tokens: sent } = receiver();
    const control = (p: number, x: XpControl): Frame =>
      makeFrame({ t: FrameType.Control, s: 2, d: 1, f: 20, z: CREDIT_BYTES, p, x });
    const token = (c: number, ack: number) => control(TopClasses.hi, { xp: XpCtl.Credit, c, ts: 0, ack });
    const loss = (m: number) => control(XpClass.Request, { xp: XpCtl.Loss, m });
    // each frame handled as an event at its time: the host's clock reads it
    const at = (ns: number, f: Frame) => {
      sched.at(ns, (now) => host.onFrame(f, now));
      t.now = ns;
      sched.runDue(ns);
    };
    sched.at(0, (now) => host.startFlow({ id: 20, src: 1, dst: 2, size: 10 * 1460, start: 0 }, now));
    sched.runDue(0);
    // the first token 10 µs after the request: a 10 µs round trip; segments 0..4 go
    for (let c = 1; c <= 5; c++) at(9_000 + 1000 * c, token(c, 0));
    at(25_000, loss(2));
    at(25_000, token(6, 2));
    // 2 went 14 µs ago, more than a round trip: again, then new ones; a second signal at once is too soon
    at(26_000, loss(2));
    at(26_000, token(7, 2));
    at(27_000, token(8, 2));
    const segments = sent.filter((f) => f.t === FrameType.Data).map((f) => f.q);
    expect(segments).toEqual([0, 1, 2, 3, 4, 2, 5, 6]);
    expect(sent.filter((f) => f.t === FrameType.Data).every((f) => f.p === XpClass.Data)).toBe(true);
  });
});

describe('top-ablation --variants', () => {
  it('runs the chosen variants with those they are measured against, in the ablation’s order', () => {
    const names = (xs: readonly { name: string }[]) => xs.map((v) => v.name);
    expect(chosenVariants(undefined)).toBe(VARIANTS);
    expect(names(chosenVariants(['top-switch-expiry', 'top']))).toEqual([
      'expresspass',
      'top',
      'top-switch-expiry',
    ]);
    // a base's base comes too: top-expresspass-start against top, top against expresspass
    expect(names(chosenVariants(['top-expresspass-start']))).toEqual([
      'expresspass',
      'top',
      'top-expresspass-start',
    ]);
    expect(names(chosenVariants(['top-ptp']))).toEqual(['expresspass-ptp', 'top-ptp']);
  });
});
