/**
 * The UDP transport: unreliable, uncontrolled traffic for failure studies. F10 §7.2 sends UDP "so that
 * we can more precisely measure the impact of the failure on load": no acks, no retransmissions, no
 * congestion control, so every lost frame stays lost and the sending rate never reacts to the network.
 *
 * Sender: one send pump for the whole host serves its active flows round-robin, one frame each turn,
 * at min(rateBps, NIC line rate). It never overflows the NIC by itself: it keeps at most
 * `NIC_BACKLOG_BYTES` of data waiting in the NIC, and when that is full it sleeps until about one
 * frame is left (a burst of a few frames per wake at line rate), so all loss is in the network. Under
 * a rate cap below the line rate it also spends byte credit earned at the cap, at most one frame ahead.
 * With `flowRateBps` every flow is also a paced stream at that rate (a constant-bit-rate sender, as an
 * ON period of a streaming source): a flow's next frame waits until a frame time at its rate after
 * its last, and the pump serves the flows whose time has come, round-robin. An ON period of an ON/OFF
 * source (a flow with `gaps`, host/onoff.ts) is paced by its own drawn gaps instead, open loop: its
 * k-th packet is due at the sum of the first k-1 gaps after its start, however late the ones before
 * it left, and its packets carry `gaps.packet` bytes on the wire each.
 *
 * Receiver: counts the distinct frames of each flow. A flow is delivered once, when its last sequence
 * number arrives (frames are sent in order, so that is its last byte; having all frames implies it),
 * even if earlier frames were lost; frames arriving later (reordered) are still counted. A flow whose
 * last frame is lost is never delivered, but its frame count is still reported.
 */

import { Ecn, type Frame, FrameType, makeFrame, Priority, WireSize } from '../../core/frame.js';
import type { FlowSpec, UdpTransportConfig } from '../../core/messages.js';
import type { Timer } from '../../core/scheduler.js';
import { GapStream, packetPayload } from '../onoff.js';
import {
  type Nic,
  type SenderStats,
  segmentBytes,
  segmentCount,
  type Transport,
  type TransportComponents,
} from './types.js';

export const UDP_DEFAULTS: UdpTransportConfig = { kind: 'udp', rateBps: 0 };

/**
 * Data the pump lets wait in the NIC: four full frames (4.8 µs at 10 Gbit/s). Far below any host
 * buffer, so the pump never drops its own frames; deep enough that the link keeps sending while the
 * pump sleeps, so one wake-up serves a few frames instead of one.
 */
export const NIC_BACKLOG_BYTES = 4 * WireSize.Mtu;
/** The pump wakes when this much is left waiting in the NIC: the link never idles between bursts. */
const REFILL_BYTES = WireSize.Mtu;
/** Under a rate cap, credit saved while idle or blocked: one frame, so the pump never runs ahead of the cap. */
const MAX_CREDIT_BYTES = WireSize.Mtu;

class SendFlow implements SenderStats {
  readonly retransmits = 0;
  readonly timeouts = 0;
  framesSent = 0;
  /** next sequence number to send */
  next = 0;
  /** paced flows: the node time its next frame may go */
  nextAt = 0;
  readonly nSeg: number;
  /** payload bytes per frame: an MSS, or an ON period's packet's */
  readonly mss: number;
  /** an ON period's packet gaps, in order */
  readonly gaps: GapStream | null;

  constructor(readonly spec: FlowSpec) {
    this.mss = spec.gaps ? packetPayload(spec.gaps.packet) : WireSize.Mss;
    this.gaps = spec.gaps ? new GapStream(spec.gaps) : null;
    this.nSeg = segmentCount(spec.size, this.mss);
  }

  segBytes(seq: number): number {
    return segmentBytes(this.spec.size, seq, this.mss);
  }
}

/**
 * What a data frame carries for the receiver to count frames by (`x`): the flow's size, or [size,
 * payload per frame] when its frames are not full MSS ones.
 */
