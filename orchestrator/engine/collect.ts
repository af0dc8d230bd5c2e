/**
 * Collection: turns a finished fabric's reports into the results folder (docs/results.md) — summary.json,
 * flows.csv, queues.csv, events.jsonl, the resolved scenario and topology, and the plots of plots/ —
 * and computes the summary the CLI prints. Every figure here is derived from what the node processes
 * measured. The fairness figures are computed in fairness.ts, the folder's files written by
 * results-files.ts.
 */
import { type ImpairCounts, noImpairCounts } from '../../core/fault-filter.js';
import { Histogram } from '../../core/histogram.js';
import type { NodeReport } from '../../core/messages.js';
import { segmentCount } from '../../host/transport/types.js';
import type { Topology } from '../../topology/types.js';
import { schemeDefinition } from '../registry/index.js';
import { type BusiestQueue, busiestQueue, idealFct, quantile } from '../registry/stats.js';
import { codeVersion } from './build-info.js';
import { summarizeClocks } from './clocks.js';
import type { FabricResult } from './engine.js';
import { concerns, OUTAGES, REPAIRS } from './fired.js';
import { type FlowNotDone, type FlowOutcome, flowOutcomes } from './outcomes.js';

export { type BusiestQueue, busiestQueue, idealFct };

import { hostPath } from '../topology/routing.js';
import type { FaultSummary, FlowRow, ImpairedLink, ImpairmentsSummary, Summary } from './results.js';

export type { Fairness, FaultSummary, FlowRow, Summary } from './results.js';

import { fairness } from './fairness.js';
import { writeResults } from './results-files.js';

export type { FlowNotDone } from './outcomes.js';

/** refused control connections listed one by one in the summary (all are counted) */
const MAX_REFUSALS_LISTED = 100;

/** Data bytes delivered to hosts in [start, start + window), from their sampled counters (physical ns). */
function delivered(reports: readonly NodeReport[], start: number, windowNs: number): number {
  const at = (d: { t: number[]; v: number[] }, t: number): number => {
    let v = 0;
    for (let i = 0; i < d.t.length && d.t[i] <= t; i++) v = d.v[i];
    return v;
  };
  let bytes = 0;
  for (const rep of reports)
    if (rep.delivered) bytes += at(rep.delivered, start + windowNs) - at(rep.delivered, start);
  return bytes;
}

/** Every planned flow's outcome, judged from the run's faults (outcomes.ts). */
function outcomesOf(r: FabricResult, flows: FlowRow[], endNs: number): Map<number, FlowOutcome> {
  const sc = r.scenario;
  return flowOutcomes({
    reported: schemeDefinition(sc.scheme.kind).failedFlows?.(sc.scheme, r),
    topology: sc.topology,
    planned: r.plan.flows,
    flows,
    faults: r.faults,
    endNs,
    // an interrupted run stopped early even when every node's report was lost with it
    stoppedEarly: r.interrupted !== undefined || (endNs < r.endNs && flows.some((f) => f.finish < 0)),
    reliable: sc.transport.kind !== 'udp',
    congested: new Set(
      r.reports.flatMap((rep) => rep.ports.filter((p) => p.drops > 0).map((p) => `${rep.name}>${p.peer}`)),
    ),
  });
}

