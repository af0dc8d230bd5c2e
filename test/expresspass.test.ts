/**
 * ExpressPass's credit limiter in one process: the discipline alone (credits at the configured share
 * of the link, the 8-credit cap, data passing while credits wait) and behind a real egress port, where
 * a credit the bucket cannot pay yet is committed for the instant it can (with a commit window) or
 * woken for (without one), never spun on.
 */
import { describe, expect, it } from 'vitest';
import { IdealClock } from '../core/clock.js';
import { type Frame, FrameType, makeFrame } from '../core/frame.js';
import { Metrics } from '../core/metrics.js';
import { EgressPort } from '../core/port.js';
import { Scheduler } from '../core/scheduler.js';
import { SizeCdf } from '../node/cdf.js';
import { ExpressPassTransport } from '../node/transport/expresspass/transport.js';
import type { Transport } from '../node/transport/types.js';
import { CreditLimited } from '../switch/expresspass/discipline.js';
import {
  CREDIT_BYTES,
  TopClasses,
  TopUnscheduled,
  XpClass,
  type XpControl,
  XpCtl,
  type XpHostConfig,
} from '../switch/expresspass/wire.js';

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
  function receiver(): { t: { now: number }; sched: Scheduler; rx: Transport; tokens: Frame[] } {
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
      top: { thresholds: [5, 50], expiryNs: 0, targetLoss: 0.1, unscheduled: 0 },
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
  const request = (src: number, flow: number, packets: number): Frame =>
    makeFrame({
      t: FrameType.Control,
      s: src,
      d: 1,
      f: flow,
      z: CREDIT_BYTES,
      p: XpClass.Request,
      x: { xp: XpCtl.Request, b: packets * 1460 } satisfies XpControl,
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
});
