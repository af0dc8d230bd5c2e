import { join } from 'node:path';
import type { CountedSpread, ExperimentOptions, MessageDelays } from '../../../scheme/index.js';
import { fmt, reproduceVariants, type Summary, writeTable } from '../../../scheme/study.js';
import {
  edgeAt,
  fastpassPoint,
  type GridPoint,
  gridFigures,
  gridReader,
  gridTable,
  gridValues,
  gridVariants,
  harmonyGrid,
  type PointResult,
  type PointRun,
  pointRun,
} from './feasibility.js';
import { loadPct, REASONS, SPREAD } from './index.js';

/** the paper's links (§5): 100 Gbit/s, 200 ns propagation + 450 ns switching a hop, as 540 ns a link */
const LINKS = ['links.host={rate: 100Gbps, delay: 540ns}', 'links.fabric={rate: 100Gbps, delay: 540ns}'];
/** Fastpass's 65 µs horizon at 10 Gbit/s in timeslots (54 of 1.2 µs) at 100 Gbit/s */
const HORIZON = '6.5us';

/**
 * The example's 16 hosts, 1 ms of arrivals (~300 messages a run at load 0.2). 6b's load is 0.2: at 0.3
 * Fastpass at δadmission 25.2 µs rejected a message on two seeds of three (a first full run)
 */
const FULL = {
  set: [...LINKS, 'workload.duration=1ms', 'run.drain=1ms'],
  Ks: [2, 4, 8, 16],
  multiples: [2.5, 5, 10],
  loads: [0.2, 0.3, 0.5, 0.7, 0.9],
  common: 0.2,
};
/**
 * `--quick` (npm test): 4 hosts in 2 racks under 2 spines (still full bisection, and the fewest
 * processes whose messages cross racks), 0.3 ms of arrivals, one point each, two loads
 */
const QUICK = {
  set: [
    ...LINKS,
    'topology.leaves=2',
    'topology.hostsPerLeaf=2',
    'topology.spines=2',
    'workload.duration=0.3ms',
    'run.drain=0.5ms',
  ],
  Ks: [8],
  multiples: [5],
  loads: [0.3, 0.9],
  common: 0.3,
};

const us = (ns: number) => ns / 1000;
/** the paper's default point: K = 8, δadmission 5× the bound (§5) */
const DEFAULT = { K: 8, multiple: 5 };

/** 6b's three sides: Harmony and Fastpass at the default point, and Fastpass with its 65 µs horizon */
const SIDES = [
  { key: 'harmony', label: 'Harmony' },
  { key: 'fastpass', label: 'Fastpass' },
  { key: 'fastpass65', label: 'Fastpass, horizon 65 µs' },
] as const;

function delays(s: Summary): MessageDelays {
  if (s.harmony) return s.harmony.delays;
  const d = s.fastpass?.messages?.delays;
  if (!d) throw new Error('harmony-fig6: a Fastpass run without summary.fastpass.messages');
  return d;
}

/** One run of the experiment: its grid, its sides and how to read their runs. */
interface Fig6 {
  loads: number[];
  common: number;
  harmony: GridPoint[];
  fastpass: GridPoint[];
  points: GridPoint[];
  /** 6b's sides: Harmony and Fastpass at the default point, and Fastpass with a 65 µs horizon */
  sides: GridPoint[];
  names: string[];
  grid: ReturnType<typeof gridReader>;
}

export async function runFig6(opts: ExperimentOptions): Promise<string> {
  const plan = opts.quick ? QUICK : FULL;
  const { Ks, multiples, loads, common } = plan;
  const o = { ...opts, set: [...plan.set, ...(opts.set ?? [])] };
  const harmony = harmonyGrid(o.file, o.set, Ks, multiples);
  // Fastpass at the same δadmission values (Harmony's at K = 8: every K has them)
  const fastpass = multiples.map((m) => {
    const d = harmony.find((p) => p.key === `harmony-k${Ks[0]}-${m}x`)!.deltaNs;
    return fastpassPoint(d, `${m}x`, `δadmission ${fmt(us(d), 1)} µs`, `, horizon: ${HORIZON}`);
  });
  const points: GridPoint[] = [...harmony, ...fastpass];
  const h = harmony.find((p) => p.key === `harmony-k${DEFAULT.K}-${DEFAULT.multiple}x`)!;
  const f = fastpass[multiples.indexOf(DEFAULT.multiple)];
  const f65 = fastpassPoint(
    f.deltaNs,
    `${DEFAULT.multiple}x-horizon65`,
    `δadmission ${fmt(us(f.deltaNs), 1)} µs, horizon 65 µs (Fastpass §5.1's, at 10 Gbit/s)`,
    ', horizon: 65us',
  );
  const variants = [...gridVariants(points, loads), ...gridVariants([f65], [common])];
  const x: Fig6 = {
    loads,
    common,
    harmony,
    fastpass,
    points,
    sides: [h, f, f65],
    names: variants.map((v) => v.name),
    grid: gridReader(points, loads),
  };
  return reproduceVariants(o, {
    experiment: 'harmony-fig6',
    paperScale:
      '144 hosts (9 ToRs of 16) at 100 Gbit/s, 200 ns propagation and 450 ns switching, 128 KB RPCs, Poisson all-to-all, packet-level simulation (§5, §5.2)',
    figures: fig6Figures(x),
    variants,
    table: (so, runs) => fig6Table(x, so, runs),
    values: (runs, seedDir) => fig6Values(x, runs, seedDir),
  });
}

