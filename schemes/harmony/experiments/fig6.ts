import type { CountedSpread, ExperimentOptions, MessageDelays } from '../../../sdk/index.js';
import { fmt, reproduceVariants, type Summary, writeTable } from '../../../sdk/study.js';
import {
  ARRIVALS_MULTIPLE,
  arrivalWindow,
  calibrationOf,
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
} from './feasibility.js';
import { loadPct, READINGS, REASONS, SPREAD } from './index.js';

/** the paper's links (§5): 100 Gbit/s, 200 ns propagation + 450 ns switching a hop, as 540 ns a link */
const LINKS = ['links.host={rate: 100Gbps, delay: 540ns}', 'links.fabric={rate: 100Gbps, delay: 540ns}'];
/** Fastpass's 65 µs horizon at 10 Gbit/s in timeslots (54 of 1.2 µs) at 100 Gbit/s */
const HORIZON = '6.5us';
/** Fastpass §5.1's own horizon, 65 µs (its 10 Gbit/s testbed's): a series of its own in 6a and 6b */
const HORIZON65 = '65us';

/**
 * The example's 16 hosts, 1 ms of arrivals (~300 messages a run at load 0.2). 6b's load is 0.2: at 0.3
 * Fastpass at δadmission 25.2 µs rejected a message on two seeds of three (a first full run)
 */
const FULL = {
  set: [...LINKS, 'workload.duration=1ms', 'run.drain=1ms'],
  Ks: [2, 4, 8, 16],
  multiples: [2.5, 5, 10],
  // up to 0.99: a maximum at the sweep's end reads "≥"
  loads: [0.2, 0.3, 0.5, 0.7, 0.9, 0.95, 0.99],
  common: 0.2,
};
/**
 * `--quick` (npm test): 4 hosts in 2 racks under 2 spines (still full bisection, and the fewest
 * processes whose messages cross racks), 0.2 ms of arrivals, one point of each series, two loads (the
 * higher past the paper's 0.9)
 */
const QUICK = {
  set: [
    ...LINKS,
    'topology.leaves=2',
    'topology.hostsPerLeaf=2',
    'topology.spines=2',
    'workload.duration=0.2ms',
    'run.drain=0.5ms',
  ],
  Ks: [8],
  multiples: [5],
  loads: [0.3, 0.99],
  common: 0.3,
};

const us = (ns: number) => ns / 1000;
/** the paper's default point: K = 8, δadmission 5× the bound (§5) */
const DEFAULT = { K: 8, multiple: ARRIVALS_MULTIPLE };

/** 6b's sides: Harmony under each reading and Fastpass with each horizon, at the default point */
const SIDES = [
  { key: 'harmony', label: `Harmony, ${READINGS[0].label}` },
  { key: 'harmony_b', label: `Harmony, ${READINGS[1].label}` },
  { key: 'fastpass', label: 'Fastpass' },
  { key: 'fastpass65', label: 'Fastpass, horizon 65 µs' },
] as const;

/** 6a's series: their points and the edge's row label */
const SERIES = [
  { key: 'harmony', label: `Harmony, ${READINGS[0].label}` },
  { key: 'harmony_b', label: `Harmony, ${READINGS[1].label}` },
  { key: 'fastpass', label: `Fastpass, horizon ${HORIZON}` },
  { key: 'fastpass65', label: 'Fastpass, horizon 65 µs' },
] as const;
type SeriesKey = (typeof SERIES)[number]['key'];

function delays(s: Summary): MessageDelays {
  if (s.harmony) return s.harmony.delays;
  const d = s.fastpass?.messages?.delays;
  if (!d) throw new Error('harmony-fig6: a Fastpass run without summary.fastpass.messages');
  return d;
}

/** One run of the experiment: its grid, its series and sides and how to read their runs. */
interface Fig6 {
  loads: number[];
  common: number;
  series: Record<SeriesKey, GridPoint[]>;
  points: GridPoint[];
  /** 6b's sides (SIDES), each a point of the grid */
  sides: GridPoint[];
  windowNs: number;
  names: string[];
  grid: ReturnType<typeof gridReader>;
}

