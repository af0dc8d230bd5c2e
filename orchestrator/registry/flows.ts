/**
 * A run's flows as the experiments read them, from its flows.csv and outcomes.csv (docs/results.md),
 * and a slowdown spread (min, mean, p99, p99.9, max, as Harmony's §5 reports it) with every flow
 * counted: one not done (rejected, failed, never started, or not finished by the end of the drain) is
 * an infinite slowdown, never left out.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { quantile } from './stats.js';

export interface FlowRow {
  src: string;
  dst: string;
  /** bytes */
  size: number;
  startNs: number;
  /** completed: delivered whole by the end of the drain */
  completed: boolean;
  fctNs: number;
  slowdown: number;
  /** the FCT the slowdown divides by (flows.csv's ideal_ns: idealFct over the flow's own path) */
  idealNs: number;
  bestEffort: boolean;
}

/**
 * Every planned flow of the run in `runDir`: flows.csv's (the flows a sender started), then those
 * outcomes.csv lists that never started (a dead sender, a start past the end of the run), as not
 * completed with no size or times (NaN) and not best effort. Throws when a planned flow is in neither.
 */
export function flowRows(runDir: string): FlowRow[] {
  const file = join(runDir, 'flows.csv');
  const [head, ...lines] = readFileSync(file, 'utf8').trim().split('\n');
  const col = new Map(head.split(',').map((c, i) => [c, i]));
  const index = (c: string) => {
    const i = col.get(c);
    if (i === undefined) throw new Error(`${file} has no ${c} column`);
    return i;
  };
  const [id, src, dst, size, start, fct, slowdown, ideal, outcome, bestEffort] = [
    'id',
    'src',
    'dst',
    'size',
    'start_ns',
    'fct_ns',
    'slowdown',
    'ideal_ns',
    'outcome',
    'best_effort',
  ].map(index);
  const started = new Set<string>();
  const rows: FlowRow[] = lines.map((line) => {
    const r = line.split(',');
    started.add(r[id]);
    return {
      src: r[src],
      dst: r[dst],
      size: Number(r[size]),
      startNs: Number(r[start]),
      completed: r[outcome] === 'completed',
      fctNs: Number(r[fct]),
      slowdown: Number(r[slowdown]),
      idealNs: Number(r[ideal]),
      bestEffort: r[bestEffort] === '1',
    };
  });
  // outcomes.csv: id,src,dst,outcome,reason (the reason last, quoted when it holds a comma)
  for (const line of readFileSync(join(runDir, 'outcomes.csv'), 'utf8').trim().split('\n').slice(1)) {
    const [oid, osrc, odst] = line.split(',');
    if (started.has(oid)) continue;
    rows.push({
      src: osrc,
      dst: odst,
      size: Number.NaN,
      startNs: Number.NaN,
      completed: false,
      fctNs: Number.NaN,
      slowdown: Number.NaN,
      idealNs: Number.NaN,
      bestEffort: false,
    });
  }
  const planned = JSON.parse(readFileSync(join(runDir, 'summary.json'), 'utf8')).flows.planned;
  if (rows.length !== planned)
    throw new Error(
      `${runDir}: flows.csv and outcomes.csv hold ${rows.length} flows of the ${planned} planned`,
    );
  return rows;
}

/** the spread of slowdowns with every flow counted: `missing` flows not done sort last, as infinite */
export interface CountedSpread {
  flows: number;
  missing: number;
  min: number | null;
  mean: number | null;
  p99: number | null;
  p999: number | null;
  max: number | null;
}

/**
 * The spread of the `slowdowns` of the flows done and `missing` more not done: a quantile that falls
 * on one not done has no value, nor has the mean while any is missing.
 */
export function countedSpread(slowdowns: readonly number[], missing: number): CountedSpread {
  const sorted = [...slowdowns, ...Array<number>(missing).fill(Number.POSITIVE_INFINITY)].sort(
    (a, b) => a - b,
  );
  const finite = (x: number) => (Number.isFinite(x) ? x : null);
  const n = sorted.length;
  return {
    flows: n,
    missing,
    min: n === 0 ? null : finite(sorted[0]),
    mean: n === 0 || missing > 0 ? null : slowdowns.reduce((s, x) => s + x, 0) / n,
    p99: n === 0 ? null : finite(quantile(sorted, 0.99)),
    p999: n === 0 ? null : finite(quantile(sorted, 0.999)),
    max: n === 0 ? null : finite(sorted[n - 1]),
  };
}

/** the spread of `rows`, every one counted */
export function spreadOf(rows: readonly FlowRow[]): CountedSpread {
  const done = rows.filter((r) => r.completed).map((r) => r.slowdown);
  return countedSpread(done, rows.length - done.length);
}
