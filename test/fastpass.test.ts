/**
 * Fastpass in one process: the timeslot allocator (maximal matchings from the bitmap table, max-min
 * and min-FCT orders, the rack tier's bandwidth check), path selection (edge colourings by Euler
 * splits, power-of-two and general degrees), the host qdisc's FCP (cumulative counts, lost and late
 * allocations, RESET by term, greedy packing, loss judgement) over a stub NIC, fault isolation, and
 * the arbiter role's sessions, allocation, watchdog, takeover and step-down over a stub node.
 */
// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { describe, expect, it } from 'vitest';
import { IdealClock } from '../core/clock.js';
import { type Frame, FrameType, makeFrame } from '../core/frame.js';
import { Metrics } from '../core/metrics.js';
import type { NodeContext } from '../core/node-runtime.js';
import { Rng } from '../core/random.js';
import { Scheduler } from '../core/scheduler.js';
import { fatTree } from '../orchestrator/topology/fattree.js';
import { type Allocation, TimeslotAllocator } from '../schemes/fastpass/arbiter/allocator.js';
import { FaultIsolation } from '../schemes/fastpass/arbiter/isolation.js';
import { colourEdges, selectPaths } from '../schemes/fastpass/arbiter/pathsel.js';
import { FastpassArbiter } from '../schemes/fastpass/arbiter/role.js';
import { fastpassFabric } from '../schemes/fastpass/definition/settings.js';
import { FastpassQdisc } from '../schemes/fastpass/host/qdisc.js';
import {
  type FastpassArbiterConfig,
  type FastpassFabric,
  type FastpassHostConfig,
  Fcp,
  type FcpMessage,
  LossKind,
  planes,
  routeVia,
} from '../schemes/fastpass/wire.js';

function oneRack(n: number, policy: 'max-min' | 'min-fct' = 'max-min') {
  return new TimeslotAllocator({ endpoints: n, rackOf: new Array(n).fill(0), rackCapacity: 0, policy });
}

/** every timeslot holds a matching: no source or destination twice */
function expectMatchings(allocs: Allocation[]): void {
  const seen = new Set<string>();
  for (const a of allocs) {
    for (const key of [`s${a.slot}:${a.src}`, `d${a.slot}:${a.dst}`]) {
      expect(seen.has(key), key).toBe(false);
      seen.add(key);
    }
  }
}

