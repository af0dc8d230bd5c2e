/**
 * Reproductions (`dcemu experiment <name>`): a paper's headline figures measured over several seeds,
 * each reported as the mean and its 95% confidence interval (Student's t over the seeds) beside the
 * paper's value, with the scale it ran at and how long it took. An experiment says how to run one seed
 * (every variant it compares) and what figures come out of it; this runs the seeds, aggregates, and
 * writes `reproduction.json` and `reproduction.md` into the results folder. docs/reproductions.md is
 * generated from those files (scripts/reproductions.mjs), never typed.
 */
import { writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import type { Overrides } from '../api.js';
import { type CodeVersion, codeVersion } from '../engine/build-info.js';
import type { Summary } from '../engine/collect.js';
import type { ExperimentOptions } from '../registry/types.js';
import { loadScenarioFile } from '../scenario/load.js';
import { resolveScenario } from '../scenario/resolve.js';
import { runVariants } from './experiments.js';

export interface FigureSpec {
  /** stable key: `queue_p50_kb` */
  id: string;
  /** what it is, in words */
  label: string;
  unit: string;
  /** the paper's value for it (a number, a range in words) and where the paper gives it */
  paper: number | string | null;
  source?: string;
  /** digits after the point in the tables */
  digits?: number;
  /**
   * a ratio of totals over the seeds (a paper's "in total"): ours is Σ `over` / Σ `under` (two other
   * figures' per-seed values), the per-seed column each seed's own ratio, and no interval
   */
  pooled?: { over: string; under: string };
  /** a bound every seed's value must keep: `--junit` fails the figure's case where one does not */
  bound?: { min?: number; max?: number };
  /**
   * false: the machine's figure (CPU, wall time), not the run's, so it differs between two runs of the
   * same code and is left out of the digest that checks a reproduction against today's code
   * (scripts/reproduction-check.mjs)
   */
  exact?: false;
}

/**
 * What a reproduction's figures stand beside when it is not a paper (the ns-3 cross-check's twin): the
 * table's column for those values, and the words its setup sentence names it by.
 */
export interface ReferenceName {
  /** the column's header (a paper's: `paper`) */
  column: string;
  /** the setup sentence's subject (a paper's: `The paper`) */
  subject: string;
}

export interface ReproductionSpec {
  experiment: string;
  /** the scale of these runs and of the paper's, in words */
  scale: string;
  paperScale: string;
  /** not a paper's figures: what the `paper` values are (the table says so); absent: a paper's */
  reference?: ReferenceName;
  figures: readonly FigureSpec[];
  /**
   * Runs every variant of one seed into `dir` (the `seed` override is set): the figures' values by id
   * (a figure a seed cannot give is left out), or null when aborted.
   */
  runSeed(seed: number, dir: string): Promise<Record<string, number> | null>;
}

export interface FigureResult extends FigureSpec {
  /** the value of each seed that gave one, in seed order */
  values: number[];
  mean: number | null;
  /** 95% confidence interval of the mean; null with fewer than two values */
  ci95: [number, number] | null;
  /** a pooled figure's ratio of totals (`mean` is then the mean of the per-seed ratios) */
  total?: number | null;
}

export interface Reproduction {
  experiment: string;
  scenario: string;
  scale: string;
  paperScale: string;
  /** as ReproductionSpec's */
  reference?: ReferenceName;
  seeds: number[];
  quick: boolean;
  figures: FigureResult[];
  wallS: number;
  machine: { cpu: string; cores: number; memoryGB: number; node: string };
  /** the code that ran it: its build's commit, and whether its sources differed (absent: a table of runs made elsewhere) */
  code?: CodeVersion;
}

/** two-sided 95% quantiles of Student's t, by degrees of freedom 1..30 (beyond: the normal's) */
const T95 = [
  12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131,
  2.12, 2.11, 2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042,
];

/** the mean of `xs` and its 95% confidence interval (null below two values) */
export function meanCi(xs: readonly number[]): { mean: number | null; ci95: [number, number] | null } {
  const n = xs.length;
  if (n === 0) return { mean: null, ci95: null };
  const mean = xs.reduce((a, b) => a + b, 0) / n;
  if (n < 2) return { mean, ci95: null };
  const sd = Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1));
  const h = (T95[n - 2] ?? 1.96) * (sd / Math.sqrt(n));
  return { mean, ci95: [mean - h, mean + h] };
}

