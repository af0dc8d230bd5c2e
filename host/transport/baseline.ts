/**
 * The baseline transport: a reliable window protocol with DCTCP congestion control (Alizadeh et al.,
 * SIGCOMM 2010; RFC 8257), or with loss-based NewReno (`cc: reno`: ECN off, the window halves only on
 * a loss — the Linux TCP that fills deep buffers, Fastpass §7.1's baseline). Data frames are ECN-capable; switches mark them CE above a queue
 * threshold; the receiver acknowledges every frame cumulatively and echoes CE; the sender keeps
 * alpha, the moving fraction of marked acknowledgements (gain g, updated once per window), and cuts
 * its window by alpha/2 at most once per window. Losses are repaired by fast retransmit after
 * duplicate acknowledgements (NewReno-style partial acks) and by a retransmission timeout with
 * exponential back-off (go-back-N from the first unacknowledged frame; the receiver keeps what
 * arrived out of order, so its cumulative ack skips what it already has).
 *
 * Under a Linux host stack (`host.stack: linux`, TransportComponents.stack) the socket bounds a flow as
 * Linux's does: its send buffer caps what is sent and not acknowledged (tcp_wmem), TCP small queues
 * stop it while its bytes in the qdisc and NIC exceed max(2 frames, ~1 ms at its pacing rate) capped
 * at tcp_limit_output_bytes (tcp_small_queue_check), and its window grows only while the window is
 * what limits it (tcp_is_cwnd_limited). Without one (`unbounded`) a flow hands the NIC its whole window.
 */

import { Ecn, type Frame, FrameType, makeFrame, Priority, WireSize } from '../../core/frame.js';
import type { BaselineTransportConfig, FlowSpec, TransportConfig } from '../../core/messages.js';
import type { Timer } from '../../core/scheduler.js';
import {
  type SenderStats,
  segmentBytes,
  segmentCount,
  type Transport,
  type TransportComponents,
  type WindowControl,
} from './types.js';

/** Defaults and why: RFC 8257 §4.2 (alpha starts at 1, g = 1/16); Linux initial window 10 frames. */
export const BASELINE_DEFAULTS: BaselineTransportConfig = {
  kind: 'baseline',
  cc: 'dctcp',
  initCwnd: 10,
  g: 1 / 16,
  minRtoNs: 200_000,
  maxRtoNs: 20_000_000,
  dupAcks: 3,
};

/** Minimum window in frames (Linux DCTCP keeps at least 2). */
const MIN_CWND = 2;

class SendFlow implements SenderStats {
  sndUna = 0;
  sndNxt = 0;
  highSent = 0;
  cwnd: number;
  ssthresh = Number.POSITIVE_INFINITY;
  dup = 0;
  inRecovery = false;
  recover = 0;
  alpha = 1;
  windowEnd = 0;
  acksInWindow = 0;
  markedInWindow = 0;
  cutInWindow = false;
  srtt = 0;
  rttvar = 0;
  rto: number;
  rtoDeadline = 0;
  rtoTimer: Timer | null = null;
  /** node time the pending RTO timer fires at */
  rtoTimerAt = 0;
  timedSeq = -1;
  timedAt = 0;
  retransmits = 0;
  timeouts = 0;
  framesSent = 0;
  done = false;
  /** a window an allocator holds (frames), or 0: congestion control sets it */
  held = 0;
  /** the allocator's pace for new data, bit/s of wire bytes (0: none), and when the next may go */
  paceBps = 0;
  nextSendAt = 0;
  paceTimer: Timer | null = null;
  /** waiting for its bytes in the qdisc and NIC to leave (TCP small queues) */
  tsqWaiting = false;
  /** tcp_cwnd_validate's memory: whether the window limited the flow, the most in flight, until when */
  cwndLimited = false;
  maxOut = 0;
  usageSeq = 0;
  readonly nSeg: number;

  constructor(
    readonly spec: FlowSpec,
    cfg: BaselineTransportConfig,
  ) {
    this.nSeg = segmentCount(spec.size);
    this.cwnd = cfg.initCwnd;
    // no RTT sample yet: start conservatively (RFC 6298 uses 1 s against a 200 ms floor, 5x)
    this.rto = 5 * cfg.minRtoNs;
  }

