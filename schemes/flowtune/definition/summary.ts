/**
 * `summary.flowtune`: what Flowtune is judged on (TR'16 §6). From the allocator: iterations and their
 * CPU time, rate updates, over-allocation before and after normalization (§6.6). From the hosts:
 * control bytes against data bytes (§6.4), lapses and the throughput they kept (§2), and the rates
 * they applied, from which, independently of the allocator:
 * - convergence per flowlet event (§6.3): the time from a flowlet's start or end at its host until
 *   every active flow's applied rate is within 10% of its share in the proportional-fair optimum of
 *   the new flow set (computed offline in convergence.ts, over the allocator's capacities, by a
 *   solver of its own that shares no code with NED: optimum.ts) and stays there until the next event;
 * - optimality (§6.6, "F-NORM achieves over 99.7% of optimal throughput"): the applied rates' sum
 *   over the optimum's, averaged over the time of every interval between flowlet events (the climb
 *   to the new rates included, converged or not); and, beside it, at the end of each converged
 *   interval only.
 * FCT by size bucket is the run's own `summary.flows.bySize`; the queueing delay is the p99 switch
 * queue over the host link rate.
 */

import {
  formatNs,
  Histogram,
  type RunRecord,
  reportsOf,
  type SummaryTotals,
  sectionsOf,
  sum,
} from '../../../sdk/index.js';
import { FabricLinks } from '../arbiter/links.js';
import type { FlowtuneAllocatorSection } from '../arbiter/role.js';
import { type FlowtuneHostSection, LAPSE_BIN_NS } from '../host/transport.js';
import type { FlowtuneFabric } from '../wire.js';
import {
  CONVERGED_WITHIN,
  convergenceOf,
  type FlowtuneConvergence,
  type FlowtuneOptimality,
} from './convergence.js';
import type { FlowtuneSettings } from './settings.js';

/** to the thousandth */
const r3 = (x: number) => Math.round(x * 1000) / 1000;

declare module '../../../sdk/index.js' {
  /** `summary.flowtune` */
  interface SchemeSections {
    flowtune: FlowtuneSummary;
  }
}

export interface FlowtuneSummary {
  gamma: number;
  iterationNs: number;
  threshold: number;
  headroom: number;
  normalize: string;
  leaseNs: number;
  /**
   * the allocator's report came (at the end, or at its kill: what it did up to then); false when it
   * died unplanned (a crash)
   */
  allocatorReported: boolean;
  iterations: number;
  /** CPU time of one allocator iteration (wall clock, not reproducible), ns */
  iterationCpu: { p50Ns: number; p99Ns: number };
  flowlets: number;
  updates: { messages: number; rates: number; heartbeats: number; resent: number };
  notifications: { messages: number; resent: number };
  /** control bytes both ways against the data bytes hosts sent (§6.4: 0.17–1.13% of capacity) */
  control: { bytes: number; fromHosts: number; fromAllocator: number; dataBytes: number; fraction: number };
  /**
   * Σ over links of allocation beyond capacity, Gbit/s, over iterations (§6.6, figure 12), up to the
   * allocator's kill if it was killed; null when it did not report (a crash): unknown, not zero
   */
  overAllocation: {
    beforeMaxGbps: number;
    beforeMeanGbps: number;
    afterMaxGbps: number;
    afterMeanGbps: number;
  } | null;
  /**
   * The links' loads from the rates the hosts applied, not from the allocator's report (a killed or
   * crashed allocator does not change it): per link, the sum of the allocated rates in force on the
   * flowlets crossing it, replayed over time from every host's rate changes and flowlet events. Rates
   * reach different hosts at different times, so a link may carry more than its capacity for a moment
   * while one flowlet speeds up before another slows down; a rate in force that stays beyond capacity
   * is what normalization promises never to give. During a lapse a flowlet is on its own congestion
   * control, not an allocated rate, and counts 0. (A flowlet's rate counts until its host ends it, also
   * while it has nothing left to send: this is the allocation in force, not the bytes on the wire.)
   */
  appliedLoad: {
    /** the largest excess over one link's capacity, Gbit/s, where and when (ns since traffic start) */
    overMaxGbps: number;
    worst: { link: string; at: number } | null;
    /** time during which some link's applied load exceeded its capacity, ns */
    overNs: number;
    /** the longest one link stayed beyond its capacity without a break, where and from when */
    longestOverNs: number;
    longest: { link: string; at: number } | null;
    /** what the rates in force would send beyond capacity over every link and that time (∫ excess dt) */
    excessBytes: number;
  };
  convergence: FlowtuneConvergence;
  /**
   * applied rates' sum over the offline optimum's: `mean` and `min` over the time of every bounded
   * interval between flowlet events, its first microseconds included (§6.6 measures all of it);
   * `convergedMean` at the end of the `convergedIntervals` that converged (the rates once settled)
   */
  optimality: FlowtuneOptimality | null;
  /**
   * rate lapses: per host, when, the rate allocated then, and the throughput its flows sent on their
   * own: over the whole lapse, in its first 200 µs, and per 50 µs of its first millisecond
   */
  fallbacks: Array<{
    host: string;
    start: number;
    end: number | null;
    allocatedGbps: number;
    sentGbps: number;
    ratio: number;
    first200usRatio: number;
    binsGbps: number[];
  }>;
  reroutes: number;
  spineEvents: Array<{ t: number; spine: number; up: boolean }>;
  /** p99 FCT of completed flowlets by size in frames (§6.5's buckets; summary.flows.bySize has more) */
  fctP99BySizeNs: Record<string, number>;
  /** p99 switch queue occupancy and its drain time at the host link rate */
  queueP99Bytes: number;
  queueDelayP99Ns: number;
  unknownFrames: number;
}

