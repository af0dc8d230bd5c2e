/**
 * ExpressPass on a host (Cho et al., SIGCOMM'17): receiver-driven, credit-scheduled transport.
 *
 * Sender: a flow's arrival sends a credit request, asked again whenever no credit came for
 * `timeoutNs` (the receiver stopped crediting, or a path died; a receiver that has every byte answers
 * with one last credit saying so). Each credit lets exactly one full data frame go, carrying the credit's sequence number and
 * send time; with every segment sent once, credits carry retransmissions from the lowest segment the
 * receiver still misses (its `ack` in the credit), and credits beyond that are wasted.
 *
 * Receiver: paces credits at its current rate (84 B each, with ±`jitter` on every gap so flows do not
 * synchronize) until every byte has arrived. Switches drop credits over their credit queue cap; the
 * credit sequence numbers the data brings back show how many were lost, and once per RTT (estimated
 * from the credits' send times) the feedback control of ExpressPass's Algorithm 1 moves the rate: above
 * the target loss, down to what got through; below it, toward the maximum with aggressiveness w
 * (halved on loss, +0.05 per loss-free period up to `wMax`). Credits no data answered for `timeoutNs`
 * stop (the sender is gone); a request asks again.
 */
import type { NodeClock } from '../../../core/clock.js';
import { type Frame, FrameType, makeFrame } from '../../../core/frame.js';
import type { FlowSpec } from '../../../core/messages.js';
import { Rng } from '../../../core/random.js';
import type { Timer } from '../../../core/scheduler.js';
import {
  CREDIT_BYTES,
  TopClasses,
  XpClass,
  type XpControl,
  XpCtl,
  type XpData,
  type XpHostConfig,
} from '../../../switch/expresspass/wire.js';
import {
  type SenderStats,
  segmentBytes,
  segmentCount,
  type Transport,
  type TransportComponents,
} from '../types.js';

/** `scheme` section of a host report, read by orchestrator/schemes/expresspass. */
export interface XpHostSection {
  requestsSent: number;
  creditsSent: number;
  /** credits that reached this sender */
  creditsReceived: number;
  /** credits that found nothing to send */
  creditsWasted: number;
  dataSent: number;
  /** data frames that reached this receiver, duplicates included */
  dataReceived: number;
  retransmits: number;
  /** credit streams stopped because no data answered them */
  stalled: number;
  rateUpdates: number;
  /** receiver side: [flow, credits lost / credits sent over the flow] */
  creditLoss: Array<[number, number]>;
  /** TOP §4.3, sender side: tokens judged by their age (own clock minus the receiver's stamp) */
  expiryChecks: number;
  tokensExpired: number;
  /** expired by the clocks but younger than the threshold in truth (clock error made them invalid) */
  expiredValid: number;
  /** used though older than the threshold in truth */
  staleUsed: number;
  /** the largest |judged age − true age| seen at an expiry check, ns */
  maxTokenClockErrNs: number;
}

class XpSend implements SenderStats {
  readonly nSeg: number;
  next = 0;
  /** retransmission pointer, once every segment went once */
  retx = 0;
  /** node clock each segment last went at */
  readonly sentAt: Float64Array;
  askedAt = 0;
  /** requests sent so far */
  asks = 0;
  /** request to first credit, node clock (-1: none yet) */
  rtt = -1;
  done = false;
  request: Timer | null = null;
  framesSent = 0;
  retransmits = 0;
  readonly timeouts = 0;
  constructor(readonly spec: FlowSpec) {
    this.nSeg = segmentCount(spec.size);
    this.sentAt = new Float64Array(this.nSeg);
  }
}

class XpRecv {
  readonly nSeg: number;
  readonly got: Uint8Array;
  count = 0;
  /** lowest segment not yet received */
  low = 0;
  delivered = false;
  readonly via: number[] = [];
  lastNew = -1;
  /** path epoch: bumped when a silent stream restarts */
  epoch = 0;
  /** credits/s */
  rate: number;
  w: number;
  canIncrease = false;
  nextCredit = 1;
  expected = 1;
  total = 0;
  dropped = 0;
  allTotal = 0;
  allDropped = 0;
  lastUpdate: number;
  rtt = -1;
  /** node clock of the last data frame (or of the request) */
  lastData: number;
  pace: Timer | null = null;

