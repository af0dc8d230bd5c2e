/**
 * Link impairments (core/impair.ts, core/fault-filter.ts): netem's delay shapes and their floors, Gilbert–
 * Elliott's bursts, netem's correlation, reordering or not, duplication and a degraded rate at a
 * port; and the scenario errors that name file, line and field. Every draw is seeded: the figures
 * below are the same on every run.
 */
// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { describe, expect, it } from 'vitest';
import { WireFilter, WireVerdict } from '../core/fault-filter.js';
import { FrameType, makeFrame } from '../core/frame.js';
import {
  Correlated,
  DelayModel,
  type DelaySpec,
  delayAt,
  delayFloorNs,
  flowPoint,
  LossModel,
  LossState,
  lossRateOf,
  normalQuantile,
} from '../core/impair.js';
import { EgressPort } from '../core/port.js';
import { Rng } from '../core/random.js';
import { Scheduler } from '../core/scheduler.js';
import { loadScenarioFile } from '../orchestrator/scenario/load.js';
import { resolveScenario } from '../orchestrator/scenario/resolve.js';

const seeded = (seed: number) => {
  const r = new Rng(seed);
  return () => r.next();
};
const streams = (salt: number) => seeded(1000 + salt);
const spec = (p: Partial<DelaySpec>): DelaySpec => ({
  dist: 'normal',
  meanNs: 1000,
  jitterNs: 200,
  correlation: 0,
  floorNs: 0,
  reorder: true,
  ...p,
});

describe('delay shapes', () => {
  it("are netem's tables: bounded at 4 jitters, pareto's least at 2/3 of a jitter below the mean", () => {
    expect(normalQuantile(0.5)).toBe(0);
    expect(normalQuantile(0.975)).toBeCloseTo(1.959964, 5);
    expect(delayFloorNs(spec({ dist: 'uniform' }))).toBe(800);
    expect(delayFloorNs(spec({ dist: 'normal' }))).toBe(200);
    expect(delayFloorNs(spec({ dist: 'pareto' }))).toBe(866);
    expect(delayFloorNs(spec({ dist: 'paretonormal' }))).toBe(700);
    expect(delayFloorNs(spec({ dist: 'constant' }))).toBe(1000);
    // never below zero
    expect(delayFloorNs(spec({ dist: 'normal', jitterNs: 600 }))).toBe(0);
    // the largest is bounded too: pareto's tail stops at mean + 4 jitters
    expect(delayAt(spec({ dist: 'pareto' }), 1 - 1e-12)).toBeCloseTo(1000 + 200 * (32767 / 8192), 6);
  });

  it('draw the mean and spread they are given (100,000 seeded draws)', () => {
    const stats = (dist: DelaySpec['dist']) => {
      const m = new DelayModel(spec({ dist }), seeded(3));
      const xs = Array.from({ length: 100_000 }, () => m.next());
      const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
      const sd = Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / xs.length);
      return { mean: Math.round(mean), sd: Math.round(sd), min: Math.min(...xs) };
    };
    const near = (x: number, want: number, within: number) =>
      expect(Math.abs(x - want)).toBeLessThanOrEqual(within);
    const normal = stats('normal');
    near(normal.mean, 1000, 3);
    near(normal.sd, 200, 3);
    expect(normal.min).toBeGreaterThanOrEqual(200);
    const uniform = stats('uniform');
    near(uniform.mean, 1000, 3);
    // a uniform of half-width 200: sd 200/√3
    near(uniform.sd, 115, 2);
    expect(uniform.min).toBeGreaterThanOrEqual(800);
    const lognormal = stats('lognormal');
    near(lognormal.mean, 1000, 3);
    near(lognormal.sd, 200, 5);
  });

  it('hold a link class’s floor out of each draw, so arrivals never precede the promised least', () => {
    const floorNs = delayFloorNs(spec({ dist: 'normal' }));
    const m = new DelayModel(spec({ dist: 'normal', floorNs }), seeded(5));
    const extras = Array.from({ length: 20_000 }, () => m.next());
    expect(Math.min(...extras)).toBeGreaterThanOrEqual(0);
    expect(Math.min(...extras)).toBeLessThan(50);
    const mean = extras.reduce((a, b) => a + b, 0) / extras.length;
    expect(Math.abs(mean - (1000 - floorNs))).toBeLessThan(5);
  });
});