describe('Fastpass timeslot allocator (§3)', () => {
  it('allocates the paper’s figure 4 example as a maximal matching', () => {
    const a = oneRack(4);
    // demands in least-recently-allocated order: 1→2, 3→1, 0→1 (dst 1 taken), 2→3, 0→0 none
    a.demand(1, 2, 1);
    a.demand(3, 1, 1);
    a.demand(0, 1, 1);
    a.demand(2, 3, 1);
    const got = a.allocateBatch(0);
    expect(got.filter((x) => x.slot === 0).map((x) => `${x.src}>${x.dst}`)).toEqual(['1>2', '3>1', '2>3']);
    // 0→1 waits for the next timeslot of the batch: destination 1 is busy in timeslot 0
    expect(got.find((x) => x.src === 0)).toEqual({ slot: 1, src: 0, dst: 1 });
    expectMatchings(got);
    expect(a.pending()).toBe(0);
  });

  it('shares a receiver max-min fairly across batches (least recently allocated first)', () => {
    const a = oneRack(5);
    for (let s = 1; s <= 4; s++) a.demand(s, 0, 1000);
    const per = new Map<number, number>();
    for (let b = 0; b < 40; b++) {
      const got = a.allocateBatch(b * 8);
      expect(got.length).toBe(8);
      expectMatchings(got);
      for (const x of got) per.set(x.src, (per.get(x.src) ?? 0) + 1);
    }
    // 320 timeslots of the receiver, 80 to each sender exactly
    expect([...per.values()]).toEqual([80, 80, 80, 80]);
    expect(a.pending()).toBe(4000 - 320);
  });

  it('min-FCT serves the pair with the fewest remaining timeslots first', () => {
    const a = oneRack(3, 'min-fct');
    a.demand(1, 0, 20);
    a.demand(2, 0, 3);
    const got = a.allocateBatch(0);
    expect(got.slice(0, 3).map((x) => x.src)).toEqual([2, 2, 2]);
    expect(got.slice(3).every((x) => x.src === 1)).toBe(true);
    expect(got.length).toBe(8);
  });

  it('keeps cross-rack pairs within the racks’ uplinks (the tier check of footnote 2)', () => {
    // two racks of 4, one uplink timeslot per timeslot: 4 senders in rack 0 to 4 receivers in rack 1
    const a = new TimeslotAllocator({
      endpoints: 8,
      rackOf: [0, 0, 0, 0, 1, 1, 1, 1],
      rackCapacity: 1,
      policy: 'max-min',
    });
    for (let s = 0; s < 4; s++) a.demand(s, 4 + s, 100);
    a.demand(0, 1, 100); // inside the rack: no uplink needed
    const got = a.allocateBatch(0);
    expectMatchings(got);
    for (let slot = 0; slot < 8; slot++) {
      const cross = got.filter((x) => x.slot === slot && x.dst >= 4);
      expect(cross.length).toBeLessThanOrEqual(1);
    }
    expect(got.filter((x) => x.dst >= 4).length).toBe(8);
    a.setRackCapacity(0);
    expect(a.allocateBatch(8).filter((x) => x.dst >= 4)).toEqual([]);
  });

  it('forgets a reset source’s demand', () => {
    const a = oneRack(3);
    a.demand(1, 0, 10);
    a.demand(2, 0, 10);
    a.clearSource(1);
    expect(a.pending()).toBe(10);
    expect(a.allocateBatch(0).every((x) => x.src === 2)).toBe(true);
  });

  it('fills every timeslot of a saturated all-to-all batch', () => {
    const n = 16;
    const a = oneRack(n);
    for (let s = 0; s < n; s++) for (let d = 0; d < n; d++) if (s !== d) a.demand(s, d, 50);
    for (let b = 0; b < 10; b++) {
      const got = a.allocateBatch(b * 8);
      expectMatchings(got);
      // greedy maximal matchings: at least half of a perfect one per timeslot, here nearly all
      expect(got.length).toBeGreaterThanOrEqual(n * 8 * 0.9);
    }
  });
});

/** checks a colouring: proper, and within the maximum degree */
function checkColouring(n: number, l: number[], r: number[]): number {
  const c = colourEdges(n, l, r);
  const deg = new Map<string, number>();
  for (let i = 0; i < l.length; i++) {
    deg.set(`l${l[i]}`, (deg.get(`l${l[i]}`) ?? 0) + 1);
    deg.set(`r${r[i]}`, (deg.get(`r${r[i]}`) ?? 0) + 1);
  }
  const D = Math.max(0, ...deg.values());
  const seen = new Set<string>();
  for (let i = 0; i < l.length; i++) {
    expect(c[i]).toBeGreaterThanOrEqual(0);
    expect(c[i]).toBeLessThan(D);
    for (const key of [`l${l[i]}:${c[i]}`, `r${r[i]}:${c[i]}`]) {
      expect(seen.has(key), key).toBe(false);
      seen.add(key);
    }
  }
  return D;
}

describe('Fastpass path selection (§4)', () => {
  it('colours the paper’s figure 5 graph with as many spines as its degree', () => {
    // ToR graph: 0→1, 0→2, 1→0, 1→2, 2→0, 2→1 (degree 2)
    expect(checkColouring(3, [0, 0, 1, 1, 2, 2], [1, 2, 0, 2, 0, 1])).toBe(2);
  });

  it('colours power-of-two, odd and irregular multigraphs properly with D colours', () => {
    const rng = new Rng(7);
    for (const [n, m] of [
      [4, 16],
      [8, 24],
      [5, 17],
      [16, 200],
      [3, 1],
    ]) {
      const l: number[] = [];
      const r: number[] = [];
      for (let i = 0; i < m; i++) {
        l.push(Math.floor(rng.next() * n));
        r.push(Math.floor(rng.next() * n));
      }
      checkColouring(n, l, r);
    }
  });

  it('pads to a power of two when colours allow (splits only), and stays within them', () => {
    const l = [0, 0, 0, 1, 1, 2];
    const r = [1, 2, 0, 2, 0, 1];
    const c = colourEdges(3, l, r, 4);
    expect(Math.max(...c)).toBeLessThan(4);
    const seen = new Set<string>();
    for (let i = 0; i < l.length; i++) {
      for (const key of [`l${l[i]}:${c[i]}`, `r${r[i]}:${c[i]}`]) {
        expect(seen.has(key)).toBe(false);
        seen.add(key);
      }
    }
    // only 3 colours available: D = 3 exactly
    expect(Math.max(...colourEdges(3, l, r, 3))).toBe(2);
  });

  it('colours parallel edges (one ToR pair with many packets) apart', () => {
    const c = colourEdges(2, [0, 0, 0], [1, 1, 1]);
    expect(new Set(c).size).toBe(3);
  });
});