export function summarizeFlowtune(
  s: FlowtuneSettings,
  fabric: FlowtuneFabric,
  r: RunRecord,
  totals: SummaryTotals,
): FlowtuneSummary {
  const hosts = sectionsOf<FlowtuneHostSection>(r, 'host').map((x) => ({
    name: x.report.name,
    h: x.section,
  }));
  const alloc = sectionsOf<FlowtuneAllocatorSection>(r, 'arbiter').at(-1)?.section;
  const t0 = r.trafficStart;
  const since0 = (t: number) => Math.round(t - t0);
  const cpu = alloc ? new Histogram() : undefined;
  if (alloc && cpu) cpu.merge(alloc.iterationCpuNs);
  const fromHosts = sum(hosts, (x) => x.h.controlBytesOut);
  const fromAllocator = sum(hosts, (x) => x.h.controlBytesIn);
  const dataBytes = sum(hosts, (x) => x.h.pacedBytes + x.h.unpacedBytes);
  const ids = new Map(r.scenario.topology.nodes.map((n) => [n.name, n.id]));
  const { convergence, optimality } = convergenceOf(
    s,
    fabric,
    hosts.map(({ name, h }) => ({ id: ids.get(name)!, h })),
    t0,
  );
  const appliedLoad = appliedLoadOf(
    fabric,
    hosts.map(({ name, h }) => ({ id: ids.get(name)!, h })),
    t0,
  );
  const hostRate = fabric.hosts[0]?.rateBps ?? 1;
  const q99 = switchQueueP99(r);
  return {
    gamma: s.gamma,
    iterationNs: s.iterationNs,
    threshold: s.threshold,
    headroom: s.headroom,
    normalize: s.normalize,
    leaseNs: s.leaseNs,
    allocatorReported: alloc !== undefined,
    iterations: alloc?.iterations ?? 0,
    iterationCpu: { p50Ns: cpu?.quantile(0.5) ?? 0, p99Ns: cpu?.quantile(0.99) ?? 0 },
    flowlets: sum(hosts, (x) => x.h.flowlets),
    updates: {
      messages: sum(hosts, (x) => x.h.updates),
      rates: sum(hosts, (x) => x.h.rates),
      heartbeats: sum(hosts, (x) => x.h.heartbeats),
      resent: alloc?.resent ?? 0,
    },
    notifications: { messages: sum(hosts, (x) => x.h.notifies), resent: sum(hosts, (x) => x.h.resent) },
    control: {
      bytes: fromHosts + fromAllocator,
      fromHosts,
      fromAllocator,
      dataBytes,
      fraction: dataBytes > 0 ? (fromHosts + fromAllocator) / (fromHosts + fromAllocator + dataBytes) : 0,
    },
    overAllocation: alloc
      ? {
          beforeMaxGbps: r3(alloc.overAllocation.beforeMax),
          beforeMeanGbps: r3(alloc.overAllocation.beforeMean),
          afterMaxGbps: r3(alloc.overAllocation.afterMax),
          afterMeanGbps: r3(alloc.overAllocation.afterMean),
        }
      : null,
    appliedLoad,
    convergence,
    optimality,
    fallbacks: fallbacksOf(r, hosts),
    reroutes: sum(hosts, (x) => x.h.reroutes),
    spineEvents: (alloc?.spines ?? []).map(([t, spine, up]) => ({ t: since0(t), spine, up: up === 1 })),
    fctP99BySizeNs: totals.fctP99BySizeNs,
    queueP99Bytes: q99,
    queueDelayP99Ns: Math.round((q99 * 8e9) / hostRate),
    unknownFrames: sum(hosts, (x) => x.h.unknownFrames) + (alloc?.unknownFrames ?? 0),
  };
}

