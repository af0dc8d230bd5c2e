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
  TopUnscheduled,
  XpClass,
  type XpControl,
  XpCtl,
  type XpData,
  type XpHostConfig,
} from '../../../switch/expresspass/wire.js';
import {
  partialPathsOver,
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
  /** TOP §4.4: data frames sent unscheduled at a short flow's start */
  unscheduledSent: number;
}

class XpSend implements SenderStats {
  readonly nSeg: number;
  next = 0;
  /** retransmission pointer, once every segment went once */
  retx = 0;
  /** node clock each segment last went at */
  readonly sentAt: Float64Array;
  askedAt = 0;
  /** TOP: node clock its segments went unscheduled at (-1: they did not) */
  unscheduledAt = -1;
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
  /** TOP: node clock before which the flow's own rate allows no token */
  nextAt = 0;
  /** TOP: [credit number, node clock] of tokens sent and not yet answered, oldest first */
  readonly outstanding: Array<[number, number]> = [];
  /** TOP: unscheduled packets announced and not yet here, and until when they count as on their way */
  unscheduled = 0;
  unscheduledUntil = 0;

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
/** TOP: packet times beyond its unscheduled packets' own after which a receiver tokens for them */
const UNSCHEDULED_SLACK = 8;

export class ExpressPassTransport implements Transport {
  private readonly out = new Map<number, XpSend>();
  private readonly in = new Map<number, XpRecv>();
  /** TOP: flows this receiver is crediting, one pacer choosing among them */
  private readonly active = new Set<XpRecv>();
  private slotTimer: Timer | null = null;
  private slotAt = 0;
  /** TOP: node clock before which the receiver's own link allows no token */
  private nextSlot = 0;
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
    unscheduledSent: 0,
  };
  /** scheduled data's class (Q1 when Q0 is for TOP's unscheduled packets) */
  private readonly dataClass: number;

  constructor(
    private readonly cfg: XpHostConfig,
    private readonly c: TransportComponents,
    /** background flows (`workload.background`): the baseline transport */
    private readonly bestEffort: Transport,
  ) {
    this.clock = c.clock;
    this.rng = new Rng(c.hostId * 7331 + 17);
    this.dataClass = (cfg.top?.unscheduled ?? 0) > 0 ? TopUnscheduled.data : XpClass.Data;
  }

  // ---- sender ----

  startFlow(flow: FlowSpec, now: number): void {
    if (flow.bestEffort) {
      this.bestEffort.startFlow(flow, now);
      return;
    }
    const m = new XpSend(flow);
    this.out.set(flow.id, m);
    // TOP §4.4: a short flow sends everything at once in the lowest class, behind the request
    if (m.nSeg <= (this.cfg.top?.unscheduled ?? 0)) m.unscheduledAt = this.clock.now();
    this.request(0, m);
    if (m.unscheduledAt >= 0) {
      for (let seq = 0; seq < m.nSeg; seq++)
        this.sendData(m, seq, TopUnscheduled.unscheduled, { c: 0, ts: 0 });
      m.next = m.nSeg;
      this.s.unscheduledSent += m.nSeg;
    }
  }

