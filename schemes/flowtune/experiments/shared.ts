/**
 * What Flowtune's experiments share (schemes/flowtune/experiments.ts): §6.5's size ranges and a run's
 * p99 per range (`p99ByRange`), the normalized ratios and their cells, figure 9's queueing figures and
 * their values, the writing of a table with its data, and pFabric's package, installed as a user's is.
 */
import { cpSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ExperimentOptions, formatNs, quantile, segmentCount } from '../../../sdk/index.js';
import { writeTable } from '../../../sdk/study.js';
import { HOPS, over, type PathP99 } from '../definition/queueing.js';

export const us = (ns: number | null | undefined) =>
  ns === null || ns === undefined ? 'never' : formatNs(ns);

export function write(opts: ExperimentOptions, name: string, table: string, data: unknown): string {
  writeTable(opts.out, name, table);
  writeFileSync(join(opts.out, `${name}.json`), `${JSON.stringify(data, null, 2)}\n`);
  return table;
}

/**
 * §6.5's size ranges in full frames, as the paper names them ("1-10 packets", etc.). Figure 8's exact
 * bounds are not in its text: here a range's upper bound is inclusive, and "1-10" is read both ways,
 * with the 1-packet flowlets (`1-10`) and without them (`2-10`).
 */
export const PAPER_RANGES: ReadonlyArray<readonly [string, number, number]> = [
  ['1', 1, 1],
  ['1-10', 1, 10],
  ['2-10', 2, 10],
  ['10-100', 11, 100],
  ['100-1000', 101, 1000],
  ['>1000', 1001, Number.POSITIVE_INFINITY],
];

export interface RangeP99 {
  flows: number;
  completed: number;
  /** p99 of the completed flowlets' FCT over an empty network's (flows.csv `slowdown`) */
  p99Norm: number;
  /** p99 of their FCT, ns */
  p99Ns: number;
}

/**
 * Per §6.5 range, a run's p99 FCT as the paper takes it: "we normalize each flow's completion time by
 * the time it would take to send out and receive all its bytes on an empty network" (flows.csv's
 * `slowdown`: the FCT over the unloaded line-rate FCT on its path), over the completed flowlets; the
 * raw p99 beside it. A range with no flowlet is absent.
 */
export function p99ByRange(flowsCsv: string): Record<string, RangeP99> {
  const [header, ...rows] = flowsCsv.trim().split('\n');
  const col = Object.fromEntries(header.split(',').map((h, i) => [h, i]));
  const flows = rows.map((line) => {
    const r = line.split(',');
    const fct = Number(r[col.fct_ns]);
    return { frames: segmentCount(Number(r[col.size])), fct, slowdown: Number(r[col.slowdown]) };
  });
  const out: Record<string, RangeP99> = {};
  for (const [name, lo, hi] of PAPER_RANGES) {
    const inRange = flows.filter((f) => f.frames >= lo && f.frames <= hi);
    if (inRange.length === 0) continue;
    const done = inRange.filter((f) => f.fct >= 0);
    out[name] = {
      flows: inRange.length,
      completed: done.length,
      p99Norm: quantile(
        done.map((f) => f.slowdown).sort((a, b) => a - b),
        0.99,
      ),
      p99Ns: quantile(
        done.map((f) => f.fct).sort((a, b) => a - b),
        0.99,
      ),
    };
  }
  return out;
}

/** one variant's ranges, from its folder in a seed's results */
export const rangesOf = (seedDir: string, variant: string) =>
  p99ByRange(readFileSync(join(seedDir, variant, 'flows.csv'), 'utf8'));

/**
 * `a`'s normalized p99 over `b`'s in one range, where both sides completed every flowlet of it (a p99
 * over the completed ones only would leave out the slowest)
 */
export function normRatio(
  a: Record<string, RangeP99>,
  b: Record<string, RangeP99>,
  range: string,
): number | undefined {
  const x = a[range];
  const y = b[range];
  if (!x || !y || x.completed < x.flows || y.completed < y.flows || !(y.p99Norm > 0)) return undefined;
  return x.p99Norm / y.p99Norm;
}

/** a range's normalized p99 in a table, or completed/flowlets where some did not finish */
export const normCell = (x: RangeP99 | undefined) =>
  x === undefined ? '-' : x.completed < x.flows ? `${x.completed}/${x.flows}` : x.p99Norm.toFixed(2);
export const ratioCell = (x: number | undefined) => (x === undefined ? '-' : `${x.toFixed(2)}×`);

