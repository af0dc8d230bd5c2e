/**
 * The UDP transport in one process: a sending host whose NIC is a real egress port on a manual
 * scheduler, its frames delivered (or dropped) straight to a receiving host's transport, no sockets.
 * Covers frame sizes and sequence, the pump's NIC backlog bound, round-robin sharing, pacing at the
 * configured rate, delivery once despite loss, stop(), the factory, the scenario section and the
 * frame counts in the results.
 */
// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { IdealClock } from '../core/clock.js';
import { Ecn, type Frame, FrameType, makeFrame, Priority, WireSize } from '../core/frame.js';
import { Histogram } from '../core/histogram.js';
import type { FlowGaps, FlowSpec, NodeReport, UdpTransportConfig } from '../core/messages.js';
import { Metrics } from '../core/metrics.js';
import { EgressPort } from '../core/port.js';
import { Scheduler } from '../core/scheduler.js';
import { GapStream } from '../host/onoff.js';
import { BASELINE_DEFAULTS, createTransport, UDP_DEFAULTS } from '../host/transport/index.js';
import type { Nic, TransportComponents } from '../host/transport/types.js';
import { NIC_BACKLOG_BYTES, UdpTransport } from '../host/transport/udp.js';
import { collect } from '../orchestrator/engine/collect.js';
import type { FabricResult } from '../orchestrator/engine/engine.js';
import { writeResults } from '../orchestrator/engine/results-files.js';
import { parseScenario } from '../orchestrator/scenario/load.js';
import { resolveScenario } from '../orchestrator/scenario/resolve.js';

const US = 1_000;
const MS = 1_000_000;
const NIC_BPS = 10e9;
/** sender and receiver host ids */
const A = 0;
const B = 1;

interface RigOptions {
  /** the UDP rate cap, bit/s (0: NIC rate) */
  rateBps?: number;
  /** every flow's own rate, bit/s */
  flowRateBps?: number;
  commitAheadNs?: number;
  /** frames for which this returns true are lost between the hosts */
  drop?: (f: Frame) => boolean;
}

interface Departure {
  frame: Frame;
  start: number;
  end: number;
}

const components = (hostId: number, clock: IdealClock, nic: Nic): TransportComponents => ({
  hostId,
  clock,
  nic,
  metrics: new Metrics(),
  delivered: () => {},
  acked: () => {
    throw new Error('udp never reports acked');
  },
  physNow: () => 0,
});

/** A never-used NIC for a receiving host: UDP receivers send nothing. */
const silentNic: Nic = {
  send: () => {
    throw new Error('a udp receiver must not send');
  },
  rateBps: NIC_BPS,
  backlog: () => 0,
};

/** Sender A's NIC is a real egress port; what it transmits reaches B's transport unless dropped. */
class Rig {
  t = 0;
  readonly sched = new Scheduler({ now: () => this.t, realMs: (ns) => ns / 1e6 }, true);
  readonly nic: EgressPort;
  readonly departures: Departure[] = [];
  readonly tx: UdpTransport;
  readonly rx: UdpTransport;
  readonly delivered: Array<{ id: number; at: number; via: number[] }> = [];
  readonly starts = new Map<number, number>();
  /** the NIC backlog right after each frame the transport handed it, bytes */
  maxBacklog = 0;

  constructor(readonly o: RigOptions = {}) {
    const clock = new IdealClock(this.sched);
    this.nic = new EgressPort(
      0,
      {
        rateBps: NIC_BPS,
        propNs: 1 * US,
        bufferBytes: 64 << 20,
        ecnBytes: 0,
        commitAheadNs: o.commitAheadNs ?? 0,
      },
      this.sched,
      (_port, f) => {
        if (!o.drop?.(f)) this.sched.at(f.a, this.arrive, f);
      },
    );
    this.nic.onDepart = (_port, frame, start) =>
      this.departures.push({ frame, start, end: start + this.nic.serializationNs(frame.z) });
    const nic: Nic = {
      send: (f) => {
        const ok = this.nic.send(f, this.sched.current);
        this.maxBacklog = Math.max(this.maxBacklog, this.nic.occupancy(this.sched.current));
        return ok;
      },
      rateBps: NIC_BPS,
      backlog: () => this.nic.occupancy(this.sched.current),
    };
    const cfg: UdpTransportConfig = {
      kind: 'udp',
      rateBps: o.rateBps ?? 0,
      ...(o.flowRateBps !== undefined && { flowRateBps: o.flowRateBps }),
    };
    this.tx = new UdpTransport(cfg, components(A, clock, nic));
    this.rx = new UdpTransport(cfg, {
      ...components(B, clock, silentNic),
      delivered: (id, at, via) => this.delivered.push({ id, at, via: via.slice() }),
    });
  }

