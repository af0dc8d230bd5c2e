import { join } from 'node:path';
import { type CountedSpread, type ExperimentOptions, flowRows, spreadOf } from '../../../sdk/index.js';
import { fmt, reproduceVariants, type Summary, writeTable } from '../../../sdk/study.js';
import {
  atEndFigure,
  calibrationGapNs,
  harmonySettings,
  loadPct,
  messageBytes,
  READINGS,
  type Reading,
  sustainableText,
} from './index.js';
import { hostRacks, type Racks, readUnloaded, unloadedSpread, unloadedVariant } from './unloaded.js';

export interface GridPoint {
  key: string;
  label: string;
  /** the `scheme:` the point runs */
  scheme: string;
  /** δadmission, ns: the reject rule's window */
  deltaNs: number;
  /**
   * the calibration run of its scheme unloaded (unloaded.ts): its name and `scheme:`, one per setting
   * that changes an unloaded message (K, a horizon), not per δadmission or reject reading
   */
  calibration: { key: string; scheme: string };
  /** Harmony's Theorem 3.1 queueing-delay bound at the point's K, ns (null: not Harmony) */
  boundNs: number | null;
}

const us = (ns: number) => ns / 1000;

/**
 * δadmission `multiple` × Harmony's Theorem 3.1 delay bound at K = 8 on the fabric of `file` with `set`
 * (the paper's default is 5×, §5): the grid's δadmission values, the same at every K, as a window below
 * one message's time on a link would leave no arrival admissible (§5's workload)
 */
function deltaAt(file: string, set: readonly string[], multiple: number): number {
  const { bounds } = harmonySettings(file, [...set, 'scheme={kind: harmony, K: 8}']);
  return Math.round(multiple * bounds.delayBoundNs);
}

/** the δadmission `multiple` × the K = 8 bound that shapes every point's arrivals (see arrivalWindow) */
export const ARRIVALS_MULTIPLE = 5;

/**
 * The one window every point's and scheme's arrivals are shaped with (§5's workload, "less than 1 for
 * every δadmission duration"): the paper's default δadmission, 5× the K = 8 bound (§5: "δadmission =
 * ~63µs (a factor 5 of Harmony worst-case queueing delay bound)"). The default point then runs §5's
 * workload exactly and every other point the same arrivals, differing only in K, δadmission or scheme
 * (a window of its own would make a larger δadmission's arrivals burstier too).
 */
export function arrivalWindow(file: string, set: readonly string[]): number {
  return deltaAt(file, set, ARRIVALS_MULTIPLE);
}

/**
 * Harmony at K virtual links and δadmission `deltaNs` (`multiple` × the K = 8 bound: deltaAt), a
 * reject final by `reading`, a rejected message given up
 */
function harmonyPoint(
  file: string,
  set: readonly string[],
  K: number,
  multiple: number,
  deltaNs: number,
  reading: Reading,
): GridPoint {
  const { bounds } = harmonySettings(file, [...set, `scheme={kind: harmony, K: ${K}}`]);
  return {
    key: `harmony-${reading.key}-k${K}-${multiple}x`,
    label: `Harmony K = ${K}, δadmission ${fmt(us(deltaNs), 1)} µs, ${reading.label}`,
    scheme: `{kind: harmony, K: ${K}, deltaAdmission: ${deltaNs}, ${reading.scheme}, onReject: give-up}`,
    deltaNs,
    boundNs: bounds.delayBoundNs,
    calibration: { key: `harmony-k${K}`, scheme: `{kind: harmony, K: ${K}, onReject: give-up}` },
  };
}

/** Harmony's points over `readings` × `Ks` × `multiples`, each δadmission resolved once */
export function harmonyGrid(
  file: string,
  set: readonly string[],
  Ks: readonly number[],
  multiples: readonly number[],
  readings: readonly Reading[] = READINGS,
): GridPoint[] {
  const deltas = multiples.map((m) => deltaAt(file, set, m));
  return readings.flatMap((r) =>
    Ks.flatMap((K) => multiples.map((m, i) => harmonyPoint(file, set, K, m, deltas[i], r))),
  );
}

/**
 * Fastpass extended to messages as the paper's footnote 3 (each message's timeslots consecutive; one
 * not allocated within δadmission is rejected), one arbiter; `more`: further settings
 */
export function fastpassPoint(deltaNs: number, key: string, label: string, more = ''): GridPoint {
  return {
    key: `fastpass-${key}`,
    label: `Fastpass (messages), ${label}`,
    scheme: `{kind: fastpass, messages: true, admission: ${deltaNs}, arbiters: 1${more}}`,
    deltaNs,
    boundNs: null,
    calibration: {
      key: `fastpass${more.replace(/[^0-9a-z]+/gi, '-')}`.replace(/-$/, ''),
      scheme: `{kind: fastpass, messages: true, arbiters: 1${more}}`,
    },
  };
}