/** The scale a scenario runs at, in words: hosts, racks, link rate, traffic time. */
export function scaleOf(file: string, set: readonly string[] = []): string {
  const sc = resolveScenario(loadScenarioFile(file, [...set]));
  const role = new Map(sc.topology.nodes.map((n) => [n.name, n.role]));
  const hosts = sc.topology.nodes.filter((n) => n.role === 'host').length;
  // the switches hosts hang off
  const racks = new Set(
    sc.topology.links
      .filter((l) => role.get(l.a.node) === 'host' || role.get(l.b.node) === 'host')
      .map((l) => (role.get(l.a.node) === 'host' ? l.b.node : l.a.node))
      .filter((n) => role.get(n) === 'switch'),
  ).size;
  const gbps = sc.links.host.rateBps / 1e9;
  return `${hosts} hosts in ${racks} rack${racks > 1 ? 's' : ''} at ${gbps} Gbit/s, ${sc.workload.durationNs / 1e6} ms of traffic`;
}

/** The options for one seed's runs: its own folder, and the seed over the user's `--set`s. */
export function seedOptions(opts: ExperimentOptions, seed: number, dir: string): ExperimentOptions {
  return { ...opts, out: dir, set: [...(opts.set ?? []), `seed=${seed}`] };
}

/**
 * Runs the seeds, aggregates, writes reproduction.json/.md; the result and its Markdown table, or null
 * when aborted.
 */
export async function reproduce(
  opts: ExperimentOptions,
  spec: ReproductionSpec,
): Promise<{ result: Reproduction; table: string } | null> {
  const t0 = performance.now();
  const seeds = Array.from({ length: opts.seeds }, (_, i) => opts.seed + i);
  const bySeed: Array<Record<string, number>> = [];
  for (const seed of seeds) {
    if (opts.signal?.aborted) return null;
    opts.say(`${spec.experiment}: seed ${seed} (${bySeed.length + 1} of ${seeds.length})`);
    const v = await spec.runSeed(seed, join(opts.out, `seed-${seed}`));
    if (v === null) return null;
    bySeed.push(v);
  }
  const figures: FigureResult[] = spec.figures.map((f) => {
    const values = bySeed
      .map((v) => v[f.id])
      .filter((x): x is number => x !== undefined && Number.isFinite(x));
    const pooled = f.pooled;
    if (pooled === undefined) return { ...f, values, ...meanCi(values) };
    const sum = (id: string) => bySeed.reduce((a, v) => a + (v[id] ?? 0), 0);
    const under = sum(pooled.under);
    return { ...f, values, ...meanCi(values), total: under > 0 ? sum(pooled.over) / under : null };
  });
  const result: Reproduction = {
    experiment: spec.experiment,
    scenario: opts.file,
    scale: spec.scale,
    paperScale: spec.paperScale,
    ...(spec.reference && { reference: spec.reference }),
    seeds,
    quick: opts.quick ?? false,
    figures,
    wallS: Math.round((performance.now() - t0) / 100) / 10,
    machine: thisMachine(),
    code: codeVersion(),
  };
  const table = reproductionTable(result);
  writeTable(opts.out, 'reproduction', table, result);
  return { result, table };
}

/** A study's table in `dir` as `<name>.md` and, when given, its data as `<name>.json`. */
export function writeTable(dir: string, name: string, table: string, data?: unknown): void {
  writeFileSync(join(dir, `${name}.md`), `${table.replace(/\n$/, '')}\n`);
  if (data !== undefined) writeFileSync(join(dir, `${name}.json`), `${JSON.stringify(data, null, 2)}\n`);
}

