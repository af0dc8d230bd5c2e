/**
 * The F10 central controller (F10 §5.3, §6.1, §6.3) and the PortLand baseline on k=4, 3-level trees
 * (16 hosts; tor0..7, two per pod; agg0..7, agg 2p and 2p+1 in pod p; core0..3): shortest-path
 * enumeration, greedy placement and residual weights, failed and recovering links, MicroTE
 * predictability, and the route overrides around a killed aggregation switch and a failed core link.
 */
// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { describe, expect, it } from 'vitest';
import { f10Tree } from '../orchestrator/topology/f10.js';
import { type EpochPlan, F10Controller, portlandRoutes } from '../schemes/f10/arbiter/controller.js';
import {
  EPOCH_NS_PER_PATH_HOP,
  EPOCH_NS_PER_PORT,
  epochNs,
  ROUTES_NS_PER_TOR_PORT,
  routesNs,
} from '../schemes/f10/arbiter/cost.js';
import type { Topology } from '../topology/types.js';

const host = { rateBps: 10e9, propNs: 500 };
const fabric = { rateBps: 10e9, propNs: 1000 };
const tree = (variant: 'ab' | 'standard' = 'standard'): Topology =>
  f10Tree({ k: 4, levels: 3, variant, host, fabric });

const EPOCH = 1e9;
const STABLE = 5e9;
const G = 1e9;
const opts = { epochNs: EPOCH, stableNs: STABLE, predictableDelta: 0.2 };
const tors = [...Array(8).keys()].map((i) => `tor${i}`);

/** bytes per report period for a rate in bit/s */
const bytes = (bps: number): number => (bps * EPOCH) / 8e9;

/** Reports the same rates (bit/s) in two periods, at `t` and `t + EPOCH`, so every pair is predictable. */
function steady(c: F10Controller, rates: Record<string, Record<string, number>>, t = 0): void {
  for (const at of [t, t + EPOCH]) {
    for (const [tor, m] of Object.entries(rates))
      c.traffic(tor, Object.fromEntries(Object.entries(m).map(([d, bps]) => [d, bytes(bps)])), at);
  }
}

/** The (switch, up port) steps the plan schedules for one pair, in path order. */
function upSteps(plan: EpochPlan, src: string, dst: string): Array<[string, number]> {
  return plan.scheduled.filter((h) => h.srcTor === src && h.dstTor === dst).map((h) => [h.switch, h.port]);
}

function portTo(topo: Topology, from: string, to: string): number {
  const p = topo.nodes.find((n) => n.name === from)?.ports.find((x) => x.peer === to);
  if (!p) throw new Error(`${from} has no port to ${to}`);
  return p.index;
}

/** Overrides `ports` at each of `switches` toward each of `dsts`. */
function same(switches: string[], dsts: string[], ports: number[]): Record<string, Record<string, number[]>> {
  return Object.fromEntries(switches.map((s) => [s, Object.fromEntries(dsts.map((d) => [d, ports]))]));
}

const others = (self: string): string[] => tors.filter((t) => t !== self);