/** the paper's value for a normalized ratio in a range, against DCTCP or pFabric (§6.5's text) */
export function paperRatio(against: 'dctcp' | 'pfabric', range: string): string | null {
  if (against === 'dctcp') return range === '1' ? '8.6–10.9' : range.endsWith('-10') ? '2.1–2.9' : null;
  return range === '1' ? '1.7–2.4' : range === '>1000' ? 'up to 2.4' : null;
}

/**
 * Figure 9's figures (§6.5) beside Flowtune's and DCTCP's runs: p99 queueing delay on 2-hop and 4-hop
 * paths (schemes/flowtune/definition/queueing.ts), at the run's sampling and at the paper's 1 ms, and their
 * ratio; `id`s end in `suffix`, labels in `where`; the paper's 12× only at `paperLoad` (its 0.8).
 */
export function queueingFigures(suffix: string, where: string, paperLoad: boolean) {
  const f = (id: string, label: string, unit: string, paper: string | number | null, source?: string) => ({
    id: `${id}${suffix}`,
    label: `${label}${where}`,
    unit,
    paper,
    ...(source !== undefined && { source }),
    digits: 1,
  });
  const ratio = (id: string, label: string) =>
    paperLoad ? f(id, label, '×', 12, '§6.5, figure 9, at load 0.8') : f(id, label, '×', null);
  return HOPS.flatMap((h) => [
    f(
      `qdelay_ft_${h}`,
      `p99 queueing delay on ${h}-hop paths, Flowtune (figure 9's metric, sampled every run.sample)`,
      'µs',
      'below 8.9',
      '§6.5, figure 9',
    ),
    f(`qdelay_dc_${h}`, `the same, DCTCP`, 'µs', null),
    ratio(`qdelay_ratio_${h}`, `the same, DCTCP / Flowtune`),
    f(
      `qdelay_ft_${h}_1ms`,
      `p99 queueing delay on ${h}-hop paths, Flowtune, sampled every 1 ms as the paper`,
      'µs',
      'below 8.9',
      '§6.5, figure 9',
    ),
    f(`qdelay_dc_${h}_1ms`, `the same, DCTCP, every 1 ms`, 'µs', null),
    ratio(`qdelay_ratio_${h}_1ms`, `the same, DCTCP / Flowtune, every 1 ms`),
  ]);
}

/** the values of `queueingFigures` from Flowtune's and DCTCP's path delays */
export function queueingValues(ft: PathP99, dc: PathP99, suffix: string): Record<string, number | undefined> {
  const v: Record<string, number | undefined> = {};
  for (const h of HOPS) {
    v[`qdelay_ft_${h}${suffix}`] = ft.fine[h];
    v[`qdelay_dc_${h}${suffix}`] = dc.fine[h];
    v[`qdelay_ratio_${h}${suffix}`] = over(dc.fine[h], ft.fine[h]);
    v[`qdelay_ft_${h}_1ms${suffix}`] = ft.ms[h];
    v[`qdelay_dc_${h}_1ms${suffix}`] = dc.ms[h];
    v[`qdelay_ratio_${h}_1ms${suffix}`] = over(dc.ms[h], ft.ms[h]);
  }
  return v;
}

/** a figure map without the unmeasured ones */
export const measured = (v: Record<string, number | undefined>) =>
  Object.fromEntries(Object.entries(v).filter(([, x]) => x !== undefined)) as Record<string, number>;

/**
 * pFabric (Alizadeh et al., SIGCOMM'13), the paper's other baseline in figure 8: the scheme package of
 * examples/schemes/pfabric, written against the public SDK and run as any user's package is. Its switches keep shallow buffers by design, about twice the
 * bandwidth-delay product (pFabric §4): the web scenario's fabric round trip is 21.6 µs (eight 1.5 µs
 * links and eight 1.2 µs frames), 27 KB at 10 Gbit/s, so 54 KB ports on its side only.
 */
export const pfabric = (module: string) => ({
  'scheme.kind': 'pfabric',
  'scheme.module': module,
  'ports.buffer': '54KB',
});

/** this installation of dcemu (the package root) */
const ROOT = fileURLToPath(new URL('../../../..', import.meta.url));

/**
 * The pFabric package as a user installs it: its files copied into the experiment's folder (what ran
 * stays with the results), with this dcemu as its installed dependency; the module to load.
 */
export function installPfabric(out: string): string {
  const from = join(ROOT, 'examples/schemes/pfabric');
  const to = join(out, 'pfabric-package');
  rmSync(to, { recursive: true, force: true });
  cpSync(from, to, { recursive: true, filter: (f) => !/[/\\](node_modules|test)$/.test(f) });
  mkdirSync(join(to, 'node_modules'), { recursive: true });
  symlinkSync(ROOT, join(to, 'node_modules', 'dcemu'));
  return join(to, 'index.js');
}
