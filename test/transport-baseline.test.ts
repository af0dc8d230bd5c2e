/**
 * The baseline DCTCP window transport, end to end in one process: hosts with ideal clocks on a manual
 * scheduler, NICs and one switch made of real egress ports, no sockets. The switch forwards on the
 * destination id; its egress toward the receiver is the (configurable) bottleneck, and a drop or
 * duplicate hook at its ingress emulates losses. Covers completion and FCT, fast retransmit, the
 * retransmission timeout, ECN window control, sharing, random loss and the receiver's duplicate handling.
 */
import { describe, expect, it } from 'vitest';
import { IdealClock } from '../core/clock.js';
import { Ecn, type Frame, FrameType, makeFrame, WireSize } from '../core/frame.js';
import type { FlowSpec, TransportConfig } from '../core/messages.js';
import { Metrics } from '../core/metrics.js';
import { EgressPort, type PortParams } from '../core/port.js';
import { Rng } from '../core/random.js';
import { Scheduler } from '../core/scheduler.js';
import { BASELINE_DEFAULTS, BaselineTransport } from '../host/transport/baseline.js';
import type { Nic, TransportComponents } from '../host/transport/types.js';

const US = 1_000;
const MS = 1_000_000;
/** the receiving host of every test; the switch egress toward it is the bottleneck */
const B = 1;

interface NetOptions {
  /** host ids are 0 .. hosts-1 */
  hosts?: number;
  nicBps?: number;
  propNs?: number;
  /** the switch egress toward host B */
  bottleneck?: Partial<PortParams>;
  /** frames for which this returns true are lost at the switch ingress */
  drop?: (f: Frame, now: number) => boolean;
  /** frames for which this returns true are forwarded twice */
  duplicate?: (f: Frame) => boolean;
  cfg?: TransportConfig;
}

interface SimHost {
  readonly id: number;
  readonly transport: BaselineTransport;
  readonly nic: EgressPort;
  readonly delivered: Array<{ id: number; at: number }>;
  readonly acked: Array<{ id: number; at: number }>;
}

const bigPort = (rateBps: number, propNs: number): PortParams => ({
  rateBps,
  propNs,
  bufferBytes: 64 << 20,
  ecnBytes: 0,
  commitAheadNs: 0,
});

/** Hosts on one switch: host NIC -> switch ingress -> switch egress toward frame.d -> host. */
class Net {
  t = 0;
  readonly sched = new Scheduler({ now: () => this.t, realMs: (ns) => ns / 1e6 }, true);
  readonly hosts: SimHost[] = [];
  /** switch egress ports, indexed by the host they lead to */
  readonly egress: EgressPort[] = [];
  /** distinct data segments that reached B, per flow, in arrival order (for progress over time) */
  readonly segsAtB = new Map<number, Set<number>>();
  /** data frames that reached B, duplicates and retransmissions included */
  dataFramesAtB = 0;
  readonly starts = new Map<number, number>();

  constructor(readonly o: NetOptions = {}) {
    const n = o.hosts ?? 2;
    const nicBps = o.nicBps ?? 10e9;
    const prop = o.propNs ?? 1 * US;
    const cfg = o.cfg ?? BASELINE_DEFAULTS;
    for (let id = 0; id < n; id++) {
      const toHost = (_port: number, f: Frame): void => {
        this.sched.at(f.a, this.arriveHost, f);
      };
      const params = id === B ? { ...bigPort(nicBps, prop), ...o.bottleneck } : bigPort(nicBps, prop);
      this.egress.push(new EgressPort(id, params, this.sched, toHost));
    }
    for (let id = 0; id < n; id++) {
      const nic = new EgressPort(0, bigPort(nicBps, prop), this.sched, (_port, f) => {
        this.sched.at(f.a, this.arriveSwitch, f);
      });
      const host: SimHost = {
        id,
        nic,
        delivered: [],
        acked: [],
        transport: undefined as unknown as BaselineTransport,
      };
      const components: TransportComponents = {
        hostId: id,
        clock: new IdealClock(this.sched),
        nic: { send: (f: Frame) => nic.send(f, this.sched.current) },
        metrics: new Metrics(),
        delivered: (fid, now) => host.delivered.push({ id: fid, at: now }),
        acked: (fid, now) => host.acked.push({ id: fid, at: now }),
        physNow: () => this.sched.current,
      };
      (host as { transport: BaselineTransport }).transport = new BaselineTransport(cfg, components);
      this.hosts.push(host);
    }
  }

