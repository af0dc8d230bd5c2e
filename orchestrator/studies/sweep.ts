/**
 * `dcemu sweep <scenario> --set a=1,2,4 --set b=x,y`: a study over a grid of scenario values. Every
 * point of the grid is checked before any runs (a bad value is a file:line:field error up front), then
 * each runs as its own fabric into `<out>/<point>/` (a full results folder), `parallel` at a time, and
 * the summaries are collected into one table: `sweep.csv` and `sweep.md`, one row per point with the
 * swept values and the figures a study compares (flows, FCT, slowdown, queues, drops, fidelity, clock
 * error when the scenario has clocks), and each figure is plotted against the swept values (plots/).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Fabric, type Summary } from '../api.js';
import { RuntimeError } from '../engine/errors.js';
import { columnView, scaled, titleWithUnit } from '../engine/figures.js';
import { csvField } from '../engine/results-files.js';
import { writeSweepPlots } from '../plots/index.js';
import { schemeDefinition } from '../registry/index.js';
import { eachPooled } from '../runtime/pool.js';
import { loadScenarioFile } from '../scenario/load.js';
import { resolveScenario } from '../scenario/resolve.js';

/** One swept field and its values, as given (`ptp.timestamping=hardware,software`). */
export interface SweepAxis {
  key: string;
  values: string[];
}

/** Splits `key=v1,v2,...` at commas outside parentheses (`jitter.send=lognormal(1us, 1),0`). */
export function parseAxis(spec: string): SweepAxis {
  const eq = spec.indexOf('=');
  if (eq <= 0) throw new RuntimeError(`--set '${spec}': expected key=value1,value2,...`);
  const values: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of spec.slice(eq + 1)) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      values.push(cur.trim());
      cur = '';
    } else cur += ch;
  }
  values.push(cur.trim());
  if (values.some((v) => v === '')) throw new RuntimeError(`--set '${spec}': an empty value in the list`);
  return { key: spec.slice(0, eq).trim(), values };
}

/** Every combination of the axes' values, first axis slowest: [[a=1, b=x], [a=1, b=y], ...]. */
export function grid(axes: SweepAxis[]): string[][] {
  let points: string[][] = [[]];
  for (const a of axes) points = points.flatMap((p) => a.values.map((v) => [...p, `${a.key}=${v}`]));
  return points;
}

/** The figures of one run a study compares, by column. */
export function sweepFigures(s: Summary): Record<string, number | string | null> {
  const clocks = s.clocks as { errP50Ns: number; errP99Ns: number } | undefined;
  return {
    flows_completed: s.flows.completed,
    flows_planned: s.flows.planned,
    flows_failed: s.flows.failed,
    flows_unexplained: s.flows.unexplained,
    fct_p50_ns: round(s.flows.fctP50Ns),
    fct_p99_ns: round(s.flows.fctP99Ns),
    slowdown_p50: round(s.flows.slowdownP50),
    slowdown_p99: round(s.flows.slowdownP99),
    deadline_miss_ratio: s.flows.deadlines ? round(s.flows.deadlines.missRatio) : null,
    queue_p99_bytes: s.queues.p99Bytes,
    queue_max_bytes: s.queues.maxBytes,
    drops_congestion: s.drops.congestion,
    drops_fault: s.drops.fault,
    clock_err_p50_ns: clocks ? clocks.errP50Ns : null,
    clock_err_p99_ns: clocks ? clocks.errP99Ns : null,
    causality_misses: s.fidelity.causalityMisses,
    faithful: s.fidelity.ok ? 'yes' : 'no',
    ...schemeFigures(s),
  };
}

/** The scheme's own figures (`harmony_rejected`, ...), from its summary section. */
function schemeFigures(s: Summary): Record<string, number | string | null> {
  const driver = schemeDefinition(s.scheme);
  const section = driver.summaryKey === undefined ? undefined : s[driver.summaryKey];
  return section === undefined || !driver.sweepFigures ? {} : driver.sweepFigures(section);
}

const round = (x: number): number => Math.round(x * 1000) / 1000;

export interface SweepOptions {
  /** fixed overrides applied to every point */
  base?: string[];
  out: string;
  runtime?: 'process' | 'docker';
  /** runs at a time (each is a whole fabric of processes) */
  parallel?: number;
  /** plot the figures against the swept values (default true; a point's own plots follow its `run.plots`) */
  plots?: boolean;
  log?: (line: string) => void;
  /** Ctrl-C: the running points stop, no other starts; the tables and plots cover the points done */
  signal?: AbortSignal;
}

