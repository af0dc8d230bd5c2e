/**
 * The Fastpass client (SIGCOMM'14 §6.1, §5.3): a qdisc under the host's unchanged transport. Every
 * packet the transport hands the NIC waits in a per-destination queue; the qdisc asks the arbiter for
 * timeslots with FCP (cumulative counts per destination, gathered over `aggregate`, sent to every
 * arbiter as §5.1's multicast) and, at the start of each allocated timeslot on the node clock, sends
 * the packets at the head of that destination's queue that fit in one timeslot (greedy packing of
 * small packets, §6.1), each with the source route the arbiter chose (§4).
 *
 * Counting: packets are grouped into timeslots as they arrive, the same greedy packing the send uses,
 * so the count asked for is exactly the timeslots the queue needs. The arbiter's counts tell a lost
 * allocation (allocated beyond what arrived: ask for that many again) and an unacknowledged request
 * (asked again after `timeout`, by the next spine's route). A timeslot reached more than `late` after
 * its start is not used and is asked for again (§6.3); a RESET from an arbiter (a new session, or a
 * new primary at a higher term) drops the old session's timeslots and asks again from the queues.
 * A data packet the transport sends again carries the spine its copy before took; its receiver
 * judges what was lost (the data, or the acknowledgement) and reports that spine to the fault
 * isolation service with its next request (§5.2).
 */

import {
  type Frame,
  FrameType,
  Histogram,
  type HistogramSnapshot,
  makeFrame,
  type Nic,
  type NodeClock,
  Priority,
  type Timer,
  WireSize,
} from '../../../sdk/node.js';
import {
  type FastpassHostConfig,
  Fcp,
  type FcpCount,
  type FcpMessage,
  fcpBytes,
  isFcp,
  LossKind,
  type LossReport,
  MAX_LOSS_REPORTS,
} from '../wire.js';
import type { MessageHost } from './messages.js';

/** The host's report section, read by schemes/fastpass/definition/. */
export interface FastpassHostSection {
  requests: number;
  fcpBytesOut: number;
  fcpBytesIn: number;
  /** data and ack bytes sent in timeslots */
  payloadBytes: number;
  timeslotsAllocated: number;
  timeslotsUsed: number;
  /** allocated timeslots the queue had nothing for */
  timeslotsUnused: number;
  /** timeslots reached too late to use, asked for again (§6.3) */
  late: number;
  /** allocations the arbiter's counts showed lost on the way */
  allocationsLost: number;
  resets: number;
  /** timeslot requests (each queued packet group) until their allocation arrived, node ns */
  allocationLatency: HistogramSnapshot;
  /** packets the qdisc dropped: its limit reached */
  dropped: number;
  /** data packets sent again (a loss), and the losses reported with the spine they crossed */
  retransmitted: number;
  lossReports: number;
  /** receiving side: physical times segments arrived whose copy before was lost in the fabric */
  dataLost: number[];
  /** [physical time, arbiter id, term] of every session start */
  sessions: Array<[number, number, number]>;
  /** physical time of the first packet sent after each session start (-1: none yet) */
  firstSend: number[];
  /** packets waiting at the end */
  queued: number;
  unknownFrames: number;
}

class DstQueue {
  readonly frames: Frame[] = [];
  head = 0;
  bytes = 0;
  /** bytes in the youngest timeslot group (MTU + 1: closed) */
  tailFill = WireSize.Mtu + 1;
  /** groups of this session: asked for (cumulative), acknowledged by the arbiter, allocations arrived */
  requested = 0;
  acked = 0;
  received = 0;
  /** node times the groups waiting for an allocation were asked for, oldest first */
  readonly askedAt: number[] = [];

  get length(): number {
    return this.frames.length - this.head;
  }

  /**
   * Places `z` bytes in the youngest timeslot group, the greedy packing the send uses; true when they
   * open a new group (one more timeslot to ask for).
   */
  place(z: number): boolean {
    if (this.tailFill + z > WireSize.Mtu) {
      this.tailFill = z;
      return true;
    }
    this.tailFill += z;
    return false;
  }

