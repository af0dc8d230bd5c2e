/**
 * How a study's figures read to a person: a column of sweep.csv (`fct_p99_ns`, `queue_p99_bytes`,
 * `fastpass_queue_p99_bytes`) gets a title in words and, when its name ends in a unit (`_ns`,
 * `_bytes`), the unit a reader uses for its values: ns, µs, ms or s; B, KB, MB or GB, picked by the
 * largest value shown. sweep.csv keeps the raw numbers its column names say; sweep.md and the plots
 * show these.
 */

/** The core figures' titles; a scheme's columns are read from their names. */
const TITLES: Record<string, string> = {
  flows_completed: 'flows completed',
  flows_planned: 'flows planned',
  flows_failed: 'flows failed',
  flows_unexplained: 'flows unexplained',
  fct_p50_ns: 'FCT p50',
  fct_p99_ns: 'FCT p99',
  slowdown_p50: 'slowdown p50',
  slowdown_p99: 'slowdown p99',
  deadline_miss_ratio: 'share of deadlines missed',
  queue_p99_bytes: 'switch queue p99',
  queue_max_bytes: 'largest switch queue',
  drops_congestion: 'frames dropped by full buffers',
  drops_fault: 'frames lost to faults',
  clock_err_p50_ns: 'clock error p50',
  clock_err_p99_ns: 'clock error p99',
  causality_misses: 'causality misses',
  faithful: 'faithful',
};

const TIME = [
  { unit: 'ns', scale: 1 },
  { unit: 'µs', scale: 1e3 },
  { unit: 'ms', scale: 1e6 },
  { unit: 's', scale: 1e9 },
];
const SIZE = [
  { unit: 'B', scale: 1 },
  { unit: 'KB', scale: 1e3 },
  { unit: 'MB', scale: 1e6 },
  { unit: 'GB', scale: 1e9 },
];

export interface ColumnView {
  /** in words, without the unit: `FCT p99`, `fastpass queue p99` */
  title: string;
  /** the unit its values are shown in (`µs`), empty for a count, a ratio or a word */
  unit: string;
  /** raw value / scale = the value shown */
  scale: number;
}

/** A column's title, and the reader's unit for `values` (its raw numbers). */
export function columnView(column: string, values: readonly number[]): ColumnView {
  const ladder = column.endsWith('_ns') ? TIME : column.endsWith('_bytes') ? SIZE : null;
  const bare = column.replace(/_(ns|bytes)$/, '');
  const title =
    TITLES[column] ??
    bare
      .replace(/_/g, ' ')
      .replace(/\bfct\b/g, 'FCT')
      .replace(/\bp(\d+)\b/g, 'p$1');
  if (!ladder) return { title, unit: '', scale: 1 };
  const max = Math.max(0, ...values.map(Math.abs).filter(Number.isFinite));
  const step = ladder.filter((s) => max >= s.scale).pop() ?? ladder[0];
  return { title, ...step };
}

/** A value in its column's unit: three significant digits, no trailing zeros (12.3, 1.25, 480). */
export function scaled(v: number, scale: number): number {
  const x = v / scale;
  return Math.abs(x) >= 1000 ? Math.round(x) : Number(x.toPrecision(3));
}

/** `FCT p99 (µs)`, or the bare title for a column without a unit */
export const titleWithUnit = (v: ColumnView): string => (v.unit ? `${v.title} (${v.unit})` : v.title);