  constructor(
    readonly id: number,
    readonly src: number,
    size: number,
    cfg: XpHostConfig,
    now: number,
  ) {
    this.nSeg = segmentCount(size);
    this.got = new Uint8Array(this.nSeg);
    this.rate = cfg.alpha * cfg.maxCreditsPerS;
    this.w = cfg.wInit;
    this.lastUpdate = now;
    this.lastData = now;
  }
}

/** a segment younger than this (or 4 first round trips) may still be on its way: not sent again */
const RETX_AGE_NS = 50_000;

export class ExpressPassTransport implements Transport {
  private readonly out = new Map<number, XpSend>();
  private readonly in = new Map<number, XpRecv>();
  private readonly clock: NodeClock;
  private readonly rng: Rng;
  private readonly s: XpHostSection = {
    requestsSent: 0,
    creditsSent: 0,
    creditsReceived: 0,
    creditsWasted: 0,
    dataSent: 0,
    dataReceived: 0,
    retransmits: 0,
    stalled: 0,
    rateUpdates: 0,
    creditLoss: [],
    expiryChecks: 0,
    tokensExpired: 0,
    expiredValid: 0,
    staleUsed: 0,
    maxTokenClockErrNs: 0,
  };

  constructor(
    private readonly cfg: XpHostConfig,
    private readonly c: TransportComponents,
    /** background flows (`workload.background`): the baseline transport */
    private readonly bestEffort: Transport,
  ) {
    this.clock = c.clock;
    this.rng = new Rng(c.hostId * 7331 + 17);
  }

  // ---- sender ----

  startFlow(flow: FlowSpec, now: number): void {
    if (flow.bestEffort) {
      this.bestEffort.startFlow(flow, now);
      return;
    }
    const m = new XpSend(flow);
    this.out.set(flow.id, m);
    this.request(0, m);
  }

  private readonly request = (_now: number, msg: unknown): void => {
    const m = msg as XpSend;
    m.request = null;
    if (m.done) return;
    this.s.requestsSent++;
    m.askedAt = this.clock.now();
    // each ask hashes to its own path: a request lost on one (a black hole) is not lost again on it
    this.control(m.spec.dst, m.spec.id, XpClass.Request, CREDIT_BYTES, {
      xp: XpCtl.Request,
      b: m.spec.size,
      ...(m.asks > 0 && { e: m.asks }),
    });
    m.asks++;
    m.request = this.clock.after(this.cfg.timeoutNs, this.request, m);
  };

  private onCredit(f: Frame, x: XpControl): void {
    this.s.creditsReceived++;
    const m = this.out.get(f.f);
    if (m === undefined || m.done) {
      this.s.creditsWasted++;
      return;
    }
    if (this.expired(x)) return;
    // the first credit: the round trip a segment takes to show up in the receiver's ack
    if (m.rtt < 0) m.rtt = Math.max(1000, this.clock.now() - m.askedAt);
    // credits silent for a while (the receiver stopped, a path died): ask again
    this.clock.cancel(m.request);
    m.request = this.clock.after(this.cfg.timeoutNs, this.request, m);
    const ack = typeof x.ack === 'number' ? x.ack : 0;
    let seq: number;
    if (m.next < m.nSeg) seq = m.next++;
    else {
      if (ack >= m.nSeg) {
        // the receiver has it all: this credit was on its way when it stopped
        m.done = true;
        this.clock.cancel(m.request);
        m.request = null;
        this.c.acked(m.spec.id, this.clock.now());
        this.s.creditsWasted++;
        return;
      }
      // every segment went once: again, from the lowest one the receiver misses, but only segments
      // sent long enough ago to have arrived (the rest are on their way)
      const old = this.clock.now() - Math.max(4 * m.rtt, RETX_AGE_NS);
      let found = -1;
      for (let i = 0; i < m.nSeg - ack && found < 0; i++) {
        const s = ack + ((Math.max(m.retx, ack) - ack + i) % (m.nSeg - ack));
        if (m.sentAt[s] <= old) found = s;
      }
      if (found < 0) {
        this.s.creditsWasted++;
        return;
      }
      seq = found;
      m.retx = seq + 1;
      m.retransmits++;
      this.s.retransmits++;
    }
    m.sentAt[seq] = this.clock.now();
    m.framesSent++;
    this.s.dataSent++;
    this.c.nic.send(
      makeFrame({
        t: FrameType.Data,
        s: this.c.hostId,
        d: m.spec.dst,
        f: m.spec.id,
        q: seq,
        z: segmentBytes(m.spec.size, seq),
        p: XpClass.Data,
        x: { c: x.c ?? 0, ts: x.ts ?? 0, ...(x.e !== undefined && { e: x.e }) } satisfies XpData,
      }),
    );
  }