export async function runFig6(opts: ExperimentOptions): Promise<string> {
  const plan = opts.quick ? QUICK : FULL;
  const { Ks, multiples, loads, common } = plan;
  const o = { ...opts, set: [...plan.set, ...(opts.set ?? [])] };
  const [a, b] = READINGS;
  const harmony = harmonyGrid(o.file, o.set, Ks, multiples, [a]);
  const harmonyB = harmonyGrid(o.file, o.set, Ks, multiples, [b]);
  // Fastpass at the same δadmission values (Harmony's at K = 8: every K has them), with each horizon
  const deltaOf = (m: number) => harmony.find((p) => p.key === `harmony-a-k${Ks[0]}-${m}x`)!.deltaNs;
  const fastpass = multiples.map((m) =>
    fastpassPoint(deltaOf(m), `${m}x`, `δadmission ${fmt(us(deltaOf(m)), 1)} µs`, `, horizon: ${HORIZON}`),
  );
  const fastpass65 = multiples.map((m) =>
    fastpassPoint(
      deltaOf(m),
      `${m}x-horizon65`,
      `δadmission ${fmt(us(deltaOf(m)), 1)} µs, horizon 65 µs (Fastpass §5.1's, at 10 Gbit/s)`,
      `, horizon: ${HORIZON65}`,
    ),
  );
  const series = { harmony, harmony_b: harmonyB, fastpass, fastpass65 };
  const points: GridPoint[] = [...harmony, ...harmonyB, ...fastpass, ...fastpass65];
  const at = (ps: GridPoint[], prefix: string) => ps.find((p) => p.key.startsWith(prefix))!;
  const sides = [
    at(harmony, `harmony-a-k${DEFAULT.K}-${DEFAULT.multiple}x`),
    at(harmonyB, `harmony-b-k${DEFAULT.K}-${DEFAULT.multiple}x`),
    fastpass[multiples.indexOf(DEFAULT.multiple)],
    fastpass65[multiples.indexOf(DEFAULT.multiple)],
  ];
  const windowNs = arrivalWindow(o.file, o.set);
  // calibration gaps: 4 message times, the largest δadmission and the 65 µs horizon
  const cal = calibrationOf(o.file, o.set, Math.max(...points.map((p) => p.deltaNs)) + 65_000);
  const variants = gridVariants(points, loads, windowNs, cal);
  const x: Fig6 = {
    loads,
    common,
    series,
    points,
    sides,
    windowNs,
    names: variants.map((v) => v.name),
    grid: gridReader(points, loads, cal),
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

/** A point's run at `load`. */
function runOf(x: Fig6, runs: Summary[], p: GridPoint, load = x.common): Summary {
  return runs[x.names.indexOf(`${p.key}-${loadPct(load)}`)];
}

/** 6b's sides at the common load, from the grid. */
function spreads(x: Fig6, seedDir: string): PointRun[] {
  const results = x.grid(seedDir);
  return x.sides.map((p) => results.find((r) => r.point === p)!.runs[x.loads.indexOf(x.common)]);
}

/**
 * The regions' edges: at each load, the least worst-case slowdown at which each series sustains it;
 * Harmony's over Fastpass's at the highest load both sustain (the paper: the regions "closely match").
 */
function edges(x: Fig6, results: PointResult[]) {
  const of = (ps: GridPoint[]) => results.filter((r) => ps.includes(r.point));
  const rows = x.loads.map((L) => ({
    L,
    ...(Object.fromEntries(SERIES.map((s) => [s.key, edgeAt(of(x.series[s.key]), L)])) as Record<
      SeriesKey,
      number
    >),
  }));
  const both = (h: SeriesKey, f: SeriesKey) =>
    rows.filter((r) => Number.isFinite(r[h]) && Number.isFinite(r[f])).at(-1);
  return { rows, both };
}

/** pairs whose regions' distance and 6b ratios are figures: [suffix, Harmony's series, Fastpass's] */
const PAIRS = [
  ['', 'harmony', 'fastpass'],
  ['_b', 'harmony_b', 'fastpass'],
  ['_horizon65', 'harmony', 'fastpass65'],
] as const;

function fig6Values(x: Fig6, runs: Summary[], seedDir: string): Record<string, number> {
  const { loads, sides } = x;
  const results = x.grid(seedDir);
  const v = gridValues(results, loads);
  const { both } = edges(x, results);
  for (const [suffix, h, f] of PAIRS) {
    const row = both(h, f);
    v[`region_load${suffix}`] = row?.L ?? 0;
    if (row) v[`region_slowdown_ratio${suffix}`] = row[h] / row[f];
  }
  const c = spreads(x, seedDir);
  SIDES.forEach((side, i) => {
    const s: CountedSpread = c[i].spread;
    v[`${side.key}_missing`] = s.missing;
    for (const [key] of SPREAD) {
      const q = s[key];
      if (q !== null) v[`${side.key}_${key}`] = q;
      const l = c[i].line[key];
      if (l !== null) v[`${side.key}_line_${key}`] = l;
    }
    const d = delays(runOf(x, runs, sides[i]));
    v[`${side.key}_wait_us`] = us(d.hostWait.meanNs);
    v[`${side.key}_queueing_us`] = us(d.queueing.meanNs);
  });
  // why messages were rejected at the highest load swept, at the default point, under each reading
  const top = loads[loads.length - 1];
  for (const [i, r] of READINGS.entries()) {
    const h = runOf(x, runs, sides[i], top).harmony!;
    for (const [key] of REASONS) v[`harmony_${r.key}_rejects_${key}`] = h.rejects[key];
  }
  v.fastpass_rejects = runOf(x, runs, sides[2], top).fastpass!.messages!.rejected;
  v.admissible_window_us = us(x.windowNs);
  const ratio = (a: number | null, b: number | null) => (a !== null && b !== null && b > 0 ? a / b : null);
  const side = (k: string) => c[SIDES.findIndex((s) => s.key === k)];
  const r: Record<string, number | null> = {};
  for (const [suffix, h, f] of PAIRS) {
    r[`mean_ratio${suffix}`] = ratio(side(h).spread.mean, side(f).spread.mean);
    r[`p99_ratio${suffix}`] = ratio(side(h).spread.p99, side(f).spread.p99);
  }
  r.mean_ratio_line = ratio(side('harmony').line.mean, side('fastpass').line.mean);
  r.p99_ratio_line = ratio(side('harmony').line.p99, side('fastpass').line.p99);
  for (const [key, q] of Object.entries(r)) if (q !== null) v[key] = q;
  return v;
}

function fig6Figures(x: Fig6) {
  const { loads, common, points } = x;
  const at = `at load ${common}`;
  const top = loads[loads.length - 1];
  const pairLabel = {
    '': 'Harmony (reading A) / Fastpass',
    _b: 'Harmony (reading B) / Fastpass',
    _horizon65: 'Harmony (reading A) / Fastpass with a 65 µs horizon',
  };
  return [...fig6aFigures(top, pairLabel), ...fig6bcFigures(at, pairLabel), ...gridFigures(points, loads)];
}

/** The window, the rejects at the top load, and Fig. 6a's regions: the figures before the slowdowns. */
function fig6aFigures(top: number, pairLabel: Record<'' | '_b' | '_horizon65', string>) {
  return [
    {
      id: 'admissible_window_us',
      label: `the one window every point's and scheme's arrivals are shaped with: the default δadmission (K = 8: ${ARRIVALS_MULTIPLE}× the Theorem 3.1 bound)`,
      unit: 'µs',
      paper: '5× the bound (§5)',
      digits: 1,
    },
    ...READINGS.flatMap((r) =>
      REASONS.map(([key, name]) => ({
        id: `harmony_${r.key}_rejects_${key}`,
        label: `Harmony (default point, ${r.label}) messages rejected at load ${top}, the last ask refused for ${name}`,
        unit: 'messages',
        paper: null,
        digits: 1,
      })),
    ),
    {
      id: 'fastpass_rejects',
      label: `Fastpass (default point) messages rejected at load ${top}: not allocated within δadmission`,
      unit: 'messages',
      paper: null,
      digits: 1,
    },
    ...PAIRS.flatMap(([suffix]) => [
      {
        id: `region_load${suffix}`,
        label: `Fig. 6a: the highest load both sustain at some point of the grid, ${pairLabel[suffix]}`,
        unit: 'load',
        paper: null,
      },
      {
        id: `region_slowdown_ratio${suffix}`,
        label: `Fig. 6a: the least worst-case slowdown (over unloaded) sustaining that load, ${pairLabel[suffix]} (the regions’ horizontal distance)`,
        unit: '×',
        paper:
          suffix === ''
            ? '~1: "for any given latency bound, it can sustain loads as high as Fastpass (and vice versa)" (Fig. 6)'
            : null,
      },
    ]),
  ];
}

/** Fig. 6b's slowdowns and ratios and Fig. 6c's waits and queueing, at the common load (`at`). */
function fig6bcFigures(at: string, pairLabel: Record<'' | '_b' | '_horizon65', string>) {
  return [
    ...SIDES.map((side) => ({
      id: `${side.key}_missing`,
      label: `${side.label}: messages not done ${at} (rejected, failed or not delivered)`,
      unit: 'messages',
      paper: null,
      digits: 0,
    })),
    ...SIDES.flatMap((side) =>
      SPREAD.flatMap(([key, name]) => [
        {
          id: `${side.key}_${key}`,
          label: `Fig. 6b: ${side.label} slowdown ${name} ${at} over each message's unloaded completion time (§5), every message counted`,
          unit: '×',
          paper: null,
        },
        {
          id: `${side.key}_line_${key}`,
          label: `the same over the line-rate ideal`,
          unit: '×',
          paper: null,
        },
      ]),
    ),
    {
      id: 'mean_ratio',
      label: `Fig. 6b: mean slowdown (over unloaded), ${pairLabel['']}`,
      unit: '×',
      paper: 2,
      source: '§5.2, Fig. 6b ("~2× higher mean")',
    },
    {
      id: 'p99_ratio',
      label: `Fig. 6b: p99 slowdown (over unloaded), ${pairLabel['']}`,
      unit: '×',
      paper: 1.3,
      source: '§5.2, Fig. 6b ("~1.3× higher P99")',
    },
    ...(['_b', '_horizon65', '_line'] as const).flatMap((suffix) =>
      (['mean', 'p99'] as const).map((q) => ({
        id: `${q}_ratio${suffix}`,
        label:
          suffix === '_line'
            ? `${q} slowdown over the line-rate ideal, ${pairLabel['']}`
            : `${q} slowdown (over unloaded), ${pairLabel[suffix]}`,
        unit: '×',
        paper: null,
      })),
    ),
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
  ];
}

function fig6Table(x: Fig6, so: ExperimentOptions & { out: string }, runs: Summary[]): string {
  const { loads, common, sides } = x;
  const results = x.grid(so.out);
  const { rows: edgeRows } = edges(x, results);
  const c = spreads(x, so.out);
  const cell = (q: number | null) => (q === null ? '∞' : fmt(q, 2));
  const lat = sides.map((p, i) => {
    const s = c[i].spread;
    const d = delays(runOf(x, runs, p));
    return `| ${SIDES[i].label} | ${s.flows - s.missing}/${s.flows} | ${SPREAD.map(([key]) => cell(s[key])).join(' | ')} | ${SPREAD.map(([key]) => cell(c[i].line[key])).join(' | ')} | ${fmt(us(d.hostWait.meanNs), 1)} | ${fmt(us(d.queueing.meanNs), 1)} |`;
  });
  const v = fig6Values(x, runs, so.out);
  const f = (k: string) => fmt(v[k] ?? null, 2);
  const table = [
    `### Fig. 6a: feasibility regions over K × δadmission (${so.file})`,
    '',
    `Every point of both schemes on the same arrivals: §5's workload shaped with one window, δadmission ${ARRIVALS_MULTIPLE}× the K = 8 bound (${fmt(us(x.windowNs), 1)} µs, the paper's default). "Not done": messages rejected (Harmony: each point's reading; Fastpass: not allocated within δadmission), failed, or not delivered by the end of the drain, of those that arrived. Slowdown: completion time over the same message's in an unloaded calibration run of the point's scheme (§5), and over the line-rate ideal.`,
    '',
    ...gridTable(
      results,
      loads,
      SERIES.map((s) => x.series[s.key]),
    ),
    '',
    'The regions’ edges: the least worst-case slowdown (over unloaded) at which each series sustains a load (- : no point does).',
    '',
    `| load | ${loads.join(' | ')} |`,
    `| --- | ${loads.map(() => '---').join(' | ')} |`,
    ...SERIES.map(
      (s) =>
        `| ${s.label} | ${edgeRows.map((r) => (Number.isFinite(r[s.key]) ? fmt(r[s.key], 2) : '-')).join(' | ')} |`,
    ),
    '',
    `### Fig. 6b/6c: slowdown spread and where the delay goes, load ${common}`,
    '',
    'Every message counted: one not done is an infinite slowdown (∞ where a quantile falls on one; no mean while any is missing). Sender wait and switch queueing: means over the messages delivered.',
    '',
    `| point | done | ${SPREAD.map(([, l]) => `${l} (over unloaded)`).join(' | ')} | ${SPREAD.map(([, l]) => `${l} (over line rate)`).join(' | ')} | sender wait mean (µs) | worst switch queueing mean (µs) |`,
    `| --- | --- | ${SPREAD.map(() => '--- | ---').join(' | ')} | --- | --- |`,
    ...lat,
    '',
    `Harmony (reading A) / Fastpass, over unloaded: mean ${f('mean_ratio')}× (the paper: ~2×), p99 ${f('p99_ratio')}× (the paper: ~1.3×); over the line rate: mean ${f('mean_ratio_line')}×, p99 ${f('p99_ratio_line')}×. Reading B / Fastpass: mean ${f('mean_ratio_b')}×, p99 ${f('p99_ratio_b')}×. Reading A / Fastpass with a 65 µs horizon: mean ${f('mean_ratio_horizon65')}×, p99 ${f('p99_ratio_horizon65')}×.`,
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
