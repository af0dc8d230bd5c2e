/**
 * The plots of one run, as Vega-Lite specs built from what the results folder holds: FCT and
 * slowdown CDFs (flows.csv), queue occupancy over time of the busiest switch egress ports
 * (queues.csv), true clock error over time per node (clocks.csv), and the fabric's delivered
 * throughput with each fault's firing and detection marked (summary.json `faults`). A plot without
 * data is left out. Times are virtual, from the start of traffic.
 */
import type { TopLevelSpec } from 'vega-lite';
import type { FaultSummary } from '../engine/results.js';
import type { Plot } from './render.js';
import { frame, symlog } from './style.js';
import { cdf, SERIES_POINTS, thin, timeUnit } from './thin.js';

/** A sampled series of one node (or port), `t` physical time as the node reported it. */
export interface NodeSeries {
  node: string;
  t: ArrayLike<number>;
  v: ArrayLike<number>;
}

/** What the run plots are drawn from (collected by `runPlotInput`, or made up by tests). */
export interface RunPlotInput {
  /** every started flow, ns from the start of traffic: `finish`, `fct` and `slowdown` −1 when unfinished */
  flows: Array<{ size: number; finish: number; fct: number; slowdown: number }>;
  /** switch egress queue occupancy, bytes; `node` names the port (`leaf1:3→spine0`) */
  queues: NodeSeries[];
  /** true clock error, ns, most interesting node first */
  clocks: NodeSeries[];
  /** per host: data bytes received so far (a running total) */
  delivered: NodeSeries[];
  /** physical time of the start of traffic: series times are shifted by it */
  t0: number;
  /** virtual time covered, ns from the start of traffic */
  endNs: number;
  faults: FaultSummary[];
}

/** Busiest switch egress ports drawn in `queues`: more lines than this are not told apart. */
export const QUEUE_PORTS = 6;
/** Nodes drawn in `clock-error`, largest p99 error first. */
export const CLOCK_NODES = 12;

const WIDTH = 640;
const HEIGHT = 320;

/** Size classes of the datacenter-transport papers (pFabric, HULL): short, medium, long flows. */
const SIZE_CLASSES: Array<{ label: string; max: number }> = [
  { label: '≤ 100 KB', max: 100_000 },
  { label: '100 KB – 10 MB', max: 10_000_000 },
  { label: '> 10 MB', max: Number.POSITIVE_INFINITY },
];

export function runPlots(input: RunPlotInput): Plot[] {
  const plots: Plot[] = [];
  const done = input.flows.filter((f) => f.fct >= 0);
  if (done.length > 0) {
    const of = `${done.length} of ${input.flows.length} started flows completed`;
    plots.push({
      name: 'fct-cdf',
      spec: cdfSpec(done, (f) => f.fct / 1000, `Flow completion time CDF (${of})`, 'FCT (µs, log)'),
    });
    plots.push({
      name: 'slowdown-cdf',
      spec: cdfSpec(done, (f) => f.slowdown, `FCT slowdown CDF (${of})`, 'slowdown: FCT / ideal FCT (log)'),
    });
  }
  const queues = queuesSpec(input);
  if (queues) plots.push({ name: 'queues', spec: queues });
  if (input.clocks.some((c) => c.t.length > 0)) plots.push({ name: 'clock-error', spec: clockSpec(input) });
  if (input.faults.length > 0) plots.push({ name: 'faults', spec: faultsSpec(input) });
  return plots;
}

function cdfSpec(
  done: RunPlotInput['flows'],
  x: (f: RunPlotInput['flows'][number]) => number,
  title: string,
  xTitle: string,
): TopLevelSpec {
  const groups: Array<{ label: string; values: number[] }> = [{ label: `all (${done.length})`, values: [] }];
  for (const c of SIZE_CLASSES) groups.push({ label: c.label, values: [] });
  for (const f of done) {
    const v = x(f);
    groups[0].values.push(v);
    const k = SIZE_CLASSES.findIndex((c) => f.size <= c.max);
    groups[k + 1].values.push(v);
  }
  // one line per size class, when the flows are of more than one class
  const classes = groups.slice(1).filter((g) => g.values.length > 0);
  const lines =
    classes.length > 1
      ? [groups[0], ...classes.map((g) => ({ ...g, label: `${g.label} (${g.values.length})` }))]
      : [groups[0]];
  const values = lines.flatMap((g) =>
    cdf(g.values).map((p) => ({ x: round(p.x), p: round(p.p), flows: g.label })),
  );
  return {
    ...frame(title, WIDTH, HEIGHT),
    data: { values },
    mark: { type: 'line', interpolate: 'step-after' },
    encoding: {
      x: { field: 'x', type: 'quantitative', title: xTitle, scale: { type: 'log' } },
      y: { field: 'p', type: 'quantitative', title: 'fraction of flows', scale: { domain: [0, 1] } },
      color: { field: 'flows', type: 'nominal', title: 'flows', sort: lines.map((g) => g.label) },
    },
  };
}