// ---- the host qdisc and the arbiter, over a stub fabric (one process, exact times) ----

const SLOT = 1200;
const hostCfg: FastpassHostConfig = {
  slotNs: SLOT,
  horizonNs: 65_000,
  arbiters: [{ id: 9, routes: [[5]] }],
  aggregateNs: 2_000,
  timeoutNs: 200_000,
  lateNs: 2 * SLOT,
  limitBytes: 1 << 20,
};

function qdiscRig() {
  const sched = new Scheduler(null);
  const clock = new IdealClock(sched);
  const sent: Frame[] = [];
  const q = new FastpassQdisc(hostCfg, 1, clock, { send: (f) => sent.push(f) > 0 }, () => sched.current);
  const fcp = () => sent.filter((f) => f.t === FrameType.Control).map((f) => f.x as FcpMessage);
  const data = () => sent.filter((f) => f.t !== FrameType.Control);
  const fromArb = (x: FcpMessage) =>
    q.onControl(makeFrame({ t: FrameType.Control, s: 9, d: 1, z: 64, x }), sched.current);
  const at = (t: number, fn: () => void) => {
    sched.at(t, fn);
    sched.runBefore(t + 1);
  };
  const seg = (dst: number, q: number, z = 1500) =>
    makeFrame({ t: FrameType.Data, s: 1, d: dst, f: 7, q, z, x: 100_000 });
  return { sched, q, sent, fcp, data, fromArb, at, seg };
}