describe("netem's correlation", () => {
  it('leans each draw on the last: lag-1 correlation ρ, 0 without', () => {
    const lag1 = (rho: number) => {
      const c = new Correlated(seeded(9), rho);
      const xs = Array.from({ length: 50_000 }, () => c.next());
      const m = xs.reduce((a, b) => a + b, 0) / xs.length;
      let num = 0;
      let den = 0;
      for (let i = 0; i < xs.length; i++) {
        den += (xs[i] - m) ** 2;
        if (i > 0) num += (xs[i] - m) * (xs[i - 1] - m);
      }
      return num / den;
    };
    expect(Math.abs(lag1(0))).toBeLessThan(0.02);
    // an AR(1) of coefficient ρ: correlation ρ (its variance shrinks, netem's known flaw)
    expect(Math.abs(lag1(0.5) - 0.5)).toBeLessThan(0.02);
    expect(Math.abs(lag1(0.9) - 0.9)).toBeLessThan(0.02);
  });
});

describe('Gilbert–Elliott loss', () => {
  it('loses at its steady-state rate, in bursts of 1/r frames in the bad state', () => {
    const s = { model: 'gilbert-elliott' as const, p: 0.01, r: 0.25, lossBad: 1, lossGood: 0 };
    const m = new LossModel(s, seeded(21));
    const n = 400_000;
    let lost = 0;
    let bursts = 0;
    let prev: number = LossState.None;
    for (let i = 0; i < n; i++) {
      const x = m.next();
      if (x !== LossState.None) lost++;
      if (x === LossState.Bad && prev !== LossState.Bad) bursts++;
      prev = x;
    }
    expect(lossRateOf(s)).toBeCloseTo(0.0385, 4);
    expect(Math.round((lost / n) * 1000) / 1000).toBe(0.038);
    expect(Math.round((lost / bursts) * 10) / 10).toBe(4);
  });

  it('counts a good state’s losses apart from the bad one’s', () => {
    const m = new LossModel(
      { model: 'gilbert-elliott', p: 0.05, r: 0.5, lossBad: 0.5, lossGood: 0.01 },
      seeded(4),
    );
    const by = [0, 0, 0];
    for (let i = 0; i < 100_000; i++) by[m.next()]++;
    // in the bad state 1/11 of the time, losing half; in the good 10/11, losing 1%
    expect(Math.abs(by[LossState.Bad] / 100_000 - (1 / 11) * 0.5)).toBeLessThan(0.003);
    expect(Math.abs(by[LossState.Good] / 100_000 - (10 / 11) * 0.01)).toBeLessThan(0.001);
    expect(by).toEqual([94_727, 864, 4_409]);
  });
});

describe('the wire filter with impairments', () => {
  const frame = (a: number) => makeFrame({ t: 0, s: 1, d: 2, z: 1500, a });

  it('lets jitter reorder frames, or keeps them in order when told to', () => {
    const run = (reorder: boolean) => {
      const w = new WireFilter(seeded(1), streams, {
        delay: spec({ dist: 'uniform', jitterNs: 900, reorder }),
      });
      const arrivals = Array.from({ length: 1000 }, (_, i) => {
        const f = frame(i * 1200);
        expect(w.apply(f)).toBe(WireVerdict.Pass);
        return f.a;
      });
      return { arrivals, counts: w.counts };
    };
    const free = run(true);
    expect(free.counts.reordered).toBe(58);
    expect(free.counts.delayed).toBe(1000);
    const held = run(false);
    expect(held.counts.reordered).toBe(0);
    for (let i = 1; i < held.arrivals.length; i++)
      expect(held.arrivals[i]).toBeGreaterThanOrEqual(held.arrivals[i - 1]);
  });

  it('sends a share without the delay (netem reorder), duplicates with a delay of the copy’s own, and an action’s impairments go with link-up', () => {
    const w = new WireFilter(seeded(1), streams, {
      delay: spec({ dist: 'constant', meanNs: 5000, jitterNs: 0 }),
      reorder: { p: 0.25, correlation: 0 },
      duplicate: { p: 0.1, correlation: 0 },
    });
    let copies = 0;
    for (let i = 0; i < 400; i++) {
      const f = frame(i * 1200);
      w.apply(f);
      if (w.duplicateOf(f) !== null) copies++;
    }
    expect(copies).toBe(w.counts.duplicated);
    // a quarter of the frames (and copies) go without the delay, ahead of the delayed ones
    expect(w.counts).toMatchObject({ duplicated: 30, delayed: 321, reordered: 108 });
    // an action's loss over the link's own; link-up's `impair: {}` takes it away
    w.set({ impair: { loss: { model: 'random', p: 1, correlation: 0 } } });
    expect(w.apply(frame(1e6))).toBe(WireVerdict.Lost);
    w.set({ impair: {} });
    expect(w.apply(frame(2e6))).toBe(WireVerdict.Pass);
    expect(w.counts.lostGood).toBe(1);
  });

  it('serializes at a degraded rate on its port: a frame takes 4× as long at 2.5 of 10 Gbit/s', () => {
    const arrivals: number[] = [];
    const sched = new Scheduler(null);
    const params = { rateBps: 10e9, propNs: 1000, bufferBytes: 1e6, ecnBytes: 0, commitAheadNs: 0 };
    const sink = (_: number, f: { a: number }) => arrivals.push(f.a);
    const slow = new EgressPort(
      0,
      { ...params, impair: { rateBps: 2.5e9 } },
      sched,
      sink,
      undefined,
      seeded(1),
      streams,
    );
    const fast = new EgressPort(1, params, sched, sink, undefined, seeded(1), streams);
    sched.runCode(0, (now) => {
      slow.send(makeFrame({ t: 0, s: 1, d: 2, z: 1500 }), now);
      fast.send(makeFrame({ t: 0, s: 1, d: 2, z: 1500 }), now);
    });
    sched.runBefore(1e6);
    expect(arrivals.sort((a, b) => a - b)).toEqual([2200, 5800]);
  });
});