/** Frames sent and received by the flows that count them (a transport without retransmissions), or undefined. */
function framesOf(flows: FlowRow[]): Summary['frames'] {
  const counted = flows.filter((f) => f.framesSent !== undefined && f.framesReceived !== undefined);
  if (counted.length === 0) return undefined;
  const sent = counted.reduce((s, f) => s + f.framesSent!, 0);
  const received = counted.reduce((s, f) => s + f.framesReceived!, 0);
  return { sent, received, lost: sent - received };
}
export function collect(
  r: FabricResult,
  runtime: string,
): { summary: Summary; flows: FlowRow[]; outcomes: FlowNotDone[] } {
  const sc = r.scenario;
  const topo = sc.topology;
  const flows = flowRowsOf(r);
  // an interrupted run inside a long grant has events only up to its last barrier: it reached further
  const endNs = Math.max(0, r.interrupted ? r.reachedNs : 0, ...r.events.map((e) => e.t));
  const counters: Record<string, number> = {};
  for (const rep of r.reports)
    for (const [k, v] of Object.entries(rep.metrics.counters)) counters[k] = (counters[k] ?? 0) + v;
  const scheme = schemeDefinition(r.scenario.scheme.kind);
  const outcomes = outcomesOf(r, flows, endNs);
  for (const f of flows) f.outcome = outcomes.get(f.id)?.outcome ?? f.outcome;
  const notDone = [...outcomes.entries()].filter(([, o]) => o.outcome !== 'completed');
  const { fidelity, queues } = fidelityAndQueues(r);

  const summary: Summary = {
    runId: r.runId,
    scenario: sc.name,
    runtime,
    code: codeVersion(),
    sync: sc.sync,
    scheme: sc.scheme.kind,
    tdf: sc.sync === 'dilated' ? sc.tdf : null,
    virtualNs: Math.round(endNs),
    wallMs: r.wallMs,
    fidelity,
    flows: flowFigures(r, flows, notDone, endNs),
    queues,
    // a stopped flow's sender is active until the stop
    fairness: fairness(
      r.reports,
      flows.map((f) => (f.finish < 0 && f.stopped !== undefined ? { ...f, finish: f.stopped } : f)),
      sc.run.intervalNs,
      Math.min(endNs, sc.workload.durationNs),
    ),
    throughput: (() => {
      // the workload's duration, or less when the run ended before it (a list done early, a stop)
      const windowNs = Math.max(1, Math.min(sc.workload.durationNs, Math.round(endNs)));
      const bytes = delivered(r.reports, r.trafficStart, windowNs);
      return { windowNs, bytes, gbps: Math.round(((bytes * 8) / windowNs) * 1000) / 1000 };
    })(),
    drops: {
      congestion: counters.dropsCongestion ?? 0,
      fault: (counters.dropsWireDown ?? 0) + (counters.dropsWireLoss ?? 0) + (counters.corrupted ?? 0),
      malformed: counters.malformed ?? 0,
      noRoute: counters.dropsNoRoute ?? 0,
    },
    security: {
      refusedControl: r.refusals.length,
      refused: r.refusals.slice(0, MAX_REFUSALS_LISTED),
      foreignDatagrams: counters.foreignDatagrams ?? 0,
      forgedDatagrams: counters.forged ?? 0,
    },
    ...impairmentsOf(r.reports),
    faults: r.faults.map((f) => summarizeFault(f, r, flows, topo)),
    processes: { ...r.processes, missingReports: r.missing },
    ...(r.interrupted && { interrupted: r.interrupted }),
    ...(r.crashes.length > 0 && { crashes: r.crashes, reproducible: false }),
  };
  const frames = framesOf(flows);
  if (frames) summary.frames = frames;
  const clocks = summarizeClocks(r);
  if (clocks) summary.clocks = clocks;
  const compute = summarizeCompute(r.reports, summary.virtualNs);
  if (compute) summary.compute = compute;
  if (r.capture) summary.capture = r.capture;
  if (scheme.summaryKey && scheme.summarize)
    summary[scheme.summaryKey] = scheme.summarize(r.scenario.scheme, r, {
      frames: summary.frames,
      congestionDrops: summary.drops.congestion,
      fctP99BySizeNs: Object.fromEntries(Object.entries(summary.flows.bySize).map(([k, v]) => [k, v.p99Ns])),
    });
  // results hold whole nanoseconds (computed above from the fabric's fractional times)
  integerNs(summary);
  for (const f of flows) integerNs(f, FLOW_TIMES);
  for (const e of r.events) integerNs(e);
  for (const f of r.faults) integerNs(f);
  return { summary, flows, outcomes: notDone.map(([id, o]) => ({ id, ...o })) };
}

/**
 * Every flow a host started, its sender's and receiver's halves merged: times since the traffic start,
 * the path it took (or the one its delivered frames took, unfinished), its ideal FCT and slowdown; by id.
 */