  private readonly arriveSwitch = (now: number, f: Frame): void => {
    if (this.o.drop?.(f, now)) return;
    const out = this.egress[f.d];
    if (this.o.duplicate?.(f)) out.send({ ...f }, now);
    out.send(f, now);
  };

  private readonly arriveHost = (now: number, f: Frame): void => {
    if (f.d === B && f.t === FrameType.Data) {
      this.dataFramesAtB++;
      let s = this.segsAtB.get(f.f);
      if (s === undefined) this.segsAtB.set(f.f, (s = new Set()));
      s.add(f.q);
    }
    this.hosts[f.d].transport.onFrame(f, now);
  };

  startFlow(spec: FlowSpec): void {
    this.sched.at(spec.start, (now: number) => {
      this.starts.set(spec.id, now);
      this.hosts[spec.src].transport.startFlow(spec, now);
    });
  }

  /** Advances virtual time in steps until `done()` holds, nothing is pending, or `limitNs` passes. */
  run(limitNs: number, done: () => boolean = () => false, stepNs = 10 * US): void {
    while (this.t < limitNs) {
      this.t = Math.min(limitNs, this.t + stepNs);
      this.sched.runDue(this.t);
      if (done() || this.sched.pending === 0) break;
    }
  }

  /** every delivered/acked record over all hosts */
  deliveredAll(): Array<{ id: number; at: number }> {
    return this.hosts.flatMap((h) => h.delivered);
  }

  ackedAll(): Array<{ id: number; at: number }> {
    return this.hosts.flatMap((h) => h.acked);
  }

  fct(id: number): number {
    const d = this.deliveredAll().find((r) => r.id === id);
    const s = this.starts.get(id);
    if (d === undefined || s === undefined) return Number.POSITIVE_INFINITY;
    return d.at - s;
  }

  /** true once every flow in `ids` was acked at its sender */
  allAcked(ids: number[]): () => boolean {
    return () => {
      const got = new Set(this.ackedAll().map((r) => r.id));
      return ids.every((id) => got.has(id));
    };
  }
}

const flow = (id: number, size: number, src = 0, start = 0): FlowSpec => ({ id, src, dst: B, size, start });

const segments = (size: number): number => Math.ceil(size / WireSize.Mss);

/** wire bytes a flow of `size` payload bytes puts on the link */
const wireBytes = (size: number): number => size + segments(size) * WireSize.Header;

/** delivered ids per flow: exactly once each */
function countBy(records: Array<{ id: number }>): Map<number, number> {
  const m = new Map<number, number>();
  for (const r of records) m.set(r.id, (m.get(r.id) ?? 0) + 1);
  return m;
}

