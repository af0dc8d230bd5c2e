/**
 * Flowtune's allocator in one process: NED converges to weighted proportional fairness (the known
 * optima of one bottleneck and of a parking lot), stays online as flowlets come and go, and the
 * normalizers keep every link within its capacity (F-NORM losing less throughput than U-NORM).
 */
// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { describe, expect, it } from 'vitest';
import { IdealClock } from '../core/clock.js';
import { type Frame, FrameType, makeFrame } from '../core/frame.js';
import { Metrics } from '../core/metrics.js';
import type { NodeContext } from '../core/node-runtime.js';
import { Scheduler } from '../core/scheduler.js';
import { loadScenarioFile } from '../orchestrator/scenario/load.js';
import { resolveScenario } from '../orchestrator/scenario/resolve.js';
import { FabricLinks } from '../schemes/flowtune/arbiter/links.js';
import { Ned } from '../schemes/flowtune/arbiter/ned.js';
import { FlowtuneAllocator } from '../schemes/flowtune/arbiter/role.js';
import { ProportionalFair } from '../schemes/flowtune/definition/optimum.js';
import {
  allocatorRoute,
  allSpines,
  dataRoute,
  type FlowtuneAllocatorConfig,
  type FlowtuneFabric,
  type FlowtuneMessage,
  Ft,
  flowtuneBytes,
  isFlowtune,
  pickSpine,
  type UpdateMessage,
} from '../schemes/flowtune/wire.js';

const caps = (...c: number[]) => Float64Array.from(c);

function run(ned: Ned, n: number): void {
  for (let i = 0; i < n; i++) ned.iterate();
  ned.normalize('none');
}

describe('Flowtune NED (§3)', () => {
  it('shares one bottleneck equally among equal weights, and by weight', () => {
    const ned = new Ned(caps(10), 0.4);
    for (let f = 0; f < 4; f++) ned.add(f, [0]);
    run(ned, 60);
    for (let f = 0; f < 4; f++) expect(ned.rateOfFlow(f)).toBeCloseTo(2.5, 3);
    ned.add(9, [0], 2);
    run(ned, 60);
    expect(ned.rateOfFlow(9)).toBeCloseTo(10 / 3, 3);
    expect(ned.rateOfFlow(0)).toBeCloseTo(10 / 6, 3);
  });

  it('reaches the proportionally fair optimum of a parking lot (1/3 for the long flow, 2/3 for the short ones)', () => {
    const ned = new Ned(caps(1, 1), 0.4);
    ned.add(0, [0, 1]);
    ned.add(1, [0]);
    ned.add(2, [1]);
    run(ned, 200);
    expect(ned.rateOfFlow(0)).toBeCloseTo(1 / 3, 3);
    expect(ned.rateOfFlow(1)).toBeCloseTo(2 / 3, 3);
    expect(ned.rateOfFlow(2)).toBeCloseTo(2 / 3, 3);
  });

  it('is online: a flow that leaves gives its share back without restarting the prices', () => {
    const ned = new Ned(caps(10), 0.4);
    ned.add(1, [0]);
    ned.add(2, [0]);
    run(ned, 50);
    const price = ned.price[0];
    ned.remove(1);
    expect(ned.price[0]).toBe(price);
    run(ned, 50);
    expect(ned.rateOfFlow(2)).toBeCloseTo(10, 3);
    expect(ned.has(1)).toBe(false);
  });
});

