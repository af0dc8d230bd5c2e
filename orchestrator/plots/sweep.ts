/**
 * The plots of a sweep: each figure of sweep.csv against the swept value, one plot per figure. The
 * first swept key is the x axis (quantitative when every value is a number, else categories in the
 * order given); the other keys, if any, colour the lines or bars. Figures absent or zero at every
 * point are left out: there is nothing to compare.
 */
import type { TopLevelSpec } from 'vega-lite';
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

/** The figures plotted, by sweep.csv column, with their axis titles. */
export const SWEEP_METRICS: Record<string, string> = {
  fct_p50_ns: 'FCT p50 (ns)',
  fct_p99_ns: 'FCT p99 (ns)',
  slowdown_p50: 'slowdown p50',
  slowdown_p99: 'slowdown p99',
  deadline_miss_ratio: 'deadline miss ratio',
  queue_p99_bytes: 'queue occupancy p99 (bytes)',
  queue_max_bytes: 'queue occupancy max (bytes)',
  drops_congestion: 'frames dropped by full buffers',
  drops_fault: 'frames lost to faults',
  clock_err_p50_ns: 'clock error p50 (ns)',
  clock_err_p99_ns: 'clock error p99 (ns)',
  flows_completed: 'flows completed',
  causality_misses: 'causality misses',
};

/** A figure whose largest value is this many times its smallest positive one is drawn on a symlog scale. */
const WIDE_RATIO = 100;

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
  for (const [metric, title] of Object.entries(SWEEP_METRICS)) {
    const values = rows
      .map((row) => {
        const y = row.figures[metric];
        if (typeof y !== 'number' || !Number.isFinite(y)) return null;
        const x = setting(row, xAxis.key);
        return { x: numericX ? Number(x) : x, y, ...(rest.length > 0 && { series: series(row) }) };
      })
      .filter((v) => v !== null);
    if (values.length === 0 || values.every((v) => v.y === 0)) continue;
    // a wide range (clock error: ns with hardware stamps, µs with software ones) on a symlog axis,
    // which keeps zero (a perfect clock, no drops) where a log axis has none
    const ys = values.map((v) => v.y);
    const max = Math.max(...ys);
    const minPositive = Math.min(...ys.filter((y) => y > 0));
    const wide = Math.min(...ys) >= 0 && max >= WIDE_RATIO * minPositive;
    const y = {
      field: 'y',
      type: 'quantitative',
      title: `${title}${wide ? ', symlog' : ''}`,
      ...(wide && symlog(0, max)),
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
    const base = { ...frame(`${metric} against ${xAxis.key}`, width, 300), data: { values } };
    const x = numericX
      ? ({ field: 'x', type: 'quantitative', title: xAxis.key } as const)
      : ({
          field: 'x',
          type: 'nominal',
          title: xAxis.key,
          sort: xAxis.values,
          axis: { labelAngle: 0 },
        } as const);
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