describe('BaselineTransport on a lossless path', () => {
  it('a flow the application stops sends nothing new, and one already all sent completes anyway', () => {
    const net = new Net({ hosts: 3 });
    net.startFlow(flow(1, 10_000_000));
    net.startFlow(flow(2, 20_000, 2));
    const answers: boolean[] = [];
    net.sched.at(200 * US, () => {
      answers.push(net.hosts[0].transport.endFlow(1), net.hosts[2].transport.endFlow(2));
    });
    net.run(20 * MS);
    // the bulk flow had frames never sent: it stops, and what was sent still arrives
    expect(answers).toEqual([true, false]);
    const sent = net.hosts[0].transport.senderStats(1)!.framesSent;
    expect(sent).toBeGreaterThan(0);
    expect(sent).toBeLessThan(segments(10_000_000));
    expect(net.segsAtB.get(1)?.size).toBe(sent);
    expect(net.hosts[0].acked).toEqual([]);
    expect(countBy(net.deliveredAll())).toEqual(new Map([[2, 1]]));
  });

  it('completes a 1 MB flow within 1.5x of the ideal FCT', () => {
    const net = new Net();
    const size = 1_000_000;
    net.startFlow(flow(7, size));
    net.run(50 * MS, net.allAcked([7]));

    const rx = net.hosts[B];
    expect(rx.delivered).toHaveLength(1);
    expect(rx.delivered[0].id).toBe(7);
    expect(net.hosts[0].acked).toEqual([{ id: 7, at: expect.any(Number) }]);
    // the sender learns of completion after the receiver saw the last byte
    expect(net.hosts[0].acked[0].at).toBeGreaterThan(rx.delivered[0].at);
    expect(net.segsAtB.get(7)?.size).toBe(segments(size));

    const rate = 10e9;
    const rtt = (2 * WireSize.Mtu * 8e9) / rate + 4 * US; // two serializations, four propagations
    const ideal = (size * 8e9) / rate + 5 * rtt;
    const fct = net.fct(7);
    // cannot beat the wire, and must be close to it
    expect(fct).toBeGreaterThanOrEqual((wireBytes(size) * 8e9) / rate);
    expect(fct).toBeLessThanOrEqual(1.5 * ideal);

    const st = net.hosts[0].transport.senderStats(7);
    expect(st).toEqual(expect.objectContaining({ retransmits: 0, timeouts: 0 }));
    // no spurious frames: every data frame that reached B was a new segment
    expect(net.dataFramesAtB).toBe(segments(size));
    // nothing lingers once the flow is done: the timer is cancelled, not re-armed
    const txFrames = net.hosts[0].nic.stats.txFrames;
    net.run(net.t + 10 * MS);
    expect(net.sched.pending).toBe(0);
    expect(net.hosts[0].nic.stats.txFrames).toBe(txFrames);
    expect(net.hosts[B].delivered).toHaveLength(1);
  });

  it('completes a flow smaller than one segment (and a zero-byte flow)', () => {
    const net = new Net();
    net.startFlow(flow(1, 100));
    net.startFlow(flow(2, 0));
    net.run(10 * MS, net.allAcked([1, 2]));
    expect(countBy(net.hosts[B].delivered)).toEqual(
      new Map([
        [1, 1],
        [2, 1],
      ]),
    );
    expect(countBy(net.hosts[0].acked).size).toBe(2);
    expect(net.fct(1)).toBeLessThan(20 * US);
  });

  it('does not confuse concurrent flows with different ids', () => {
    const net = new Net();
    net.startFlow(flow(100, 50_000));
    net.startFlow(flow(101, 3_000));
    net.run(50 * MS, net.allAcked([100, 101]));
    expect(countBy(net.hosts[B].delivered)).toEqual(
      new Map([
        [100, 1],
        [101, 1],
      ]),
    );
    expect(net.segsAtB.get(100)?.size).toBe(segments(50_000));
    expect(net.segsAtB.get(101)?.size).toBe(segments(3_000));
  });
});