describe("the proportional-fair optimum, solved without NED (the summary's reference)", () => {
  it('gives the known optima: one bottleneck shared equally, a parking lot 1/3 and 2/3, an unfull link unpriced', () => {
    const pf = new ProportionalFair([10]);
    for (let f = 0; f < 4; f++) pf.add(f, [0]);
    for (const x of pf.solve().values()) expect(x).toBeCloseTo(2.5, 8);
    const lot = new ProportionalFair([1, 1, 5]);
    lot.add(0, [0, 1]);
    lot.add(1, [0, 2]);
    lot.add(2, [1]);
    const r = lot.solve();
    expect(r.get(0)).toBeCloseTo(1 / 3, 8);
    expect(r.get(1)).toBeCloseTo(2 / 3, 8);
    expect(r.get(2)).toBeCloseTo(2 / 3, 8);
    // link 2 carries 2/3 of its 5: not full, so no price
    expect(lot.price[2]).toBe(0);
  });

  it("agrees with NED's fixed point on random small fabrics, and follows a flow set that changes", () => {
    // a deterministic generator: the same cases on every run
    let seed = 12345;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    let worst = 0;
    for (let trial = 0; trial < 20; trial++) {
      const links = 3 + Math.floor(rnd() * 6);
      const capacity = Array.from({ length: links }, () => 1 + Math.floor(rnd() * 40));
      const ned = new Ned(Float64Array.from(capacity), 0.4);
      const pf = new ProportionalFair(capacity);
      const flows = 2 + Math.floor(rnd() * 10);
      for (let f = 0; f < flows; f++) {
        const path = [
          ...new Set(Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => Math.floor(rnd() * links))),
        ];
        ned.add(f, path);
        pf.add(f, path);
      }
      // NED settles slowly where links are tightly coupled (one of these cases needs ~50,000 iterations)
      run(ned, 50_000);
      const ours = pf.solve();
      ned.forEachRate((id, x) => {
        worst = Math.max(worst, Math.abs(x - ours.get(id)!) / ours.get(id)!);
      });
      // one flow leaves: the warm prices settle to the new optimum too
      ned.remove(0);
      pf.remove(0);
      run(ned, 50_000);
      const after = pf.solve();
      expect(after.has(0)).toBe(false);
      ned.forEachRate((id, x) => {
        worst = Math.max(worst, Math.abs(x - after.get(id)!) / after.get(id)!);
      });
    }
    expect(worst).toBeLessThan(1e-6);
  });
});

describe('Flowtune normalization (§4)', () => {
  it('F-NORM and U-NORM keep every link within capacity right after a change; F-NORM keeps more throughput', () => {
    // three links; flows 0..3 on link 0, flow 4 across links 0 and 1, flows 5..7 on link 2 alone
    const setup = () => {
      const ned = new Ned(caps(10, 10, 10), 0.4);
      for (let f = 0; f < 4; f++) ned.add(f, [0]);
      ned.add(4, [0, 1]);
      for (let f = 5; f < 8; f++) ned.add(f, [2]);
      run(ned, 100);
      // a burst of arrivals on link 0: the old prices over-allocate it for a while
      for (let f = 10; f < 16; f++) ned.add(f, [0]);
      ned.iterate();
      return ned;
    };
    const total = (ned: Ned) => [...ned.entries()].reduce((a, [, x]) => a + x, 0);
    const loadOn = (ned: Ned, links: Record<number, number[]>, l: number) =>
      [...ned.entries()].filter(([id]) => (links[id] ?? [0]).includes(l)).reduce((a, [, x]) => a + x, 0);
    const paths: Record<number, number[]> = { 4: [0, 1], 5: [2], 6: [2], 7: [2] };
    const raw = setup();
    raw.normalize('none');
    expect(loadOn(raw, paths, 0)).toBeGreaterThan(10);
    const f = setup();
    f.normalize('f-norm');
    const u = setup();
    u.normalize('u-norm');
    for (const n of [f, u])
      for (const l of [0, 1, 2]) expect(loadOn(n, paths, l)).toBeLessThanOrEqual(10 + 1e-9);
    // U-NORM slows link 2's flows too, F-NORM only those through the congested link
    expect(total(f)).toBeGreaterThan(total(u));
    expect(f.rateOfFlow(5)).toBeCloseTo(10 / 3, 3);
  });
});

/** two racks of two hosts under two spines; the allocator on port 2 of each spine */
const FABRIC: FlowtuneFabric = {
  hosts: [0, 1, 2, 3].map((h) => ({ rack: h >> 1, rateBps: 10e9 })),
  fabricRateBps: 10e9,
  racks: 2,
  spines: 2,
  leafUp: [
    [2, 3],
    [2, 3],
  ],
  spineDown: [
    [0, 1],
    [0, 1],
  ],
  toAllocator: [2, 2],
  hostPort: [0, 1, 0, 1],
};