describe('F10Controller paths', () => {
  it('wiring the expectations below rely on: ToR and agg up ports are 2 and 3', () => {
    const t = tree();
    expect([portTo(t, 'tor0', 'agg0'), portTo(t, 'tor0', 'agg1')]).toEqual([2, 3]);
    expect([portTo(t, 'agg0', 'core0'), portTo(t, 'agg0', 'core1')]).toEqual([2, 3]);
    expect([portTo(t, 'agg1', 'core2'), portTo(t, 'agg1', 'core3')]).toEqual([2, 3]);
    expect([portTo(t, 'agg2', 'core0'), portTo(t, 'agg2', 'core1')]).toEqual([2, 3]);
    const ab = tree('ab');
    expect([portTo(ab, 'agg2', 'core0'), portTo(ab, 'agg2', 'core2')]).toEqual([2, 3]);
    expect([portTo(ab, 'agg3', 'core1'), portTo(ab, 'agg3', 'core3')]).toEqual([2, 3]);
  });

  for (const variant of ['standard', 'ab'] as const) {
    it(`${variant}: 2 paths inside a pod (via its aggs), 4 across pods (via the cores)`, () => {
      const c = new F10Controller(tree(variant), opts);
      for (const [i, a] of tors.entries()) {
        for (const [j, b] of tors.entries()) {
          if (i === j) continue;
          const paths = c.paths(a, b);
          const samePod = Math.floor(i / 2) === Math.floor(j / 2);
          expect(paths, `${a}->${b}`).toHaveLength(samePod ? 2 : 4);
          for (const p of paths) {
            expect(p.map((h) => h.dir)).toEqual(samePod ? ['up', 'down'] : ['up', 'up', 'down', 'down']);
            expect(p[0].node).toBe(a);
          }
          const ups = paths.map((p) => JSON.stringify(p.filter((h) => h.dir === 'up')));
          expect(new Set(ups).size).toBe(paths.length);
        }
      }
    });
  }

  it('lists a path hop by hop: tor0 -> agg0 -> core0 -> agg2 -> tor2 first', () => {
    const c = new F10Controller(tree(), opts);
    expect(c.paths('tor0', 'tor2')[0]).toEqual([
      { node: 'tor0', port: 2, dir: 'up' },
      { node: 'agg0', port: 2, dir: 'up' },
      { node: 'core0', port: 1, dir: 'down' },
      { node: 'agg2', port: 0, dir: 'down' },
    ]);
    expect(c.paths('tor0', 'tor1').map((p) => p.map((h) => h.node))).toEqual([
      ['tor0', 'agg0'],
      ['tor0', 'agg1'],
    ]);
  });
});