  /** no more bytes join the youngest group: the next ones start a timeslot of their own */
  closeGroup(): void {
    this.tailFill = WireSize.Mtu + 1;
  }

  /** one more group to ask a timeslot for, asked at node time `now` */
  addGroup(now: number): void {
    this.requested++;
    this.askedAt.push(now);
  }

  push(f: Frame): void {
    this.frames.push(f);
    this.bytes += f.z;
  }

  shift(): Frame {
    const f = this.frames[this.head];
    this.frames[this.head++] = undefined as unknown as Frame;
    if (this.head > 1024 && this.head * 2 > this.frames.length) {
      this.frames.splice(0, this.head);
      this.head = 0;
    }
    this.bytes -= f.z;
    return f;
  }
}

/** A data segment sent again carries the spine its copy before crossed, around the transport's field. */
const RESENT = 'fpResent';
interface Resent {
  [RESENT]: unknown;
  via: number;
  /** when the transport sent it again (the sender's node clock): it had not heard an ack by then */
  at: number;
}

/** a key for a data packet: its flow and segment */
const packetKey = (f: Frame): number => f.f * 0x100000 + (f.q & 0xfffff);
/** packets remembered for loss reports; beyond, the oldest are forgotten */
const SENT_MEMORY = 1 << 18;
/** how long an acknowledgement may take to reach its sender: fabric crossings and clock error, with slack */
const ACK_DUE_NS = 50_000;
/** data losses a receiver keeps the time of, for the summary */
const MAX_LOSS_TIMES = 10_000;
/** acknowledgements remembered per flow */
const ACK_MEMORY = 4096;

export class FastpassQdisc {
  /** the NIC the transport above sees */
  readonly nic: Nic;
  private readonly queues = new Map<number, DstQueue>();
  private nonce = 0;
  private term = -1;
  private arbiter = -1;
  private route = 0;
  private requestTimer: Timer | null = null;
  private timeoutTimer: Timer | null = null;
  /** node time an allocation or acknowledgement of this session last arrived */
  private lastHeard = 0;
  private totalBytes = 0;
  /** allocated timeslots waiting for their start, by timeslot (a source sends once per timeslot) */
  private readonly slotTimers = new Map<number, Timer>();
  private readonly latency = new Histogram();
  /** data packets sent: the spine each crossed (-1: inside the rack) */
  private readonly sentVia = new Map<number, number>();
  /** loss evidence for the next request */
  private readonly losses: LossReport[] = [];
  /** receiving side, per flow: segments received (a bitmap), and the acknowledgements sent: [cum, spine] */
  private readonly got = new Map<number, Uint8Array>();
  private readonly acksSent = new Map<number, Array<[number, number, number]>>();
  private readonly stats: Omit<FastpassHostSection, 'allocationLatency' | 'queued'>;
  /** message mode: the messages asked for beside the queues' counts (Harmony's footnote 3) */
  private messages: MessageHost | null = null;

  constructor(
    private readonly cfg: FastpassHostConfig,
    private readonly hostId: number,
    private readonly clock: NodeClock,
    private readonly raw: Nic,
    /** physical time now, for the report */
    private readonly physNow: () => number,
  ) {
    // FCP frames are not scheduled: spread them over the spines, each host its own first route
    this.route = hostId;
    this.nic = {
      send: (f) => this.enqueue(f),
      rateBps: raw.rateBps,
      backlog: () => this.totalBytes + (raw.backlog?.() ?? 0),
    };
    this.stats = {
      requests: 0,
      fcpBytesOut: 0,
      fcpBytesIn: 0,
      payloadBytes: 0,
      timeslotsAllocated: 0,
      timeslotsUsed: 0,
      timeslotsUnused: 0,
      late: 0,
      allocationsLost: 0,
      resets: 0,
      dropped: 0,
      retransmitted: 0,
      lossReports: 0,
      dataLost: [],
      sessions: [],
      firstSend: [],
      unknownFrames: 0,
    };
  }