describe('Fastpass client qdisc (§5.3, §6.1)', () => {
  it('asks for timeslots with cumulative counts, sends at the timeslot start with the route, packs small packets', () => {
    const r = qdiscRig();
    r.at(0, () => {
      r.q.nic.send(r.seg(2, 0));
      r.q.nic.send(r.seg(2, 1));
    });
    r.at(2_000, () => {});
    // no session yet: the first request carries nonce 0 and the demand so far
    expect(r.fcp()).toEqual([{ fp: Fcp.Request, n: 0, d: [[2, 2]], ri: 1 % 1, l: [] }]);
    r.at(3_000, () => r.fromArb({ fp: Fcp.Reset, n: 77, t: 0 }));
    expect(r.fcp().at(-1)).toMatchObject({ fp: Fcp.Request, n: 77, d: [[2, 2]] });
    // 20 acks to host 3 fit one timeslot (64 B each)
    r.at(4_000, () => {
      for (let i = 0; i < 20; i++)
        r.q.nic.send(makeFrame({ t: FrameType.Ack, s: 1, d: 3, f: 8, q: i, z: 64 }));
    });
    r.at(10_000, () => {});
    expect(r.fcp().at(-1)).toMatchObject({
      d: [
        [2, 2],
        [3, 1],
      ],
    });
    r.at(20_000, () =>
      r.fromArb({
        fp: Fcp.Alloc,
        n: 77,
        a: [
          [100, 2, [4, 0], -1],
          [101, 3, [4, 1], -1],
          [102, 2, [4, 0], -1],
        ],
        c: [
          [2, 2, 2],
          [3, 1, 1],
        ],
      }),
    );
    r.sched.runBefore(200_000);
    const d = r.data();
    expect(d).toHaveLength(22);
    expect(d[0]).toMatchObject({ d: 2, q: 0, r: [4, 0] });
    expect(d.slice(1, 21).every((f) => f.d === 3 && f.r?.[1] === 1)).toBe(true);
    expect(d[21]).toMatchObject({ d: 2, q: 1 });
    expect(r.q.report()).toMatchObject({ timeslotsAllocated: 3, timeslotsUsed: 3, late: 0, queued: 0 });
  });

  it('asks again for allocations the counts show lost, and for timeslots it reached too late', () => {
    const r = qdiscRig();
    r.at(0, () => r.fromArb({ fp: Fcp.Reset, n: 5, t: 0 }));
    r.at(1_000, () => {
      for (let i = 0; i < 3; i++) r.q.nic.send(r.seg(2, i));
    });
    r.at(4_000, () => {});
    expect(r.fcp().at(-1)).toMatchObject({ n: 5, d: [[2, 3]] });
    // one allocation arrives; the counts say two were sent: one lost, asked for again (cumulative 4)
    r.at(10_000, () => r.fromArb({ fp: Fcp.Alloc, n: 5, a: [[50, 2, [4], -1]], c: [[2, 3, 2]] }));
    r.at(13_000, () => {});
    expect(r.fcp().at(-1)).toMatchObject({ d: [[2, 4]] });
    // a timeslot already 5 slots past: not used, asked for again (cumulative 5)
    r.at(20_000, () => r.fromArb({ fp: Fcp.Alloc, n: 5, a: [[11, 2, [4], -1]], c: [[2, 4, 3]] }));
    r.at(23_000, () => {});
    expect(r.fcp().at(-1)).toMatchObject({ d: [[2, 5]] });
    expect(r.q.report()).toMatchObject({ allocationsLost: 1, late: 1 });
    // another session's allocation is not taken
    r.at(30_000, () => r.fromArb({ fp: Fcp.Alloc, n: 6, a: [[100, 2, [4], -1]], c: [] }));
    expect(r.q.report().timeslotsAllocated).toBe(2);
  });

  it('a RESET of a higher term drops the old timeslots and asks again from the queue; an older term is ignored', () => {
    const r = qdiscRig();
    r.at(0, () => r.fromArb({ fp: Fcp.Reset, n: 5, t: 1 }));
    r.at(1_000, () => {
      r.q.nic.send(r.seg(2, 0));
      r.q.nic.send(r.seg(2, 1));
    });
    r.at(10_000, () => r.fromArb({ fp: Fcp.Alloc, n: 5, a: [[100, 2, [4], -1]], c: [[2, 2, 1]] }));
    r.at(20_000, () => r.fromArb({ fp: Fcp.Reset, n: 8, t: 0 }));
    expect(r.q.report().resets).toBe(1);
    r.at(30_000, () => r.fromArb({ fp: Fcp.Reset, n: 9, t: 2 }));
    expect(r.fcp().at(-1)).toMatchObject({ n: 9, d: [[2, 2]] });
    r.sched.runBefore(1_000_000);
    // the old session's timeslot 100 was dropped with it: nothing sent
    expect(r.data()).toHaveLength(0);
    expect(r.q.report()).toMatchObject({ resets: 2, queued: 2 });
  });

  it('tags a resent segment with the spine its copy took; the receiver tells a data loss from an ack loss', () => {
    const snd = qdiscRig();
    snd.at(0, () => snd.fromArb({ fp: Fcp.Reset, n: 5, t: 0 }));
    snd.at(1_000, () => snd.q.nic.send(snd.seg(2, 0)));
    snd.at(10_000, () => snd.fromArb({ fp: Fcp.Alloc, n: 5, a: [[20, 2, [4, 1, 0], 1]], c: [[2, 1, 1]] }));
    snd.sched.runBefore(30_000);
    snd.at(300_000, () => snd.q.nic.send(snd.seg(2, 0)));
    snd.at(310_000, () => snd.fromArb({ fp: Fcp.Alloc, n: 5, a: [[300, 2, [4, 0, 0], 0]], c: [[2, 2, 2]] }));
    snd.sched.runBefore(400_000);
    const [first, again] = snd.data();
    expect(first.x).toBe(100_000);
    expect(again.x).toMatchObject({ via: 1, at: 300_000 });
    expect(snd.q.report().retransmitted).toBe(1);

    // a receiver that never had segment 0: a data loss on spine 1, reported with its next request
    const rcv = qdiscRig();
    rcv.at(0, () => rcv.fromArb({ fp: Fcp.Reset, n: 5, t: 0 }));
    const copy = { ...again, x: { ...(again.x as object) } };
    rcv.at(400_000, () => rcv.q.received(copy));
    expect(copy.x).toBe(100_000);
    rcv.at(410_000, () => {});
    expect(rcv.fcp().at(-1)).toMatchObject({ l: [[1, 7, 0, LossKind.Data]] });
  });
});