/** how an experiment's calibration runs are read: the hosts' racks and the gap between messages */
export interface Calibration {
  racks: Racks;
  gapNs: number;
}

/**
 * The calibration of `file` with `set`: its fixed message size, gaps of 4 message times at the host
 * link rate and `slackNs` more (the grid's largest δadmission and Fastpass horizon)
 */
export function calibrationOf(file: string, set: readonly string[], slackNs: number) {
  const { bounds } = harmonySettings(file, set);
  const bytes = messageBytes(file, set);
  return { racks: hostRacks(file, set), bytes, gapNs: calibrationGapNs(bytes, bounds.hostRateBps, slackNs) };
}

/**
 * One run per point and load on the same arrivals: §5's workload shaped with one window (`windowNs`:
 * arrivalWindow) at every point, no best-effort traffic; then each distinct calibration run once
 */
export function gridVariants(
  points: readonly GridPoint[],
  loads: readonly number[],
  windowNs: number,
  cal: Calibration & { bytes: number },
) {
  const runs = points.flatMap((p) =>
    loads.map((load) => ({
      name: `${p.key}-${loadPct(load)}`,
      set: {
        scheme: p.scheme,
        'workload.load': load,
        'workload.background': 'null',
        'workload.admissible': windowNs,
      },
    })),
  );
  const calibrations = new Map(points.map((p) => [p.calibration.key, p.calibration.scheme]));
  return [
    ...runs,
    ...[...calibrations].map(([key, scheme]) =>
      unloadedVariant(key, { scheme }, cal.racks, [cal.bytes], cal.gapNs),
    ),
  ];
}

export interface PointRun {
  load: number;
  /** the slowdown spread over each message's unloaded completion time (§5; unloaded.ts) */
  spread: CountedSpread;
  /** the same over the line-rate ideal (flows.csv's slowdown) */
  line: CountedSpread;
  /** the longest completion time of the messages done, ns */
  worstFctNs: number;
}

export interface PointResult {
  point: GridPoint;
  runs: PointRun[];
  /** the maximum sustainable load (0: below the lowest load swept) */
  sustainable: number;
  /** the run at the sustainable load (null: none sustained) */
  at: PointRun | null;
}

/** one run of the grid, from its flows.csv (`runDir`), slowdowns over `unloaded` (unloadedTimes) */
export function pointRun(
  runDir: string,
  load: number,
  unloaded: Parameters<typeof unloadedSpread>[1],
): PointRun {
  const rows = flowRows(runDir);
  return {
    load,
    spread: unloadedSpread(rows, unloaded),
    line: spreadOf(rows),
    worstFctNs: rows.reduce((m, r) => (r.completed ? Math.max(m, r.fctNs) : m), 0),
  };
}

/** the grid's results in `seedDir` (each run in `<seedDir>/<point>-<load %>`, as gridVariants names it) */
export function readGrid(
  seedDir: string,
  points: readonly GridPoint[],
  loads: readonly number[],
  cal: Calibration,
): PointResult[] {
  const unloaded = new Map<string, ReturnType<typeof readUnloaded>>();
  const of = (key: string) => {
    let u = unloaded.get(key);
    if (u === undefined) unloaded.set(key, (u = readUnloaded(seedDir, key, cal.racks, cal.gapNs)));
    return u;
  };
  return points.map((point) => {
    const u = of(point.calibration.key);
    const runs = loads.map((load) => pointRun(join(seedDir, `${point.key}-${loadPct(load)}`), load, u));
    let at: PointRun | null = null;
    for (const r of runs) {
      if (r.spread.missing > 0) break;
      at = r;
    }
    return { point, runs, sustainable: at?.load ?? 0, at };
  });
}

/**
 * readGrid once per seed folder: an experiment's table and its values read the same runs (a seed's
 * grid is a few dozen flows.csv files)
 */
export function gridReader(
  points: readonly GridPoint[],
  loads: readonly number[],
  cal: Calibration,
): (seedDir: string) => PointResult[] {
  const read = new Map<string, PointResult[]>();
  return (seedDir) => {
    let results = read.get(seedDir);
    if (results === undefined) {
      results = readGrid(seedDir, points, loads, cal);
      read.set(seedDir, results);
    }
    return results;
  };
}

/** the worst-case slowdown at the sustainable load (Infinity: none sustained) */
const worst = (r: PointResult) => r.at?.spread.max ?? Number.POSITIVE_INFINITY;

/** the keys of the points on the Pareto front of `results` (worst-case slowdown against sustainable load) */
export function paretoFront(results: readonly PointResult[]): Set<string> {
  const live = results.filter((r) => r.at !== null);
  const beats = (a: PointResult, b: PointResult) =>
    a.sustainable >= b.sustainable &&
    worst(a) <= worst(b) &&
    (a.sustainable > b.sustainable || worst(a) < worst(b));
  return new Set(live.filter((b) => !live.some((a) => beats(a, b))).map((r) => r.point.key));
}