/**
 * The hosts' rate lapses (see `FlowtuneSummary.fallbacks`): a lapse still open at the end counts to its
 * host's last sent byte, or else to the run's last flow finish.
 */
function fallbacksOf(
  r: RunRecord,
  hosts: Array<{ name: string; h: FlowtuneHostSection }>,
): FlowtuneSummary['fallbacks'] {
  const since0 = (t: number) => Math.round(t - r.trafficStart);
  const lastFinish = Math.max(0, ...r.reports.flatMap((rep) => rep.flows.map((f) => f.finish)));
  return hosts.flatMap(({ name, h }) =>
    h.fallbacks.map(([start, end, allocated, bytes, last, bins]) => {
      const span = (last > start ? last : end >= 0 ? end : lastFinish) - start;
      const sent = span > 0 ? (bytes * 8) / span : 0;
      const first = (sum(bins.slice(0, 4), (b) => b) * 8) / (4 * LAPSE_BIN_NS);
      return {
        first200usRatio: r3(allocated > 0 ? (first * 1e9) / allocated : 0),
        binsGbps: bins.map((b) => r3((b * 8) / LAPSE_BIN_NS)),
        host: name,
        start: since0(start),
        end: end >= 0 ? since0(end) : null,
        allocatedGbps: r3(allocated / 1e9),
        sentGbps: r3(sent),
        ratio: r3(allocated > 0 ? (sent * 1e9) / allocated : 0),
      };
    }),
  );
}

/** the p99 queue occupancy, bytes, over every switch port (the hosts' NIC queues left out) */
function switchQueueP99(r: RunRecord): number {
  const qh = new Histogram();
  const hostReports = new Set(reportsOf(r, 'host'));
  for (const rep of r.reports)
    if (rep.queueHist && rep.ports.length > 0 && !hostReports.has(rep)) qh.merge(rep.queueHist);
  return qh.quantile(0.99);
}

/**
 * Every link's load from the hosts' applied rates (see `FlowtuneSummary.appliedLoad`): rate changes
 * and flowlet starts, moves and ends of every host, in time order; a flowlet's path from its start
 * event (a move is a start on another spine), its load the last rate its host applied until it ends.
 */
function appliedLoadOf(
  fabric: FlowtuneFabric,
  hosts: Array<{ id: number; h: FlowtuneHostSection }>,
  t0: number,
): FlowtuneSummary['appliedLoad'] {
  const links = new FabricLinks(fabric);
  const cap = links.capacityBps;
  const changes = appliedChanges(links, hosts);
  const load = new Float64Array(cap.length);
  // per link: since when it has been beyond capacity without a break (NaN: it is not)
  const overSince = new Float64Array(cap.length).fill(Number.NaN);
  const flows = new Map<number, { path: number[]; rate: number }>();
  const move = (path: readonly number[], by: number) => {
    for (const l of path) load[l] += by;
  };
  let over: number[] = [];
  let overNs = 0;
  let excessBits = 0;
  let overMax = 0;
  let worst: { link: string; at: number } | null = null;
  let longestNs = 0;
  let longest: { link: string; at: number } | null = null;
  let last = Number.NaN;
  for (let i = 0; i < changes.length; i++) {
    const [t, kind, f, rate, path] = changes[i];
    if (over.length > 0 && t > last) {
      overNs += t - last;
      for (const l of over) excessBits += ((load[l] - cap[l]) * (t - last)) / 1e9;
    }
    last = t;
    const fl = flows.get(f);
    if (kind === 0) {
      if (fl) move(fl.path, -fl.rate);
      flows.delete(f);
    } else if (kind === 1) {
      if (fl) move(fl.path, -fl.rate);
      flows.set(f, { path: path!, rate: fl?.rate ?? 0 });
      if (fl) move(path!, fl.rate);
    } else if (fl) {
      move(fl.path, rate - fl.rate);
      fl.rate = rate;
    }
    // the changes of one instant are one change
    if (i + 1 < changes.length && changes[i + 1][0] === t) continue;
    over = [];
    for (let l = 0; l < cap.length; l++) {
      // beyond rounding: rates are whole bit/s
      const excess = load[l] - cap[l];
      if (excess <= 1) {
        if (!Number.isNaN(overSince[l]) && t - overSince[l] > longestNs) {
          longestNs = t - overSince[l];
          longest = { link: links.name(l), at: Math.round(overSince[l] - t0) };
        }
        overSince[l] = Number.NaN;
        continue;
      }
      over.push(l);
      if (Number.isNaN(overSince[l])) overSince[l] = t;
      if (excess > overMax) {
        overMax = excess;
        worst = { link: links.name(l), at: Math.round(t - t0) };
      }
    }
  }
  // a link still beyond capacity when the last change came: its span is open, counted to there
  for (let l = 0; l < cap.length; l++)
    if (!Number.isNaN(overSince[l]) && last - overSince[l] > longestNs) {
      longestNs = last - overSince[l];
      longest = { link: links.name(l), at: Math.round(overSince[l] - t0) };
    }
  return {
    overMaxGbps: Math.round(overMax / 1e6) / 1000,
    worst,
    overNs: Math.round(overNs),
    longestOverNs: Math.round(longestNs),
    longest,
    excessBytes: Math.round(excessBits / 8),
  };
}