  /** message mode: `m`'s messages are asked for with the requests, their timeslots handed to it */
  carry(m: MessageHost): void {
    this.messages = m;
  }

  private queue(dst: number): DstQueue {
    let q = this.queues.get(dst);
    if (q === undefined) this.queues.set(dst, (q = new DstQueue()));
    return q;
  }

  private enqueue(f: Frame): boolean {
    if (f.d === this.hostId || this.totalBytes + f.z > this.cfg.limitBytes) {
      this.stats.dropped++;
      return false;
    }
    if (f.t === FrameType.Data) {
      const via = this.sentVia.get(packetKey(f));
      if (via !== undefined) {
        // sent again: the receiver judges whether the copy before was lost, and on which spine
        this.stats.retransmitted++;
        if (via >= 0) f.x = { [RESENT]: f.x, via, at: this.clock.now() } satisfies Resent;
      }
    }
    const q = this.queue(f.d);
    q.push(f);
    this.totalBytes += f.z;
    if (q.place(f.z)) this.ask(q);
    return true;
  }

  /** one more timeslot group for `q`: asked for with the next request */
  private ask(q: DstQueue): void {
    q.addGroup(this.clock.now());
    this.requestSoon();
  }

  /** a request goes out after `aggregate`, with whatever else is asked meanwhile */
  requestSoon(): void {
    if (this.requestTimer === null)
      this.requestTimer = this.clock.after(this.cfg.aggregateNs, this.sendRequest);
  }

  private readonly sendRequest = (): void => {
    this.requestTimer = null;
    const d: Array<[number, number]> = [];
    for (const [dst, q] of this.queues)
      if (q.requested > q.acked || q.requested > q.received) d.push([dst, q.requested]);
    const l = this.losses.splice(0, MAX_LOSS_REPORTS);
    this.stats.lossReports += l.length;
    this.stats.requests++;
    const asks = this.messages?.asks() ?? [];
    const arbs = this.cfg.arbiters;
    for (const a of arbs) {
      const routes = a.routes;
      const ri = this.route % routes.length;
      const m: FcpMessage = { fp: Fcp.Request, n: this.nonce, d, ri, l };
      this.send(a.id, routes[ri], asks.length > 0 ? { ...m, m: asks } : m);
    }
    this.clock.cancel(this.timeoutTimer);
    this.timeoutTimer = this.clock.after(this.cfg.timeoutNs, this.onTimeout);
  };

  /**
   * FCP's timeout (§5.3): demand the arbiter has not acknowledged is asked again; demand it has but
   * did not serve while nothing was heard for a timeout is asked again too (its answer shows lost
   * allocations). Each retry takes the next spine's route.
   */
  private readonly onTimeout = (now: number): void => {
    this.timeoutTimer = null;
    let unacked = false;
    let waiting = false;
    for (const q of this.queues.values()) {
      if (q.requested > q.acked) unacked = true;
      if (q.requested > q.received) waiting = true;
    }
    if (this.messages !== null) {
      unacked ||= this.messages.unacked();
      waiting ||= this.messages.waiting();
    }
    // one expression for the test and the timer: `now - lastHeard < timeout` and a timer at
    // `lastHeard + timeout` can disagree in floating point, and the timer would fire at once, forever
    const due = this.lastHeard + this.cfg.timeoutNs;
    if (unacked || (waiting && now >= due)) {
      this.route++;
      this.sendRequest();
    } else if (waiting) {
      this.timeoutTimer = this.clock.at(due, this.onTimeout);
    }
  };

  private send(dst: number, route: number[], m: FcpMessage): void {
    const z = fcpBytes(m);
    const frame = makeFrame({
      t: FrameType.Control,
      s: this.hostId,
      d: dst,
      z,
      p: Priority.Control,
      r: route.slice(),
      x: m,
    });
    if (this.raw.send(frame)) this.stats.fcpBytesOut += z;
  }

  private lossSeen(spine: number, flow: number, seq: number, kind: number): void {
    if (this.losses.length >= 4 * MAX_LOSS_REPORTS) return;
    this.losses.push([spine, flow, seq, kind]);
    this.requestSoon();
  }