type SizeHeader = number | [number, number];

function framesOf(x: unknown): number {
  if (typeof x === 'number' && x > 0) return segmentCount(x);
  if (Array.isArray(x) && x[0] > 0 && x[1] > 0) return segmentCount(x[0], x[1]);
  return 1;
}

class RecvFlow {
  readonly got: Uint8Array;
  frames = 0;
  done = false;
  /** physical time a frame not seen before last arrived */
  lastNew = -1;
  readonly via: number[] = [];

  constructor(readonly nSeg: number) {
    this.got = new Uint8Array(nSeg);
  }
}

export class UdpTransport implements Transport {
  private readonly senders = new Map<number, SendFlow>();
  private readonly receivers = new Map<number, RecvFlow>();
  /** flows with frames left to send, served round-robin: `turn` is the next one's index */
  private readonly active: SendFlow[] = [];
  private turn = 0;
  private wake: Timer | null = null;
  private readonly nicNsPerByte: number;
  /** the send rate, bit/s: min(cap, line rate) */
  readonly rateBps: number;
  /** a cap below the line rate: frames also wait for byte credit */
  private readonly capped: boolean;
  private credit: number = MAX_CREDIT_BYTES;
  private creditAt = 0;
  private readonly nic: Required<Nic>;
  /** per-flow pacing: ns per byte at the flow rate, 0 when unpaced */
  private readonly flowNsPerByte: number;
  /** some flow waits for its time (a flow rate, or an ON period's gaps): the pump looks at `nextAt` */
  private paced: boolean;

  constructor(
    cfg: UdpTransportConfig,
    private readonly c: TransportComponents,
  ) {
    const nicBps = c.nic.rateBps;
    if (nicBps === undefined || !(nicBps > 0) || c.nic.backlog === undefined)
      throw new TypeError(`udp transport: the NIC must give its rate and backlog, got rate ${nicBps} bit/s`);
    if (!(cfg.rateBps >= 0))
      throw new RangeError(`udp transport: rate must be >= 0 bit/s (0: NIC rate), got ${cfg.rateBps}`);
    this.nic = c.nic as Required<Nic>;
    this.nicNsPerByte = 8e9 / nicBps;
    this.capped = cfg.rateBps > 0 && cfg.rateBps < nicBps;
    this.rateBps = this.capped ? cfg.rateBps : nicBps;
    const flowBps = cfg.flowRateBps ?? 0;
    if (!(flowBps >= 0))
      throw new RangeError(`udp transport: flowRate must be >= 0 bit/s (0: unpaced), got ${flowBps}`);
    this.flowNsPerByte = flowBps > 0 ? 8e9 / flowBps : 0;
    this.paced = this.flowNsPerByte > 0;
  }

  startFlow(spec: FlowSpec, now: number): void {
    const fl = new SendFlow(spec);
    fl.nextAt = now;
    this.senders.set(spec.id, fl);
    this.active.push(fl);
    if (fl.gaps !== null) this.paced = true;
    // a paced pump may sleep until another flow's next frame: this one's first is due now
    if (this.wake !== null && this.paced) {
      this.c.clock.cancel(this.wake);
      this.wake = null;
    }
    if (this.wake === null) this.pump(now);
  }

  senderStats(id: number): SenderStats | undefined {
    return this.senders.get(id);
  }

  receivedFrames(): Array<[number, number]> {
    return Array.from(this.receivers, ([id, r]): [number, number] => [id, r.frames]);
  }

  partialPaths(): Array<[number, number[], number]> {
    const out: Array<[number, number[], number]> = [];
    for (const [id, r] of this.receivers) if (!r.done) out.push([id, r.via.slice(), r.lastNew]);
    return out;
  }