describe('gray failures', () => {
  it('reach only the frame types and the share of flows they name; the others pass untouched', () => {
    const w = new WireFilter(seeded(1), streams, {
      loss: { model: 'random', p: 1, correlation: 0 },
      types: [FrameType.Data],
      flowShare: 0.25,
    });
    const verdicts = (t: number) =>
      Array.from({ length: 4000 }, (_, f) => w.apply(makeFrame({ t, s: 3, d: 9, f, z: 1500 })));
    // a quarter of the flows' data black-holed, by the hash of (source, destination, flow)
    const data = verdicts(FrameType.Data).filter((v) => v === WireVerdict.Lost).length;
    expect(Math.abs(data / 4000 - 0.25)).toBeLessThan(0.02);
    // the flows it picks are the hash's: the same every time
    expect(data).toBe(
      Array.from({ length: 4000 }, (_, f) => flowPoint(3, 9, f) < 0.25).filter(Boolean).length,
    );
    // no keepalive, ack or control frame lost: no detector sees it
    for (const t of [FrameType.Keepalive, FrameType.Ack, FrameType.Control])
      expect(verdicts(t).every((v) => v === WireVerdict.Pass)).toBe(true);
  });

  it('node-impair is a link-impair on each of the node’s links, narrowed to the types named', () => {
    const sc = resolveScenario(
      loadScenarioFile('examples/impaired.yaml', [
        'timeline=[{at: 1ms, action: node-impair, node: spine0, direction: forward, types: [control, routing], delay: {dist: constant, mean: 2ms, reorder: false}}]',
      ]),
    );
    expect(sc.timeline.map((e) => `${e.action} ${e.link!.join('-')} ${e.direction} ${e.by}`)).toEqual([
      'link-impair spine0-leaf0 forward node-impair',
      'link-impair spine0-leaf1 forward node-impair',
    ]);
    expect(sc.timeline[0].impair).toMatchObject({ types: [FrameType.Control, FrameType.Routing] });
  });
});