  /**
   * TOP §4.3: a token older than the threshold by this sender's clock against the receiver's stamp is
   * dropped (it may have sat in a low-priority queue while data the threshold did not allow for came
   * back). Both clocks are node clocks, so their error decides what is judged old; the true age (from
   * a measurement-only field) tells how often the judgement was wrong.
   */
  private expired(x: XpControl): boolean {
    const limit = this.cfg.top?.expiryNs ?? 0;
    if (limit <= 0 || typeof x.ts !== 'number') return false;
    const judged = this.clock.now() - x.ts;
    const truth = typeof x.pt === 'number' ? this.c.physNow() - x.pt : judged;
    this.s.expiryChecks++;
    const err = Math.abs(judged - truth);
    if (err > this.s.maxTokenClockErrNs) this.s.maxTokenClockErrNs = err;
    if (judged > limit) {
      this.s.tokensExpired++;
      if (truth <= limit) this.s.expiredValid++;
      return true;
    }
    if (truth > limit) this.s.staleUsed++;
    return false;
  }

  // ---- receiver ----

  private onRequest(f: Frame, x: XpControl): void {
    let r = this.in.get(f.f);
    const now = this.clock.now();
    if (r?.delivered) {
      // asked again after the last credit: one more tells the sender it is all here
      this.control(f.s, f.f, XpClass.Credit, CREDIT_BYTES, { xp: XpCtl.Credit, c: 0, ts: now, ack: r.nSeg });
      return;
    }
    if (r !== undefined && r.pace !== null) return; // crediting already
    // a stream that went silent starts again on another path (its last one may lead nowhere)
    if (r !== undefined) r.epoch++;
    if (r === undefined) {
      r = new XpRecv(f.f, f.s, typeof x.b === 'number' ? x.b : 1, this.cfg, now);
      this.in.set(f.f, r);
    }
    r.lastData = now;
    this.credit(0, r);
  }

  private readonly credit = (_now: number, flow: unknown): void => {
    const r = flow as XpRecv;
    r.pace = null;
    if (r.delivered) return;
    const now = this.clock.now();
    if (now - r.lastData > this.cfg.timeoutNs) {
      // nothing came back for a while: the sender is gone or cut off; a new request restarts us
      this.s.stalled++;
      return;
    }
    this.feedback(r, now);
    this.s.creditsSent++;
    this.control(r.src, r.id, this.tokenClass(r), CREDIT_BYTES, {
      xp: XpCtl.Credit,
      c: r.nextCredit++,
      ts: now,
      ack: r.low,
      pt: this.c.physNow(),
      ...(r.epoch > 0 && { e: r.epoch }),
    });
    const jitter = 1 + (2 * this.rng.next() - 1) * this.cfg.jitter;
    r.pace = this.clock.after((1e9 / r.rate) * jitter, this.credit, r);
  };

  /**
   * ExpressPass: the one credit class. TOP (§3.2, SRPT): a flow with x packets left gets class
   * floor(K log_p x) below the top, p the largest flow in packets, so the K classes carry equal shares of
   * a heavy-tailed load.
   */
  private tokenClass(r: XpRecv): number {
    const top = this.cfg.top;
    if (top === undefined) return XpClass.Credit;
    const left = Math.max(1, r.nSeg - r.count);
    const c = Math.floor((top.classes * Math.log(left)) / Math.log(Math.max(2, top.maxPackets)));
    return TopClasses.hi - Math.max(0, Math.min(top.classes - 1, c));
  }