describe('Flowtune wire and fabric (§6.2)', () => {
  it("charges §6.2's bytes over the headers, at least a minimum frame", () => {
    expect(flowtuneBytes({ ft: Ft.Notify, b: 0, e: [], k: 0 })).toBe(64);
    const starts = Array.from(
      { length: 4 },
      (_, i) => [0, i, 1, 1000, 0] as [0, number, number, number, number],
    );
    expect(flowtuneBytes({ ft: Ft.Notify, b: 0, e: [...starts, [1, 9]], k: 0 })).toBe(40 + 64 + 4);
    expect(
      flowtuneBytes({
        ft: Ft.Update,
        n: 1,
        r: Array.from({ length: 10 }, (_, i) => [i, 1e9]),
        k: 0,
        u: 3,
        i: 0,
      }),
    ).toBe(100);
  });

  it('accepts only well-formed messages (hostile fields are dropped, not trusted)', () => {
    const good: FlowtuneMessage[] = [
      {
        ft: Ft.Notify,
        b: 3,
        e: [
          [0, 1, 2, 1500, 1],
          [1, 1],
        ],
        k: 2,
        y: 1,
      },
      { ft: Ft.Update, n: 0, r: [], k: 0, u: 1, i: 5_000_000 },
    ];
    for (const m of good) expect(isFlowtune(m)).toBe(true);
    const bad = [
      null,
      7,
      { ft: 9 },
      { ft: Ft.Notify, b: -1, e: [], k: 0 },
      { ft: Ft.Notify, b: 0, e: [[0, 1, 2, -5, 0]], k: 0 },
      { ft: Ft.Notify, b: 0, e: [[0, 1, 2, 100, 40]], k: 0 },
      { ft: Ft.Notify, b: 0, e: [[2, 1]], k: 0 },
      { ft: Ft.Notify, b: 0, e: 'x', k: 0 },
      { ft: Ft.Update, n: 1.5, r: [], k: 0, u: 0, i: 0 },
      { ft: Ft.Update, n: 1, r: [], k: 0, u: 0 },
      { ft: Ft.Update, n: 1, r: [], k: 0, u: 0, i: -1 },
      { ft: Ft.Update, n: 1, r: [[1, -3]], k: 0, u: 0, i: 0 },
      { ft: Ft.Update, n: 1, r: [[1, Number.NaN]], k: 0, u: 0, i: 0 },
    ];
    for (const m of bad) expect(isFlowtune(m), JSON.stringify(m)).toBe(false);
  });

  it('pins flows to live spines only, spreading them, and routes data and control through the spine', () => {
    const seen = new Set<number>();
    for (let f = 0; f < 200; f++) {
      const s = pickSpine(f, 0, 3, 4, 0b1011);
      expect([0, 1, 3]).toContain(s);
      seen.add(s);
    }
    expect(seen.size).toBe(3);
    expect(pickSpine(1, 0, 3, 4, 0)).toBe(-1);
    expect(allSpines(3)).toBe(7);
    expect(dataRoute(FABRIC, 0, 3, 1)).toEqual([3, 1, 1]);
    expect(dataRoute(FABRIC, 0, 1, 1)).toBeNull();
    expect(allocatorRoute(FABRIC, 2, 0)).toEqual([2, 2]);
    const links = new FabricLinks(FABRIC);
    expect(links.path(0, 3, 1).map((l) => links.name(l))).toEqual([
      'h0-up',
      'rack0-spine1-up',
      'rack1-spine1-down',
      'h3-down',
    ]);
    expect(links.path(0, 1, 1).map((l) => links.name(l))).toEqual(['h0-up', 'h1-down']);
  });
});