  segBytes(seq: number): number {
    return segmentBytes(this.spec.size, seq);
  }
}

class RecvFlow {
  readonly got: Uint8Array;
  cum = 0;
  count = 0;
  done = false;
  /** physical time a segment not seen before last arrived */
  lastNew = -1;
  readonly via: number[] = [];

  constructor(
    readonly id: number,
    readonly src: number,
    readonly nSeg: number,
  ) {
    this.got = new Uint8Array(nSeg);
  }
}

export class BaselineTransport implements Transport {
  /**
   * An allocator's hold on a flow's window: while held, the window is the allocator's and congestion
   * control only watches (DCTCP's alpha still moves); released, it resumes from the window given, in
   * congestion avoidance.
   */
  readonly windows: WindowControl = {
    hold: (id, frames, rateBps, now) => {
      const fl = this.senders.get(id);
      if (fl === undefined || fl.done) return;
      fl.held = Math.max(1, frames);
      fl.paceBps = Math.max(rateBps, 0);
      this.trySend(fl, now);
    },
    release: (id, frames, now) => {
      const fl = this.senders.get(id);
      if (fl === undefined || fl.done || fl.held === 0) return;
      fl.held = 0;
      fl.paceBps = 0;
      this.c.clock.cancel(fl.paceTimer);
      fl.paceTimer = null;
      fl.cwnd = Math.max(MIN_CWND, frames);
      fl.ssthresh = fl.cwnd;
      fl.inRecovery = false;
      this.trySend(fl, now);
    },
  };
  private readonly senders = new Map<number, SendFlow>();
  private readonly receivers = new Map<number, RecvFlow>();
  private readonly cfg: BaselineTransportConfig;
  /** the receive window in full frames (at least one) */
  private readonly rwndFrames: number;
  /** the socket send buffer in full frames (at least two), or infinity */
  private readonly sndbufFrames: number;
  /** TCP small queues' cap, bytes (0: off) */
  private readonly tsqCap: number;
  private readonly validate: boolean;

  constructor(
    cfg: TransportConfig,
    private readonly c: TransportComponents,
  ) {
    if (cfg.kind !== 'baseline') throw new TypeError(`baseline transport given a '${cfg.kind}' config`);
    this.cfg = cfg;
    this.rwndFrames =
      cfg.rwndBytes === undefined
        ? Number.POSITIVE_INFINITY
        : Math.max(1, Math.floor(cfg.rwndBytes / WireSize.Mss));
    const stack = c.stack;
    this.sndbufFrames =
      stack === undefined || stack.sendBufferBytes <= 0
        ? Number.POSITIVE_INFINITY
        : Math.max(MIN_CWND, Math.floor(stack.sendBufferBytes / WireSize.Mss));
    this.tsqCap =
      stack !== undefined && stack.smallQueueBytes > 0 && c.nic.flowBacklog !== undefined
        ? stack.smallQueueBytes
        : 0;
    this.validate = stack?.cwndValidation === true;
  }

  startFlow(spec: FlowSpec, now: number): void {
    const fl = new SendFlow(spec, this.cfg);
    this.senders.set(spec.id, fl);
    this.trySend(fl, now);
    this.armRto(fl, now);
  }

  /**
   * Closing a flow whose every frame was sent once is a plain close: the rest is repaired as usual and
   * it completes. Otherwise what was never sent never will be, and the flow goes quiet.
   */
  endFlow(id: number): boolean {
    const fl = this.senders.get(id);
    if (fl === undefined || fl.done || fl.highSent >= fl.nSeg) return false;
    // `done` silences the flow's acks and timers: no new data, no retransmission
    fl.done = true;
    this.c.clock.cancel(fl.rtoTimer);
    this.c.clock.cancel(fl.paceTimer);
    fl.rtoTimer = null;
    fl.paceTimer = null;
    return true;
  }