/**
 * The changes `appliedLoadOf` replays, in time order: [time, order at a tie (ends, then starts, then
 * rates), flow, rate (-1 for an event), path or null].
 */
function appliedChanges(
  links: FabricLinks,
  hosts: Array<{ id: number; h: FlowtuneHostSection }>,
): Array<[number, number, number, number, number[] | null]> {
  const changes: Array<[number, number, number, number, number[] | null]> = [];
  for (const { id, h } of hosts) {
    for (const [t, k, f, dst, spine] of h.events)
      changes.push(k === 0 ? [t, 1, f, -1, links.path(id, dst, spine)] : [t, 0, f, -1, null]);
    for (const [t, f, rate] of h.rateSeries) changes.push([t, 2, f, rate, null]);
  }
  changes.sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]);
  return changes;
}

/** The section's lines in the printed summary table. */
export function flowtuneRows(f: FlowtuneSummary): Array<[string, string]> {
  const c = f.convergence;
  const rows: Array<[string, string]> = [
    [
      'flowtune allocator',
      `${f.iterations} iterations (${formatNs(f.iterationNs)} apart), ${(f.iterationCpu.p50Ns / 1000).toFixed(1)} / ${(f.iterationCpu.p99Ns / 1000).toFixed(1)} µs CPU p50/p99; ${f.updates.rates} rates in ${f.updates.messages} updates`,
    ],
    [
      'flowtune convergence',
      `${c.converged}/${c.events} flowlet events within ${CONVERGED_WITHIN * 100}% of the optimum: p50 ${formatNs(c.p50Ns)}, p99 ${formatNs(c.p99Ns)}, max ${formatNs(c.maxNs)}`,
    ],
    [
      'flowtune control',
      `${(f.control.fraction * 100).toFixed(3)}% of bytes; over-allocation ${f.overAllocation ? `max ${f.overAllocation.beforeMaxGbps} Gbit/s before ${f.normalize}, ${f.overAllocation.afterMaxGbps} after` : 'unknown: the allocator did not report'}`,
    ],
  ];
  const a = f.appliedLoad;
  rows.push([
    'flowtune applied load',
    a.overNs === 0
      ? 'the rates hosts applied kept every link within its capacity'
      : `the rates hosts applied exceeded a link's capacity for ${formatNs(a.overNs)} in all, ${formatNs(a.longestOverNs)} at most without a break (${a.longest?.link} from ${formatNs(a.longest?.at ?? 0)}), by up to ${a.overMaxGbps} Gbit/s (${a.worst?.link} at ${formatNs(a.worst?.at ?? 0)})`,
  ]);
  if (f.optimality)
    rows.push([
      'flowtune optimality',
      `${(f.optimality.mean * 100).toFixed(2)}% of the offline optimum over the time of ${f.optimality.intervals} intervals (min ${(f.optimality.min * 100).toFixed(2)}%)${f.optimality.convergedMean === null ? '' : `; ${(f.optimality.convergedMean * 100).toFixed(2)}% at the end of ${f.optimality.convergedIntervals} converged ones`}`,
    ]);
  if (f.fallbacks.length > 0)
    rows.push([
      'flowtune fallbacks',
      `${f.fallbacks.length} host lapses; in their first 200 µs the flows sent ${f.fallbacks.map((x) => `${(x.first200usRatio * 100).toFixed(0)}%`).join(', ')} of the rate allocated before`,
    ]);
  return rows;
}