describe('BaselineTransport loss recovery', () => {
  it('repairs a single lost data frame by fast retransmit, without a timeout', () => {
    const lostSeq = 100;
    let dropped = 0;
    const net = new Net({
      drop: (f) => {
        if (f.t === FrameType.Data && f.q === lostSeq && dropped === 0) {
          dropped++;
          return true;
        }
        return false;
      },
    });
    const size = 1_000_000;
    net.startFlow(flow(3, size));
    net.run(50 * MS, net.allAcked([3]));

    expect(dropped).toBe(1);
    expect(net.hosts[B].delivered.map((r) => r.id)).toEqual([3]);
    expect(net.hosts[0].acked.map((r) => r.id)).toEqual([3]);
    const st = net.hosts[0].transport.senderStats(3)!;
    expect(st.retransmits).toBe(1);
    expect(st.timeouts).toBe(0);
    // repaired within a few RTTs, well before the minimum RTO could have fired
    expect(net.fct(3)).toBeLessThan((size * 8e9) / 10e9 + BASELINE_DEFAULTS.minRtoNs);
  });

  it('repairs a loss inside the initial window by fast retransmit', () => {
    let dropped = false;
    const net = new Net({
      drop: (f) => {
        if (!dropped && f.t === FrameType.Data && f.q === 2) return (dropped = true);
        return false;
      },
    });
    net.startFlow(flow(4, 200_000));
    net.run(50 * MS, net.allAcked([4]));
    expect(dropped).toBe(true);
    expect(net.hosts[B].delivered.map((r) => r.id)).toEqual([4]);
    const st = net.hosts[0].transport.senderStats(4)!;
    expect(st.retransmits).toBeGreaterThanOrEqual(1);
    expect(st.timeouts).toBe(0);
  });

  it('repairs the loss of the last frame (no duplicate acks possible) by the RTO', () => {
    const size = 100_000;
    const last = segments(size) - 1;
    let dropped = 0;
    const net = new Net({
      drop: (f) => {
        if (f.t === FrameType.Data && f.q === last && dropped === 0) {
          dropped++;
          return true;
        }
        return false;
      },
    });
    net.startFlow(flow(5, size));
    net.run(100 * MS, net.allAcked([5]));

    expect(dropped).toBe(1);
    expect(net.hosts[B].delivered.map((r) => r.id)).toEqual([5]);
    expect(net.hosts[0].acked.map((r) => r.id)).toEqual([5]);
    const st = net.hosts[0].transport.senderStats(5)!;
    expect(st.timeouts).toBe(1);
    expect(st.retransmits).toBe(1);
    // the repair had to wait for the timer, so the flow took at least the minimum RTO ...
    const line = (wireBytes(size) * 8e9) / 10e9;
    expect(net.fct(5)).toBeGreaterThanOrEqual(line + BASELINE_DEFAULTS.minRtoNs);
    // ... but only the RTO measured on this microsecond path (the minimum), counted from the last new
    // ack, not the conservative initial RTO (5x the minimum) the flow started with
    expect(net.fct(5)).toBeLessThan(line + 2 * BASELINE_DEFAULTS.minRtoNs);
    net.run(net.t + 100 * MS);
    expect(net.sched.pending).toBe(0);
    expect(net.hosts[0].transport.senderStats(5)!.timeouts).toBe(1);
  });

  it('repairs a lost final acknowledgement by the RTO', () => {
    const size = 30_000;
    let dropped = 0;
    const net = new Net({
      drop: (f) => {
        if (f.t === FrameType.Ack && f.q === segments(size) && dropped === 0) {
          dropped++;
          return true;
        }
        return false;
      },
    });
    net.startFlow(flow(6, size));
    net.run(100 * MS, net.allAcked([6]));
    expect(dropped).toBe(1);
    expect(net.hosts[B].delivered.map((r) => r.id)).toEqual([6]);
    expect(net.hosts[0].acked.map((r) => r.id)).toEqual([6]);
    expect(net.hosts[0].transport.senderStats(6)!.timeouts).toBeGreaterThanOrEqual(1);
  });

  it('completes 20 flows of 100 KB under 1% random loss in both directions', () => {
    const rng = new Rng(20240601);
    const seen = new Set<string>();
    const lostOnFirstSend = new Set<string>();
    let lost = 0;
    const net = new Net({
      hosts: 5,
      bottleneck: { ecnBytes: 30_000 },
      drop: (f) => {
        const key = `${f.f}:${f.q}`;
        const first = f.t === FrameType.Data && !seen.has(key);
        if (f.t === FrameType.Data) seen.add(key);
        if (rng.next() >= 0.01) return false;
        lost++;
        if (first) lostOnFirstSend.add(key);
        return true;
      },
    });
    const ids: number[] = [];
    const senders = [0, 2, 3, 4];
    for (let i = 0; i < 20; i++) {
      ids.push(1000 + i);
      net.startFlow(flow(1000 + i, 100_000, senders[i % senders.length], i * 20 * US));
    }
    net.run(2_000 * MS, net.allAcked(ids));

    const delivered = countBy(net.hosts[B].delivered);
    expect([...delivered.keys()].sort((a, b) => a - b)).toEqual(ids);
    expect([...delivered.values()].every((c) => c === 1)).toBe(true);
    expect(countBy(net.ackedAll()).size).toBe(20);
    expect(lost).toBeGreaterThan(0);
    expect(lostOnFirstSend.size).toBeGreaterThan(0);
    // every segment lost on its first transmission needed at least one retransmission
    let retransmits = 0;
    for (const id of ids) {
      const src = senders[(id - 1000) % senders.length];
      retransmits += net.hosts[src].transport.senderStats(id)!.retransmits;
    }
    expect(retransmits).toBeGreaterThanOrEqual(lostOnFirstSend.size);
  });
});

