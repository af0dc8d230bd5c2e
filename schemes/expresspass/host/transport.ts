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
import {
  type FlowSpec,
  type Frame,
  FrameType,
  makeFrame,
  type NodeClock,
  type PartialReceiver,
  Rng,
  type SenderStats,
  segmentBytes,
  type Timer,
  type Transport,
  type TransportComponents,
  TransportOverBestEffort,
} from '../../../sdk/node.js';
import {
  CREDIT_BYTES,
  TopClasses,
  TopUnscheduled,
  XpClass,
  type XpControl,
  XpCtl,
  type XpData,
  type XpHostConfig,
} from '../wire.js';
import { type XpHostSection, XpRecv, XpSend } from './flow-state.js';

/** a segment younger than this (or 4 first round trips) may still be on its way: not sent again */
const RETX_AGE_NS = 50_000;
/** TOP: packet times beyond its unscheduled packets' own after which a receiver tokens for them */
const UNSCHEDULED_SLACK = 8;
/**
 * TOP §4.4: a segment is lost "if received packets have much larger IDs": a flow's data comes in order
 * on one path, so a segment this many behind the one that just came is signalled (as three duplicate
 * acks are for TCP), each at most once per round trip, at most this many per arrival.
 */
const LOSS_GAP = 3;
const LOSS_SIGNALS_PER_ARRIVAL = 8;