function flowRowsOf(r: FabricResult): FlowRow[] {
  const sc = r.scenario;
  const rate = Math.min(sc.links.host.rateBps, sc.links.fabric.rateBps);
  const pathLen = memoPath(sc.topology);
  const received = new Map<number, { finish: number; via: number[] }>();
  for (const rep of r.reports)
    for (const [id, finish, via] of rep.received) received.set(id, { finish, via });
  // unfinished flows: the path their delivered frames took, so a failure's in-flight flows count them
  const partial = new Map<number, { via: number[]; lastNew: number }>();
  for (const rep of r.reports)
    for (const [id, via, lastNew] of rep.partial ?? []) partial.set(id, { via, lastNew: lastNew ?? -1 });
  // frames received per flow: counted by UDP receivers, for flows whether delivered or not
  const rxFrames = new Map<number, number>();
  for (const rep of r.reports) for (const [id, n] of rep.rxFrames ?? []) rxFrames.set(id, n);
  const countsRx = sc.transport.kind === 'udp';
  const flows: FlowRow[] = [];
  for (const rep of r.reports) {
    for (const f of rep.flows) {
      const rx = received.get(f.id);
      const start = f.start - r.trafficStart;
      const finish = rx ? rx.finish - r.trafficStart : -1;
      const links = pathLen(f.src, f.dst);
      const propAvg =
        links <= 2
          ? sc.links.host.propNs
          : (2 * sc.links.host.propNs + (links - 2) * sc.links.fabric.propNs) / links;
      const ideal = idealFct(f.size, links, rate, propAvg);
      const fct = finish >= 0 ? finish - start : -1;
      flows.push({
        ...f,
        start,
        finish,
        via: rx?.via ?? partial.get(f.id)?.via ?? [],
        ...(!rx &&
          (partial.get(f.id)?.lastNew ?? -1) >= 0 && {
            lastProgress: partial.get(f.id)!.lastNew - r.trafficStart,
          }),
        ...(countsRx && { framesReceived: rxFrames.get(f.id) ?? 0 }),
        ...(f.stopped !== undefined && { stopped: f.stopped - r.trafficStart }),
        fct,
        ideal,
        slowdown: fct >= 0 ? fct / ideal : -1,
        outcome: finish >= 0 ? 'completed' : 'unexplained',
      });
    }
  }
  flows.sort((a, b) => a.id - b.id);
  const planned = new Map(r.plan.flows.map((f) => [f.id, f]));
  for (const f of flows) {
    const p = planned.get(f.id);
    if (p?.deadline !== undefined) f.deadline = p.deadline;
    if (p?.bestEffort) f.bestEffort = true;
  }
  return flows;
}

/** summary.flows: counts by outcome, FCT and slowdown quantiles (unfinished flows censored at the end). */
function flowFigures(
  r: FabricResult,
  flows: FlowRow[],
  notDone: Array<[number, FlowOutcome]>,
  endNs: number,
): Summary['flows'] {
  const done = flows.filter((f) => f.finish >= 0);
  const fct = new Histogram();
  const slow = new Histogram();
  // unfinished flows are not left out of the tail: each counts as running until the run's end
  const censored = new Histogram();
  // a flow the workload stopped did not run on: it is in neither
  for (const f of flows)
    if (f.stopped === undefined || f.finish >= 0)
      censored.record(f.finish >= 0 ? f.fct : Math.max(0, endNs - f.start));
  for (const f of done) {
    fct.record(f.fct);
    slow.record(f.slowdown * 1000); // histogram keeps integers well: milli-units
  }
  return {
    planned: r.plan.flows.length,
    started: flows.length,
    completed: done.length,
    unfinished: flows.length - done.length,
    failed: notDone.filter(([, o]) => o.outcome === 'failed').length,
    unexplained: notDone.filter(([, o]) => o.outcome === 'unexplained').length,
    ...(flows.some((f) => f.outcome === 'stopped') && {
      stopped: flows.filter((f) => f.outcome === 'stopped').length,
    }),
    fctP50Ns: fct.quantile(0.5),
    fctP99Ns: fct.quantile(0.99),
    fctP50CensoredNs: censored.quantile(0.5),
    fctP99CensoredNs: censored.quantile(0.99),
    slowdownP50: slow.quantile(0.5) / 1000,
    slowdownP99: slow.quantile(0.99) / 1000,
    retransmits: flows.reduce((s, f) => s + f.retransmits, 0),
    timeouts: flows.reduce((s, f) => s + f.timeouts, 0),
    ...deadlineSummary(flows),
    bySize: fctBySize(flows),
  };
}

/** summary.fidelity and summary.queues, merged over every node's report. */
function fidelityAndQueues(r: FabricResult): Pick<Summary, 'fidelity' | 'queues'> {
  const sc = r.scenario;
  const late = new Histogram();
  const arrivalLate = new Histogram();
  const queue = new Histogram();
  let misses = 0;
  let frames = 0;
  let maxQueue = 0;
  for (const rep of r.reports) {
    late.merge(rep.fidelity.lateness);
    arrivalLate.merge(rep.fidelity.arrivalLateness);
    misses += rep.fidelity.causalityMisses;
    frames += rep.fidelity.framesHandled;
    if (rep.queueHist) {
      queue.merge(rep.queueHist);
      for (const p of rep.ports) maxQueue = Math.max(maxQueue, p.maxBytes);
    }
  }
  const missRate = frames > 0 ? misses / frames : 0;
  return {
    fidelity: {
      lateP50Ns: late.quantile(0.5),
      lateP99Ns: late.quantile(0.99),
      arrivalLateP99Ns: arrivalLate.quantile(0.99),
      arrivalLateP999Ns: arrivalLate.quantile(0.999),
      causalityMisses: misses,
      framesHandled: frames,
      missRate,
      threshold: sc.run.missThreshold,
      ok: missRate <= sc.run.missThreshold,
    },
    queues: {
      p50Bytes: queue.quantile(0.5),
      p99Bytes: queue.quantile(0.99),
      p999Bytes: queue.quantile(0.999),
      maxBytes: maxQueue,
      busiest: busiestQueue(r.reports),
    },
  };
}