  senderStats(id: number): SenderStats | undefined {
    return this.senders.get(id);
  }

  partialPaths(): Array<[number, number[], number]> {
    const out: Array<[number, number[], number]> = [];
    for (const [id, r] of this.receivers) if (!r.done) out.push([id, r.via.slice(), r.lastNew]);
    return out;
  }

  onFrame(frame: Frame, now: number): void {
    if (frame.t === FrameType.Data) this.onData(frame, now);
    else if (frame.t === FrameType.Ack) this.onAck(frame, now);
  }

  stop(): void {
    for (const fl of this.senders.values()) {
      this.c.clock.cancel(fl.rtoTimer);
      this.c.clock.cancel(fl.paceTimer);
    }
  }

  // ---- receiver ----

  private onData(f: Frame, now: number): void {
    let r = this.receivers.get(f.f);
    if (r === undefined) {
      const size = typeof f.x === 'number' && f.x > 0 ? f.x : WireSize.Mss;
      r = new RecvFlow(f.f, f.s, segmentCount(size));
      this.receivers.set(f.f, r);
    }
    const seq = f.q;
    if (seq >= 0 && seq < r.nSeg && r.got[seq] === 0) {
      r.got[seq] = 1;
      r.count++;
      r.lastNew = now;
      while (r.cum < r.nSeg && r.got[r.cum] === 1) r.cum++;
    }
    if (f.v !== 0 && !r.via.includes(f.v)) r.via.push(f.v);
    const ack = makeFrame({
      t: FrameType.Ack,
      s: this.c.hostId,
      d: f.s,
      f: f.f,
      q: r.cum,
      z: WireSize.Small,
      p: Priority.BestEffort,
      x: f.e === Ecn.Ce ? 1 : 0,
    });
    this.c.nic.send(ack);
    if (!r.done && r.count === r.nSeg) {
      r.done = true;
      this.c.delivered(r.id, now, r.via);
    }
  }

  // ---- sender ----

  private onAck(f: Frame, now: number): void {
    const fl = this.senders.get(f.f);
    if (fl === undefined || fl.done) return;
    const cum = f.q;
    if (this.cfg.cc === 'dctcp') this.dctcp(fl, cum, f.x === 1);
    if (cum > fl.sndUna) {
      const newly = cum - fl.sndUna;
      fl.sndUna = cum;
      fl.dup = 0;
      if (fl.timedSeq >= 0 && cum > fl.timedSeq) {
        this.rttSample(fl, now - fl.timedAt);
        fl.timedSeq = -1;
      }
      if (fl.inRecovery) {
        if (cum >= fl.recover) {
          fl.inRecovery = false;
          fl.cwnd = Math.max(MIN_CWND, fl.ssthresh);
        } else {
          this.transmit(fl, fl.sndUna, now); // partial ack: the next hole (NewReno)
        }
      } else if (this.validate && !this.cwndLimited(fl)) {
        // the window did not limit the flow (its send buffer, small queues or the application did):
        // it does not grow (Linux's tcp_is_cwnd_limited)
      } else if (fl.cwnd < fl.ssthresh) {
        fl.cwnd += newly;
      } else {
        fl.cwnd += newly / fl.cwnd;
      }
      if (fl.sndNxt < fl.sndUna) fl.sndNxt = fl.sndUna;
      if (fl.sndUna >= fl.nSeg) {
        fl.done = true;
        this.c.clock.cancel(fl.rtoTimer);
        this.c.clock.cancel(fl.paceTimer);
        fl.rtoTimer = null;
        fl.paceTimer = null;
        this.c.acked(fl.spec.id, now);
        return;
      }
      fl.rtoDeadline = now + fl.rto;
      // the RTO shrank (first RTT sample, or a sample after back-off): the lazy timer would fire late
      if (fl.rtoDeadline < fl.rtoTimerAt) {
        this.c.clock.cancel(fl.rtoTimer);
        this.armRto(fl, now);
      }
    } else if (cum === fl.sndUna && fl.highSent > fl.sndUna) {
      fl.dup++;
      if (fl.dup === this.cfg.dupAcks && !fl.inRecovery) {
        fl.ssthresh = Math.max(fl.cwnd / 2, MIN_CWND);
        fl.cwnd = fl.ssthresh;
        fl.inRecovery = true;
        fl.recover = fl.highSent;
        this.transmit(fl, fl.sndUna, now);
      }
    }
    this.trySend(fl, now);
  }