describe('F10Controller epoch', () => {
  it('places the larger pair first and spreads two large pairs on disjoint paths', () => {
    const c = new F10Controller(tree(), opts);
    // The larger pair sorts after the smaller by name: only rate order puts it on the first path.
    steady(c, { tor0: { tor2: 6 * G, tor3: 7 * G } });
    const plan = c.epoch(2 * EPOCH);
    expect([plan.placed, plan.unplaced]).toEqual([2, 0]);
    expect(upSteps(plan, 'tor0', 'tor3')).toEqual([
      ['tor0', 2],
      ['agg0', 2],
    ]);
    expect(upSteps(plan, 'tor0', 'tor2')).toEqual([
      ['tor0', 3],
      ['agg1', 2],
    ]);
    expect(plan.scheduled).toHaveLength(4);
    // Residual capacity drops on exactly the up links used.
    expect(plan.weights.tor0.slice(2)).toEqual([3 * G, 4 * G]);
    expect(plan.weights.agg0.slice(2)).toEqual([3 * G, 10 * G]);
    expect(plan.weights.agg1.slice(2)).toEqual([4 * G, 10 * G]);
    expect(plan.weights.tor1.slice(2)).toEqual([10 * G, 10 * G]);
    expect(plan.weights.agg2.slice(2)).toEqual([10 * G, 10 * G]);
    // Down ports carry their residual too (what a switch needs to tell random load apart, F10 §6.2):
    // 7G of tor0 -> tor3 comes down core0 -> agg2 -> tor3, 6G of tor0 -> tor2 core2 -> agg3 -> tor2.
    expect(plan.weights.core0).toEqual([10 * G, 3 * G, 10 * G, 10 * G]);
    expect(plan.weights.agg2.slice(0, 2)).toEqual([10 * G, 3 * G]);
    expect(plan.weights.agg3.slice(0, 2)).toEqual([4 * G, 10 * G]);
  });

  it('rate decides the order, not the report order: a third pair takes the least-loaded path left', () => {
    const c = new F10Controller(tree(), opts);
    steady(c, { tor0: { tor2: 2 * G, tor4: 4 * G, tor6: 3 * G } });
    const plan = c.epoch(2 * EPOCH);
    // 4G takes the first path (agg0, core0); 3G avoids both (agg1, core2); 2G goes via agg1 (7G left) and
    // the untouched core3.
    expect(upSteps(plan, 'tor0', 'tor4')).toEqual([
      ['tor0', 2],
      ['agg0', 2],
    ]);
    expect(upSteps(plan, 'tor0', 'tor6')).toEqual([
      ['tor0', 3],
      ['agg1', 2],
    ]);
    expect(upSteps(plan, 'tor0', 'tor2')).toEqual([
      ['tor0', 3],
      ['agg1', 3],
    ]);
    expect(plan.weights.tor0.slice(2)).toEqual([6 * G, 5 * G]);
  });

  it('never uses a failed link and gives it weight 0; a pair with no usable path is unplaced', () => {
    const c = new F10Controller(tree(), opts);
    c.linkDown('tor0', 'agg0', 0);
    expect(c.usable('agg0', 'tor0')).toBe(false);
    steady(c, { tor0: { tor2: G, tor3: G }, tor1: { tor0: G } });
    const plan = c.epoch(2 * EPOCH);
    expect([plan.placed, plan.unplaced]).toEqual([3, 0]);
    expect(plan.scheduled.filter((h) => h.switch === 'tor0').map((h) => h.port)).toEqual([3, 3]);
    // tor1 -> tor0 could go up to agg0, but agg0's way down is the failed link.
    expect(upSteps(plan, 'tor1', 'tor0')).toEqual([['tor1', 3]]);
    expect(plan.weights.tor0.slice(2)).toEqual([0, 8 * G]);
    expect(plan.weights.agg0[0]).toBe(0);

    c.linkDown('agg1', 'tor0', 0);
    const cut = c.epoch(2 * EPOCH);
    expect([cut.placed, cut.unplaced]).toEqual([0, 3]);
    expect(cut.scheduled).toEqual([]);
    expect(cut.weights.tor0.slice(2)).toEqual([0, 0]);
  });

  it('a recovered link has weight 0, unused until up for stableNs and acknowledged by both switches; reinstall returns it once', () => {
    const c = new F10Controller(tree(), opts);
    c.linkDown('tor0', 'agg0', 0);
    c.linkUp('tor0', 'agg0', EPOCH);
    steady(c, { tor0: { tor2: G } });
    const before = c.epoch(2 * EPOCH);
    expect(before.weights.tor0[2]).toBe(0);
    expect(upSteps(before, 'tor0', 'tor2')).toEqual([
      ['tor0', 3],
      ['agg1', 2],
    ]);
    expect(c.reinstall(EPOCH + STABLE - 1)).toEqual([]);

    // It flaps: the wait restarts at the new recovery (4 s); the other end's report does not restart it.
    c.linkDown('agg0', 'tor0', 3 * EPOCH);
    c.linkUp('tor0', 'agg0', 4 * EPOCH);
    c.linkUp('agg0', 'tor0', 4.5 * EPOCH);
    expect(c.reinstall(EPOCH + STABLE)).toEqual([]);
    expect(c.reinstall(4 * EPOCH + STABLE - 1)).toEqual([]);
    expect(c.usable('tor0', 'agg0')).toBe(false);
    expect(c.reinstall(4 * EPOCH + STABLE)).toEqual([{ a: 'tor0', b: 'agg0' }]);
    expect(c.reinstall(4 * EPOCH + STABLE + 1)).toEqual([]);
    expect(c.usable('tor0', 'agg0')).toBe(true);

    // §5.3: reinstalled, but scheduled flows wait for both switches' acknowledgements; §6.1: its
    // residual capacity is zero until then
    steady(c, { tor0: { tor2: G } }, 8 * EPOCH);
    expect(c.awaitingAck()).toEqual([
      { sw: 'tor0', peer: 'agg0' },
      { sw: 'agg0', peer: 'tor0' },
    ]);
    const unacked = c.epoch(10 * EPOCH);
    expect(unacked.weights.tor0[2]).toBe(0);
    expect(upSteps(unacked, 'tor0', 'tor2')).toEqual([
      ['tor0', 3],
      ['agg1', 2],
    ]);
    c.acknowledged('tor0', 'agg0');
    expect(c.awaitingAck()).toEqual([{ sw: 'agg0', peer: 'tor0' }]);
    expect(c.epoch(10 * EPOCH).weights.tor0[2]).toBe(0);
    c.acknowledged('agg0', 'tor0');
    expect(c.awaitingAck()).toEqual([]);
    const after = c.epoch(10 * EPOCH);
    expect(upSteps(after, 'tor0', 'tor2')).toEqual([
      ['tor0', 2],
      ['agg0', 2],
    ]);
    expect(after.weights.tor0.slice(2)).toEqual([9 * G, 10 * G]);
  });

  it('schedules only predictable pairs (MicroTE: latest within 20% of the two-period mean)', () => {
    const c = new F10Controller(tree(), opts);
    c.traffic('tor0', { tor2: bytes(G), tor3: bytes(G) }, 0);
    c.traffic('tor1', { tor3: bytes(G) }, 0);
    // tor0->tor2 doubles (|2-1.5| > 0.2*1.5); tor0->tor3 grows 10%; tor1->tor3 is left out (0 bytes);
    // tor1->tor2 has a single period.
    c.traffic('tor0', { tor2: bytes(2 * G), tor3: bytes(1.1 * G) }, EPOCH);
    c.traffic('tor1', { tor2: bytes(G) }, EPOCH);
    const plan = c.epoch(2 * EPOCH);
    expect([plan.placed, plan.unplaced]).toEqual([1, 0]);
    expect(new Set(plan.scheduled.map((h) => `${h.srcTor}->${h.dstTor}`))).toEqual(new Set(['tor0->tor3']));
    expect(plan.weights.tor0[2]).toBeCloseTo(8.9 * G, -3);
    // Reports older than two epochs are stale: a ToR that stopped reporting gets nothing scheduled.
    expect(c.epoch(3 * EPOCH + 1).placed).toBe(0);
  });

  it('rejects reports that name no ToR or a negative count, with the value', () => {
    const c = new F10Controller(tree(), opts);
    expect(() => c.traffic('agg0', {}, 0)).toThrow(/agg0 is not a ToR/);
    expect(() => c.traffic('tor0', { tor9: 1 }, 0)).toThrow(/no node named tor9/);
    expect(() => c.traffic('tor0', { tor1: -1 }, 0)).toThrow(/-1 bytes to tor1/);
    expect(() => c.linkDown('tor0', 'agg2', 0)).toThrow(/no link between tor0 and agg2/);
  });
});

