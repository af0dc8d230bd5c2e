/**
 * The host stack under the baseline transport (host/qdisc/, host/transport/baseline.ts): Linux's
 * qdiscs one by one (pfifo_fast's bands and limit, fq's per-flow limit and control queue, fq_codel's
 * round robin, new-flow priority, overflow drop and CoDel), and a sender whose own NIC is its
 * bottleneck with each limit of the stack on and off: the send buffer, TCP small queues, the window
 * that grows only while it limits. One process, a manual scheduler, real egress ports, no sockets.
 */
// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { describe, expect, it } from 'vitest';
import { IdealClock } from '../core/clock.js';
import { Ecn, type Frame, FrameType, makeFrame, Priority, WireSize } from '../core/frame.js';
import type { FlowSpec, HostStackConfig, QdiscKind } from '../core/messages.js';
import { Metrics } from '../core/metrics.js';
import { EgressPort, type PortParams } from '../core/port.js';
import { Scheduler } from '../core/scheduler.js';
import { Fq } from '../host/qdisc/fq.js';
import { FqCodel } from '../host/qdisc/fq-codel.js';
import { createQdisc, TxLedger } from '../host/qdisc/index.js';
import { PFIFO_FAST_LIMIT, PfifoFast } from '../host/qdisc/pfifo-fast.js';
import { BASELINE_DEFAULTS, BaselineTransport } from '../host/transport/baseline.js';
import type { Nic, TransportComponents } from '../host/transport/types.js';
import { parseScenario } from '../orchestrator/scenario/load.js';
import { resolveScenario } from '../orchestrator/scenario/resolve.js';

const US = 1_000;
const MS = 1_000_000;
const RATE = 10e9;

const data = (flow: number, q = 0, z = 1500, e: number = Ecn.Ect): Frame =>
  makeFrame({ t: FrameType.Data, s: 0, d: 1, f: flow, q, z, p: Priority.BestEffort, e });

describe('pfifo_fast', () => {
  it('serves ACKs and control (band 0) before best effort (band 1), FIFO within a band', () => {
    const q = new PfifoFast(RATE);
    q.enqueue(data(1, 0), 0);
    q.enqueue(data(1, 1), 0);
    q.enqueue(makeFrame({ t: FrameType.Ack, s: 0, d: 1, f: 9, z: 64, p: Priority.Ack }), 0);
    q.enqueue(makeFrame({ t: FrameType.Ptp, s: 0, d: 1, z: 64, p: Priority.Control }), 0);
    expect([0, 1, 2, 3].map(() => q.dequeue(0)!.t)).toEqual([FrameType.Ack, FrameType.Ptp, 0, 0]);
    expect(q.length).toBe(0);
  });

  it('refuses the arrival beyond its 1,000 packets, counting each refusal as a drop', () => {
    const q = new PfifoFast(RATE);
    for (let i = 0; i < PFIFO_FAST_LIMIT; i++) expect(q.enqueue(data(1, i), 0)).toBe(true);
    expect(q.enqueue(data(2, 0), 0)).toBe(false);
    expect(q.enqueue(data(2, 1), 0)).toBe(false);
    expect(q.drops()).toBe(2);
    expect(q.drops()).toBe(0);
    expect(q.length).toBe(PFIFO_FAST_LIMIT);
  });
});

describe('fq', () => {
  it('drops a flow beyond its 100 packets, not another flow, and serves control frames first', () => {
    const q = new Fq(RATE);
    for (let i = 0; i < 100; i++) expect(q.enqueue(data(1, i), 0)).toBe(true);
    expect(q.enqueue(data(1, 100), 0)).toBe(false);
    expect(q.enqueue(data(2, 0), 0)).toBe(true);
    expect(q.enqueue(makeFrame({ t: FrameType.Ptp, s: 0, d: 1, z: 64, p: Priority.Control }), 0)).toBe(true);
    expect(q.drops()).toBe(1);
    expect(q.dequeue(0)!.t).toBe(FrameType.Ptp);
  });

  it('gives a new flow 10 MTUs of credit, then round robin by 2 MTUs', () => {
    const q = new Fq(RATE);
    for (let i = 0; i < 40; i++) q.enqueue(data(1, i), 0);
    for (let i = 0; i < 40; i++) q.enqueue(data(2, i), 0);
    const order = Array.from({ length: 24 }, () => q.dequeue(0)!.f);
    // flow 1's 15,140 B of credit is 11 frames of 1,500 (the 11th takes it below zero), then flow 2's
    expect(order.slice(0, 11)).toEqual(new Array(11).fill(1));
    expect(order.slice(11, 22)).toEqual(new Array(11).fill(2));
    // then 3,028 B a turn: flow 1 had -1,360 left, so one quantum gives it two frames (3,028 - 1,360 > 0)
    expect(order.slice(22)).toEqual([1, 1]);
  });
});

