/**
 * Message-level Fastpass on a host (Harmony NSDI'24, footnote 3): every flow is one message the host
 * sends itself, one MTU-sized packet per timeslot. The sender asks the arbiter for the message as a
 * whole ([flow, destination, timeslots] in the FCP request, asked again until acknowledged); the
 * arbiter allocates its timeslots consecutively, or rejects it once it has waited `admission`
 * unallocated. Each allocated timeslot sends the message's next packet at its start on the node clock,
 * with the arbiter's source route. The receiver delivers a message when every packet arrived, and
 * keeps the worst network queueing its packets met (`qd`, stamped by the switches: switch/stamp.ts).
 * There is no retransmission: no packet is lost in a fabric the arbiter keeps free of queues.
 */
import {
  type FlowSpec,
  type Frame,
  FrameType,
  makeFrame,
  type Nic,
  type NodeClock,
  Priority,
  segmentBytes,
  segmentCount,
  type Timer,
} from '../../../sdk/node.js';
import type { MessageAsk, MessageData } from '../wire.js';

/** The host's message section, read by schemes/fastpass/definition/. */
export interface MessageHostSection {
  submitted: number;
  /** rejected by the arbiter after waiting out the admission delay */
  rejected: number[];
  /** [flow, physical time its first packet left] */
  firstSent: Array<[number, number]>;
  /** timeslots whose allocation came after their start (sent anyway: a message's run is not cut) */
  late: number;
  /** timeslots a packet was sent in, and the bytes sent */
  used: number;
  bytes: number;
  /** receiving side: [flow, the worst network queueing any of its packets met, ns] */
  queueing: Array<[number, number]>;
}

class OutMessage {
  /** next packet to send */
  next = 0;
  /** the arbiter heard the request */
  acked = false;
  /** timeslots allocated and not yet reached */
  scheduled = 0;
  done = false;
  readonly nSeg: number;
  constructor(readonly spec: FlowSpec) {
    this.nSeg = segmentCount(spec.size);
  }
}

interface Slot {
  m: OutMessage;
  route: number[];
  timer: Timer | null;
}

class InMessage {
  count = 0;
  maxQueueingNs = 0;
  delivered = false;
  readonly via: number[] = [];
  constructor(readonly got: Uint8Array) {}
}

export class MessageHost {
  private readonly out = new Map<number, OutMessage>();
  private readonly in = new Map<number, InMessage>();
  /** allocated timeslots waiting for their start */
  private readonly timers = new Set<Slot>();
  private readonly s: Omit<MessageHostSection, 'queueing'> = {
    submitted: 0,
    rejected: [],
    firstSent: [],
    late: 0,
    used: 0,
    bytes: 0,
  };

  constructor(
    private readonly hostId: number,
    private readonly clock: NodeClock,
    private readonly raw: Nic,
    private readonly slotNs: number,
    private readonly lateNs: number,
    /** physical time now, for the report */
    private readonly physNow: () => number,
    /** a request should go out soon */
    private readonly ask: () => void,
    /** the receiving side saw the whole message */
    private readonly delivered: (id: number, now: number, via: number[]) => void,
  ) {}

  /** a flow to send: one message */
  submit(spec: FlowSpec): void {
    this.out.set(spec.id, new OutMessage(spec));
    this.s.submitted++;
    this.ask();
  }

  /** what the next request asks for: the messages the arbiter has not acknowledged */
  asks(): MessageAsk[] {
    const a: MessageAsk[] = [];
    for (const m of this.out.values()) {
      const left = m.nSeg - m.next - m.scheduled;
      if (!m.acked && !m.done && left > 0) a.push([m.spec.id, m.spec.dst, left]);
    }
    return a;
  }

  /** messages asked for and not acknowledged; messages acknowledged and waiting for timeslots */
  unacked(): boolean {
    for (const m of this.out.values()) if (!m.acked && !m.done && m.next + m.scheduled < m.nSeg) return true;
    return false;
  }

  waiting(): boolean {
    for (const m of this.out.values()) if (!m.done && m.next + m.scheduled < m.nSeg) return true;
    return false;
  }

  acked(flows: readonly number[]): void {
    for (const f of flows) {
      const m = this.out.get(f);
      if (m !== undefined) m.acked = true;
    }
  }

  rejected(flows: readonly number[]): void {
    for (const f of flows) {
      const m = this.out.get(f);
      if (m === undefined || m.done) continue;
      m.done = true;
      this.out.delete(f);
      this.s.rejected.push(f);
    }
  }

  /** a timeslot of message `flow`: its next packet goes at the timeslot's start */
  allocated(now: number, slot: number, flow: number, route: number[]): boolean {
    const m = this.out.get(flow);
    if (m === undefined || m.done) return false;
    m.acked = true;
    m.scheduled++;
    const start = slot * this.slotNs;
    if (now - start > this.lateNs) this.s.late++;
    const s: Slot = { m, route, timer: null };
    s.timer = this.clock.at(Math.max(start, now), this.fire, s);
    this.timers.add(s);
    return true;
  }

  private readonly fire = (_now: number, slot: unknown): void => {
    const { m, route } = slot as Slot;
    this.timers.delete(slot as Slot);
    m.scheduled--;
    if (m.next >= m.nSeg) return;
    const seq = m.next++;
    if (seq === 0) this.s.firstSent.push([m.spec.id, this.physNow()]);
    const z = segmentBytes(m.spec.size, seq);
    this.s.used++;
    this.s.bytes += z;
    if (m.next === m.nSeg) {
      m.done = true;
      this.out.delete(m.spec.id);
    }
    this.raw.send(
      makeFrame({
        t: FrameType.Data,
        s: this.hostId,
        d: m.spec.dst,
        f: m.spec.id,
        q: seq,
        z,
        p: Priority.BestEffort,
        r: route.slice(),
        x: { fm: m.spec.size, qd: 0 } satisfies MessageData,
      }),
    );
  };

  /** a new session: the timeslots of the old one are void, every unsent rest is asked for again */
  reset(): void {
    for (const s of this.timers) this.clock.cancel(s.timer);
    this.timers.clear();
    for (const m of this.out.values()) {
      m.scheduled = 0;
      m.acked = false;
    }
  }

  /** a message's packet arrived (receiving side) */
  received(f: Frame, x: MessageData): void {
    let m = this.in.get(f.f);
    if (m === undefined) this.in.set(f.f, (m = new InMessage(new Uint8Array(segmentCount(x.fm)))));
    if (x.qd > m.maxQueueingNs) m.maxQueueingNs = x.qd;
    if (!(f.q >= 0 && f.q < m.got.length) || m.got[f.q] === 1) return;
    m.got[f.q] = 1;
    m.count++;
    if (f.v !== 0 && !m.via.includes(f.v)) m.via.push(f.v);
    if (m.count === m.got.length && !m.delivered) {
      m.delivered = true;
      this.delivered(f.f, this.clock.now(), m.via);
    }
  }

  report(): MessageHostSection {
    const queueing: Array<[number, number]> = [];
    for (const [id, m] of this.in) queueing.push([id, m.maxQueueingNs]);
    return { ...this.s, queueing };
  }

  stop(): void {
    for (const s of this.timers) this.clock.cancel(s.timer);
    this.timers.clear();
  }
}