/** a flow row's times (ns): they carry no unit in their names */
const FLOW_TIMES = /^(start|finish|fct|ideal|lastProgress|deadline|stopped)$/;
/** a time or a duration in ns, by its key: `t`, `at`, `…At`, `…Ns` */
const NS_KEY = /^(t|at)$|[a-z](At|Ns)$/;

/**
 * Rounds, in place, every number (or array of numbers) under a key that names ns to whole ns, through
 * nested objects and arrays: summaries, scheme sections and events come out as integers.
 */
export function integerNs(o: object, keys: RegExp = NS_KEY): void {
  const rec = o as Record<string, unknown>;
  for (const [k, v] of Object.entries(rec)) {
    if (typeof v === 'number') {
      if (keys.test(k) && Number.isFinite(v)) rec[k] = Math.round(v);
    } else if (Array.isArray(v)) {
      if (keys.test(k))
        rec[k] = v.map((x) => (typeof x === 'number' && Number.isFinite(x) ? Math.round(x) : x));
      for (const x of v) if (x !== null && typeof x === 'object') integerNs(x, keys);
    } else if (v !== null && typeof v === 'object' && !ArrayBuffer.isView(v)) integerNs(v, keys);
  }
}

/**
 * The nodes that ran a compute model: how busy each one's core was over the run, and how long its
 * code waited for it at most. A `measured` run is not reproducible, and says so.
 */
function summarizeCompute(reports: readonly NodeReport[], virtualNs: number): Summary['compute'] {
  // a share of the run, to 4 digits
  const share = (ns: number, cores = 1) =>
    virtualNs > 0 ? Math.round((ns / (cores * virtualNs)) * 1e4) / 1e4 : 0;
  const modelled = reports.filter((rep) => rep.compute !== undefined);
  // the nodes whose code cost time or waited (a host of a scheme that charges nothing: none)
  const nodes = modelled
    .filter((rep) => rep.compute!.charged > 0 || rep.compute!.waited > 0)
    .map((rep) => {
      const c = rep.compute!;
      return {
        node: rep.name,
        model: c.model,
        busyNs: Math.round(c.busyNs),
        busyFraction: share(c.busyNs),
        charged: c.charged,
        waited: c.waited,
        maxWaitNs: Math.round(c.maxWaitNs),
        ...(c.pools && {
          pools: Object.fromEntries(
            Object.entries(c.pools).map(([name, p]) => [
              name,
              {
                cores: p.cores,
                busyNs: Math.round(p.busyNs),
                busyFraction: share(p.busyNs, p.cores),
              },
            ]),
          ),
        }),
      };
    });
  if (modelled.length === 0) return undefined;
  return {
    reproducible: modelled.every((rep) => rep.compute!.model !== 'measured'),
    modelledNodes: modelled.length,
    nodes,
  };
}

/** Size buckets by frames, upper bounds inclusive. */
const SIZE_BUCKETS: ReadonlyArray<[string, number]> = [
  ['1', 1],
  ['2-10', 10],
  ['11-100', 100],
  ['>100', Number.POSITIVE_INFINITY],
];

function fctBySize(flows: FlowRow[]): Summary['flows']['bySize'] {
  const out: Summary['flows']['bySize'] = {};
  let lo = 0;
  for (const [name, hi] of SIZE_BUCKETS) {
    const inBucket = flows.filter((f) => {
      const n = segmentCount(f.size);
      return n > lo && n <= hi;
    });
    lo = hi;
    if (inBucket.length === 0) continue;
    const done = inBucket.filter((f) => f.finish >= 0);
    const fct = done.map((f) => f.fct).sort((a, b) => a - b);
    const slow = done.map((f) => f.slowdown).sort((a, b) => a - b);
    out[name] = {
      flows: inBucket.length,
      completed: done.length,
      p50Ns: Math.round(quantile(fct, 0.5)),
      p99Ns: Math.round(quantile(fct, 0.99)),
      p99Slowdown: Math.round(quantile(slow, 0.99) * 1000) / 1000,
    };
  }
  return out;
}