describe('fq_codel', () => {
  it('serves a flow that just became busy ahead of a backlogged one, then one quantum each', () => {
    const q = new FqCodel(RATE, 1);
    for (let i = 0; i < 20; i++) q.enqueue(data(1, i), 0);
    // a quantum of 1,514 B leaves 14 B after a frame: enough for a second (deficits go below zero)
    expect(q.dequeue(0)!.f).toBe(1);
    expect(q.dequeue(0)!.f).toBe(1);
    for (let i = 0; i < 3; i++) q.enqueue(data(2, i), 0);
    // the new flow first (two frames, as flow 1 had), then one frame a turn each (28, 42, ... B left)
    const order = Array.from({ length: 6 }, () => q.dequeue(0)!.f);
    expect(order).toEqual([2, 2, 1, 2, 1, 1]);
  });

  it('over its limit, drops from the head of the fattest flow until half of it is gone', () => {
    const q = new FqCodel(RATE, 1, { limit: 30 });
    for (let i = 0; i < 20; i++) q.enqueue(data(1, i), 0);
    for (let i = 0; i < 10; i++) q.enqueue(data(2, i), 0);
    expect(q.drops()).toBe(0);
    q.enqueue(data(2, 10), 0); // 31 > 30: flow 1 (30,000 B) loses its 10 oldest frames
    expect(q.drops()).toBe(10);
    expect(q.discarded()).toBe(15_000);
    expect(q.length).toBe(21);
    const firstOfOne = Array.from({ length: 21 }, () => q.dequeue(0)!).find((f) => f.f === 1)!;
    expect(firstOfOne.q).toBe(10);
  });

  it('CoDel: marks ECN-capable frames whose sojourn stayed above target for an interval; drops the others', () => {
    // target 5 µs and interval 100 µs here, so that a test can reach them
    const marks = new FqCodel(RATE, 1, { targetNs: 5 * US, intervalNs: 100 * US });
    const drops = new FqCodel(RATE, 1, { targetNs: 5 * US, intervalNs: 100 * US });
    for (let i = 0; i < 400; i++) {
      marks.enqueue(data(1, i), 0);
      drops.enqueue(data(1, i, 1500, Ecn.NotEct), 0);
    }
    // one frame a 1.2 µs: every sojourn is far above 5 µs; nothing happens before the first interval ends
    const clock = new Map<FqCodel, number>();
    const served = (q: FqCodel, n: number) => {
      const out: Frame[] = [];
      for (let i = 0; i < n; i++) {
        const k = clock.get(q) ?? 0;
        clock.set(q, k + 1);
        out.push(q.dequeue(10 * US + k * 1.2 * US)!);
      }
      return out;
    };
    // the first dequeue (10 µs) starts the interval: nothing until 110 µs (the 85th frame)
    const m = served(marks, 84);
    expect(marks.marks()).toBe(0);
    expect(m.every((f) => f.e === Ecn.Ect)).toBe(true);
    const later = served(marks, 100).length;
    expect(later).toBe(100);
    expect(marks.marks()).toBeGreaterThan(0);
    expect(marks.drops()).toBe(0);
    served(drops, 84);
    expect(drops.drops()).toBe(0);
    served(drops, 100);
    expect(drops.drops()).toBeGreaterThan(0);
    expect(drops.marks()).toBe(0);
  });

  it('a sojourn under target never drops, however long the queue stays', () => {
    const q = new FqCodel(RATE, 1, { targetNs: 5 * MS, intervalNs: 100 * US });
    let t = 0;
    for (let i = 0; i < 5000; i++) {
      q.enqueue(data(1, i, 1500, Ecn.NotEct), t);
      q.enqueue(data(1, i, 1500, Ecn.NotEct), t);
      q.dequeue(t);
      t += 1.2 * US;
    }
    expect(q.drops()).toBe(0);
  });
});