export class ExpressPassTransport extends TransportOverBestEffort {
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
    lossSignals: 0,
    signalResends: 0,
  };
  /** scheduled data's class (Q1 when Q0 is for TOP's unscheduled packets) */
  private readonly dataClass: number;
  /** one token (and the full data packet it brings) at the link's full rate, ns: TOP's pacing slot */
  private readonly slotNs: number;

  constructor(
    private readonly cfg: XpHostConfig,
    private readonly c: TransportComponents,
    /** background flows (`workload.background`): the baseline transport */
    bestEffort: Transport,
  ) {
    super(bestEffort);
    this.clock = c.clock;
    this.rng = new Rng(c.hostId * 7331 + 17);
    this.dataClass = (cfg.top?.unscheduled ?? 0) > 0 ? TopUnscheduled.data : XpClass.Data;
    this.slotNs = 1e9 / cfg.maxCreditsPerS;
  }

  // ---- sender ----

  protected startOwnFlow(flow: FlowSpec): void {
    const m = new XpSend(flow);
    this.out.set(flow.id, m);
    // TOP §4.4: a short flow sends everything at once in the lowest class, behind the request
    if (m.nSeg <= (this.cfg.top?.unscheduled ?? 0)) m.unscheduledAt = this.clock.now();
    if (flow.deadline !== undefined && this.cfg.top?.objective === 'deadline')
      m.deadlineAt = this.clock.now() + flow.deadline;
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
      ...(m.deadlineAt >= 0 && { dl: m.deadlineAt - m.askedAt }),
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
    if (this.expired(x, f.s)) return;
    // the first credit: the round trip a segment takes to show up in the receiver's ack
    if (m.rtt < 0) m.rtt = Math.max(1000, this.clock.now() - m.askedAt);
    // credits silent for a while (the receiver stopped, a path died): ask again
    this.clock.cancel(m.request);
    m.request = this.clock.after(this.cfg.timeoutNs, this.request, m);
    const ack = typeof x.ack === 'number' ? x.ack : 0;
    let seq = this.signalled(m, ack);
    if (seq >= 0) {
      m.retransmits++;
      this.s.retransmits++;
      this.s.signalResends++;
    } else if (m.next < m.nSeg) seq = m.next++;
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
      // sent long enough ago to have arrived (the rest are on their way); the lowest missing one at once
      // if it went unscheduled (the receiver waited for it before sending this token; of the ones above
      // it, only a loss signal tells which are lost)
      const old = this.clock.now() - Math.max(4 * m.rtt, RETX_AGE_NS);
      let found = -1;
      if (m.sentAt[ack] === m.unscheduledAt) found = ack;
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
    this.sendData(m, seq, this.dataClass, {
      c: x.c ?? 0,
      ts: x.ts ?? 0,
      ...(x.e !== undefined && { e: x.e }),
    });
  }

  /**
   * TOP §4.4: "the sender then retransmits this packet as soon as it receives a token from this flow",
   * but "a specific packet at most once in each RTT": the first signalled segment the receiver still
   * misses (by the token's ack) and that did not go within the last round trip, or -1.
   */
  private signalled(m: XpSend, ack: number): number {
    const now = this.clock.now();
    while (m.resend.length > 0) {
      const seq = m.resend.shift()!;
      if (seq >= ack && now - m.sentAt[seq] >= Math.max(m.rtt, 0)) return seq;
    }
    return -1;
  }

  private onLoss(f: Frame, x: XpControl): void {
    const m = this.out.get(f.f);
    const seq = x.m;
    if (m === undefined || m.done || typeof seq !== 'number' || !Number.isInteger(seq)) return;
    if (seq >= 0 && seq < m.next && !m.resend.includes(seq)) m.resend.push(seq);
  }

  /**
   * TOP §4.3: a token older than the threshold by this sender's clock against the receiver's stamp is
   * dropped (it may have sat in a low-priority queue while data the threshold did not allow for came
   * back). Both clocks are node clocks, so their error decides what is judged old; the true age (from
   * a measurement-only field) tells how often the judgement was wrong.
   */
  private expired(x: XpControl, receiver: number): boolean {
    const top = this.cfg.top;
    const limit = top?.expiryByPeerNs?.[receiver] ?? top?.expiryNs ?? 0;
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
    if (typeof x.dl === 'number' && Number.isFinite(x.dl)) r.deadlineAt = now + x.dl;
    r.lastData = now;
    if (this.cfg.top === undefined) this.credit(0, r);
    else {
      r.outstanding.length = 0;
      if (typeof x.u === 'number' && r.count === 0) {
        // unscheduled packets follow the request at line rate: no tokens for them unless overdue
        r.unscheduled = x.u;
        r.unscheduledUntil = now + (x.u + UNSCHEDULED_SLACK) * this.slotNs;
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
    this.control(r.src, r.id, this.tokenClass(r, now), CREDIT_BYTES, {
      xp: XpCtl.Credit,
      c,
      ts: now,
      ack: r.low,
      pt: this.c.physNow(),
      ...(r.epoch > 0 && { e: r.epoch }),
      ...(this.cfg.top?.ranked && { k: r.nSeg - r.count }),
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
      if (best === null || this.moreUrgent(r, left, best, bestLeft, now)) {
        best = r;
        bestLeft = left;
      }
    }
    if (best !== null) {
      this.sendCredit(best, now);
      // the slot's jitter on the flow's own gap too: a flow at the full rate loses no slot to it
      const j = this.jitter();
      best.nextAt = now + (1e9 / best.rate) * j;
      this.nextSlot = now + this.slotNs * j;
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
   * The receiver's order among its flows: SRPT (fewest packets left), or for the deadline objective EDF
   * among the flows that can still meet their deadline at the link's rate, then the rest SRPT (a flow
   * that misses anyway should not make another miss too); the lower flow id on a tie.
   */
  private moreUrgent(a: XpRecv, aLeft: number, b: XpRecv, bLeft: number, now: number): boolean {
    if (this.cfg.top!.objective === 'deadline') {
      const aLive = this.canMeet(a, aLeft, now);
      const bLive = this.canMeet(b, bLeft, now);
      if (aLive !== bLive) return aLive;
      if (aLive && a.deadlineAt !== b.deadlineAt) return a.deadlineAt < b.deadlineAt;
    }
    return aLeft < bLeft || (aLeft === bLeft && a.id < b.id);
  }

  /** a deadline the flow's packets left still fit before, at the link's full rate */
  private canMeet(r: XpRecv, left: number, now: number): boolean {
    return r.deadlineAt - now >= left * this.slotNs;
  }

  /**
   * ExpressPass: the one credit class. TOP (§3.2): SRPT, the flow's packets left against the class
   * boundaries, the fewest left in the top class; or by deadline, its time left against the deadline
   * boundaries, the nearest in the top class and a flow that can no longer meet its deadline (or has
   * none) in the lowest.
   */
  private tokenClass(r: XpRecv, now: number): number {
    const top = this.cfg.top;
    if (top === undefined) return XpClass.Credit;
    // §3.2's ideal switch: one class, the ports order its tokens by their rank (sendCredit's `k`)
    if (top.ranked) return TopClasses.hi;
    const left = r.nSeg - r.count;
    let c = 0;
    if (top.objective === 'deadline') {
      const bounds = top.deadlineThresholdsNs;
      if (!this.canMeet(r, left, now)) return TopClasses.hi - bounds.length;
      while (c < bounds.length && bounds[c] <= r.deadlineAt - now) c++;
      return TopClasses.hi - c;
    }
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
    } else if (r.unscheduled > 0 && f.q >= 0 && f.q < r.nSeg && r.got[f.q] === 0) {
      // still coming (slowly, behind scheduled data): the rest may be too, so the wait goes on
      r.unscheduled--;
      r.unscheduledUntil = Math.max(r.unscheduledUntil, now + UNSCHEDULED_SLACK * this.slotNs);
    }
    if (this.cfg.top !== undefined && r.outstanding.length > 0 && r.outstanding[0][0] < r.expected)
      this.kick();
    if (f.q < 0 || f.q >= r.nSeg || r.got[f.q] === 1) return;
    r.got[f.q] = 1;
    r.count++;
    r.lastNew = this.c.physNow();
    if (f.v !== 0 && !r.via.includes(f.v)) r.via.push(f.v);
    while (r.low < r.nSeg && r.got[r.low] === 1) r.low++;
    if (this.cfg.top !== undefined && f.q >= r.low + LOSS_GAP) this.signalLoss(r, f.q, now);
    if (r.count === r.nSeg) {
      r.delivered = true;
      this.clock.cancel(r.pace);
      r.pace = null;
      this.c.delivered(r.id, now, r.via);
    }
  }

  /**
   * TOP §4.4: "when the receiver realizes that a packet is lost (if received packets have much larger
   * IDs), the missing ID is sent to the sender by a dedicated signal packet" — in the top class, each
   * missing segment at most once per round trip.
   */
  private signalLoss(r: XpRecv, arrived: number, now: number): void {
    if (r.signalledAt === null) r.signalledAt = new Float64Array(r.nSeg).fill(Number.NEGATIVE_INFINITY);
    const again = r.rtt > 0 ? r.rtt : RETX_AGE_NS;
    let sent = 0;
    // (a bounded scan: after a long outage the holes further on are signalled as the first ones fill)
    const last = Math.min(arrived - LOSS_GAP, r.low + 8 * LOSS_SIGNALS_PER_ARRIVAL);
    for (let seq = r.low; seq <= last && sent < LOSS_SIGNALS_PER_ARRIVAL; seq++) {
      if (r.got[seq] === 1 || now - r.signalledAt[seq] < again) continue;
      r.signalledAt[seq] = now;
      sent++;
      this.s.lossSignals++;
      this.control(r.src, r.id, XpClass.Request, CREDIT_BYTES, { xp: XpCtl.Loss, m: seq });
    }
  }

  // ---- both ----

  protected ownFrame(frame: Frame): boolean {
    const x = frame.x as XpControl | XpData | null;
    if (frame.t === FrameType.Control && x !== null && typeof x === 'object' && 'xp' in x) {
      if (x.xp === XpCtl.Request) this.onRequest(frame, x);
      else if (x.xp === XpCtl.Credit) this.onCredit(frame, x);
      else if (x.xp === XpCtl.Loss) this.onLoss(frame, x);
    } else if (frame.t === FrameType.Data && x !== null && typeof x === 'object' && 'c' in x)
      this.onData(frame);
    else return false;
    return true;
  }

  private control(dst: number, flow: number, p: number, z: number, x: XpControl): void {
    this.c.nic.send(makeFrame({ t: FrameType.Control, s: this.c.hostId, d: dst, f: flow, z, p, x }));
  }

  // (its own flows and best effort's are apart: a flow starts on one and stays there)
  protected ownSenderStats(id: number): SenderStats | undefined {
    return this.out.get(id);
  }

  protected receiving(): Iterable<PartialReceiver> {
    return this.in.values();
  }

  report(): XpHostSection {
    const creditLoss: Array<[number, number]> = [];
    for (const r of this.in.values()) if (r.allTotal > 0) creditLoss.push([r.id, r.allDropped / r.allTotal]);
    return { ...this.s, creditLoss };
  }

  protected stopOwn(): void {
    for (const m of this.out.values()) this.clock.cancel(m.request);
    for (const r of this.in.values()) this.clock.cancel(r.pace);
    this.clock.cancel(this.slotTimer);
  }
}