describe('BaselineTransport congestion control (DCTCP)', () => {
  const size = 2_000_000;
  const ecn = 30_000;
  const slow = (ecnBytes: number): NetOptions => ({ bottleneck: { rateBps: 2.5e9, ecnBytes } });

  it('keeps the bottleneck queue near the marking threshold with ECN, not without', () => {
    const marked = new Net(slow(ecn));
    marked.startFlow(flow(8, size));
    marked.run(200 * MS, marked.allAcked([8]));
    const unmarked = new Net(slow(0));
    unmarked.startFlow(flow(8, size));
    unmarked.run(200 * MS, unmarked.allAcked([8]));

    for (const net of [marked, unmarked]) {
      expect(net.hosts[B].delivered.map((r) => r.id)).toEqual([8]);
      expect(net.hosts[0].transport.senderStats(8)).toEqual(
        expect.objectContaining({ retransmits: 0, timeouts: 0 }),
      );
    }
    const qMarked = marked.egress[B].stats;
    const qUnmarked = unmarked.egress[B].stats;
    expect(qMarked.ecnMarks).toBeGreaterThan(0);
    expect(qUnmarked.ecnMarks).toBe(0);
    // the window is cut: the queue stays within the threshold plus a few windows' overshoot
    expect(qMarked.maxBytes).toBeGreaterThanOrEqual(ecn);
    expect(qMarked.maxBytes).toBeLessThanOrEqual(ecn + 40 * WireSize.Mtu);
    // without marks slow start never stops and the flow piles up in the (large) buffer
    expect(qUnmarked.maxBytes).toBeGreaterThan(10 * qMarked.maxBytes);
    // and the cut costs (almost) no throughput: both finish near the bottleneck's line rate
    const line = (wireBytes(size) * 8e9) / 2.5e9;
    expect(marked.fct(8)).toBeLessThan(1.1 * line);
    expect(unmarked.fct(8)).toBeLessThan(1.1 * line);
  });

  it('marks only a small fraction of frames once alpha has settled', () => {
    const net = new Net(slow(ecn));
    net.startFlow(flow(9, size));
    net.run(200 * MS, net.allAcked([9]));
    const st = net.egress[B].stats;
    // a window that ignored ECE would keep growing and have most frames marked
    expect(st.ecnMarks).toBeGreaterThan(0);
    expect(st.ecnMarks / st.txFrames).toBeLessThan(0.5);
  });

  it('shares the bottleneck between two flows started together', () => {
    const net = new Net({ hosts: 3, bottleneck: { ecnBytes: ecn } });
    const each = 1_000_000;
    net.startFlow(flow(21, each, 0));
    net.startFlow(flow(22, each, 2));
    let progressAtFirst: number[] | null = null;
    net.run(200 * MS, () => {
      if (progressAtFirst === null && net.hosts[B].delivered.length > 0)
        progressAtFirst = [21, 22].map((id) => net.segsAtB.get(id)?.size ?? 0);
      return net.allAcked([21, 22])();
    });

    expect(countBy(net.hosts[B].delivered)).toEqual(
      new Map([
        [21, 1],
        [22, 1],
      ]),
    );
    const f1 = net.fct(21);
    const f2 = net.fct(22);
    expect(Math.max(f1, f2) / Math.min(f1, f2)).toBeLessThan(3);
    // while both were active, the laggard got at least a third of the leader's share
    expect(progressAtFirst).not.toBeNull();
    const [p1, p2] = progressAtFirst!;
    expect(Math.min(p1, p2) / Math.max(p1, p2)).toBeGreaterThan(1 / 3);
    // together they use the bottleneck well: both done within 1.3x of the time to send both
    const line = (2 * wireBytes(each) * 8e9) / 10e9;
    expect(Math.max(f1, f2)).toBeLessThan(1.3 * line);
    expect(net.egress[B].stats.dropsCongestion).toBe(0);
    expect(net.egress[B].stats.maxBytes).toBeLessThan(ecn + 60 * WireSize.Mtu);
  });
});