  onFrame(f: Frame, now: number): void {
    if (f.t !== FrameType.Data) return;
    let r = this.receivers.get(f.f);
    if (r === undefined) {
      r = new RecvFlow(framesOf(f.x));
      this.receivers.set(f.f, r);
    }
    const seq = f.q;
    if (seq >= 0 && seq < r.nSeg && r.got[seq] === 0) {
      r.got[seq] = 1;
      r.frames++;
      r.lastNew = now;
    }
    if (f.v !== 0 && !r.via.includes(f.v)) r.via.push(f.v);
    if (!r.done && r.got[r.nSeg - 1] === 1) {
      r.done = true;
      this.c.delivered(f.f, now, r.via);
    }
  }

  stop(): void {
    this.c.clock.cancel(this.wake);
    this.wake = null;
    this.active.length = 0;
  }

  // ---- the send pump ----

  private readonly onWake = (now: number): void => {
    this.wake = null;
    this.pump(now);
  };

  /** Sends frames round-robin until the flows are done, the NIC holds its share or credit runs out. */
  private pump(now: number): void {
    if (this.capped) this.earn(now);
    while (this.active.length > 0) {
      // past the end: the round is over (a flow that joins now is served before the next round starts)
      let i = this.turn < this.active.length ? this.turn : 0;
      if (this.paced) {
        i = this.due(i, now);
        if (i < 0) return;
      }
      const fl = this.active[i];
      const z = fl.segBytes(fl.next);
      const waiting = this.nic.backlog();
      if (waiting + z > NIC_BACKLOG_BYTES) {
        // the NIC backlog is measured in physical time; over a few µs the node clock's drift is nil
        this.sleep(now, (waiting - REFILL_BYTES) * this.nicNsPerByte);
        return;
      }
      // (the slack absorbs rounding: a wake-up computed to the nanosecond must find the credit there)
      if (this.capped && this.credit < z - 1e-6) {
        this.sleep(now, ((z - this.credit) * 8e9) / this.rateBps);
        return;
      }
      this.send(fl, z);
      if (this.capped) this.credit -= z;
      if (fl.gaps !== null) fl.nextAt += fl.gaps.next();
      else if (this.flowNsPerByte > 0) fl.nextAt = Math.max(fl.nextAt, now) + z * this.flowNsPerByte;
      if (fl.next === fl.nSeg) this.active.splice(i, 1);
      this.turn = fl.next === fl.nSeg ? i : i + 1;
    }
  }

  /**
   * Paced flows: the first active flow from `from` on whose next frame is due by `now`; when none is,
   * the pump sleeps until the earliest is and -1 is returned.
   */
  private due(from: number, now: number): number {
    const n = this.active.length;
    let earliest = Number.POSITIVE_INFINITY;
    for (let k = 0; k < n; k++) {
      const i = (from + k) % n;
      const at = this.active[i].nextAt;
      if (at <= now) return i;
      earliest = Math.min(earliest, at);
    }
    this.sleep(now, earliest - now);
    return -1;
  }

  private send(fl: SendFlow, z: number): void {
    const x: SizeHeader = fl.mss === WireSize.Mss ? fl.spec.size : [fl.spec.size, fl.mss];
    const frame = makeFrame({
      t: FrameType.Data,
      s: this.c.hostId,
      d: fl.spec.dst,
      f: fl.spec.id,
      q: fl.next,
      z,
      p: Priority.BestEffort,
      e: Ecn.NotEct,
      x,
    });
    fl.next++;
    fl.framesSent++;
    // only other traffic on the NIC (PTP) could fill a buffer this far above the pump's backlog
    if (!this.nic.send(frame)) this.c.metrics.inc('udpNicDrops');
  }

  /** Byte credit at the capped rate since the last look, saving at most one frame. */
  private earn(now: number): void {
    this.credit = Math.min(MAX_CREDIT_BYTES, this.credit + ((now - this.creditAt) * this.rateBps) / 8e9);
    this.creditAt = now;
  }

  private sleep(now: number, dt: number): void {
    this.wake = this.c.clock.at(now + Math.max(1, Math.ceil(dt)), this.onWake);
  }
}