/** the allocator over a stub node context: frames it sends are collected, timers run on a scheduler */
function allocatorRig(over: Partial<FlowtuneAllocatorConfig> = {}) {
  const sched = new Scheduler(null);
  const clock = new IdealClock(sched);
  const out: Array<{ port: number; frame: Frame }> = [];
  const config: FlowtuneAllocatorConfig = {
    gamma: 0.4,
    iterationNs: 10_000,
    threshold: 0.01,
    headroom: 0.01,
    normalize: 'f-norm',
    heartbeatNs: 30_000,
    leaseNs: 100_000,
    minRtoNs: 20_000,
    maxRtoNs: 30_000,
    controlPriority: 0,
    fabric: FABRIC,
    ...over,
  };
  const ctx = {
    config: { id: 4, name: 'alloc', seed: 1, scheme: { kind: 'flowtune', config } },
    sched,
    clock,
    ports: [0, 1].map((port) => ({ send: (frame: Frame) => out.push({ port, frame }) > 0 })),
    metrics: new Metrics(),
    emit: () => {},
  } as unknown as NodeContext;
  const alloc = new FlowtuneAllocator(ctx);
  sched.at(0, () => alloc.start(0));
  const hear = (t: number, src: number, x: unknown, port = 0) => {
    sched.at(t, () => alloc.onFrame(t, port, makeFrame({ t: FrameType.Control, s: src, d: 4, z: 64, x })));
    sched.runBefore(t + 1);
  };
  const updates = (host: number) =>
    out.filter((o) => o.frame.d === host).map((o) => o.frame.x as UpdateMessage);
  return { sched, alloc, out, hear, updates };
}

describe('Flowtune allocator role (§2, §6.2, §6.4)', () => {
  it('allocates two flowlets on one downlink half each within two iterations, and tells only changes', () => {
    const a = allocatorRig();
    a.hear(1_000, 0, { ft: Ft.Notify, b: 0, e: [[0, 7, 3, 1e6, 1]], k: 0 });
    a.hear(1_000, 2, { ft: Ft.Notify, b: 0, e: [[0, 8, 3, 1e6, 0]], k: 0 }, 1);
    a.sched.runBefore(25_000);
    const r0 = a.updates(0).flatMap((m) => m.r);
    const r2 = a.updates(2).flatMap((m) => m.r);
    // capacities less the threshold: 9.9 Gbit/s on h3's downlink, shared
    expect(r0.at(-1)).toEqual([7, 4.95e9]);
    expect(r2.at(-1)).toEqual([8, 4.95e9]);
    // the update acknowledges the host's event and names the live spines; it went back through the spine the notification came by
    expect(a.updates(0).at(-1)).toMatchObject({ k: 1, u: 3 });
    expect(a.out.filter((o) => o.frame.d === 2).every((o) => o.port === 1)).toBe(true);
    // the hosts acknowledge what they heard
    a.hear(25_000, 0, { ft: Ft.Notify, b: 1, e: [], k: a.updates(0).at(-1)!.n });
    a.hear(25_000, 2, { ft: Ft.Notify, b: 1, e: [], k: a.updates(2).at(-1)!.n }, 1);
    const sent = a.out.length;
    // converged: nothing more than heartbeats (after 30 µs of silence)
    a.sched.runBefore(54_000);
    const later = a.out.slice(sent).map((o) => o.frame.x as UpdateMessage);
    expect(later.length).toBeGreaterThan(0);
    expect(later.every((m) => m.n === 0 && m.r.length === 0)).toBe(true);
  });

  it('sends an unacknowledged update again with the current rate, ignores repeats, and drops junk', () => {
    const a = allocatorRig();
    a.hear(1_000, 0, { ft: Ft.Notify, b: 0, e: [[0, 7, 3, 1e6, 1]], k: 0 });
    a.hear(1_500, 0, { ft: Ft.Notify, b: 0, e: [[0, 7, 3, 1e6, 1]], k: 0 });
    a.sched.runBefore(12_000);
    expect(a.updates(0).map((m) => m.n)).toEqual([1]);
    // no acknowledgement within the 20 µs timeout: the rate goes again as update 2
    a.sched.runBefore(41_000);
    expect(a.updates(0).map((m) => m.n)).toEqual([1, 2]);
    a.hear(42_000, 0, { ft: Ft.Notify, b: 1, e: [], k: 2 });
    const report = a.alloc.report().scheme as { duplicates: number; resent: number; unknownFrames: number };
    expect(report).toMatchObject({ duplicates: 1, resent: 1 });
    a.hear(43_000, 0, { ft: Ft.Notify, b: 1, e: [[0, 9, 0, 1e6, 0]], k: 0 }); // to itself
    a.hear(43_000, 9, { ft: Ft.Notify, b: 0, e: [], k: 0 }); // no such host
    a.hear(43_000, 1, { ft: Ft.Update, n: 1, r: [], k: 0, u: 0 });
    a.hear(43_000, 1, { ft: Ft.Notify, b: 0, e: [[0, 7, 3, 1e6, 1]], k: 0 }); // another host's flow id
    expect((a.alloc.report().scheme as { unknownFrames: number }).unknownFrames).toBe(4);
  });

  it('answers a host that asks for every rate again (after a lapse) with a numbered update, even an empty one', () => {
    const a = allocatorRig();
    a.hear(1_000, 0, { ft: Ft.Notify, b: 0, e: [[0, 7, 3, 1e6, 1]], k: 0 });
    a.sched.runBefore(12_000);
    a.hear(12_000, 0, { ft: Ft.Notify, b: 1, e: [], k: 1 });
    a.sched.runBefore(35_000);
    const before = a.updates(0).length;
    // converged and acknowledged: the rate would not go again on its own
    a.hear(35_000, 0, { ft: Ft.Notify, b: 1, e: [], k: 1, y: 1 });
    a.sched.runBefore(41_000);
    const again = a.updates(0).slice(before);
    expect(again.map((m) => [m.n, m.r])).toEqual([[2, [[7, 9.9e9]]]]);
    // a host with no flowlets left gets an empty numbered answer
    a.hear(41_000, 2, { ft: Ft.Notify, b: 0, e: [], k: 0, y: 1 }, 1);
    a.sched.runBefore(51_000);
    expect(a.updates(2).map((m) => [m.n, m.r])).toEqual([[1, []]]);
  });

  it('drops a spine it lost from the mask every host with flowlets hears at once', () => {
    const a = allocatorRig();
    a.hear(1_000, 0, { ft: Ft.Notify, b: 0, e: [[0, 7, 3, 1e6, 1]], k: 0 });
    a.sched.runBefore(15_000);
    a.sched.at(15_000, () => a.alloc.portDown(1));
    a.sched.runBefore(21_000);
    const last = a.updates(0).at(-1)!;
    expect(last.u).toBe(1);
    // answers go through a spine it still reaches
    expect(a.out.at(-1)!.port).toBe(0);
    expect(a.out.at(-1)!.frame.r).toEqual([0, 0]);
  });
});