describe('BaselineTransport receiver', () => {
  it('acknowledges duplicate data frames without counting them twice (end to end)', () => {
    const net = new Net({ duplicate: (f) => f.t === FrameType.Data });
    const size = 200_000;
    net.startFlow(flow(31, size));
    net.run(50 * MS, net.allAcked([31]));
    expect(net.dataFramesAtB).toBe(2 * segments(size));
    expect(net.hosts[B].delivered.map((r) => r.id)).toEqual([31]);
    expect(net.hosts[0].acked.map((r) => r.id)).toEqual([31]);
    // one duplicate ack per new ack never reaches the fast-retransmit threshold
    expect(net.hosts[0].transport.senderStats(31)).toEqual(
      expect.objectContaining({ retransmits: 0, timeouts: 0 }),
    );
  });

  it('acks cumulatively, echoes CE, and delivers once despite duplicates and reordering', () => {
    const sent: Frame[] = [];
    const nic: Nic = {
      send: (f) => {
        sent.push(f);
        return true;
      },
    };
    const delivered: Array<[number, number]> = [];
    const sched = new Scheduler({ now: () => 0, realMs: (ns) => ns / 1e6 }, true);
    const rx = new BaselineTransport(BASELINE_DEFAULTS, {
      hostId: B,
      clock: new IdealClock(sched),
      nic,
      metrics: new Metrics(),
      delivered: (id, now) => delivered.push([id, now]),
      acked: () => {
        throw new Error('receiver must not report acked');
      },
      physNow: () => sched.current,
    });
    const size = 3 * WireSize.Mss; // three segments
    const data = (q: number, e: number = Ecn.Ect): Frame =>
      makeFrame({ t: FrameType.Data, s: 0, d: B, f: 77, q, z: WireSize.Mtu, e, x: size });

    const order: Array<[number, number]> = [
      [0, Ecn.Ect],
      [0, Ecn.Ect],
      [2, Ecn.Ce],
      [1, Ecn.Ect],
      [1, Ecn.Ce],
      [2, Ecn.Ect],
      [0, Ecn.Ect],
    ];
    // before the hole is filled the flow is partial, and says which way its frames came
    rx.onFrame({ ...data(0), v: 9 }, 5);
    expect(rx.partialPaths()).toEqual([[77, [9], 5]]);
    sent.length = 0;
    order.forEach(([q, e], i) => {
      rx.onFrame(data(q, e), 10 * (i + 1));
    });
    expect(rx.partialPaths()).toEqual([]);

    expect(sent).toHaveLength(order.length);
    for (const a of sent) {
      expect(a).toEqual(expect.objectContaining({ t: FrameType.Ack, s: B, d: 0, f: 77, z: WireSize.Small }));
      expect(a.e).toBe(Ecn.NotEct);
    }
    expect(sent.map((a) => a.q)).toEqual([1, 1, 1, 3, 3, 3, 3]);
    expect(sent.map((a) => a.x)).toEqual([0, 0, 1, 0, 1, 0, 0]);
    // complete on the fourth frame (seq 1 fills the hole), and only then
    expect(delivered).toEqual([[77, 40]]);
    expect(rx.senderStats(77)).toBeUndefined();
  });

  it('ignores acks for unknown flows and acks after completion', () => {
    const net = new Net();
    net.startFlow(flow(41, 20_000));
    net.run(10 * MS, net.allAcked([41]));
    expect(net.hosts[0].acked).toHaveLength(1);
    const tx = net.hosts[0].transport;
    const ack = (f: number, q: number): Frame =>
      makeFrame({ t: FrameType.Ack, s: B, d: 0, f, q, z: WireSize.Small, x: 1 });
    const before = net.hosts[0].nic.stats.txFrames;
    tx.onFrame(ack(41, segments(20_000)), net.t + 1);
    tx.onFrame(ack(41, 0), net.t + 2);
    tx.onFrame(ack(999, 5), net.t + 3);
    expect(net.hosts[0].acked).toHaveLength(1);
    expect(net.hosts[0].nic.stats.txFrames).toBe(before);
  });

  it('stop() cancels the retransmission timers of unfinished flows', () => {
    const net = new Net({ drop: (f) => f.t === FrameType.Data });
    net.startFlow(flow(51, 50_000));
    net.run(100 * US);
    const st = net.hosts[0].transport.senderStats(51)!;
    expect(st.timeouts).toBe(0);
    net.hosts[0].transport.stop();
    net.run(100 * MS);
    expect(st.timeouts).toBe(0);
    expect(net.hosts[B].delivered).toHaveLength(0);
    expect(net.sched.pending).toBe(0);
  });
});