// ---- a sender whose NIC is its bottleneck ----

const port = (over: Partial<PortParams> = {}): PortParams => ({
  rateBps: RATE,
  propNs: 1 * US,
  bufferBytes: 8_000_000,
  ecnBytes: 0,
  commitAheadNs: 2 * US,
  ...over,
});

const LINUX: HostStackConfig = {
  stack: 'linux',
  qdisc: 'fq_codel',
  sendBufferBytes: 4 * 1024 * 1024,
  smallQueueBytes: 1024 * 1024,
  cwndValidation: true,
};
const UNBOUNDED: HostStackConfig = {
  stack: 'unbounded',
  qdisc: 'prio',
  sendBufferBytes: 0,
  smallQueueBytes: 0,
  cwndValidation: false,
};

/**
 * Host 0's NIC (10 Gbit/s, the stack's qdisc, its ledger) straight to host 1 and back through a
 * 10 Gbit/s port: nothing but host 0's own NIC can queue its data.
 */
class Pair {
  t = 0;
  readonly sched = new Scheduler({ now: () => this.t, realMs: (ns) => ns / 1e6 }, true);
  readonly nic: EgressPort;
  readonly back: EgressPort;
  readonly sender: BaselineTransport;
  readonly receiver: BaselineTransport;
  readonly delivered = new Map<number, number>();
  readonly starts = new Map<number, number>();
  /** the NIC's occupancy at every step, bytes: its largest */
  maxNic = 0;

  constructor(stack: HostStackConfig, qdisc: QdiscKind = stack.qdisc) {
    const disc = createQdisc(qdisc, RATE, 7);
    this.nic = new EgressPort(0, port(), this.sched, (_p, f) => this.sched.at(f.a, this.toReceiver, f), disc);
    this.back = new EgressPort(0, port(), this.sched, (_p, f) => this.sched.at(f.a, this.toSender, f));
    const nic: Nic = { send: (f) => this.nic.send(f, this.sched.current) };
    if (stack.smallQueueBytes > 0) {
      const ledger = new TxLedger(0, this.sched);
      disc.accounting = ledger;
      Object.assign(nic, ledger.nicHooks());
    }
    const parts = (id: number, n: Nic, s?: HostStackConfig): TransportComponents => ({
      hostId: id,
      clock: new IdealClock(this.sched),
      nic: n,
      ...(s && { stack: s }),
      metrics: new Metrics(),
      delivered: (fid, now) => this.delivered.set(fid, now),
      acked: () => {},
      physNow: () => this.sched.current,
    });
    this.sender = new BaselineTransport(BASELINE_DEFAULTS, parts(0, nic, stack));
    this.receiver = new BaselineTransport(
      BASELINE_DEFAULTS,
      parts(1, { send: (f) => this.back.send(f, this.sched.current) }),
    );
  }

  private readonly toReceiver = (now: number, f: Frame): void => this.receiver.onFrame(f, now);
  private readonly toSender = (now: number, f: Frame): void => this.sender.onFrame(f, now);

  start(spec: FlowSpec): void {
    this.sched.at(spec.start, (now: number) => {
      this.starts.set(spec.id, now);
      this.sender.startFlow(spec, now);
    });
  }

  run(untilNs: number, stepNs = 2 * US): void {
    while (this.t < untilNs) {
      this.t += stepNs;
      this.sched.runDue(this.t);
      this.maxNic = Math.max(this.maxNic, this.nic.occupancy(this.t));
    }
  }

  fct(id: number): number {
    return (this.delivered.get(id) ?? Number.POSITIVE_INFINITY) - this.starts.get(id)!;
  }

  /** the sender's window state of flow `id` (SendFlow's fields) */
  flow(id: number): { cwnd: number; sndNxt: number; sndUna: number; retransmits: number } {
    return this.sender.senderStats(id) as unknown as {
      cwnd: number;
      sndNxt: number;
      sndUna: number;
      retransmits: number;
    };
  }
}

const long = (id: number, size = 50_000_000): FlowSpec => ({ id, src: 0, dst: 1, size, start: 0 });