  private sendData(m: XpSend, seq: number, p: number, x: XpData): void {
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
        p,
        x,
      }),
    );
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
      ...(m.unscheduledAt >= 0 && { u: m.nSeg }),
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
      // sent long enough ago to have arrived (the rest are on their way); an unscheduled one at once (the
      // receiver waited for it before sending this token)
      const old = this.clock.now() - Math.max(4 * m.rtt, RETX_AGE_NS);
      let found = -1;
      for (let i = 0; i < m.nSeg - ack && found < 0; i++) {
        const s = ack + ((Math.max(m.retx, ack) - ack + i) % (m.nSeg - ack));
        if (m.sentAt[s] <= old || m.sentAt[s] === m.unscheduledAt) found = s;
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
    this.sendData(m, seq, this.dataClass, {
      c: x.c ?? 0,
      ts: x.ts ?? 0,
      ...(x.e !== undefined && { e: x.e }),
    });
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
    if (r !== undefined && (r.pace !== null || this.active.has(r))) return; // crediting already
    // a stream that went silent starts again on another path (its last one may lead nowhere)
    if (r !== undefined) r.epoch++;
    if (r === undefined) {
      r = new XpRecv(f.f, f.s, typeof x.b === 'number' ? x.b : 1, this.cfg, now);
      this.in.set(f.f, r);
    }
    r.lastData = now;
    if (this.cfg.top === undefined) this.credit(0, r);
    else {
      r.outstanding.length = 0;
      if (typeof x.u === 'number' && r.count === 0) {
        // unscheduled packets follow the request at line rate: no tokens for them unless overdue
        r.unscheduled = x.u;
        r.unscheduledUntil = now + ((x.u + UNSCHEDULED_SLACK) * 1e9) / this.cfg.maxCreditsPerS;
      }
      this.active.add(r);
      this.kick();
    }
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
    this.sendCredit(r, now);
    r.pace = this.clock.after((1e9 / r.rate) * this.jitter(), this.credit, r);
  };

  private jitter(): number {
    return 1 + (2 * this.rng.next() - 1) * this.cfg.jitter;
  }

  private sendCredit(r: XpRecv, now: number): void {
    this.feedback(r, now);
    this.s.creditsSent++;
    const c = r.nextCredit++;
    if (this.cfg.top !== undefined) r.outstanding.push([c, now]);
    this.control(r.src, r.id, this.tokenClass(r), CREDIT_BYTES, {
      xp: XpCtl.Credit,
      c,
      ts: now,
      ack: r.low,
      pt: this.c.physNow(),
      ...(r.epoch > 0 && { e: r.epoch }),
    });
  }

  /**
   * TOP §4.4: "in each pacing slot, the receiver chooses a flow's token". One pacer per receiver at its
   * link's full token rate picks, among the flows whose own feedback rate allows a token now, the most
   * urgent (fewest packets left; the lower flow id on a tie), so the receiver's link serves its flows
   * shortest first and gives a slot another flow cannot use to the next. A flow whose unanswered
   * tokens already cover its packets left (plus the target loss) waits: a token beyond that is wasted.
   * Tokens unanswered for two round trips count as lost.
   */
  private readonly slot = (): void => {
    this.slotTimer = null;
    const now = this.clock.now();
    const top = this.cfg.top!;
    let best: XpRecv | null = null;
    let bestLeft = 0;
    let wake = Number.POSITIVE_INFINITY;
    for (const r of this.active) {
      if (r.delivered) {
        this.active.delete(r);
        continue;
      }
      if (now - r.lastData > this.cfg.timeoutNs) {
        // nothing came back for a while: the sender is gone or cut off; a new request restarts us
        this.s.stalled++;
        this.active.delete(r);
        continue;
      }
      const left = r.nSeg - r.count;
      const lostAfter = 2 * (r.rtt > 0 ? r.rtt : RETX_AGE_NS);
      const q = r.outstanding;
      while (q.length > 0 && (q[0][0] < r.expected || q[0][1] + lostAfter <= now)) q.shift();
      if (r.unscheduled > 0 && now < r.unscheduledUntil && q.length + r.unscheduled >= left) {
        wake = Math.min(wake, r.unscheduledUntil);
        continue;
      }
      if (q.length >= left + Math.ceil(left * top.targetLoss)) {
        wake = Math.min(wake, q[0][1] + lostAfter);
        continue;
      }
      // (1 ns of slack: float times; a flow at the full rate is due exactly at the next slot)
      if (r.nextAt > now + 1) {
        wake = Math.min(wake, r.nextAt);
        continue;
      }
      if (best === null || left < bestLeft || (left === bestLeft && r.id < best.id)) {
        best = r;
        bestLeft = left;
      }
    }
    if (best !== null) {
      this.sendCredit(best, now);
      // the slot's jitter on the flow's own gap too: a flow at the full rate loses no slot to it
      const j = this.jitter();
      best.nextAt = now + (1e9 / best.rate) * j;
      this.nextSlot = now + (1e9 / this.cfg.maxCreditsPerS) * j;
      wake = this.nextSlot;
    }
    // a slot that sent nothing never comes again at the same time (float times: no spinning)
    if (this.active.size > 0) this.armSlot(Math.max(wake, this.nextSlot, best === null ? now + 1 : now), now);
  };

  private armSlot(at: number, now: number): void {
    this.slotAt = Math.max(at, now);
    this.slotTimer = this.clock.after(this.slotAt - now, this.slot);
  }

  /** a flow may have become eligible: bring the pacer's next slot forward to what the link allows */
  private kick(): void {
    if (this.slotTimer !== null && this.slotAt <= this.nextSlot) return;
    this.clock.cancel(this.slotTimer);
    this.armSlot(this.nextSlot, this.clock.now());
  }

  /**
   * ExpressPass: the one credit class. TOP (§3.2, SRPT): the flow's packets left against the class
   * boundaries, the fewest left in the top class.
   */
  private tokenClass(r: XpRecv): number {
    const top = this.cfg.top;
    if (top === undefined) return XpClass.Credit;
    const left = r.nSeg - r.count;
    let c = 0;
    while (c < top.thresholds.length && top.thresholds[c] <= left) c++;
    return TopClasses.hi - c;
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
    if (x.c > 0) {
      const sample = now - x.ts;
      if (sample > 0) r.rtt = r.rtt < 0 ? sample : 0.8 * r.rtt + 0.2 * sample;
    } else if (r.unscheduled > 0 && f.q >= 0 && f.q < r.nSeg && r.got[f.q] === 0) r.unscheduled--;
    if (this.cfg.top !== undefined && r.outstanding.length > 0 && r.outstanding[0][0] < r.expected)
      this.kick();
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
    return partialPathsOver(this.in.values(), this.bestEffort);
  }

  report(): XpHostSection {
    const creditLoss: Array<[number, number]> = [];
    for (const r of this.in.values()) if (r.allTotal > 0) creditLoss.push([r.id, r.allDropped / r.allTotal]);
    return { ...this.s, creditLoss };
  }

  stop(): void {
    for (const m of this.out.values()) this.clock.cancel(m.request);
    for (const r of this.in.values()) this.clock.cancel(r.pace);
    this.clock.cancel(this.slotTimer);
    this.bestEffort.stop();
  }
}