  /**
   * A data segment arrived (receiving side); a resend carries the spine its copy before crossed, and
   * the receiver judges (§5.2): a segment it never got was lost on that spine; one it had already
   * means the sender did not hear the acknowledgement that covered it — the first one sent with a
   * cumulative count beyond it — if that left long enough before the sender decided to send again (a
   * resend can wait long in the sender's qdisc, an acknowledgement can still be on its way). The
   * transport above gets the frame as it was sent.
   */
  received(f: Frame): void {
    const x = f.x as Resent | null;
    let via = -1;
    let resentAt = Number.NEGATIVE_INFINITY;
    if (typeof x === 'object' && x !== null && RESENT in x) {
      f.x = x[RESENT];
      via = Number.isInteger(x.via) ? x.via : -1;
      if (typeof x.at === 'number') resentAt = x.at;
    }
    if (!Number.isInteger(f.q) || f.q < 0 || f.q >= 1 << 24) return;
    let got = this.got.get(f.f);
    if (got === undefined || got.length * 8 <= f.q) {
      const grown = new Uint8Array(Math.max(64, 2 * Math.ceil((f.q + 1) / 8)));
      if (got) grown.set(got);
      this.got.set(f.f, (got = grown));
    }
    const bit = 1 << (f.q & 7);
    if ((got[f.q >> 3] & bit) === 0) {
      got[f.q >> 3] |= bit;
      if (via >= 0) {
        this.lossSeen(via, f.f, f.q, LossKind.Data);
        if (this.stats.dataLost.length < MAX_LOSS_TIMES) this.stats.dataLost.push(this.physNow());
      }
      return;
    }
    if (via < 0) return;
    const acks = this.acksSent.get(f.f);
    const ack = acks?.find(([cum]) => cum > f.q);
    if (ack && ack[2] + ACK_DUE_NS < resentAt) this.lossSeen(ack[1], f.f, f.q, LossKind.Ack);
  }

  /** an FCP frame for this host; false when it is none */
  onControl(frame: Frame, now: number): boolean {
    const m = frame.x;
    if (!isFcp(m)) return false;
    this.stats.fcpBytesIn += frame.z;
    if (m.fp === Fcp.Reset) {
      this.onReset(frame.s, m.n, m.t);
      return true;
    }
    if (
      (m.fp !== Fcp.Alloc && m.fp !== Fcp.Ack && m.fp !== Fcp.Reject) ||
      frame.s !== this.arbiter ||
      m.n !== this.nonce
    ) {
      // another session's (a stale or a secondary arbiter's): not ours
      this.stats.unknownFrames++;
      return true;
    }
    this.lastHeard = now;
    if (m.fp === Fcp.Reject) {
      this.messages?.rejected(m.m);
      return true;
    }
    if (m.fp === Fcp.Alloc)
      m.a.forEach((a, i) => {
        if (m.mf === undefined) this.allocated(now, a[0], a[1], a[2], a[3]);
        else if (this.messages?.allocated(now, a[0], m.mf[i], a[2])) this.stats.timeslotsAllocated++;
      });
    if (m.fp === Fcp.Ack && m.m !== undefined) this.messages?.acked(m.m);
    this.counts(m.c);
    return true;
  }

  private onReset(from: number, nonce: number, term: number): void {
    // a RESET of an older term (a primary that was away), or a repeated one, starts nothing
    const stale =
      term < this.term ||
      (term === this.term && (nonce === this.nonce || (this.arbiter >= 0 && from !== this.arbiter)));
    if (stale) {
      this.stats.unknownFrames++;
      return;
    }
    this.stats.resets++;
    this.nonce = nonce;
    this.term = term;
    this.arbiter = from;
    this.stats.sessions.push([this.physNow(), from, term]);
    this.stats.firstSend.push(-1);
    for (const t of this.slotTimers.values()) this.clock.cancel(t);
    this.slotTimers.clear();
    this.messages?.reset();
    const now = this.clock.now();
    this.lastHeard = now;
    for (const q of this.queues.values()) {
      // ask again for what the queue holds, grouped as the sends will take it
      q.requested = 0;
      q.acked = 0;
      q.received = 0;
      q.askedAt.length = 0;
      q.closeGroup();
      for (let i = q.head; i < q.frames.length; i++) if (q.place(q.frames[i].z)) q.addGroup(now);
    }
    this.clock.cancel(this.requestTimer);
    this.sendRequest();
  }

