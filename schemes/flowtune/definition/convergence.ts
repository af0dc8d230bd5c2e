/**
 * `summary.flowtune.convergence` and `.optimality` (schemes/flowtune/definition/summary.ts) from the
 * rates the hosts applied: the flow set changes at every flowlet start and end, and each interval
 * between changes is held against the proportional-fair optimum of its flow set (optimum.ts).
 */

import { quantile } from '../../../sdk/index.js';
import { FabricLinks } from '../arbiter/links.js';
import type { FlowtuneHostSection } from '../host/transport.js';
import type { FlowtuneFabric } from '../wire.js';
import { ProportionalFair } from './optimum.js';
import type { FlowtuneSettings } from './settings.js';

/** flows within this share of their optimum are converged (§6.3 reads "each get 1/N") */
export const CONVERGED_WITHIN = 0.1;

export interface FlowtuneConvergence {
  /** flowlet events at which at least one flow was active after */
  events: number;
  converged: number;
  /** not converged before the next event came (or the run ended) */
  notConverged: number;
  p50Ns: number;
  p99Ns: number;
  maxNs: number;
  /** the first 100 events: virtual ns since traffic start, start | end, the flow, flows active after, ns to converge */
  first: Array<{
    t: number;
    event: 'start' | 'end';
    flow: number;
    active: number;
    convergedNs: number | null;
  }>;
}

/** the applied rates' sum over the offline optimum's (see `FlowtuneSummary.optimality` in summary.ts) */
export interface FlowtuneOptimality {
  intervals: number;
  mean: number;
  min: number;
  convergedIntervals: number;
  convergedMean: number | null;
}

/**
 * Convergence and optimality from the hosts' applied rates: the flow set changes at every flowlet
 * start and end (the hosts' own times); paths come from the allocator's log.
 */
export function convergenceOf(
  s: FlowtuneSettings,
  fabric: FlowtuneFabric,
  hosts: Array<{ id: number; h: FlowtuneHostSection }>,
  t0: number,
): { convergence: FlowtuneConvergence; optimality: FlowtuneOptimality | null } {
  const series = rateSeriesOf(hosts);
  const events = flowletEvents(hosts);
  const links = new FabricLinks(fabric);
  // the optimum is solved without NED (optimum.ts), so that NED's rates are not measured by NED
  const problem = new ProportionalFair(Array.from(links.capacityBps, (c) => (c * (1 - s.headroom)) / 1e9));
  const active = new Set<number>();
  const times: number[] = [];
  const first: FlowtuneConvergence['first'] = [];
  let notConverged = 0;
  let counted = 0;
  const shares: number[] = [];
  // per bounded interval: its length and the time-weighted share of the optimum the rates gave
  const spans: Array<[number, number]> = [];
  for (let i = 0; i < events.length; i++) {
    const [t, kind, flow, src, dst, spine] = events[i];
    if (kind === 0) {
      active.add(flow);
      problem.add(flow, links.path(src, dst, spine));
    } else {
      if (!active.delete(flow)) continue;
      problem.remove(flow);
    }
    // events of the same instant are one change
    if (i + 1 < events.length && events[i + 1][0] === t) continue;
    if (active.size === 0) continue;
    const opt = problem.solve();
    const next = i + 1 < events.length ? events[i + 1][0] : Number.POSITIVE_INFINITY;
    let best = 0;
    for (const f of active) best += opt.get(f)!;
    const { since, integral, got, last, cur } = settle(series, active, opt, t, next);
    const after = since === null ? null : Math.round(since - t);
    counted++;
    if (after === null) notConverged++;
    else times.push(after);
    if (first.length < 100)
      first.push({
        t: Math.round(t - t0),
        event: kind === 0 ? 'start' : 'end',
        flow,
        active: active.size,
        convergedNs: after,
      });
    if (Number.isFinite(next) && best > 0 && next > t) {
      spans.push([next - t, (integral + got * (next - last)) / (next - t) / best]);
      if (after !== null) {
        let end = 0;
        for (const f of active) end += cur.get(f)!;
        shares.push(end / best);
      }
    }
  }
  times.sort((a, b) => a - b);
  return {
    convergence: {
      events: counted,
      converged: times.length,
      notConverged,
      p50Ns: quantile(times, 0.5),
      p99Ns: quantile(times, 0.99),
      maxNs: times.at(-1) ?? 0,
      first,
    },
    optimality: optimalityOf(spans, shares),
  };
}