/** Deadlines met and missed, over the started flows that have one; nothing when none has. */
function deadlineSummary(flows: FlowRow[]): Pick<Summary['flows'], 'deadlines'> {
  const withDeadline = flows.filter((f) => f.deadline !== undefined);
  if (withDeadline.length === 0) return {};
  const met = withDeadline.filter((f) => f.fct >= 0 && f.fct <= f.deadline!).length;
  const missed = withDeadline.length - met;
  return {
    deadlines: { flows: withDeadline.length, met, missed, missRatio: missed / withDeadline.length },
  };
}

function memoPath(topo: Topology): (src: number, dst: number) => number {
  const memo = new Map<number, number>();
  const n = topo.nodes.length;
  return (src, dst) => {
    const key = src * n + dst;
    let v = memo.get(key);
    if (v === undefined) {
      v = hostPath(topo, topo.nodes[src].name, topo.nodes[dst].name);
      memo.set(key, v);
    }
    return v;
  };
}

function summarizeFault(
  f: FabricResult['faults'][number],
  r: FabricResult,
  flows: FlowRow[],
  topo: Topology,
): FaultSummary {
  // a failure is detected when a neighbour declares its port toward the failed element down; a
  // repair (resume, start, connect, link-up) when it declares it up again
  const kind = REPAIRS.has(f.action) ? 'port-up-detected' : 'port-down-detected';
  const detection = r.events.find((e) => e.kind === kind && e.t >= f.t && concerns(f, e));
  const out: FaultSummary = {
    t: f.t,
    at: f.at,
    action: f.action,
    ...(f.node && { node: f.node }),
    ...(f.link && { link: f.link }),
    detectedAt: detection ? detection.t : null,
    detectionNs: detection ? detection.t - f.t : null,
  };
  const sw = f.node ? topo.nodes.find((n) => n.name === f.node && n.role === 'switch') : undefined;
  if (sw && OUTAGES.has(f.action)) {
    const inFlight = flows.filter(
      (x) => x.via.includes(sw.id) && x.start <= f.t && (x.finish < 0 || x.finish > f.t),
    );
    out.flowsInFlight = inFlight.length;
    out.flowsRecovered = inFlight.filter(
      (x) => x.finish >= 0 && detection !== undefined && x.finish > detection.t,
    ).length;
  }
  return out;
}

/**
 * The end of every run, the command line's and the library's alike: the fabric stopped (its nodes'
 * reports collected), the figures computed, the results folder written. What could not be drawn (a
 * plot, the page) comes back as `problems` to say, not thrown: the results are written.
 */
export async function finishRun(
  fabric: { stop(): Promise<FabricResult> },
  out: string,
  runtime: string,
): Promise<{
  result: FabricResult;
  summary: Summary;
  flows: FlowRow[];
  outcomes: FlowNotDone[];
  problems: string[];
}> {
  const result = await fabric.stop();
  const { summary, flows, outcomes } = collect(result, runtime);
  const problems = await writeResults(out, result, summary, flows, outcomes);
  return { result, summary, flows, outcomes, problems };
}

/**
 * What the links' impairments did (core/fault-filter.ts), in all and per direction (`from` → `to`), from the
 * nodes' `impair:<count>:<peer>` counters; absent when no impairment did anything.
 */
function impairmentsOf(reports: readonly NodeReport[]): { impairments?: ImpairmentsSummary } {
  const total = noImpairCounts();
  const links = new Map<string, ImpairedLink>();
  for (const rep of reports) {
    for (const [name, v] of Object.entries(rep.metrics.counters)) {
      if (!name.startsWith('impair:')) continue;
      const [, kind, to] = name.split(':') as [string, keyof ImpairCounts, string];
      const key = `${rep.name}>${to}`;
      let link = links.get(key);
      if (link === undefined) links.set(key, (link = { from: rep.name, to, ...noImpairCounts() }));
      link[kind] += v;
      total[kind] += v;
    }
  }
  if (links.size === 0) return {};
  const order = (x: ImpairedLink, y: ImpairedLink) =>
    x.from.localeCompare(y.from) || x.to.localeCompare(y.to);
  return { impairments: { ...total, links: [...links.values()].sort(order) } };
}