/** A side's run at the common load. */
function runOf(x: Fig6, runs: Summary[], p: GridPoint): Summary {
  return runs[x.names.indexOf(`${p.key}-${loadPct(x.common)}`)];
}

/** 6b's sides at the common load: the default points' runs from the grid, the ablation's own. */
function spreads(x: Fig6, seedDir: string): PointRun[] {
  const results = x.grid(seedDir);
  const fromGrid = (p: GridPoint) => results.find((r) => r.point === p)!.runs[x.loads.indexOf(x.common)];
  const [h, f, f65] = x.sides;
  return [fromGrid(h), fromGrid(f), pointRun(join(seedDir, `${f65.key}-${loadPct(x.common)}`), x.common)];
}

/**
 * The regions' edges: at each load, the least worst-case slowdown at which each scheme sustains it;
 * their ratio at the highest load both sustain (the paper: the regions "closely match").
 */
function edges(x: Fig6, results: PointResult[]) {
  const of = (ps: GridPoint[]) => results.filter((r) => ps.includes(r.point));
  const rows = x.loads.map((L) => ({
    L,
    harmony: edgeAt(of(x.harmony), L),
    fastpass: edgeAt(of(x.fastpass), L),
  }));
  const both = rows.filter((r) => Number.isFinite(r.harmony) && Number.isFinite(r.fastpass)).at(-1);
  return { rows, both };
}

function fig6Values(x: Fig6, runs: Summary[], seedDir: string): Record<string, number> {
  const { loads, sides } = x;
  const [h, f] = sides;
  const results = x.grid(seedDir);
  const v = gridValues(results);
  const { both } = edges(x, results);
  v.region_load = both?.L ?? 0;
  if (both) v.region_slowdown_ratio = both.harmony / both.fastpass;
  const c = spreads(x, seedDir);
  SIDES.forEach((side, i) => {
    const s: CountedSpread = c[i].spread;
    v[`${side.key}_missing`] = s.missing;
    for (const [key] of SPREAD) {
      const q = s[key];
      if (q !== null) v[`${side.key}_${key}`] = q;
    }
    const d = delays(runOf(x, runs, sides[i]));
    v[`${side.key}_wait_us`] = us(d.hostWait.meanNs);
    v[`${side.key}_queueing_us`] = us(d.queueing.meanNs);
  });
  // why messages were rejected at the highest load swept, at the default point (the paper's rule)
  const top = loads[loads.length - 1];
  const hTop = runs[x.names.indexOf(`${h.key}-${loadPct(top)}`)].harmony!;
  for (const [key] of REASONS) v[`harmony_rejects_${key}`] = hTop.rejects[key];
  v.fastpass_rejects = runs[x.names.indexOf(`${f.key}-${loadPct(top)}`)].fastpass!.messages!.rejected;
  v.admissible_window_us = us(h.deltaNs);
  const ratio = (a: number | null, b: number | null) => (a !== null && b !== null && b > 0 ? a / b : null);
  const r = {
    mean_ratio: ratio(c[0].spread.mean, c[1].spread.mean),
    p99_ratio: ratio(c[0].spread.p99, c[1].spread.p99),
    mean_ratio_horizon65: ratio(c[0].spread.mean, c[2].spread.mean),
    p99_ratio_horizon65: ratio(c[0].spread.p99, c[2].spread.p99),
  };
  for (const [key, q] of Object.entries(r)) if (q !== null) v[key] = q;
  return v;
}