  /** DCTCP: one ack per received frame, so alpha is the fraction of marked acks per window. */
  private dctcp(fl: SendFlow, cum: number, ece: boolean): void {
    fl.acksInWindow++;
    if (ece) {
      fl.markedInWindow++;
      if (!fl.cutInWindow) {
        fl.cwnd = Math.max(MIN_CWND, fl.cwnd * (1 - fl.alpha / 2));
        fl.ssthresh = fl.cwnd;
        fl.cutInWindow = true;
      }
    }
    if (cum >= fl.windowEnd) {
      const g = this.cfg.g;
      fl.alpha = (1 - g) * fl.alpha + (g * fl.markedInWindow) / fl.acksInWindow;
      fl.acksInWindow = 0;
      fl.markedInWindow = 0;
      fl.cutInWindow = false;
      fl.windowEnd = fl.sndNxt;
    }
  }

  /** tcp_is_cwnd_limited: the window limited the flow lately, or in slow start it is under twice the most in flight */
  private cwndLimited(fl: SendFlow): boolean {
    return fl.cwndLimited || (fl.cwnd < fl.ssthresh && fl.cwnd < 2 * fl.maxOut);
  }

  /**
   * TCP small queues' limit for a flow (tcp_small_queue_check): two frames, or its pacing rate's worth
   * of 2^-10 s (sk_pacing_shift 10, ~1 ms), at most the cap. The pacing rate is Linux's
   * (tcp_update_pacing_rate): 200% of window / srtt in slow start (below half of ssthresh), 120% after;
   * before the first RTT sample it is unbounded, so the cap holds. A held flow's is its allocator's rate.
   */
  private tsqLimit(fl: SendFlow): number {
    let rateBytesPerS: number;
    if (fl.held > 0 && fl.paceBps > 0) rateBytesPerS = fl.paceBps / 8;
    else if (fl.srtt <= 0) return this.tsqCap;
    else {
      const ratio = fl.cwnd < fl.ssthresh / 2 ? 2 : 1.2;
      const frames = Math.max(fl.cwnd, fl.sndNxt - fl.sndUna);
      rateBytesPerS = (ratio * frames * WireSize.Mss * 1e9) / fl.srtt;
    }
    return Math.min(this.tsqCap, Math.max(2 * WireSize.Mtu, rateBytesPerS / 1024));
  }

  /** a throttled flow's bytes left the NIC (TSQ's tcp_wfree): it sends again */
  private readonly onDrained = (id: number): void => {
    const fl = this.senders.get(id);
    if (fl === undefined || !fl.tsqWaiting) return;
    fl.tsqWaiting = false;
    if (!fl.done) this.trySend(fl, this.c.clock.now());
  };

  private trySend(fl: SendFlow, now: number): void {
    if (fl.tsqWaiting) return;
    const cwnd = fl.held > 0 ? fl.held : Math.floor(fl.cwnd);
    const win = Math.min(cwnd, this.rwndFrames, this.sndbufFrames);
    const sentBefore = fl.sndNxt;
    while (fl.sndNxt < fl.nSeg && fl.sndNxt - fl.sndUna < win) {
      // TCP small queues: over its limit, a flow with more than one frame unacknowledged waits for
      // its frames to leave the NIC
      if (
        this.tsqCap > 0 &&
        fl.sndNxt - fl.sndUna > 1 &&
        this.c.nic.flowBacklog!(fl.spec.id) > this.tsqLimit(fl)
      ) {
        fl.tsqWaiting = true;
        this.c.nic.throttle!(fl.spec.id, this.onDrained);
        break;
      }
      if (fl.paceBps > 0) {
        // paced: new data no sooner than one frame-time at the rate after the last (no burst credit)
        if (now < fl.nextSendAt) {
          if (fl.paceTimer === null) fl.paceTimer = this.c.clock.at(fl.nextSendAt, this.onPaceTimer, fl);
          return;
        }
        fl.nextSendAt = Math.max(fl.nextSendAt, now) + (fl.segBytes(fl.sndNxt) * 8e9) / fl.paceBps;
      }
      this.transmit(fl, fl.sndNxt, now);
      fl.sndNxt++;
    }
    if (this.validate && (fl.sndNxt > sentBefore || fl.sndNxt - fl.sndUna >= cwnd))
      this.cwndValidate(fl, cwnd);
  }