  private readonly arrive = (now: number, f: Frame): void => this.rx.onFrame(f, now);

  startFlow(spec: FlowSpec): void {
    this.sched.at(spec.start, (now: number) => {
      this.starts.set(spec.id, now);
      this.tx.startFlow(spec, now);
    });
  }

  /** Advances virtual time in steps until nothing is pending or `limitNs` passes. */
  run(limitNs: number, stepNs = 10 * US): void {
    while (this.t < limitNs) {
      this.t = Math.min(limitNs, this.t + stepNs);
      this.sched.runDue(this.t);
      if (this.sched.pending === 0) break;
    }
  }

  departuresOf(id: number): Departure[] {
    return this.departures.filter((d) => d.frame.f === id);
  }
}

const flow = (id: number, size: number, start = 0): FlowSpec => ({ id, src: A, dst: B, size, start });
const segments = (size: number): number => Math.max(1, Math.ceil(size / WireSize.Mss));
const wireBytes = (size: number): number => size + segments(size) * WireSize.Header;
const frameNs = (rateBps: number): number => (WireSize.Mtu * 8e9) / rateBps;

describe('UdpTransport sender', () => {
  it('cuts a flow into MSS frames in sequence, the last one smaller, best effort and not ECN-capable', () => {
    const rig = new Rig();
    const size = 6 * WireSize.Mss + 1240;
    rig.startFlow(flow(1, size));
    rig.startFlow(flow(2, 1, 100 * US));
    rig.run(1 * MS);

    const frames = rig.departuresOf(1).map((d) => d.frame);
    expect(frames.map((f) => f.q)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(frames.map((f) => f.z)).toEqual([...Array(6).fill(WireSize.Mtu), 1240 + WireSize.Header]);
    for (const f of frames) {
      expect(f).toEqual(
        expect.objectContaining({ t: FrameType.Data, s: A, d: B, f: 1, p: Priority.BestEffort, x: size }),
      );
      expect(f.e).toBe(Ecn.NotEct);
    }
    // a one-byte flow is one small frame
    expect(rig.departuresOf(2).map((d) => d.frame.z)).toEqual([1 + WireSize.Header]);
    expect(rig.tx.senderStats(1)).toEqual(
      expect.objectContaining({ framesSent: 7, retransmits: 0, timeouts: 0 }),
    );
    expect(rig.tx.senderStats(2)?.framesSent).toBe(1);
    expect(rig.tx.senderStats(3)).toBeUndefined();
  });

  for (const commitAheadNs of [0, 2 * US]) {
    it(`never lets more than its bound wait in the NIC, and keeps the link busy (commit-ahead ${commitAheadNs} ns)`, () => {
      const rig = new Rig({ commitAheadNs });
      const size = 300_000;
      for (const id of [1, 2, 3]) rig.startFlow(flow(id, size));
      rig.run(10 * MS);

      expect(rig.departures).toHaveLength(3 * segments(size));
      expect(rig.maxBacklog).toBeLessThanOrEqual(NIC_BACKLOG_BYTES);
      expect(rig.nic.stats.maxBytes).toBeLessThanOrEqual(NIC_BACKLOG_BYTES);
      expect(rig.nic.stats.dropsCongestion).toBe(0);
      // back to back: the pump refills the NIC before it runs dry
      for (let i = 1; i < rig.departures.length; i++)
        expect(rig.departures[i].start - rig.departures[i - 1].end).toBeLessThan(1e-6);
    });
  }

  it('waits for other traffic in the NIC instead of piling onto it', () => {
    const rig = new Rig();
    // eight full frames of someone else's traffic (PTP, say) already wait in the NIC
    for (let i = 0; i < 8; i++)
      rig.nic.send(makeFrame({ t: FrameType.Control, s: A, d: B, z: WireSize.Mtu }), 0);
    rig.startFlow(flow(1, 100_000));
    rig.run(10 * MS);
    const first = rig.departuresOf(1)[0];
    // it sent its first frame only once the NIC had room below its bound
    expect(first.start).toBeGreaterThanOrEqual(rig.nic.serializationNs(8 * WireSize.Mtu));
    expect(rig.maxBacklog).toBeLessThanOrEqual(NIC_BACKLOG_BYTES);
    expect(rig.departuresOf(1)).toHaveLength(segments(100_000));
  });

  it('serves concurrent flows round-robin, one frame each turn', () => {
    const rate = 4e9;
    const rig = new Rig({ rateBps: rate });
    const size = 40 * WireSize.Mss;
    rig.startFlow(flow(1, size));
    rig.startFlow(flow(2, size));
    rig.startFlow(flow(3, 10 * WireSize.Mss, 30 * US)); // joins late, leaves early
    rig.run(10 * MS);

    const ids = rig.departures.map((d) => d.frame.f);
    const joined = ids.indexOf(3);
    expect(joined).toBeGreaterThanOrEqual(10);
    // before flow 3 joins: strict alternation
    for (let i = 0; i < joined - 1; i++) expect(ids[i + 1]).not.toBe(ids[i]);
    // while all three are active every three consecutive frames are one of each
    const last3 = ids.lastIndexOf(3);
    for (let i = joined; i + 2 <= last3; i++) expect(new Set(ids.slice(i, i + 3)).size).toBe(3);
    // afterwards flows 1 and 2 alternate again and finish within a frame of each other at the shared rate
    const end1 = rig.departuresOf(1).at(-1)!.end;
    const end2 = rig.departuresOf(2).at(-1)!.end;
    expect(Math.abs(end1 - end2)).toBeLessThanOrEqual(frameNs(rate));
    const total = (2 * wireBytes(size) + wireBytes(10 * WireSize.Mss)) * (8e9 / rate);
    expect(Math.max(end1, end2)).toBeGreaterThan(total - 2 * frameNs(rate));
    expect(Math.max(end1, end2)).toBeLessThanOrEqual(total + frameNs(rate));
  });

  for (const [label, rateBps, effective] of [
    ['a 2.5 Gbit/s cap', 2.5e9, 2.5e9],
    ['a 7 Gbit/s cap', 7e9, 7e9],
    ['the NIC rate (0)', 0, NIC_BPS],
    ['a cap above the NIC rate', 40e9, NIC_BPS],
  ] as const) {
    it(`sends a flow in size/rate at ${label}, never ahead of the rate`, () => {
      const rig = new Rig({ rateBps });
      const size = 500_000;
      const t0 = 5 * US;
      rig.startFlow(flow(1, size, t0));
      rig.run(20 * MS);
      expect(rig.tx.rateBps).toBe(effective);

      const deps = rig.departuresOf(1);
      expect(deps).toHaveLength(segments(size));
      const sendTime = deps.at(-1)!.end - t0;
      expect(Math.abs(sendTime - (wireBytes(size) * 8e9) / effective)).toBeLessThanOrEqual(
        frameNs(effective),
      );
      // by any departure, the flow has sent at most one frame more than the rate allows
      let bytes = 0;
      for (const d of deps) {
        bytes += d.frame.z;
        expect(bytes).toBeLessThanOrEqual(WireSize.Mtu + ((d.start - t0) * effective) / 8e9 + 1e-6);
      }
    });
  }

  it('paces every flow at the flow rate: each alone in size/rate, three together at three times it', () => {
    const rig = new Rig({ flowRateBps: 2.5e9 });
    const size = 300_000;
    rig.startFlow(flow(1, size, 0));
    rig.startFlow(flow(2, size, 100 * US));
    rig.startFlow(flow(3, size, 101 * US));
    rig.run(20 * MS);
    for (const [id, t0] of [
      [1, 0],
      [2, 100 * US],
      [3, 101 * US],
    ]) {
      const deps = rig.departuresOf(id);
      expect(deps).toHaveLength(segments(size));
      // a frame time at 2.5 Gbit/s apart: the flow takes size/rate, whoever else sends
      const sendTime = deps.at(-1)!.start - t0;
      expect(
        Math.abs(sendTime - ((wireBytes(size) - deps.at(-1)!.frame.z) * 8e9) / 2.5e9),
      ).toBeLessThanOrEqual(frameNs(10e9));
      // by any departure, the flow has sent at most one frame more than its rate allows
      let bytes = 0;
      for (const d of deps) {
        bytes += d.frame.z;
        expect(bytes).toBeLessThanOrEqual(WireSize.Mtu + ((d.start - t0) * 2.5e9) / 8e9 + 1e-6);
      }
    }
    // the third flow's first frame is handed over at once, though the pump slept for the others (it
    // may queue in the NIC behind the other two flows' frames)
    expect(rig.departuresOf(3)[0].start).toBeLessThan(101 * US + 2 * frameNs(10e9) + 1);
  });

  it('sends an ON period (a flow with gaps) at its drawn gaps, open loop, in frames of its packet size', () => {
    const rig = new Rig();
    // fixed 2 µs gaps, full frames: one frame every 2 µs exactly
    const fixed: FlowGaps = { seed: 1, dist: { kind: 'fixed', v: 2 * US }, packet: WireSize.Mtu };
    rig.startFlow({ ...flow(1, 5 * WireSize.Mss, 10 * US), gaps: fixed });
    // log-normal gaps around a 500 B frame's time (400 ns): some packets wait for the one before
    const gaps: FlowGaps = { seed: 7, dist: { kind: 'lognormal', median: 400, sigma: 1 }, packet: 500 };
    const n = 40;
    rig.startFlow({ ...flow(2, n * 460, 100 * US), gaps });
    rig.run(1 * MS);
    expect(rig.departuresOf(1).map((d) => d.start)).toEqual([10, 12, 14, 16, 18].map((t) => t * US));
    const deps = rig.departuresOf(2);
    expect(deps.map((d) => d.frame.z)).toEqual(Array(n).fill(500));
    expect(deps[0].frame.x).toEqual([n * 460, 460]);
    // frame k leaves at its planned time (the start plus the first k gaps, as onoff.ts's GapStream
    // draws them), or when the one before it has left, whichever is later
    const stream = new GapStream(gaps);
    let planned = 100 * US;
    let late = 0;
    for (const [k, d] of deps.entries()) {
      const want = k === 0 ? planned : Math.max(planned, deps[k - 1].end);
      expect(Math.abs(d.start - want)).toBeLessThanOrEqual(1);
      if (want > planned + 1) late++;
      planned += stream.next();
    }
    // seed 7: 26 of the 40 frames waited behind the one before (a median gap of one frame time)
    expect(late).toBe(26);
    // the receiver counts 500 B frames and delivers once, on the last
    expect(rig.delivered.map((x) => x.id)).toEqual([1, 2]);
    expect(rig.rx.receivedFrames()).toEqual([
      [1, 5],
      [2, n],
    ]);
  });

  it('stop() cancels the pump: no timers left, nothing more sent', () => {
    const rig = new Rig({ rateBps: 2e9 });
    rig.startFlow(flow(1, 1_000_000));
    rig.run(50 * US);
    const sent = rig.tx.senderStats(1)!.framesSent;
    expect(sent).toBeGreaterThan(0);
    expect(sent).toBeLessThan(segments(1_000_000));
    rig.tx.stop();
    rig.tx.stop(); // idempotent
    rig.run(100 * MS);
    expect(rig.tx.senderStats(1)!.framesSent).toBe(sent);
    expect(rig.departures).toHaveLength(sent);
    expect(rig.sched.pending).toBe(0);
  });
});

describe('UdpTransport receiver', () => {
  it('counts distinct frames and delivers once, on the last frame, despite loss, duplicates and reordering', () => {
    const rig = new Rig();
    const rx = rig.rx;
    const size = 5 * WireSize.Mss;
    const data = (f: number, q: number, v = 0): Frame =>
      makeFrame({ t: FrameType.Data, s: A, d: B, f, q, z: WireSize.Mtu, v, x: size });

    rx.onFrame(data(9, 0, 7), 10);
    rx.onFrame(data(9, 1, 8), 20);
    rx.onFrame(data(9, 3, 7), 30); // 2 is late
    rx.onFrame(data(9, 3, 7), 35); // a duplicate
    expect(rig.delivered).toEqual([]);
    rx.onFrame(data(9, 4, 7), 40);
    expect(rig.delivered).toEqual([{ id: 9, at: 40, via: [7, 8] }]);
    expect(rx.receivedFrames()).toEqual([[9, 4]]);
    rx.onFrame(data(9, 2, 7), 50); // reordered: counted, not delivered again
    rx.onFrame(data(9, 4, 7), 60);
    expect(rig.delivered).toHaveLength(1);
    expect(rx.receivedFrames()).toEqual([[9, 5]]);

    // a flow whose last frame is lost is never delivered, but its frames are counted
    rx.onFrame(data(10, 0), 70);
    rx.onFrame(data(10, 1), 80);
    expect(rig.delivered).toHaveLength(1);
    expect(new Map(rx.receivedFrames()).get(10)).toBe(2);
    // the unfinished one reports the path its frames took (here none turned: a same-switch path)
    rx.onFrame(data(11, 0, 8), 90);
    expect(rx.partialPaths()).toEqual([
      [10, [], 80],
      [11, [8], 90],
    ]);
    // a receiver never sends (silentNic throws) and keeps no sender state
    expect(rx.senderStats(9)).toBeUndefined();
    expect(rig.sched.pending).toBe(0);
  });

  it('end to end: a lossy path delivers the flow once with the frames that made it', () => {
    const size = 100 * WireSize.Mss;
    const rig = new Rig({ drop: (f) => f.q % 4 === 1 && f.q < 99 });
    rig.startFlow(flow(5, size));
    rig.run(10 * MS);
    expect(rig.delivered.map((d) => d.id)).toEqual([5]);
    expect(rig.delivered[0].at).toBe(rig.departuresOf(5).at(-1)!.frame.a);
    expect(rig.tx.senderStats(5)?.framesSent).toBe(100);
    expect(rig.rx.receivedFrames()).toEqual([[5, 75]]);
  });
});

describe('UDP transport wiring', () => {
  it('is chosen by the factory, capped at the NIC rate, and needs a NIC that gives rate and backlog', () => {
    const clock = new IdealClock(new Scheduler({ now: () => 0, realMs: (ns) => ns / 1e6 }, true));
    const nic = (rateBps?: number): Nic => ({
      send: () => true,
      ...(rateBps !== undefined && { rateBps, backlog: () => 0 }),
    });
    const t = createTransport(UDP_DEFAULTS, components(A, clock, nic(NIC_BPS)));
    expect(t).toBeInstanceOf(UdpTransport);
    expect((t as UdpTransport).rateBps).toBe(NIC_BPS);
    expect(new UdpTransport({ kind: 'udp', rateBps: 3e9 }, components(A, clock, nic(NIC_BPS))).rateBps).toBe(
      3e9,
    );
    expect(() => createTransport(UDP_DEFAULTS, components(A, clock, nic()))).toThrow(
      /udp transport: the NIC/,
    );
    expect(() => createTransport({ kind: 'udp', rateBps: -1 }, components(A, clock, nic(NIC_BPS)))).toThrow(
      /rate must be >= 0/,
    );
    // the baseline still works with a NIC that only sends
    expect(createTransport(BASELINE_DEFAULTS, components(A, clock, nic())).senderStats(1)).toBeUndefined();
  });

  const scenario = (transport: string): string => `
topology: { kind: star, hosts: 2 }
transport: ${transport}
workload: { pattern: list, flows: [{ src: h0, dst: h1, size: 10KB }] }
`;
  const resolve = (transport: string) => resolveScenario(parseScenario(scenario(transport), 'udp.yaml'));

  it('reads transport: { kind: udp, rate } from a scenario, and rejects fields of the other kind', () => {
    expect(resolve('{ kind: udp, rate: 5Gbps }').transport).toEqual({ kind: 'udp', rateBps: 5e9 });
    expect(resolve('{ kind: udp }').transport).toEqual({ kind: 'udp', rateBps: 0 });
    expect(resolve('{ kind: udp, flowRate: 2.5Gbps }').transport).toEqual({
      kind: 'udp',
      rateBps: 0,
      flowRateBps: 2.5e9,
    });
    expect(() => resolve('{ kind: baseline, flowRate: 1Gbps }')).toThrow(/transport\.flowRate/);
    expect(resolve('{ initCwnd: 4 }').transport).toEqual({ ...BASELINE_DEFAULTS, initCwnd: 4 });
    expect(() => resolve('{ kind: udp, initCwnd: 4 }')).toThrow(
      /transport\.initCwnd: 'initCwnd' applies to transport kind baseline, not udp/,
    );
    expect(() => resolve('{ kind: baseline, rate: 1Gbps }')).toThrow(
      /transport\.rate: 'rate' applies to transport kind udp, not baseline/,
    );
    expect(() => resolve('{ rate: 1Gbps }')).toThrow(/transport\.rate/);
  });

  it('puts frame counts in flows.csv and summary.json for UDP runs only', async () => {
    const report = (name: string, part: Partial<NodeReport>): NodeReport => ({
      name,
      now: 0,
      end: 'stop',
      fidelity: {
        lateness: new Histogram().snapshot(),
        arrivalLateness: new Histogram().snapshot(),
        causalityMisses: 0,
        framesHandled: 0,
        eventsHandled: 0,
      },
      metrics: new Metrics().snapshot(),
      ports: [],
      queues: [],
      queueHist: null,
      flows: [],
      received: [],
      ...part,
    });
    const rec = {
      src: 0,
      dst: 1,
      size: 10 * WireSize.Mss,
      start: 1000,
      finish: -1,
      retransmits: 0,
      timeouts: 0,
    };
    const result = (transport: string, rxFrames?: Array<[number, number]>): FabricResult => {
      const sc = resolve(transport);
      return {
        runId: 'test',
        scenario: sc,
        plan: { nodes: [], flows: [] },
        refusals: [],
        trafficStart: 1000,
        endNs: 0,
        wallMs: 0,
        reports: [
          report('h0', {
            flows: [
              { ...rec, id: 0, via: [], framesSent: 10 },
              { ...rec, id: 1, via: [], framesSent: 10 },
            ],
          }),
          report('h1', { received: [[0, 50_000, [2]]], ...(rxFrames && { rxFrames }) }),
        ],
        events: [],
        faults: [],
        processes: { started: 3, leftRunning: 0 },
        missing: [],
        crashes: [],
        reachedNs: 0,
      };
    };

    const udp = result('{ kind: udp }', [[0, 8]]);
    const { summary, flows } = collect(udp, 'test');
    expect(flows.map((f) => [f.framesSent, f.framesReceived])).toEqual([
      [10, 8],
      [10, 0],
    ]);
    expect(summary.frames).toEqual({ sent: 20, received: 8, lost: 12 });
    const baseline = collect(result('{ kind: baseline }'), 'test');
    expect(baseline.summary.frames).toBeUndefined();
    expect(baseline.flows[0].framesReceived).toBeUndefined();

    const out = mkdtempSync(join(tmpdir(), 'dcemu-udp-'));
    try {
      await writeResults(out, udp, summary, flows);
      const csv = readFileSync(join(out, 'flows.csv'), 'utf8').trim().split('\n');
      // (deadline_ns and best_effort last, empty: these flows have no deadline and are main flows)
      expect(csv[0]).toMatch(/,via,frames_sent,frames_received,outcome,deadline_ns,best_effort$/);
      expect(csv[1]).toMatch(/,sw0,10,8,completed,,$/);
      expect(csv[2]).toMatch(/,,10,0,unexplained,,$/);
      await writeResults(out, result('{ kind: baseline }'), baseline.summary, baseline.flows);
      const base = readFileSync(join(out, 'flows.csv'), 'utf8').trim().split('\n');
      expect(base[1]).toMatch(/,sw0,10,,completed,,$/);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