function fig6Figures(x: Fig6) {
  const { loads, common, points } = x;
  const at = `at load ${common}`;
  return [
    {
      id: 'admissible_window_us',
      label:
        'the default point’s δadmission (K = 8: 5× the Theorem 3.1 bound), the admissible workload’s window',
      unit: 'µs',
      paper: '5× the bound (§5)',
      digits: 1,
    },
    ...REASONS.map(([key, name]) => ({
      id: `harmony_rejects_${key}`,
      label: `Harmony (default point) messages rejected at load ${loads[loads.length - 1]}, the last ask refused for ${name}`,
      unit: 'messages',
      paper: null,
      digits: 1,
    })),
    {
      id: 'fastpass_rejects',
      label: `Fastpass (default point) messages rejected at load ${loads[loads.length - 1]}: not allocated within δadmission`,
      unit: 'messages',
      paper: null,
      digits: 1,
    },
    {
      id: 'region_load',
      label: 'Fig. 6a: the highest load both schemes sustain at some point of the grid',
      unit: 'load',
      paper: null,
    },
    {
      id: 'region_slowdown_ratio',
      label:
        'Fig. 6a: the least worst-case slowdown sustaining that load, Harmony / Fastpass (the regions’ horizontal distance)',
      unit: '×',
      paper:
        '~1: "for any given latency bound, it can sustain loads as high as Fastpass (and vice versa)" (Fig. 6)',
    },
    ...SIDES.map((side) => ({
      id: `${side.key}_missing`,
      label: `${side.label}: messages not done ${at} (rejected, failed or not delivered)`,
      unit: 'messages',
      paper: null,
      digits: 0,
    })),
    ...SIDES.flatMap((side) =>
      SPREAD.map(([key, name]) => ({
        id: `${side.key}_${key}`,
        label: `Fig. 6b: ${side.label} slowdown ${name} ${at}, every message counted`,
        unit: '×',
        paper: null,
      })),
    ),
    {
      id: 'mean_ratio',
      label: 'Fig. 6b: mean slowdown, Harmony / Fastpass',
      unit: '×',
      paper: 2,
      source: '§5.2, Fig. 6b ("~2× higher mean")',
    },
    {
      id: 'p99_ratio',
      label: 'Fig. 6b: p99 slowdown, Harmony / Fastpass',
      unit: '×',
      paper: 1.3,
      source: '§5.2, Fig. 6b ("~1.3× higher P99")',
    },
    {
      id: 'mean_ratio_horizon65',
      label: 'ablation: mean slowdown, Harmony / Fastpass with a 65 µs horizon',
      unit: '×',
      paper: null,
    },
    {
      id: 'p99_ratio_horizon65',
      label: 'ablation: p99 slowdown, Harmony / Fastpass with a 65 µs horizon',
      unit: '×',
      paper: null,
    },
    ...SIDES.flatMap((side) => [
      {
        id: `${side.key}_wait_us`,
        label: `Fig. 6c: ${side.label} mean wait at the sender ${at}`,
        unit: 'µs',
        paper: side.key === 'harmony' ? 'below Fastpass’s (§5.2, Fig. 6c)' : null,
        digits: 1,
      },
      {
        id: `${side.key}_queueing_us`,
        label: `Fig. 6c: ${side.label} mean worst switch queueing of a message ${at}`,
        unit: 'µs',
        paper:
          side.key === 'harmony'
            ? 'bounded, above Fastpass’s (§5.2)'
            : side.key === 'fastpass'
              ? 'zero (§5.2)'
              : null,
        digits: 1,
      },
    ]),
    ...gridFigures(points),
  ];
}

function fig6Table(x: Fig6, so: ExperimentOptions & { out: string }, runs: Summary[]): string {
  const { loads, common, sides, harmony, fastpass } = x;
  const results = x.grid(so.out);
  const { rows: edgeRows } = edges(x, results);
  const c = spreads(x, so.out);
  const cell = (q: number | null) => (q === null ? '∞' : fmt(q, 2));
  const lat = sides.map((p, i) => {
    const s = c[i].spread;
    const d = delays(runOf(x, runs, p));
    return `| ${p.label} | ${s.flows - s.missing}/${s.flows} | ${SPREAD.map(([key]) => cell(s[key])).join(' | ')} | ${fmt(us(d.hostWait.meanNs), 1)} | ${fmt(us(d.queueing.meanNs), 1)} |`;
  });
  const v = fig6Values(x, runs, so.out);
  const table = [
    `### Fig. 6a: feasibility regions over K × δadmission (${so.file})`,
    '',
    '"Not done": messages rejected (the paper’s rule), failed, or not delivered by the end of the drain, of those that arrived.',
    '',
    ...gridTable(results, loads, [harmony, fastpass]),
    '',
    'The regions’ edges: the least worst-case slowdown at which each scheme sustains a load (- : no point does).',
    '',
    `| load | ${loads.join(' | ')} |`,
    `| --- | ${loads.map(() => '---').join(' | ')} |`,
    ...(['harmony', 'fastpass'] as const).map(
      (k) =>
        `| ${k === 'harmony' ? 'Harmony' : 'Fastpass'} | ${edgeRows
          .map((r) => (Number.isFinite(r[k]) ? fmt(r[k], 2) : '-'))
          .join(' | ')} |`,
    ),
    '',
    `### Fig. 6b/6c: slowdown spread and where the delay goes, load ${common}`,
    '',
    'Every message counted: one not done is an infinite slowdown (∞ where a quantile falls on one; no mean while any is missing). Sender wait and switch queueing: means over the messages delivered.',
    '',
    '| point | done | slowdown min | mean | p99 | p99.9 | max | sender wait mean (µs) | worst switch queueing mean (µs) |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...lat,
    '',
    `Harmony / Fastpass: mean ${fmt(v.mean_ratio ?? null, 2)}× (the paper: ~2×), p99 ${fmt(v.p99_ratio ?? null, 2)}× (the paper: ~1.3×); against Fastpass with a 65 µs horizon: mean ${fmt(v.mean_ratio_horizon65 ?? null, 2)}×, p99 ${fmt(v.p99_ratio_horizon65 ?? null, 2)}×.`,
  ].join('\n');
  writeTable(so.out, 'fig6', table, {
    loads,
    common,
    points: results,
    sides: sides.map((p, i) => ({ key: p.key, ...c[i] })),
    values: v,
  });
  return table;
}