/**
 * The region's edge at load `L`: the least worst-case slowdown at which one of `results` sustains `L`
 * or more (Infinity when none does)
 */
export function edgeAt(results: readonly PointResult[], L: number): number {
  return results.reduce((best, r) => (r.sustainable >= L ? Math.min(best, worst(r)) : best), Infinity);
}

/**
 * A grid's table: each point's sustainable load, worst case there, whether it is on the Pareto front
 * of its group (the points of one scheme) and the messages not done at each load
 */
export function gridTable(
  results: readonly PointResult[],
  loads: readonly number[],
  groups: ReadonlyArray<readonly GridPoint[]> = [results.map((r) => r.point)],
): string[] {
  const front = new Set(groups.flatMap((g) => [...paretoFront(results.filter((r) => g.includes(r.point)))]));
  const rows = results.map((r) => {
    const bound = r.point.boundNs === null ? '-' : fmt(us(r.point.boundNs), 1);
    const cells = r.runs.map((x) => `${x.spread.missing}/${x.spread.flows}`);
    const at = r.at;
    return `| ${r.point.label} | ${bound} | ${sustainableText(r.sustainable, loads)} | ${at === null ? '-' : fmt(us(at.worstFctNs), 1)} | ${at === null ? '-' : fmt(at.spread.max, 2)} | ${at === null ? '-' : fmt(at.line.max, 2)} | ${front.has(r.point.key) ? 'yes' : ''} | ${cells.join(' | ')} |`;
  });
  return [
    `| point | Theorem 3.1 bound (µs) | sustainable load | worst delay there (µs) | worst slowdown there (over unloaded) | (over line rate) | on its group's Pareto front | ${loads.map((l) => `not done at ${l}`).join(' | ')} |`,
    `| --- | --- | --- | --- | --- | --- | --- | ${loads.map(() => '---').join(' | ')} |`,
    ...rows,
  ];
}

/** the grid's figures: each point's sustainable load and worst case there */
export function gridFigures(points: readonly GridPoint[], loads: readonly number[]) {
  return points.flatMap((p) => [
    {
      id: `sustainable_${p.key}`,
      label: `maximum sustainable load, ${p.label} (0: below the lowest load swept)`,
      unit: 'load',
      paper: null,
    },
    atEndFigure(`sustainable_${p.key}`, `maximum sustainable load, ${p.label}`, loads),
    {
      id: `worst_us_${p.key}`,
      label: `worst message delay at that load, ${p.label} (seeds that sustained a load)`,
      unit: 'µs',
      paper: null,
      digits: 1,
    },
    {
      id: `worst_slowdown_${p.key}`,
      label: `worst message slowdown at that load over its unloaded completion time (§5), ${p.label} (seeds that sustained a load)`,
      unit: '×',
      paper: null,
    },
    {
      id: `worst_slowdown_line_${p.key}`,
      label: `the same over the line-rate ideal, ${p.label}`,
      unit: '×',
      paper: null,
    },
  ]);
}

export function gridValues(
  results: readonly PointResult[],
  loads: readonly number[],
): Record<string, number> {
  const v: Record<string, number> = {};
  for (const r of results) {
    v[`sustainable_${r.point.key}`] = r.sustainable;
    v[`sustainable_${r.point.key}_at_end`] = r.sustainable === loads[loads.length - 1] ? 1 : 0;
    if (r.at !== null && r.at.spread.max !== null && r.at.line.max !== null) {
      v[`worst_us_${r.point.key}`] = us(r.at.worstFctNs);
      v[`worst_slowdown_${r.point.key}`] = r.at.spread.max;
      v[`worst_slowdown_line_${r.point.key}`] = r.at.line.max;
    }
  }
  return v;
}

/**
 * The testbed's scale (§5.1: 8 servers, two tiers, 10 Gbit/s): 2 racks of 4 under the example's 4
 * spines, 3 ms of 128 KB RPCs; K from 2 to 16, δadmission 2.5, 5 and 10 × the K = 8 bound (126, 252
 * and 504 µs; a 128 KB message takes 102.4 µs on a link)
 */
const FULL = {
  set: ['topology.leaves=2', 'workload.duration=3ms', 'run.drain=3ms'],
  Ks: [2, 4, 8, 16],
  multiples: [2.5, 5, 10],
  // up to 0.99: at 8 servers nearly every point sustains 0.9 (a first full run), so the region's
  // edge lies above it (a maximum at 0.99 reads "≥"); 0.1 for reading B
  loads: [0.1, 0.3, 0.5, 0.7, 0.9, 0.95, 0.99],
};
/**
 * `--quick` (npm test): 4 hosts in 2 racks, 0.5 ms of arrivals, K = 2 and 8 at δadmission 5× the K = 8
 * bound under both readings, two loads (the higher past the paper's 0.9)
 */