  private counts(c: FcpCount[]): void {
    let more = false;
    for (const [dst, requested, allocated] of c) {
      const q = this.queues.get(dst);
      if (q === undefined) continue;
      if (requested > q.acked) q.acked = Math.min(requested, q.requested);
      if (allocated > q.received && allocated <= q.requested) {
        // allocations sent before this count never arrived: their groups are asked for again
        const lost = allocated - q.received;
        this.stats.allocationsLost += lost;
        q.received = allocated;
        q.askedAt.splice(0, lost);
        for (let i = 0; i < lost; i++) q.addGroup(this.clock.now());
        more = true;
      }
    }
    if (more) this.requestSoon();
  }

  private allocated(now: number, slot: number, dst: number, route: number[], spine: number): void {
    const q = this.queues.get(dst);
    if (q === undefined) {
      this.stats.unknownFrames++;
      return;
    }
    this.stats.timeslotsAllocated++;
    q.received++;
    const asked = q.askedAt.shift();
    if (asked !== undefined) this.latency.record(now - asked);
    const start = slot * this.cfg.slotNs;
    if (now - start > this.cfg.lateNs) {
      this.tooLate(q);
      return;
    }
    this.clock.cancel(this.slotTimers.get(slot));
    this.slotTimers.set(slot, this.clock.at(start, this.fire, slot, { dst, route, spine }));
  }

  /** a timeslot passed unused: its group is asked for again */
  private tooLate(q: DstQueue): void {
    this.stats.late++;
    this.ask(q);
  }

  private readonly fire = (now: number, slotArg: unknown, entry: unknown): void => {
    const slot = slotArg as number;
    const { dst, route, spine } = entry as { dst: number; route: number[]; spine: number };
    this.slotTimers.delete(slot);
    const q = this.queues.get(dst)!;
    // a clock stepped forward past the timeslot: too late to send without queueing (§6.3)
    if (now - slot * this.cfg.slotNs > this.cfg.lateNs) {
      this.tooLate(q);
      return;
    }
    if (q.length === 0) {
      this.stats.timeslotsUnused++;
      return;
    }
    this.stats.timeslotsUsed++;
    const last = this.stats.firstSend.length - 1;
    if (last >= 0 && this.stats.firstSend[last] < 0) this.stats.firstSend[last] = this.physNow();
    let bytes = 0;
    while (q.length > 0 && (bytes === 0 || bytes + q.frames[q.head].z <= WireSize.Mtu)) {
      const f = q.shift();
      bytes += f.z;
      this.totalBytes -= f.z;
      f.r = route.slice();
      if (f.t === FrameType.Data) {
        if (this.sentVia.size >= SENT_MEMORY) this.sentVia.clear();
        this.sentVia.set(packetKey(f), spine);
      } else if (f.t === FrameType.Ack && spine >= 0) {
        let acks = this.acksSent.get(f.f);
        if (acks === undefined) this.acksSent.set(f.f, (acks = []));
        if (acks.length >= ACK_MEMORY) acks.splice(0, acks.length / 2);
        acks.push([f.q, spine, now]);
      }
      this.stats.payloadBytes += f.z;
      this.raw.send(f);
    }
    if (q.length === 0) q.closeGroup();
  };

  report(): FastpassHostSection {
    let queued = 0;
    for (const q of this.queues.values()) queued += q.length;
    return { ...this.stats, allocationLatency: this.latency.snapshot(), queued };
  }

  stop(): void {
    this.clock.cancel(this.requestTimer);
    this.clock.cancel(this.timeoutTimer);
    for (const t of this.slotTimers.values()) this.clock.cancel(t);
    this.slotTimers.clear();
  }
}