describe('baseline transport under an allocator (Flowtune §6.2: window held open, frames paced)', () => {
  const spec = (id: number, size: number): FlowSpec => ({ id, src: 0, dst: B, size, start: 0 });

  it('paces a held flow at its rate, and resumes its own window from the one given on release', () => {
    const net = new Net();
    net.startFlow(spec(1, 4_000_000));
    const w = net.hosts[0].transport.windows;
    // 2 Gbit/s from 10 µs: ~1,667 frames take 10 ms; in 2 ms about a fifth of them arrived
    net.run(10 * US);
    w.hold(1, 40, 2e9, net.t);
    net.run(2 * MS);
    const paced = net.segsAtB.get(1)!.size;
    expect(paced).toBeGreaterThan(320);
    expect(paced).toBeLessThan(360);
    // released: congestion control again, from a window of 20 frames (then it grows)
    w.release(1, 20, net.t);
    net.run(8 * MS, net.allAcked([1]));
    expect(net.ackedAll().map((a) => a.id)).toEqual([1]);
    expect(net.hosts[0].transport.senderStats(1)).toMatchObject({ retransmits: 0, timeouts: 0 });
    expect(net.t).toBeLessThan(6 * MS);
  });

  it('ignores holds and releases of flows it does not know or has finished', () => {
    const net = new Net();
    const w = net.hosts[0].transport.windows;
    w.hold(7, 10, 1e9, 0);
    w.release(7, 10, 0);
    net.startFlow(spec(2, 3000));
    net.run(MS, net.allAcked([2]));
    w.hold(2, 10, 1e9, net.t);
    expect(net.ackedAll().map((a) => a.id)).toEqual([2]);
  });
});