/**
 * `FlowtuneSummary.optimality` (summary.ts) from the bounded intervals' [length, time-weighted share of the optimum]
 * and the shares at the end of the converged ones
 */
function optimalityOf(
  spans: ReadonlyArray<[number, number]>,
  shares: readonly number[],
): FlowtuneOptimality | null {
  const r4 = (x: number) => Math.round(x * 10_000) / 10_000;
  return spans.length === 0
    ? null
    : {
        intervals: spans.length,
        mean: r4(spans.reduce((a, [len, x]) => a + len * x, 0) / spans.reduce((a, [len]) => a + len, 0)),
        min: r4(Math.min(...spans.map(([, x]) => x))),
        convergedIntervals: shares.length,
        convergedMean: shares.length === 0 ? null : r4(shares.reduce((a, b) => a + b, 0) / shares.length),
      };
}

/** each flow's applied rates, [time, bit/s], in time order (one host applies a flow's rates) */
function rateSeriesOf(
  hosts: Array<{ id: number; h: FlowtuneHostSection }>,
): Map<number, Array<[number, number]>> {
  const series = new Map<number, Array<[number, number]>>();
  for (const { h } of hosts)
    for (const [t, flow, rate] of h.rateSeries) {
      let a = series.get(flow);
      if (!a) series.set(flow, (a = []));
      a.push([t, rate]);
    }
  return series;
}

/** every host's flowlet events, [time, start | end, flow, src, dst, spine], in time order (ends first at a tie) */
function flowletEvents(hosts: Array<{ id: number; h: FlowtuneHostSection }>): number[][] {
  const events = hosts.flatMap(({ id, h }) =>
    h.events.map(([t, k, f, dst, spine]) => [t, k, f, id, dst, spine]),
  );
  events.sort((a, b) => a[0] - b[0] || b[1] - a[1] || a[2] - b[2]);
  return events;
}

/** a flow's series is in time order (one host applies its rates): the index of the first entry after `t` */
function firstAfter(a: ReadonlyArray<[number, number]>, t: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid][0] <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * One interval of the flow set, [t, next), against its optimum `opt` (Gbit/s per flow): `since`, when
 * every active flow's applied rate came within CONVERGED_WITHIN of its share for good (null: it did not
 * before `next`); the applied rates' sum as a step function, its integral up to the interval's last
 * rate change (`last`) and the sum in force from there (`got`); `cur`, each flow's rate then, Gbit/s.
 */
function settle(
  series: ReadonlyMap<number, Array<[number, number]>>,
  active: ReadonlySet<number>,
  opt: ReadonlyMap<number, number>,
  t: number,
  next: number,
): { since: number | null; integral: number; got: number; last: number; cur: Map<number, number> } {
  const rateAt = (flow: number, t: number): number => {
    const a = series.get(flow);
    const i = a === undefined ? 0 : firstAfter(a, t);
    return i === 0 ? 0 : a![i - 1][1] / 1e9;
  };
  // every rate change of an active flow in [t, next): when were all within 10%, for good?
  const changes: Array<[number, number, number]> = [];
  for (const f of active) {
    const a = series.get(f) ?? [];
    for (let j = firstAfter(a, t); j < a.length && a[j][0] < next; j++)
      changes.push([a[j][0], f, a[j][1] / 1e9]);
  }
  changes.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const cur = new Map<number, number>();
  // the applied rates' sum, as a step function over [t, next): its integral
  let got = 0;
  let integral = 0;
  let last = t;
  let out = 0;
  const inBand = (f: number, x: number) => Math.abs(x - opt.get(f)!) <= CONVERGED_WITHIN * opt.get(f)!;
  for (const f of active) {
    const x = rateAt(f, t);
    cur.set(f, x);
    got += x;
    if (!inBand(f, x)) out++;
  }
  let since: number | null = out === 0 ? t : null;
  for (const [tc, f, x] of changes) {
    integral += got * (tc - last);
    last = tc;
    got += x - cur.get(f)!;
    const was = inBand(f, cur.get(f)!);
    cur.set(f, x);
    const is = inBand(f, x);
    if (was && !is) {
      out++;
      since = null;
    } else if (!was && is && --out === 0) since = tc;
  }
  return { since, integral, got, last, cur };
}