describe('impairments in a scenario', () => {
  const FILE = 'examples/impaired.yaml';
  const problem = (set: string[]) => {
    try {
      resolveScenario(loadScenarioFile(FILE, set));
      return 'no error';
    } catch (err) {
      return (err as Error).message;
    }
  };

  it("puts a class's delay floor in its propagation delay and a link's direction on its own", () => {
    const sc = resolveScenario(loadScenarioFile(FILE, []));
    const link = (a: string, b: string) =>
      sc.topology.links.find(
        (l) => (l.a.node === a && l.b.node === b) || (l.a.node === b && l.b.node === a),
      )!;
    // normal 1 µs ± 200 ns: 4 jitters below the mean
    expect(link('leaf0', 'spine0').propNs).toBe(200);
    // uniform 3 ± 2 µs one way, the host class's 1 µs the other: the link's least is 1 µs
    expect(link('h1', 'leaf0').propNs).toBe(1000);
    expect(sc.impairments!.delays['leaf0>h1']).toMatchObject({
      dist: 'uniform',
      meanNs: 3000,
      floorNs: 1000,
    });
    expect(sc.impairments!.delays['h1>leaf0']).toBeUndefined();
    expect(sc.impairments!.each.find((d) => d.from === 'leaf0' && d.to === 'spine1')?.impair).toEqual({
      rateBps: 2.5e9,
    });
  });

  it('refuses what cannot be, naming file, line and field', () => {
    expect(problem(['links.fabric.delay={dist: normal, mean: 1us}'])).toMatch(
      /impaired\.yaml:\d+: links\.fabric\.delay\.jitter: a normal delay needs its jitter/,
    );
    expect(problem(['links.fabric.loss={model: gilbert, p: 0.1, r: 0.5, lossBad: 0.5}'])).toMatch(
      /links\.fabric\.loss\.lossBad: gilbert loses every frame in the bad state/,
    );
    expect(problem(['links.fabric.loss={model: gilbert-elliott, p: 0.1}'])).toMatch(
      /links\.fabric\.loss\.r: gilbert-elliott loss needs r/,
    );
    expect(problem(['links.each.0.rate=40Gbps'])).toMatch(
      /links\.each\.0\.rate: 40Gbps is above the link's own rate/,
    );
    expect(problem(['links.each.0.from=spine0'])).toMatch(
      /links\.each\.0\.from: 'spine0' is not an end of the link \[leaf0, spine1\]/,
    );
    expect(problem(['links.each.0.link=[leaf0, leaf1]'])).toMatch(
      /links\.each\.0\.link: no link between 'leaf0' and 'leaf1'/,
    );
    expect(
      problem([
        'timeline.0={at: 3ms, action: link-lossy, link: [leaf1, spine0], loss: {model: gilbert, p: 0.1, r: 0.5}}',
      ]),
    ).toMatch(/timeline\.0\.loss: 'link-lossy' takes loss as a plain value; a model is link-impair's/);
    expect(problem(['timeline.0={at: 3ms, action: link-impair, link: [leaf1, spine0]}'])).toMatch(
      /timeline\.0\.action: 'link-impair' needs an impairment/,
    );
    expect(problem(['links.host.reorder=0.1'])).toMatch(
      /links\.host\.reorder: reordering sends frames without the delay/,
    );
  });

  it('expands a partition, its heal and a flap into the link actions they are, the flap seeded', () => {
    const timeline = (entries: string) =>
      resolveScenario(loadScenarioFile(FILE, [`timeline=${entries}`])).timeline.map((e) =>
        `${e.at} ${e.action} ${e.link!.join('-')} ${e.by ?? ''}`.trim(),
      );
    expect(
      timeline(
        '[{at: 1ms, action: partition, groups: [[leaf0, h0], [spine1, leaf1]]}, {at: 2ms, action: heal, groups: [[leaf0, h0], [spine1, leaf1]]}]',
      ),
    ).toEqual(['1000000 link-down leaf0-spine1 partition', '2000000 link-up leaf0-spine1 heal']);
    const flap =
      '[{at: 1ms, action: link-flap, link: [leaf1, spine0], down: 100us, up: "uniform(200us, 400us)", until: 2ms}]';
    const flaps = timeline(flap);
    expect(flaps).toEqual(timeline(flap));
    expect(flaps.filter((f) => f.includes('link-down')).length).toBe(flaps.length / 2);
    expect(flaps[0]).toBe('1000000 link-down leaf1-spine0 link-flap');
    expect(flaps[1]).toBe('1100000 link-up leaf1-spine0 link-flap');
    expect(Number(flaps.at(-1)!.split(' ')[0])).toBeLessThanOrEqual(2e6);
    expect(problem(['timeline=[{at: 1ms, action: partition, groups: [[leaf0, h0], [h0]]}]'])).toMatch(
      /timeline\.0\.groups\.1\.0: 'h0' is in two groups/,
    );
    expect(problem(['timeline=[{at: 1ms, action: partition, groups: [[h0], [h1]]}]'])).toMatch(
      /timeline\.0\.groups: no link runs between the groups/,
    );
    expect(
      problem(['timeline=[{at: 1ms, action: link-flap, link: [leaf1, spine0], down: 100us, up: 100us}]']),
    ).toMatch(/timeline\.0\.until: 'link-flap' needs until/);
    expect(
      problem(['timeline=[{at: 1ms, action: link-down, link: [leaf1, spine0], groups: [[h0], [h1]]}]']),
    ).toMatch(/timeline\.0\.groups: groups is for partition and heal, not link-down/);
  });
});