const QUICK = {
  set: [
    'topology.leaves=2',
    'topology.hostsPerLeaf=2',
    'topology.spines=2',
    'workload.duration=0.5ms',
    'run.drain=1ms',
  ],
  Ks: [2, 8],
  multiples: [5],
  loads: [0.5, 0.99],
};

/** Fig. 5b: Harmony's feasibility region over K × δadmission and its Pareto front, at the testbed's scale */
export async function runFig5b(opts: ExperimentOptions): Promise<string> {
  const plan = opts.quick ? QUICK : FULL;
  const { Ks, multiples, loads } = plan;
  const o = { ...opts, set: [...plan.set, ...(opts.set ?? [])] };
  const points = harmonyGrid(o.file, o.set, Ks, multiples);
  const windowNs = arrivalWindow(o.file, o.set);
  const cal = calibrationOf(o.file, o.set, Math.max(...points.map((p) => p.deltaNs)));
  const grid = gridReader(points, loads, cal);
  const byReading = READINGS.map((r) => points.filter((p) => p.key.startsWith(`harmony-${r.key}-`)));
  const at = (r: Reading, K: number, m: number) => `harmony-${r.key}-k${K}-${m}x`;
  const mid = multiples.includes(ARRIVALS_MULTIPLE)
    ? ARRIVALS_MULTIPLE
    : multiples[Math.floor(multiples.length / 2)];
  const K8 = Ks.includes(8) ? 8 : Ks[Ks.length - 1];
  const values = (_runs: Summary[], seedDir: string): Record<string, number> => {
    const results = grid(seedDir);
    const v = gridValues(results, loads);
    const load = (key: string) => v[`sustainable_${key}`];
    // §5.1: a larger delay bound, through K or δadmission, sustains a higher load
    for (const [ri, r] of READINGS.entries()) {
      v[`gain_K_${r.key}`] = load(at(r, Ks[Ks.length - 1], mid)) - load(at(r, Ks[0], mid));
      if (multiples.length > 1)
        v[`gain_delta_${r.key}`] =
          load(at(r, K8, multiples[multiples.length - 1])) - load(at(r, K8, multiples[0]));
      v[`front_${r.key}`] = paretoFront(results.filter((x) => byReading[ri].includes(x.point))).size;
    }
    return v;
  };
  return reproduceVariants(o, {
    experiment: 'harmony-fig5b',
    paperScale:
      '8 servers on a two-tier testbed at 10 Gbit/s, 128 KB RPCs, K and δadmission varied, the Pareto curve of observed worst-case delay and sustainable load (§5.1, Fig. 5b)',
    figures: [
      ...READINGS.flatMap((r) => [
        {
          id: `gain_K_${r.key}`,
          label: `sustainable load at K = ${Ks[Ks.length - 1]} over K = ${Ks[0]} (δadmission ${mid}× the K = 8 bound), difference, ${r.label}`,
          unit: 'load',
          paper:
            'above 0: "with a larger bound on target message delay (via increasing K and δadmission), Harmony sustains higher loads" (§5.1)',
        },
        ...(multiples.length > 1
          ? [
              {
                id: `gain_delta_${r.key}`,
                label: `sustainable load at δadmission ${multiples[multiples.length - 1]}× over ${multiples[0]}× the K = 8 bound (K = ${K8}), difference, ${r.label}`,
                unit: 'load',
                paper:
                  'above 0, below the K gain: "δadmission has lower impact than K" (§5.2, sensitivity in [5])',
              },
            ]
          : []),
        {
          id: `front_${r.key}`,
          label: `points on the Pareto front, ${r.label}`,
          unit: 'points',
          paper: null,
          digits: 0,
        },
      ]),
      ...gridFigures(points, loads),
    ],
    variants: gridVariants(points, loads, windowNs, cal),
    table: (so, _runs) => {
      const table = [
        `### Fig. 5b: Harmony's feasibility region over K × δadmission (${so.file})`,
        '',
        `Every point on the same arrivals: §5's workload shaped with one window, δadmission ${ARRIVALS_MULTIPLE}× the K = 8 bound (${fmt(us(windowNs), 1)} µs, the paper's default). "Not done": messages rejected (each point's reading), failed, or not delivered by the end of the drain, of those that arrived. Slowdown: completion time over the same message's in an unloaded calibration run of the point's K (§5), and over the line-rate ideal. A Pareto front per reading.`,
        '',
        ...gridTable(grid(so.out), loads, byReading),
      ].join('\n');
      writeTable(so.out, 'fig5b', table);
      return table;
    },
    values,
  });
}