  /** ExpressPass Algorithm 1, once per RTT */
  private feedback(r: XpRecv, now: number): void {
    if (r.rtt <= 0 || now - r.lastUpdate < r.rtt || r.total === 0) return;
    const cfg = this.cfg;
    const old = r.rate;
    const loss = r.dropped / r.total;
    const target = cfg.top?.targetLoss ?? (1 - r.rate / cfg.maxCreditsPerS) * cfg.targetLossScaling;
    const minRate = 1e9 / r.rtt;
    if (loss > target) {
      r.rate = loss >= 1 ? minRate : ((r.total - r.dropped) * 1e9 * (1 + target)) / (now - r.lastUpdate);
      r.rate = Math.min(r.rate, old);
      r.w = Math.max(r.w / 2, cfg.wMin);
      r.canIncrease = false;
    } else {
      if (r.canIncrease) r.w = Math.min(r.w + 0.05, cfg.wMax);
      else r.canIncrease = true;
      if (r.rate < cfg.maxCreditsPerS) r.rate = r.w * cfg.maxCreditsPerS + (1 - r.w) * r.rate;
    }
    r.rate = Math.max(minRate, Math.min(cfg.maxCreditsPerS, r.rate));
    r.total = 0;
    r.dropped = 0;
    r.lastUpdate = now;
    this.s.rateUpdates++;
  }

  private onData(f: Frame): void {
    this.s.dataReceived++;
    const r = this.in.get(f.f);
    if (r === undefined) return;
    const x = f.x as XpData;
    const now = this.clock.now();
    r.lastData = now;
    const gap = x.c - r.expected;
    if (gap >= 0) {
      r.total += gap + 1;
      r.dropped += gap;
      r.allTotal += gap + 1;
      r.allDropped += gap;
      r.expected = x.c + 1;
    }
    const sample = now - x.ts;
    if (sample > 0) r.rtt = r.rtt < 0 ? sample : 0.8 * r.rtt + 0.2 * sample;
    if (f.q < 0 || f.q >= r.nSeg || r.got[f.q] === 1) return;
    r.got[f.q] = 1;
    r.count++;
    r.lastNew = this.c.physNow();
    if (f.v !== 0 && !r.via.includes(f.v)) r.via.push(f.v);
    while (r.low < r.nSeg && r.got[r.low] === 1) r.low++;
    if (r.count === r.nSeg) {
      r.delivered = true;
      this.clock.cancel(r.pace);
      r.pace = null;
      this.c.delivered(r.id, now, r.via);
    }
  }

  // ---- both ----

  onFrame(frame: Frame, now: number): void {
    const x = frame.x as XpControl | XpData | null;
    if (frame.t === FrameType.Control && x !== null && typeof x === 'object' && 'xp' in x) {
      if (x.xp === XpCtl.Request) this.onRequest(frame, x);
      else if (x.xp === XpCtl.Credit) this.onCredit(frame, x);
    } else if (frame.t === FrameType.Data && x !== null && typeof x === 'object' && 'c' in x)
      this.onData(frame);
    else this.bestEffort.onFrame(frame, now);
  }

  private control(dst: number, flow: number, p: number, z: number, x: XpControl): void {
    this.c.nic.send(makeFrame({ t: FrameType.Control, s: this.c.hostId, d: dst, f: flow, z, p, x }));
  }

  senderStats(id: number): SenderStats | undefined {
    return this.out.get(id) ?? this.bestEffort.senderStats(id);
  }

  partialPaths(): Array<[number, number[], number]> {
    const mine: Array<[number, number[], number]> = [];
    for (const r of this.in.values()) if (!r.delivered && r.count > 0) mine.push([r.id, r.via, r.lastNew]);
    return [...mine, ...this.bestEffort.partialPaths()];
  }

  report(): XpHostSection {
    const creditLoss: Array<[number, number]> = [];
    for (const r of this.in.values()) if (r.allTotal > 0) creditLoss.push([r.id, r.allDropped / r.allTotal]);
    return { ...this.s, creditLoss };
  }

  stop(): void {
    for (const m of this.out.values()) this.clock.cancel(m.request);
    for (const r of this.in.values()) this.clock.cancel(r.pace);
    this.bestEffort.stop();
  }
}