function queuesSpec(input: RunPlotInput): TopLevelSpec | null {
  const peaks = input.queues
    .map((q) => {
      let max = 0;
      let sum = 0;
      for (let i = 0; i < q.v.length; i++) {
        max = Math.max(max, q.v[i]);
        sum += q.v[i];
      }
      return { q, max, sum };
    })
    .filter((p) => p.max > 0)
    .sort((a, b) => b.max - a.max || b.sum - a.sum)
    .slice(0, QUEUE_PORTS);
  if (peaks.length === 0) return null;
  const unit = timeUnit(input.endNs);
  const values = peaks.flatMap(({ q }) =>
    thin(q.v).map((i) => ({ t: round((q.t[i] - input.t0) / unit.div), kb: q.v[i] / 1000, port: q.node })),
  );
  return {
    ...frame(`Queue occupancy of the ${peaks.length} busiest switch egress ports (by peak)`, WIDTH, HEIGHT),
    data: { values },
    mark: { type: 'line', interpolate: 'step-after', strokeWidth: 1 },
    encoding: {
      x: { field: 't', type: 'quantitative', title: `virtual time (${unit.label})` },
      y: { field: 'kb', type: 'quantitative', title: 'queued (KB)' },
      color: { field: 'port', type: 'nominal', title: 'port → peer', sort: peaks.map((p) => p.q.node) },
    },
  };
}

function clockSpec(input: RunPlotInput): TopLevelSpec {
  const nodes = input.clocks.filter((c) => c.t.length > 0).slice(0, CLOCK_NODES);
  const unit = timeUnit(input.endNs);
  const values = nodes.flatMap((c) =>
    thin(c.v).map((i) => ({ t: round((c.t[i] - input.t0) / unit.div), err: round(c.v[i]), node: c.node })),
  );
  let lo = 0;
  let hi = 0;
  for (const v of values) {
    lo = Math.min(lo, v.err);
    hi = Math.max(hi, v.err);
  }
  const which =
    input.clocks.length > nodes.length
      ? ` (the ${nodes.length} of ${input.clocks.length} with the largest p99)`
      : '';
  return {
    ...frame(`True clock error per node${which}`, WIDTH, HEIGHT),
    data: { values },
    mark: { type: 'line', strokeWidth: 1 },
    encoding: {
      x: { field: 't', type: 'quantitative', title: `virtual time (${unit.label})` },
      y: {
        field: 'err',
        type: 'quantitative',
        title: 'node clock − physical time (ns, symlog)',
        ...symlog(lo, hi),
      },
      color: { field: 'node', type: 'nominal', title: 'node', sort: nodes.map((c) => c.node) },
    },
  };
}

/**
 * The fabric's delivered throughput (data bytes reaching hosts, all hosts together) over the whole
 * run, with a rule where each fault fired and a dashed one where a neighbour first detected it; below
 * it, per fault, the same at the resolution of one sample period around the fault: the recovery.
 */
function faultsSpec(input: RunPlotInput): TopLevelSpec {
  const unit = timeUnit(input.endNs);
  const rate = deliveredRate(input);
  const marks = input.faults.map((f, i) => ({
    label: `${i + 1}: ${f.action} ${f.node ?? f.link?.join('–') ?? ''}`.trim(),
    t: f.t,
    detectedAt: f.detectedAt,
  }));
  const n = input.faults.length;
  const overview = timelineLayer(
    rate.points(0, input.endNs, rate.overviewWidth),
    marks,
    unit,
    rate.title,
    WIDTH,
    HEIGHT,
  );
  const title = `Delivered throughput, faults and their detection (${n} fault${n === 1 ? '' : 's'})`;
  if (rate.period === 0) return { ...frame(title, WIDTH, HEIGHT), ...overview };
  // the recovery: from a little before the fault to well after its detection, one sample per bucket
  const zooms = marks.slice(0, ZOOMED_FAULTS).map((m) => {
    const after = Math.max(4 * ((m.detectedAt ?? m.t) - m.t), 40 * rate.period);
    const from = Math.max(0, m.t - after / 4);
    const to = Math.min(input.endNs, m.t + after);
    const zu = timeUnit(to - from);
    return {
      title: { text: m.label, fontSize: 11 },
      ...timelineLayer(rate.points(from, to, rate.period), [m], zu, 'Gbit/s', 300, 150),
    };
  });
  const more = n > zooms.length ? ` (the first ${zooms.length} of ${n})` : '';
  return {
    ...frame(title, WIDTH, HEIGHT),
    vconcat: [
      overview,
      { title: { text: `Around each fault${more}`, fontSize: 12 }, concat: zooms, columns: 2 },
    ],
  };
}

/** Faults drawn per panel: each gets a close-up of its recovery. */
export const ZOOMED_FAULTS = 6;

type LayerPanel = Extract<TopLevelSpec, { layer: unknown }>;