describe('Flowtune scenarios', () => {
  const resolve = (set: string[]) =>
    resolveScenario(loadScenarioFile('examples/flowtune-websearch.yaml', set));

  it('attaches the allocator to every spine by a 40 Gbit/s link; a baseline run of the file leaves its kill out (ifPresent)', () => {
    const ft = resolve([]);
    const alloc = ft.topology.nodes.find((n) => n.name === 'alloc')!;
    expect(alloc.ports.map((p) => p.peer)).toEqual(['spine0', 'spine1', 'spine2', 'spine3']);
    expect(ft.topology.links[alloc.ports[0].link].rateBps).toBe(40e9);
    expect(ft.timeline.map((e) => [e.action, e.node])).toEqual([['kill', 'alloc']]);
    const dctcp = resolve(['scheme.kind=ecmp']);
    expect(dctcp.topology.nodes.some((n) => n.name === 'alloc')).toBe(false);
    expect(dctcp.timeline).toEqual([]);
    // without ifPresent the same entry is a mistake on a run with no allocator
    expect(() => resolve(['scheme.kind=ecmp', 'timeline=[{at: 1ms, action: kill, node: alloc}]'])).toThrow(
      /timeline\.0\.node: no node named 'alloc' in the topology/,
    );
  });

  it('refuses topologies and transports it cannot model, naming the field', () => {
    expect(() => resolve(['topology={kind: fat-tree, k: 4}'])).toThrow(
      /topology\.kind: flowtune models two-tier fabrics/,
    );
    expect(() => resolve(['transport={kind: udp}'])).toThrow(/transport\.kind: flowtune paces the baseline/);
    expect(() => resolve(['scheme.heartbeat=200us'])).toThrow(
      /scheme\.heartbeat: must be shorter than the lease/,
    );
    expect(() => resolve(['scheme.nope=1'])).toThrow(/scheme\.nope/);
  });
});
