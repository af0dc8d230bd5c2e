/**
 * The plots of a sweep: each figure of sweep.csv against the swept value, one plot per figure. The
 * first swept key is the x axis (quantitative when every value is a number, else categories in the
 * order given); the other keys, if any, colour the lines or bars. Figures absent or zero at every
 * point are left out: there is nothing to compare.
 */
import type { TopLevelSpec } from 'vega-lite';
import { columnView, scaled, titleWithUnit } from '../engine/figures.js';
import type { Plot } from './render.js';
import { frame, symlog } from './style.js';

/** A swept key and its values in the order given (`ptp.timestamping=hardware,software`). */
export interface SweepPlotAxis {
  key: string;
  values: string[];
}

/** One point of the grid: its `key=value` settings, and the figures of its run by column. */
export interface SweepPlotRow {
  point: string[];
  figures: Record<string, number | string | null>;
}

/**
 * The figures plotted, by sweep.csv column (titles and units: figures.ts); `completion` is
 * flows_completed as a share of flows_planned.
 */
export const SWEEP_METRICS: readonly string[] = [
  'fct_p50_ns',
  'fct_p99_ns',
  'slowdown_p50',
  'slowdown_p99',
  'deadline_miss_ratio',
  'queue_p99_bytes',
  'queue_max_bytes',
  'drops_congestion',
  'drops_fault',
  'clock_err_p50_ns',
  'clock_err_p99_ns',
  'completion',
  'flows_failed',
  'flows_unexplained',
  'causality_misses',
];

/** a figure of one row: a column, or completion (% of the planned flows completed) */
function figure(row: SweepPlotRow, metric: string): number | null {
  const f = row.figures;
  if (metric !== 'completion') return typeof f[metric] === 'number' ? (f[metric] as number) : null;
  const [done, planned] = [f.flows_completed, f.flows_planned];
  return typeof done === 'number' && typeof planned === 'number' && planned > 0
    ? Math.round((1000 * done) / planned) / 10
    : null;
}

/** A figure whose largest value is this many times its smallest positive one is drawn on a symlog scale. */
const WIDE_RATIO = 100;

/**
 * A figure's title, unit and scale, and whether its range is wide: a wide range (clock error: ns with
 * hardware stamps, µs with software ones) goes on a symlog axis, which keeps zero (a perfect clock, no
 * drops) where a log axis has none, in the unit of its smallest value, which would otherwise sit at zero.
 */
function metricView(metric: string, present: number[]) {
  const positive = present.filter((y) => y > 0);
  const wide =
    positive.length > 0 &&
    Math.min(...present) >= 0 &&
    Math.max(...positive) >= WIDE_RATIO * Math.min(...positive);
  const view =
    metric === 'completion'
      ? { title: 'flows completed', unit: '% of planned', scale: 1 }
      : columnView(metric, wide ? [Math.min(...positive)] : present);
  return { wide, view };
}

/** The swept axis: a number axis ticks at the swept values, where the points are; categories in order. */
function xEncoding(xAxis: SweepPlotAxis, numericX: boolean) {
  return numericX
    ? ({
        field: 'x',
        type: 'quantitative',
        title: xAxis.key,
        axis: { values: xAxis.values.map(Number) },
      } as const)
    : ({
        field: 'x',
        type: 'nominal',
        title: xAxis.key,
        sort: xAxis.values,
        axis: { labelAngle: 0 },
      } as const);
}

export function sweepPlots(axes: SweepPlotAxis[], rows: SweepPlotRow[]): Plot[] {
  if (axes.length === 0 || rows.length === 0) return [];
  const [xAxis, ...rest] = axes;
  const numericX = xAxis.values.every((v) => v.trim() !== '' && Number.isFinite(Number(v)));
  const setting = (row: SweepPlotRow, key: string): string => {
    const p = row.point.find((s) => s.slice(0, s.indexOf('=')) === key) ?? '';
    return p.slice(p.indexOf('=') + 1);
  };
  // one more key: its value names the line; more: `key=value, ...`
  const series = (row: SweepPlotRow): string =>
    rest.length === 1
      ? setting(row, rest[0].key)
      : rest.map((a) => `${a.key}=${setting(row, a.key)}`).join(', ');
  const seriesOrder = rest.length > 0 ? [...new Set(rows.map(series))] : [];
  const plots: Plot[] = [];
  // the swept setting in words: its last name (`workload.load`: load)
  const xWords = xAxis.key.slice(xAxis.key.lastIndexOf('.') + 1);
  for (const metric of SWEEP_METRICS) {
    const raw = rows.map((row) => figure(row, metric));
    const present = raw.filter((y): y is number => y !== null && Number.isFinite(y));
    const { wide, view } = metricView(metric, present);
    const values = rows
      .map((row, i) => {
        const y = raw[i];
        if (y === null || !Number.isFinite(y)) return null;
        const x = setting(row, xAxis.key);
        return {
          x: numericX ? Number(x) : x,
          y: scaled(y, view.scale),
          ...(rest.length > 0 && { series: series(row) }),
        };
      })
      .filter((v) => v !== null);
    // nothing to compare: no point has it, or every point has none (no drops, no misses)
    if (values.length === 0 || (metric !== 'completion' && values.every((v) => v.y === 0))) continue;
    const y = {
      field: 'y',
      type: 'quantitative',
      title: wide ? `${view.title} (${view.unit ? `${view.unit}, ` : ''}symlog)` : titleWithUnit(view),
      ...(wide && symlog(0, Math.max(...values.map((v) => v.y)))),
    } as const;
    const color =
      rest.length > 0
        ? {
            field: 'series',
            type: 'nominal' as const,
            title: rest.map((a) => a.key).join(', '),
            sort: seriesOrder,
          }
        : undefined;
    const width = numericX ? 480 : Math.max(240, 80 * xAxis.values.length * Math.max(1, seriesOrder.length));
    const base = { ...frame(`${view.title} against ${xWords}`, width, 300), data: { values } };
    const x = xEncoding(xAxis, numericX);
    const groups =
      color && !numericX ? { xOffset: { field: 'series', type: 'nominal' as const, sort: seriesOrder } } : {};
    // bars carry their value: a zero bar is told from a missing one (lines would crowd theirs)
    const label = {
      mark: { type: 'text', baseline: 'bottom', dy: -3, fontSize: 10 },
      encoding: { text: { field: 'y', type: 'quantitative', format: ',~r' }, color: { value: '#333' } },
    } as const;
    const spec: TopLevelSpec = {
      ...base,
      encoding: { x, y, ...(color && { color }), ...groups },
      layer: numericX ? [{ mark: { type: 'line', point: true } }] : [{ mark: { type: 'bar' } }, label],
    };
    plots.push({ name: metric, spec });
  }
  return plots;
}