/** One timeline panel: throughput as steps, the faults' firing and detection as rules, labels on top. */
function timelineLayer(
  points: Array<{ t: number; gbps: number }>,
  marks: Array<{ label: string; t: number; detectedAt: number | null }>,
  unit: { div: number; label: string },
  yTitle: string,
  width: number,
  height: number,
): LayerPanel {
  const rules: Array<{ t: number; kind: string; label: string; row: number }> = [];
  marks.forEach((m, i) => {
    rules.push({ t: round(m.t / unit.div), kind: 'fault fired', label: m.label, row: i % 4 });
    if (m.detectedAt !== null)
      rules.push({ t: round(m.detectedAt / unit.div), kind: 'first detected', label: '', row: i % 4 });
  });
  const kinds = ['fault fired', 'first detected'];
  const x = { field: 't', type: 'quantitative', title: `virtual time (${unit.label})` } as const;
  const layer: LayerPanel['layer'] = [
    {
      data: { values: points.map((p) => ({ t: round(p.t / unit.div), gbps: round(p.gbps) })) },
      mark: { type: 'line', interpolate: 'step-after', strokeWidth: 1, color: '#1f77b4' },
      encoding: { x, y: { field: 'gbps', type: 'quantitative', title: yTitle } },
    },
    {
      data: { values: rules },
      mark: { type: 'rule', strokeWidth: 1.5 },
      encoding: {
        x,
        color: {
          field: 'kind',
          type: 'nominal',
          title: null,
          scale: { domain: kinds, range: ['#d62728', '#ff7f0e'] },
        },
        strokeDash: {
          field: 'kind',
          type: 'nominal',
          scale: {
            domain: kinds,
            range: [
              [1, 0],
              [4, 3],
            ],
          },
        },
      },
    },
  ];
  // labels where several faults share a panel (a close-up has its fault in its title), in four rows
  if (marks.length > 1)
    layer.push({
      data: { values: rules.filter((r) => r.label !== '') },
      transform: [{ calculate: '4 + 12 * datum.row', as: 'py' }],
      mark: { type: 'text', align: 'left', baseline: 'top', dx: 3, fontSize: 10, color: '#d62728' },
      encoding: {
        x,
        y: { field: 'py', type: 'quantitative', scale: null, axis: null },
        text: { field: 'label' },
      },
    });
  return { width, height, layer };
}

interface DeliveredRate {
  /** the hosts' sampling period (`run.sample`), 0 when throughput comes from completed flows */
  period: number;
  /** bucket width of the whole-run panel: whole sample periods, at most SERIES_POINTS buckets */
  overviewWidth: number;
  /** Gbit/s (bits per ns) in whole buckets of `width` from `from` to `to`, ns from traffic start */
  points(from: number, to: number, width: number): Array<{ t: number; gbps: number }>;
  title: string;
}

/**
 * Throughput over time: from the hosts' sampled byte totals when they sent them, else from completed
 * flows (coarse: each flow's bytes count at its finish).
 */
function deliveredRate(input: RunPlotInput): DeliveredRate {
  const fromHosts = input.delivered.some((d) => d.t.length > 1);
  const period = fromHosts ? samplePeriod(input.delivered) : 0;
  let overviewWidth = Math.max(period, Math.max(1, input.endNs) / SERIES_POINTS);
  if (period > 0) overviewWidth = Math.ceil(overviewWidth / period) * period;
  // (time, bytes) arrivals: a sample's bytes arrived during the period that ends at it
  const each = (add: (t: number, bytes: number) => void): void => {
    if (!fromHosts) {
      for (const f of input.flows) if (f.finish >= 0) add(f.finish, f.size);
      return;
    }
    for (const d of input.delivered) {
      let prev = 0;
      for (let i = 0; i < d.t.length; i++) {
        // a restarted host counts from 0 again
        add(d.t[i] - input.t0 - period / 2, d.v[i] >= prev ? d.v[i] - prev : d.v[i]);
        prev = d.v[i];
      }
    }
  };
  // how far the samples reach (the hosts stop sampling when they stop)
  let covered = fromHosts ? 0 : input.endNs;
  for (const d of input.delivered)
    if (d.t.length > 0) covered = Math.max(covered, d.t[d.t.length - 1] - input.t0);
  return {
    period,
    overviewWidth,
    points(from, to, width) {
      // whole buckets the samples cover only: a last, partial one would read as a drop
      const n = Math.max(1, Math.floor((Math.min(to, covered) - from) / width));
      const bytes = new Float64Array(n);
      each((t, b) => {
        const k = Math.floor((t - from) / width);
        if (k >= 0 && k < n) bytes[k] += b;
      });
      return Array.from(bytes, (b, k) => ({ t: from + k * width, gbps: (b * 8) / width }));
    },
    title: fromHosts ? 'data delivered to hosts (Gbit/s)' : 'bytes of flows completed (Gbit/s)',
  };
}

/** The sampling period of the hosts' series (`run.sample`): the first gap of the first one sampled twice. */
function samplePeriod(series: NodeSeries[]): number {
  const s = series.find((d) => d.t.length > 1)!;
  return s.t[1] - s.t[0];
}

const round = (x: number): number => Math.round(x * 1000) / 1000;