describe('a sender whose own NIC is its bottleneck', () => {
  it('unbounded: its window fills the 8 MB NIC until frames drop', () => {
    const p = new Pair(UNBOUNDED);
    p.start(long(1));
    p.run(30 * MS);
    expect(p.nic.stats.dropsCongestion).toBeGreaterThan(0);
    expect(p.flow(1).retransmits).toBeGreaterThan(0);
  });

  it('TCP small queues keep its bytes in the qdisc and NIC at the 1 MiB cap, and nothing drops', () => {
    const p = new Pair(LINUX);
    p.start(long(1));
    p.run(30 * MS);
    expect(p.nic.stats.dropsCongestion).toBe(0);
    // the check lets one frame past the limit (Linux compares before it sends)
    expect(p.maxNic).toBeLessThanOrEqual(1024 * 1024 + WireSize.Mtu);
    expect(p.maxNic).toBeGreaterThan(900_000);
    // and the link stays busy: 30 ms at 10 Gbit/s carry ~24,000 frames
    expect(p.flow(1).sndUna).toBeGreaterThan(23_500);
  });

  it('a smaller cap holds it lower: TSQ at 64 KiB', () => {
    const p = new Pair({ ...LINUX, smallQueueBytes: 64 * 1024 });
    p.start(long(1));
    p.run(10 * MS);
    expect(p.maxNic).toBeLessThanOrEqual(64 * 1024 + WireSize.Mtu);
    expect(p.flow(1).sndUna).toBeGreaterThan(7_500);
  });

  it('the send buffer alone caps what is in flight: 64 KiB is 44 frames', () => {
    const p = new Pair({ ...UNBOUNDED, sendBufferBytes: 64 * 1024 });
    p.start(long(1));
    let most = 0;
    for (let t = 10 * US; t < 5 * MS; t += 10 * US) {
      p.run(t);
      const f = p.flow(1);
      most = Math.max(most, f.sndNxt - f.sndUna);
    }
    expect(most).toBe(Math.floor((64 * 1024) / WireSize.Mss));
    expect(p.nic.stats.dropsCongestion).toBe(0);
  });

  it('with cwnd validation the window stops growing while small queues limit the flow; without, it grows on', () => {
    const on = new Pair(LINUX);
    const off = new Pair({ ...LINUX, cwndValidation: false });
    on.start(long(1));
    off.start(long(1));
    on.run(20 * MS);
    off.run(20 * MS);
    // in flight: ~1 MiB in the NIC plus a few µs of link; validated, the window stays near twice that
    expect(on.flow(1).cwnd).toBeLessThan(2_000);
    expect(off.flow(1).cwnd).toBeGreaterThan(10_000);
  });

  it("short flows from the same host finish in microseconds under fq_codel, and wait behind the long flow's queue under pfifo_fast", () => {
    const shorts = (p: Pair) => {
      p.start(long(1));
      for (let i = 0; i < 10; i++)
        p.start({ id: 100 + i, src: 0, dst: 1, size: 10_000, start: 2 * MS + i * 500 * US });
      p.run(8 * MS);
      return Array.from({ length: 10 }, (_, i) => p.fct(100 + i));
    };
    const fq = shorts(new Pair(LINUX));
    const fifo = shorts(new Pair(LINUX, 'pfifo_fast'));
    for (const f of fq) expect(f).toBeLessThan(30 * US);
    // behind ~1 MiB of the long flow: ~840 µs at 10 Gbit/s
    for (const f of fifo) expect(f).toBeGreaterThan(700 * US);
  });
});

describe('host.stackDelay', () => {
  const BASE = `topology: { kind: leaf-spine, leaves: 1, spines: 1, hostsPerLeaf: 2 }
workload: { pattern: all-to-all, fixedSize: 10KB, load: 0.2, duration: 100us }
`;
  const host = (extra: string) => resolveScenario(parseScenario(BASE + extra, 'h.yaml')).host;

  it('is absent unless set (every earlier scenario resolves as before), a duration when set', () => {
    expect(host('').stackDelayNs).toBeUndefined();
    expect(host('host: { stackDelay: 0us }').stackDelayNs).toBeUndefined();
    expect(host('host: { stackDelay: 3us }').stackDelayNs).toBe(3 * US);
  });

  it('names the file, line and field of a bad value', () => {
    expect(() => host('host: { stackDelay: -3us }')).toThrow(/h\.yaml:3: host\.stackDelay/);
    expect(() => host('host: { stackDelay: fast }')).toThrow(
      /h\.yaml:3: host\.stackDelay: 'fast' is not a duration/,
    );
  });
});