describe('Fastpass fault isolation (§5.2)', () => {
  it('takes a spine out on losses from two endpoints within the window, for the hold, never the last one', () => {
    const iso = new FaultIsolation(2, { reporters: 2, windowNs: 1000, holdNs: 5000 });
    expect(iso.report(0, 1, 0)).toBe(false);
    expect(iso.report(10, 1, 0)).toBe(false);
    // the first report fell out of the window
    expect(iso.report(2000, 2, 0)).toBe(false);
    expect(iso.report(2500, 3, 0)).toBe(true);
    expect(iso.usable(2600)).toEqual([1]);
    // spine 1 is the last one: kept
    iso.report(2700, 1, 1);
    expect(iso.report(2800, 2, 1)).toBe(false);
    expect(iso.usable(7600)).toEqual([0, 1]);
    expect(iso.log).toEqual([
      [2500, 0, 1],
      [7600, 0, 0],
    ]);
  });
});

/** an arbiter over a stub node context: frames it sends are collected, timers run on a scheduler */
function arbiterRig(rank: number) {
  const sched = new Scheduler(null);
  const clock = new IdealClock(sched);
  const out: Frame[] = [];
  const events: Array<[string, Record<string, unknown>]> = [];
  const fabric: FastpassFabric = {
    hosts: [0, 1, 2, 3].map((h) => ({ rack: h >> 1, port: h & 1 })),
    leafUp: [
      [2, 3],
      [2, 3],
    ],
    spineDown: [
      [0, 1],
      [0, 1],
    ],
    spineFactor: 1,
    arbiters: [
      { id: 10, rack: 0, port: 4 },
      { id: 11, rack: 1, port: 4 },
    ],
  };
  const config: FastpassArbiterConfig = {
    rank,
    policy: 'max-min',
    fcpShare: 0,
    slotNs: SLOT,
    horizonNs: 65_000,
    fabric,
    watchdogNs: 100_000,
    takeoverNs: 1_000_000,
    isolation: { reporters: 2, windowNs: 1_000_000, holdNs: 10_000_000 },
    notifyBatches: 1,
    cores: { alloc: 1, pathsel: 1 },
  };
  const ctx = {
    config: { id: 10 + rank, name: `arb${rank}`, seed: 1, scheme: { kind: 'fastpass', config } },
    sched,
    clock,
    ports: [{ send: (f: Frame) => out.push(f) > 0 }],
    metrics: new Metrics(),
    emit: (kind: string, _t: number, fields: Record<string, unknown> = {}) => events.push([kind, fields]),
  } as unknown as NodeContext;
  const arb = new FastpassArbiter(ctx);
  const hear = (t: number, src: number, x: FcpMessage) => {
    sched.at(t, () => arb.onFrame(t, 0, makeFrame({ t: FrameType.Control, s: src, d: 10 + rank, z: 64, x })));
    sched.runBefore(t + 1);
  };
  return { sched, arb, out, events, hear, fcp: () => out.map((f) => [f.d, f.x as FcpMessage] as const) };
}