export interface VariantsSpec {
  experiment: string;
  paperScale: string;
  figures: readonly FigureSpec[];
  /** what each seed runs: the scenario once per variant (`set` over the user's `--set`s) */
  variants: ReadonlyArray<{ name: string; set: Overrides }>;
  /** one seed's full table (and whatever files it writes into `opts.out`, the seed's folder) */
  table(opts: ExperimentOptions, runs: Summary[]): string;
  /** the figures' values of one seed, by id (`out`: the seed's folder, each variant's run in `<out>/<name>`) */
  values(runs: Summary[], out: string): Record<string, number>;
}

/**
 * The usual reproduction: every seed runs the variants into its own folder; the figures aggregated
 * over the seeds, then the first seed's full table. '' when aborted.
 */
export async function reproduceVariants(opts: ExperimentOptions, spec: VariantsSpec): Promise<string> {
  let first = '';
  const done = await reproduce(opts, {
    experiment: spec.experiment,
    scale: scaleOf(opts.file, opts.set),
    paperScale: spec.paperScale,
    figures: spec.figures,
    runSeed: async (seed, dir) => {
      const so = seedOptions(opts, seed, dir);
      const runs = await runVariants(so, `${spec.experiment} seed ${seed}`, spec.variants);
      if (runs === null) return null;
      const t = spec.table(so, runs);
      if (first === '') first = t;
      return spec.values(runs, so.out);
    },
  });
  return done === null ? '' : `${done.table}\n\nThe first seed:\n\n${first}`;
}

/** the options with an experiment's `--quick` overrides put before the user's own */
export function withQuick(opts: ExperimentOptions, quick: readonly string[]): ExperimentOptions {
  return opts.quick ? { ...opts, set: [...quick, ...(opts.set ?? [])] } : opts;
}

/** one number as the tables print it */
export function fmt(x: number | null, digits = 2): string {
  if (x === null) return '-';
  return x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** a figure's mean ± the half-width of its 95% interval (the mean alone from one seed; '-' from none) */
export function meanPm(f: FigureResult): string {
  const d = f.digits ?? 2;
  if (f.total !== undefined)
    return f.total === null
      ? '-'
      : `${fmt(f.total, d)} in total (per seed ${meanPm({ ...f, total: undefined })})`;
  if (f.mean === null) return '-';
  return f.ci95 === null ? fmt(f.mean, d) : `${fmt(f.mean, d)} ± ${fmt((f.ci95[1] - f.ci95[0]) / 2, d)}`;
}

/** the reproduction as a Markdown table: figure, paper, ours (mean ± half-interval), per seed */
export function reproductionTable(r: Reproduction): string {
  const n = r.seeds.length;
  const ref = r.reference ?? { column: 'paper', subject: 'The paper' };
  const rows = r.figures.map((f) => {
    const d = f.digits ?? 2;
    const ours = meanPm(f);
    const paper = f.paper === null ? '-' : typeof f.paper === 'number' ? fmt(f.paper, d) : f.paper;
    return `| ${f.label} | ${f.unit} | ${paper}${f.source ? ` (${f.source})` : ''} | ${ours} | ${f.values.map((v) => fmt(v, d)).join(', ')} |`;
  });
  return [
    `# ${r.experiment}: ${r.scenario}${r.quick ? ' (quick)' : ''}`,
    '',
    `Ours: ${r.scale}; ${n} seed${n > 1 ? 's' : ''} (${r.seeds.join(', ')}), mean ± the 95% confidence interval's half-width${n < 2 ? ' (one seed: no interval)' : ''}. ${ref.subject}: ${r.paperScale}.`,
    '',
    `| figure | unit | ${ref.column} | ours | per seed |`,
    '| --- | --- | --- | --- | --- |',
    ...rows,
    '',
    `${r.wallS} s on ${r.machine.cores} × ${r.machine.cpu}.`,
  ].join('\n');
}

/** The machine a reproduction ran on, as its result records it. */
export function thisMachine(): { cpu: string; cores: number; memoryGB: number; node: string } {
  return {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
  };
}