  /** tcp_cwnd_validate: remember, for the rest of the flight, whether the window was full */
  private cwndValidate(fl: SendFlow, cwnd: number): void {
    const out = fl.sndNxt - fl.sndUna;
    const limited = out >= cwnd;
    if (fl.sndUna >= fl.usageSeq || limited || (!fl.cwndLimited && out > fl.maxOut)) {
      fl.cwndLimited = limited;
      fl.maxOut = out;
      fl.usageSeq = fl.sndNxt;
    }
  }

  private readonly onPaceTimer = (now: number, fl: SendFlow): void => {
    fl.paceTimer = null;
    if (!fl.done) this.trySend(fl, now);
  };

  private transmit(fl: SendFlow, seq: number, now: number): void {
    fl.framesSent++;
    if (seq < fl.highSent) {
      fl.retransmits++;
      if (fl.timedSeq >= 0) fl.timedSeq = -1; // Karn: never time a retransmitted frame
    } else {
      fl.highSent = seq + 1;
      if (fl.timedSeq < 0) {
        fl.timedSeq = seq;
        fl.timedAt = now;
      }
    }
    const data = makeFrame({
      t: FrameType.Data,
      s: this.c.hostId,
      d: fl.spec.dst,
      f: fl.spec.id,
      q: seq,
      z: fl.segBytes(seq),
      p: Priority.BestEffort,
      // Reno's frames are not ECN-capable: switches never mark them, they fill the buffer until a drop
      e: this.cfg.cc === 'dctcp' ? Ecn.Ect : Ecn.NotEct,
      x: fl.spec.size,
    });
    this.c.nic.send(data);
  }

  private rttSample(fl: SendFlow, sample: number): void {
    if (fl.srtt === 0) {
      fl.srtt = sample;
      fl.rttvar = sample / 2;
    } else {
      fl.rttvar = 0.75 * fl.rttvar + 0.25 * Math.abs(fl.srtt - sample);
      fl.srtt = 0.875 * fl.srtt + 0.125 * sample;
    }
    fl.rto = Math.min(this.cfg.maxRtoNs, Math.max(this.cfg.minRtoNs, fl.srtt + 4 * fl.rttvar));
  }

  /** One timer per flow, pushed forward lazily: acks only move the deadline. */
  private armRto(fl: SendFlow, now: number): void {
    fl.rtoDeadline = now + fl.rto;
    fl.rtoTimerAt = fl.rtoDeadline;
    fl.rtoTimer = this.c.clock.at(fl.rtoDeadline, this.onRtoTimer, fl);
  }

  private readonly onRtoTimer = (now: number, fl: SendFlow): void => {
    fl.rtoTimer = null;
    if (fl.done) return;
    if (now < fl.rtoDeadline) {
      fl.rtoTimerAt = fl.rtoDeadline;
      fl.rtoTimer = this.c.clock.at(fl.rtoDeadline, this.onRtoTimer, fl);
      return;
    }
    // timeout: collapse the window, back off, go back to the first unacknowledged frame
    fl.timeouts++;
    fl.ssthresh = Math.max(fl.cwnd / 2, MIN_CWND);
    fl.cwnd = 1;
    fl.inRecovery = false;
    fl.dup = 0;
    fl.sndNxt = fl.sndUna;
    fl.rto = Math.min(this.cfg.maxRtoNs, fl.rto * 2);
    this.trySend(fl, now);
    this.armRto(fl, now);
  };
}