export interface SweepRow {
  point: string[];
  dir: string;
  figures: Record<string, number | string | null>;
}

/** Runs the grid; returns one row per point, in grid order, and writes sweep.csv / sweep.md and plots/. */
export async function runSweep(file: string, axes: SweepAxis[], opts: SweepOptions): Promise<SweepRow[]> {
  const points = grid(axes);
  // every point resolves before anything starts: a bad value fails the sweep at once, by file:line
  for (const p of points) resolveScenario(loadScenarioFile(file, [...(opts.base ?? []), ...p]));
  mkdirSync(opts.out, { recursive: true });
  const rows: SweepRow[] = new Array(points.length);
  // the points' node processes run one point after another (runtime/pool.ts)
  const onePoint = async (i: number): Promise<void> => {
    const point = points[i];
    const dir = join(
      opts.out,
      `${String(i).padStart(3, '0')}-${point.join(',').replace(/[^\w.=,+-]/g, '_')}`,
    );
    opts.log?.(`sweep ${i + 1}/${points.length}: ${point.join(' ')}`);
    const set = Object.fromEntries([...(opts.base ?? []), ...point].map(splitSet));
    await using fabric = await Fabric.fromScenario(file, { set })
      .withRuntime(opts.runtime ?? 'process')
      .withOutput(dir)
      .start();
    if (!opts.signal?.aborted) await fabric.run(undefined, opts.signal);
    const done = await fabric.stop();
    // a point cut short by Ctrl-C keeps its results folder but no row: its figures are not the point's
    if (!opts.signal?.aborted) rows[i] = { point, dir, figures: sweepFigures(done.summary()) };
  };
  await eachPooled(points.length, opts.parallel ?? 1, onePoint, opts.signal);
  const done = rows.filter((r) => r !== undefined);
  writeTables(opts.out, axes, done);
  if (opts.plots !== false)
    for (const p of (await writeSweepPlots(opts.out, axes, done)).problems) opts.log?.(`warning: ${p}`);
  return done;
}

function splitSet(s: string): [string, string] {
  const eq = s.indexOf('=');
  return [s.slice(0, eq), s.slice(eq + 1)];
}

/**
 * sweep.csv and sweep.md: the swept values, then the figures, one row per point; only the figures some
 * point has (no clock-error column for a run without clocks). sweep.csv holds the raw numbers its
 * column names say (ns, bytes); sweep.md reads as a person would: completion as done/planned, times
 * in µs or ms, sizes in KB or MB, titles in words.
 */
export function writeTables(out: string, axes: SweepAxis[], rows: SweepRow[]): string {
  // every point's columns: points of different schemes bring different scheme figures
  const figureCols = [...new Set(rows.flatMap((r) => Object.keys(r.figures)))].filter((c) =>
    rows.some((r) => r.figures[c] !== null && r.figures[c] !== undefined),
  );
  const swept = (r: SweepRow) => r.point.map((p) => p.slice(p.indexOf('=') + 1));
  const cell = (v: number | string | null | undefined) => (v === null || v === undefined ? '' : String(v));
  writeFileSync(
    join(out, 'sweep.csv'),
    `${[
      [...axes.map((a) => a.key), ...figureCols],
      ...rows.map((r) => [...swept(r), ...figureCols.map((c) => cell(r.figures[c]))]),
    ]
      .map((line) => line.map(csvField).join(','))
      .join('\n')}\n`,
  );
  // the reader's table: done/planned in one column, then every other figure in its reader's unit
  const shown = figureCols.filter((c) => c !== 'flows_completed' && c !== 'flows_planned');
  const views = shown.map((c) =>
    columnView(
      c,
      rows.map((r) => r.figures[c]).filter((v): v is number => typeof v === 'number'),
    ),
  );
  const completion = figureCols.includes('flows_planned');
  const header = [
    ...axes.map((a) => a.key),
    ...(completion ? ['flows done/planned'] : []),
    ...views.map(titleWithUnit),
  ];
  const cells = rows.map((r) => [
    ...swept(r),
    ...(completion ? [`${cell(r.figures.flows_completed)}/${cell(r.figures.flows_planned)}`] : []),
    ...shown.map((c, i) => {
      const v = r.figures[c];
      return typeof v === 'number' ? String(scaled(v, views[i].scale)) : cell(v);
    }),
  ]);
  const md = [
    `| ${header.join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...cells.map((r) => `| ${r.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`),
  ].join('\n');
  writeFileSync(join(out, 'sweep.md'), `${md}\n`);
  return md;
}