describe('Fastpass arbiter role (§3–§5)', () => {
  it('resets an unknown endpoint, allocates its demand ahead of time on a coloured path, counts what it sent', () => {
    const a = arbiterRig(0);
    a.sched.at(0, () => a.arb.start());
    a.hear(1_000, 0, { fp: Fcp.Request, n: 0, d: [[3, 4]], ri: 1, l: [] });
    const reset = a.fcp().find(([, m]) => m.fp === Fcp.Reset)!;
    expect(reset[0]).toBe(0);
    const nonce = (reset[1] as { n: number }).n;
    // a request of before the RESET gets the same RESET again, not a new session
    a.hear(1_500, 0, { fp: Fcp.Request, n: 0, d: [[3, 4]], ri: 1, l: [] });
    expect(
      a
        .fcp()
        .filter(([, m]) => m.fp === Fcp.Reset)
        .map(([, m]) => (m as { n: number }).n),
    ).toEqual([nonce, nonce]);
    a.hear(2_000, 0, { fp: Fcp.Request, n: nonce, d: [[3, 4]], ri: 1, l: [] });
    a.sched.runBefore(200_000);
    const allocs = a.fcp().filter(([, m]) => m.fp === Fcp.Alloc);
    const slots = allocs.flatMap(([, m]) => (m as Extract<FcpMessage, { fp: 2 }>).a);
    expect(slots).toHaveLength(4);
    // h0 (rack 0) to h3 (rack 1, ToR port 1): up port of the spine, the spine's port to rack 1, port 1
    for (const [slot, dst, route, spine] of slots) {
      expect(dst).toBe(3);
      expect(route).toEqual([2 + spine, 1, 1]);
      // allocated a horizon ahead of the timeslot's start
      expect(slot * SLOT).toBeGreaterThanOrEqual(65_000);
    }
    expect((allocs.at(-1)![1] as Extract<FcpMessage, { fp: 2 }>).c).toEqual([[3, 4, 4]]);
    // watchdogs to the secondary, on alternating spines
    const wd = a.out.filter((f) => (f.x as FcpMessage).fp === Fcp.Watchdog);
    expect(wd.length).toBe(2);
    expect(wd.map((f) => f.r)).toEqual([
      [2, 1, 4],
      [3, 1, 4],
    ]);
  });

  it('a secondary takes over after Td of silence at a higher term, and a primary hearing it steps down', () => {
    const b = arbiterRig(1);
    b.sched.at(0, () => b.arb.start());
    b.hear(500_000, 0, { fp: Fcp.Watchdog, t: 0, r: 0 });
    // requests are heard but not answered while secondary
    b.hear(600_000, 0, { fp: Fcp.Request, n: 0, d: [[3, 1]], ri: 0, l: [] });
    expect(b.out).toHaveLength(0);
    b.sched.runBefore(1_499_000);
    expect(b.events).toEqual([]);
    b.sched.runBefore(1_600_000);
    expect(b.events[0]).toEqual(['fastpass-takeover', { term: 1, rank: 1 }]);

    const a = arbiterRig(0);
    a.sched.at(0, () => a.arb.start());
    a.hear(2_000_000, 11, { fp: Fcp.Watchdog, t: 1, r: 1 });
    expect(a.events.map(([k]) => k)).toEqual(['fastpass-step-down']);
    const sent = a.out.length;
    a.sched.runBefore(3_000_000);
    // a secondary now: no more watchdogs, batches or answers
    expect(a.out.length).toBe(sent);
    expect(a.arb.report().scheme).toMatchObject({ steppedDown: [2_000_000] });
  });
});

describe('Fastpass hierarchical path selection (§4, a FatTree)', () => {
  it('routes full permutations through aggregation switches and cores with no link used twice in a timeslot', () => {
    const topo = fatTree({
      k: 4,
      host: { rateBps: 10e9, propNs: 1000 },
      fabric: { rateBps: 10e9, propNs: 1000 },
    });
    const f = fastpassFabric(topo);
    expect(planes(f)).toBe(2);
    expect(f.pods?.coresPerAgg).toBe(2);
    const byName = new Map(topo.nodes.map((n) => [n.name, n]));
    const racks = topo.nodes.filter((n) => n.role === 'switch' && n.tier === 1);
    const rng = new Rng(3);
    const allocs: Array<{ slot: number; src: number; dst: number }> = [];
    for (let slot = 0; slot < 8; slot++) {
      // a random derangement of the 16 hosts: every host sends one packet and receives one
      const perm = Array.from({ length: 16 }, (_, i) => i);
      do {
        for (let i = 15; i > 0; i--) {
          const j = Math.floor(rng.next() * (i + 1));
          [perm[i], perm[j]] = [perm[j], perm[i]];
        }
      } while (perm.some((d, s) => d === s));
      perm.forEach((dst, src) => {
        allocs.push({ slot, src, dst });
      });
    }
    const { plane, core } = selectPaths(f, allocs, 0, 8, [0, 1]);
    const used = new Set<string>();
    let crossPod = 0;
    allocs.forEach((a, i) => {
      const from = f.hosts[a.src].rack;
      const to = f.hosts[a.dst];
      const route = routeVia(f, from, to.rack, to.port, plane[i], core[i]);
      if (route.length === 5) crossPod++;
      // walk the route from the source's ToR: every (switch, egress port) at most once per timeslot
      let node = racks[from];
      for (const port of route) {
        const key = `${a.slot}:${node.name}:${port}`;
        expect(used.has(key), key).toBe(false);
        used.add(key);
        node = byName.get(node.ports[port].peer)!;
      }
      expect(node.name).toBe(`h${a.dst}`);
    });
    expect(crossPod).toBeGreaterThan(50);
  });
});