describe('portlandRoutes', () => {
  it('has no overrides without failures', () => {
    expect(portlandRoutes(tree(), [], [])).toEqual({});
    expect(portlandRoutes(tree('ab'), [], [])).toEqual({});
    expect(new F10Controller(tree(), opts).routes(0)).toEqual({});
  });

  it('standard, agg0 killed: pod 0 avoids it, cores 0-1 lose pod 0, pods 1-3 avoid agg 2p', () => {
    const t = tree();
    const expected = {
      // tor0 and tor1 go up only to agg1 (port 3), for every destination.
      tor0: same(['tor0'], others('tor0'), [3]).tor0,
      tor1: same(['tor1'], others('tor1'), [3]).tor1,
      // core0 and core1 reach pod 0 only through agg0: no route.
      ...same(['core0', 'core1'], ['tor0', 'tor1'], []),
      // agg2, agg4, agg6 climb only to core0 and core1, which lost pod 0.
      ...same(['agg2', 'agg4', 'agg6'], ['tor0', 'tor1'], []),
      // so the ToRs of pods 1-3 avoid those aggs (port 2) toward pod 0 and use agg 2p+1 (port 3).
      ...same(['tor2', 'tor3', 'tor4', 'tor5', 'tor6', 'tor7'], ['tor0', 'tor1'], [3]),
    };
    expect(portlandRoutes(t, [], ['agg0'])).toEqual(expected);

    // A killed switch reported as all its links down gives the same routes.
    const links = t.nodes
      .find((n) => n.name === 'agg0')!
      .ports.map((p): [string, string] => ['agg0', p.peer]);
    expect(portlandRoutes(t, links, [])).toEqual(expected);
    const c = new F10Controller(t, opts);
    for (const [a, b] of links) c.linkDown(b, a, 0);
    expect(c.routes(0)).toEqual(expected);
  });

  it('AB, agg0 killed: type-B pods keep both aggs; only their aggs climb to core2/core3', () => {
    const expected = {
      tor0: same(['tor0'], others('tor0'), [3]).tor0,
      tor1: same(['tor1'], others('tor1'), [3]).tor1,
      ...same(['core0', 'core1'], ['tor0', 'tor1'], []),
      // pod 2 is type A like pod 0: agg4 reaches only core0 and core1, so tor4 and tor5 avoid it.
      ...same(['agg4'], ['tor0', 'tor1'], []),
      ...same(['tor4', 'tor5'], ['tor0', 'tor1'], [3]),
      // pods 1 and 3 are type B: agg2/agg6 climb to core2 and agg3/agg7 to core3 (port 3), and their
      // ToRs need no change (F10 §4: the AB wiring keeps a path down through every agg).
      ...same(['agg2', 'agg3', 'agg6', 'agg7'], ['tor0', 'tor1'], [3]),
    };
    expect(portlandRoutes(tree('ab'), [], ['agg0'])).toEqual(expected);
  });

  it('failed core0-agg0 link: core0 loses pod 0, agg0 climbs via core1, aggs 2/4/6 avoid core0', () => {
    const t = tree();
    const expected = {
      ...same(['core0'], ['tor0', 'tor1'], []),
      ...same(['agg0'], ['tor2', 'tor3', 'tor4', 'tor5', 'tor6', 'tor7'], [3]),
      ...same(['agg2', 'agg4', 'agg6'], ['tor0', 'tor1'], [3]),
    };
    expect(portlandRoutes(t, [['core0', 'agg0']], [])).toEqual(expected);

    // The controller keeps the overrides until the link is reinstalled.
    const c = new F10Controller(t, opts);
    c.linkDown('agg0', 'core0', 0);
    expect(c.routes(0)).toEqual(expected);
    c.linkUp('agg0', 'core0', EPOCH);
    expect(c.routes(EPOCH)).toEqual(expected);
    expect(c.reinstall(EPOCH + STABLE)).toEqual([{ a: 'agg0', b: 'core0' }]);
    expect(c.routes(EPOCH + STABLE)).toEqual({});
  });

  it('counts the work of an epoch and of the routes recomputation, which the compute model charges', () => {
    const c = new F10Controller(tree('ab'), opts);
    const all = Object.fromEntries(
      tors.map((src) => [src, Object.fromEntries(tors.filter((d) => d !== src).map((d) => [d, G]))]),
    );
    steady(c, all);
    const plan = c.epoch(2 * EPOCH);
    expect(plan.placed).toBe(56);
    // 8 same-pod pairs on 2 paths of 2 hops, 48 cross-pod pairs on 4 paths of 4 hops; every port of
    // the 48 links' 96 ends weighted
    expect(plan.work).toEqual({ pathHops: 8 * 2 * 2 + 48 * 4 * 4, ports: 96 });
    expect(epochNs(plan.work)).toBe(800 * EPOCH_NS_PER_PATH_HOP + 96 * EPOCH_NS_PER_PORT);
    // PortLand: two traversals of every port per ToR
    expect(c.routesWork()).toBe(8 * 96);
    expect(routesNs(c.routesWork())).toBe(768 * ROUTES_NS_PER_TOR_PORT);
  });
});
