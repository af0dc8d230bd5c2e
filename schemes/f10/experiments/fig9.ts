/**
 * F10's MapReduce evaluation (F10 §7.6, figure 9) as a command: `dcemu experiment f10-fig9`.
 *
 * Per seed, MapReduce shuffles are drawn (Poisson job arrivals over the scenario's workload window,
 * each job M mappers and R reducers on random hosts, its shuffle split evenly into one TCP flow per
 * mapper→reducer pair) and a failure trace from the scenario's `chaos:` model (as f10-fig8's, see
 * schemes/f10/experiments/trace.ts); both run on F10 (an AB FatTree, every mechanism) and on the PortLand-style
 * baseline (a standard FatTree): the same jobs, the same failures. A job completes when its last flow
 * does; its speedup is its completion time on PortLand over that on F10 (the paper's). The jobs of all
 * seeds are pooled into the speedup's CDF (figure 9a) and speedup against job size (figure 9b).
 *
 * The paper's jobs come from a trace of a 3,600-node production data center (Chowdhury et al.,
 * Orchestra, SIGCOMM'11) that we do not have: the job shapes and volumes here are ours (`SHUFFLE`).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { type ExperimentOptions, type FlowRow, flowRows, formatNs, Rng } from '../../../sdk/index.js';
import {
  cdf,
  fmt,
  frame,
  loadScenarioFile,
  type Plot,
  RuntimeError,
  reproduce,
  resolveScenario,
  scaleOf,
  timelineScenario,
  withQuick,
  writePlots,
  writeTable,
} from '../../../sdk/study.js';
import { F10, PORTLAND, runOne, traces } from './trace.js';

/** The shuffles drawn per seed: how often jobs arrive, how many mappers and reducers, how many bytes. */
interface ShuffleModel {
  /** mean time between job arrivals, ns (exponential gaps: Poisson arrivals over the workload window) */
  meanGapNs: number;
  /** mappers, and reducers, each drawn uniform in 1..this (at most the host count) */
  maxMappers: number;
  maxReducers: number;
  /** bytes a job's shuffle moves, split evenly over its M·R mapper→reducer pairs */
  bytes: number;
}

/**
 * Full runs. Up to 8 mappers and 8 reducers: a job spans at most the 16 hosts of a k=4 tree (the
 * paper's, fewer than 200 mappers and reducers, at most about a ninth of its 1,728 hosts), and several
 * jobs share the tree at once. A job every 500 µs puts ~20 in a 10 ms window, several in flight when
 * the failures strike (the example's [1, 3] ms). 4 MB a job: a one-to-one shuffle takes 3.2 ms at
 * 10 Gbit/s, long enough to meet a failure, and ~20 of them offer 40% of the hosts' 160 Gbit/s on
 * average, so jobs compete for the fabric (the paper's "gains are larger when more nodes participate
 * and compete for bandwidth").
 */
const SHUFFLE: ShuffleModel = { meanGapNs: 500_000, maxMappers: 8, maxReducers: 8, bytes: 4_000_000 };
/** `--quick`: a job every 150 µs in a 1 ms window (about six), 256 KB each (a one-to-one in 205 µs) */
const QUICK_SHUFFLE: ShuffleModel = { meanGapNs: 150_000, maxMappers: 8, maxReducers: 8, bytes: 256_000 };

/**
 * `--quick`: the example shrunk to 1 ms of job arrivals (what npm test runs), 4 µs links (fewer sync
 * messages per µs: the run's cost), control-plane times at 1/5000 of the paper's (epoch 200 µs), 1 ms
 * for the last jobs to finish, and failures drawn in [150, 300] µs, one at a time, that stay (repairs
 * far beyond the run), as f10-fig8's.
 */
const QUICK_FIG9 = [
  'links={host: {delay: 4us}, fabric: {delay: 4us}}',
  'scheme.timeScale=0.0002',
  'scheme.lossInterval=200us',
  'workload.duration=1ms',
  'run.drain=1ms',
  'chaos={window: {from: 150us, to: 300us}, concurrent: 1, failures: [{kind: link-down, targets: fabric, between: "lognormal(600us, 1)", repair: "lognormal(100ms, 1)"}, {kind: kill, targets: [agg*, core*], between: "lognormal(5ms, 1)"}]}',
];

/** Job sizes (M + R) grouped for figure 9b's table: [from, to], both included. */
const SIZE_BUCKETS: ReadonlyArray<readonly [number, number]> = [
  [2, 4],
  [5, 8],
  [9, 12],
  [13, Number.POSITIVE_INFINITY],
];

/** One shuffle: its hosts, its start, and its flows' place in the seed's flow list. */
interface Job {
  startNs: number;
  mappers: string[];
  reducers: string[];
  /** its flows are entries first .. first + flows - 1 of the list (ids first + 1 .. in flows.csv) */
  first: number;
  flows: number;
}

/** A flow of a `list` workload (workload.flows), hosts by name, start in ns after traffic start. */
interface ListedFlow {
  src: string;
  dst: string;
  size: number;
  start: number;
}

/** A job's outcome on both schemes: completion times (null: a flow unfinished) and the speedup. */
interface JobResult {
  seed: number;
  job: number;
  size: number;
  mappers: number;
  reducers: number;
  startNs: number;
  flows: number;
  f10: number | null;
  portland: number | null;
  /** PortLand's completion time over F10's; null unless the job finished on both */
  speedup: number | null;
}

interface SeedRun {
  seed: number;
  faults: number;
  jobs: JobResult[];
  /** jobs drawn with no flow across the network (one mapper and one reducer on one host): left out */
  local: number;
  dirs: Record<string, string>;
}

/** F10 §7.6's figure 9 claims, per seed (mean ± 95% interval over the seeds in reproduction.json) */
const FIG9_FIGURES = [
  {
    id: 'speedup_median',
    label: "median speedup of a job: its completion time on PortLand over F10's",
    unit: '×',
    paper: 1.3,
    source: '§7.6 ("a median speedup of about 1.3×")',
    digits: 2,
  },
  { id: 'speedup_p10', label: 'speedup, 10th percentile', unit: '×', paper: null, digits: 2 },
  { id: 'speedup_p90', label: 'speedup, 90th percentile', unit: '×', paper: null, digits: 2 },
  { id: 'speedup_mean', label: 'mean speedup', unit: '×', paper: null, digits: 2 },
  {
    id: 'speedup_median_small',
    label: 'median speedup of jobs of at most 8 mappers and reducers',
    unit: '×',
    paper: null,
    digits: 2,
  },
  {
    id: 'speedup_median_large',
    label: 'median speedup of jobs of more than 8 mappers and reducers',
    unit: '×',
    paper: 'above the small jobs’',
    source: '§7.6 ("gains are larger when more nodes participate")',
    digits: 2,
  },
  { id: 'faster_pct', label: 'jobs faster on F10 (speedup > 1)', unit: '%', paper: null, digits: 0 },
  { id: 'jobs', label: 'jobs drawn (with a flow across the network)', unit: 'jobs', paper: null, digits: 0 },
  { id: 'f10_finished', label: 'F10: jobs whose every flow finished', unit: 'jobs', paper: null, digits: 0 },
  {
    id: 'portland_finished',
    label: 'PortLand: jobs whose every flow finished',
    unit: 'jobs',
    paper: null,
    digits: 0,
  },
  {
    id: 'failures',
    label: 'failures drawn (a link repaired within the run counts once)',
    unit: 'failures',
    paper: null,
    digits: 0,
  },
] as const;

export async function runFig9(options: ExperimentOptions): Promise<string> {
  const opts = withQuick(options, QUICK_FIG9);
  const { file, out, say } = opts;
  const set = opts.set ?? [];
  const model = opts.quick ? QUICK_SHUFFLE : SHUFFLE;
  mkdirSync(out, { recursive: true });
  const runs: SeedRun[] = [];
  const done = await reproduce(opts, {
    experiment: 'f10-fig9',
    scale: `${scaleOf(file, set)}, TCP shuffles of ${formatBytes(model.bytes)} per job (ours), F10 and PortLand`,
    paperScale:
      '1,728 hosts (24-port switches, 3-level trees) at 10 Gbit/s; the shuffles of a 3,600-node production trace, jobs under 200 mappers and reducers',
    figures: FIG9_FIGURES,
    runSeed: async (seed, seedDir) => {
      const run = await fig9Seed(opts, model, seed, seedDir);
      if (run === null) return null;
      runs.push(run);
      return fig9Values(run);
    },
  });
  if (done === null) return '';
  const jobs = runs.flatMap((r) => r.jobs);
  const md = fig9Table(file, model, runs, opts.quick === true);
  writeTable(out, 'fig9', md, {
    scenario: file,
    seeds: runs.map((r) => r.seed),
    model,
    all: spread(jobs),
    bySize: SIZE_BUCKETS.map(([from, to]) => ({ from, to, ...spread(inBucket(jobs, from, to)) })),
    runs: runs.map((r) => ({
      seed: r.seed,
      faults: r.faults,
      local: r.local,
      dirs: Object.fromEntries(Object.entries(r.dirs).map(([v, d]) => [v, relative(out, d)])),
    })),
    jobs,
  });
  const plotted = await writePlots(out, fig9Plots(jobs));
  for (const p of plotted.problems) say(`warning: ${p}`);
  return `${done.table}\n\n${md}`;
}

/**
 * One seed's jobs (drawn from `new Rng(seed · 7907 + 29)`, a stream of their own beside the failure
 * trace's) as a `list` workload, run on F10 and on PortLand with the seed's failure trace; null when
 * aborted.
 */
async function fig9Seed(
  opts: ExperimentOptions & { out: string },
  model: ShuffleModel,
  seed: number,
  seedDir: string,
): Promise<SeedRun | null> {
  const { file, say } = opts;
  const set = [...(opts.set ?? []), `seed=${seed}`];
  const sc = resolveScenario(loadScenarioFile(file, set));
  const hosts = sc.topology.nodes.filter((n) => n.role === 'host').map((n) => n.name);
  const windowNs = sc.workload.durationNs;
  const { jobs, flows, local } = drawJobs(hosts, windowNs, model, new Rng(seed * 7907 + 29));
  if (jobs.length === 0)
    throw new RuntimeError(
      `${file}: no job arrives in workload.duration (${formatNs(windowNs)}) at one every ${formatNs(model.meanGapNs)} on average; lengthen workload.duration`,
    );
  const workload = `workload=${JSON.stringify({ pattern: 'list', duration: windowNs, flows })}`;
  const jcts: Record<string, Array<number | null>> = {};
  const dirs: Record<string, string> = {};
  let faults = 0;
  for (const t of traces(file, [...set, workload], [F10, PORTLAND], seed)) {
    if (opts.signal?.aborted) return null;
    const dir = join(seedDir, t.v.name);
    mkdirSync(dir, { recursive: true });
    const scenario = join(dir, 'scenario.yaml');
    faults = new Set(t.entries.map((e) => e.fault)).size;
    writeFileSync(
      scenario,
      timelineScenario(
        t.p,
        t.s,
        t.entries,
        ` dcemu experiment f10-fig9: ${t.v.name}, seed ${seed} of ${file}: ${jobs.length} MapReduce shuffles (${flows.length} flows) and ${faults} failures drawn from its chaos: section`,
      ),
    );
    say(
      `f10-fig9: seed ${seed}, ${t.v.name}: ${jobs.length} jobs, ${flows.length} flows, ${faults} failures`,
    );
    if ((await runOne(scenario, dir, opts.signal)) === null) return null;
    jcts[t.v.name] = completionTimes(dir, jobs, flows);
    dirs[t.v.name] = dir;
  }
  const results = jobs.map((j, i): JobResult => {
    const f10 = jcts[F10.name][i];
    const portland = jcts[PORTLAND.name][i];
    return {
      seed,
      job: i + 1,
      size: j.mappers.length + j.reducers.length,
      mappers: j.mappers.length,
      reducers: j.reducers.length,
      startNs: j.startNs,
      flows: j.flows,
      f10,
      portland,
      speedup: f10 !== null && portland !== null && f10 > 0 ? portland / f10 : null,
    };
  });
  return { seed, faults, jobs: results, local, dirs };
}

/**
 * The shuffles of one seed: Poisson arrivals over [0, `windowNs`), each job M and R uniform in
 * 1..max, mappers on M distinct random hosts and reducers on R distinct random hosts (a host may hold
 * a mapper and a reducer, as a server runs map and reduce tasks alike: that pair's share stays on the
 * host, no flow), `model.bytes` split evenly over the M·R pairs. A job left with no flow (one mapper
 * and one reducer on one host) is counted in `local` and left out. The flows are listed job by job in
 * start order, so flows.csv's id of list entry i is i + 1 (host/workload.ts numbers a list's flows by
 * start, ties in list order).
 */
function drawJobs(
  hosts: readonly string[],
  windowNs: number,
  model: ShuffleModel,
  rng: Rng,
): { jobs: Job[]; flows: ListedFlow[]; local: number } {
  const jobs: Job[] = [];
  const flows: ListedFlow[] = [];
  let local = 0;
  for (let t = rng.exp(model.meanGapNs); t < windowNs; t += rng.exp(model.meanGapNs)) {
    const start = Math.round(t);
    const mappers = pickDistinct(rng, hosts, 1 + rng.int(Math.min(model.maxMappers, hosts.length)));
    const reducers = pickDistinct(rng, hosts, 1 + rng.int(Math.min(model.maxReducers, hosts.length)));
    const size = Math.max(1, Math.floor(model.bytes / (mappers.length * reducers.length)));
    const first = flows.length;
    for (const src of mappers)
      for (const dst of reducers) if (src !== dst) flows.push({ src, dst, size, start });
    if (flows.length === first) local++;
    else jobs.push({ startNs: start, mappers, reducers, first, flows: flows.length - first });
  }
  return { jobs, flows, local };
}

/** `n` distinct elements of `xs` in random order (a partial Fisher–Yates shuffle) */
function pickDistinct<T>(rng: Rng, xs: readonly T[], n: number): T[] {
  const a = [...xs];
  for (let i = 0; i < n; i++) {
    const j = i + rng.int(a.length - i);
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a.slice(0, n);
}

/**
 * Each job's completion time in the run in `dir` (its last flow's finish less the job's start), or
 * null when a flow of it did not finish (never started, or not done by the end of the run). Every
 * flow the run started must be a listed one: the same hosts, started within 1 µs of its listed start.
 */
function completionTimes(
  dir: string,
  jobs: readonly Job[],
  flows: readonly ListedFlow[],
): Array<number | null> {
  // the run's started flows by their hosts, in start order (flowRows: flows.csv, then the unstarted)
  const byHosts = new Map<string, FlowRow[]>();
  const rows = flowRows(dir).filter((r) => Number.isFinite(r.startNs));
  for (const r of rows) {
    const same = byHosts.get(`${r.src}>${r.dst}`);
    if (same) same.push(r);
    else byHosts.set(`${r.src}>${r.dst}`, [r]);
  }
  // finish by list index; absent: the flow never started
  const finished = new Map<number, number | null>();
  for (const [i, f] of flows.entries()) {
    const same = byHosts.get(`${f.src}>${f.dst}`) ?? [];
    const k = same.findIndex((r) => Math.abs(r.startNs - f.start) <= 1e3);
    if (k < 0) continue;
    const [r] = same.splice(k, 1);
    finished.set(i, r.completed ? r.startNs + r.fctNs : null);
  }
  if (finished.size !== rows.length)
    throw new RuntimeError(
      `${join(dir, 'flows.csv')}: ${rows.length - finished.size} flows the run started are not the workload's`,
    );
  return jobs.map((j) => {
    let last = 0;
    for (let i = j.first; i < j.first + j.flows; i++) {
      const f = finished.get(i);
      if (f === undefined || f === null) return null;
      last = Math.max(last, f);
    }
    return last - j.startNs;
  });
}

/** the q-quantile of ascending `sorted`, interpolated between ranks (the median of two: their mean) */
function quantileOf(sorted: readonly number[], q: number): number | null {
  if (sorted.length === 0) return null;
  const h = (sorted.length - 1) * q;
  const lo = Math.floor(h);
  return sorted[lo] + (h - lo) * ((sorted[Math.min(lo + 1, sorted.length - 1)] ?? 0) - sorted[lo]);
}

/** The jobs' speedups and completions: how many finished on each scheme, the speedup's spread. */
function spread(jobs: readonly JobResult[]) {
  const s = jobs
    .map((j) => j.speedup)
    .filter((x): x is number => x !== null)
    .sort((a, b) => a - b);
  return {
    jobs: jobs.length,
    f10Finished: jobs.filter((j) => j.f10 !== null).length,
    portlandFinished: jobs.filter((j) => j.portland !== null).length,
    withSpeedup: s.length,
    p10: quantileOf(s, 0.1),
    median: quantileOf(s, 0.5),
    p90: quantileOf(s, 0.9),
    mean: s.length === 0 ? null : s.reduce((a, b) => a + b, 0) / s.length,
    fasterPct: s.length === 0 ? null : (100 * s.filter((x) => x > 1).length) / s.length,
  };
}

/** the jobs of `from` to `to` mappers and reducers in total */
const inBucket = (jobs: readonly JobResult[], from: number, to: number): JobResult[] =>
  jobs.filter((j) => j.size >= from && j.size <= to);

/** One seed's figures (a figure the seed cannot give, no job with a speedup, is left out). */
function fig9Values(run: SeedRun): Record<string, number> {
  const all = spread(run.jobs);
  const values: Record<string, number> = {
    jobs: all.jobs,
    f10_finished: all.f10Finished,
    portland_finished: all.portlandFinished,
    failures: run.faults,
  };
  const put = (id: string, x: number | null) => {
    if (x !== null) values[id] = x;
  };
  put('speedup_median', all.median);
  put('speedup_p10', all.p10);
  put('speedup_p90', all.p90);
  put('speedup_mean', all.mean);
  put('faster_pct', all.fasterPct);
  put('speedup_median_small', spread(inBucket(run.jobs, 2, 8)).median);
  put('speedup_median_large', spread(inBucket(run.jobs, 9, Number.POSITIVE_INFINITY)).median);
  return values;
}

/** fig9.md: the speedup's spread over all jobs and by job size, then each seed's. */
function fig9Table(file: string, model: ShuffleModel, runs: readonly SeedRun[], quick: boolean): string {
  const jobs = runs.flatMap((r) => r.jobs);
  const x = (v: number | null) => (v === null ? '-' : `${fmt(v, 2)}×`);
  const row = (name: string, s: ReturnType<typeof spread>) =>
    `| ${name} | ${s.jobs} | ${s.f10Finished} | ${s.portlandFinished} | ${s.withSpeedup} | ${x(s.p10)} | ${x(s.median)} | ${x(s.p90)} | ${x(s.mean)} | ${s.fasterPct === null ? '-' : `${s.fasterPct.toFixed(0)}%`} |`;
  const local = runs.reduce((a, r) => a + r.local, 0);
  const lines = [
    "# F10 figure 9: MapReduce shuffle speedup, a job's completion time on PortLand over F10's",
    '',
    `${file}${quick ? ' (quick)' : ''}, seeds ${runs.map((r) => r.seed).join(', ')}; per seed the same jobs and failure trace on both schemes, the jobs of all seeds pooled.`,
    `Jobs (ours; the paper's come from a production trace): one every ${formatNs(model.meanGapNs)} on average (Poisson), 1..${model.maxMappers} mappers and 1..${model.maxReducers} reducers on random hosts, ${formatBytes(model.bytes)} shuffled per job, one TCP flow per mapper→reducer pair${local > 0 ? `; ${local} jobs with no flow across the network left out` : ''}.`,
    'A job completes when its last flow does; one with a flow unfinished at the end of the run has no speedup.',
    '',
    '| jobs (mappers + reducers) | jobs | finished on F10 | finished on PortLand | with a speedup | p10 | median | p90 | mean | faster on F10 |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    row('all', spread(jobs)),
    ...SIZE_BUCKETS.map(([from, to]) =>
      row(Number.isFinite(to) ? `${from}–${to}` : `${from}+`, spread(inBucket(jobs, from, to))),
    ),
    '',
    `The paper: "F10 is faster than PortLand with a median speedup of about 1.3×" and "gains are larger when more nodes participate and compete for bandwidth" (§7.6).`,
    '',
    '| seed | failures | jobs | finished on F10 / PortLand | median speedup |',
    '| --- | --- | --- | --- | --- |',
    ...runs.map((r) => {
      const s = spread(r.jobs);
      return `| ${r.seed} | ${r.faults} | ${s.jobs} | ${s.f10Finished} / ${s.portlandFinished} | ${x(s.median)} |`;
    }),
  ];
  return `${lines.join('\n')}\n`;
}

/**
 * Figure 9a, the CDF of the jobs' speedup, and 9b, speedup against job size; speedups on log axes (a
 * job twice as fast on either scheme as far from 1).
 */
function fig9Plots(jobs: readonly JobResult[]): Plot[] {
  const done = jobs.filter((j): j is JobResult & { speedup: number } => j.speedup !== null);
  return [
    {
      name: 'fig9a-speedup-cdf',
      spec: {
        ...frame(
          "MapReduce shuffle speedup, PortLand's completion time over F10's (F10 figure 9a)",
          560,
          320,
        ),
        data: { values: cdf(done.map((j) => j.speedup)).map((pt) => ({ speedup: pt.x, p: pt.p })) },
        mark: { type: 'line', interpolate: 'step-after' },
        encoding: {
          x: {
            field: 'speedup',
            type: 'quantitative',
            title: 'speedup of F10 over PortLand (×, log scale)',
            scale: { type: 'log' },
          },
          y: { field: 'p', type: 'quantitative', title: 'CDF of jobs', scale: { domain: [0, 1] } },
        },
      },
    },
    {
      name: 'fig9b-speedup-by-job-size',
      spec: {
        ...frame('Speedup against job size (F10 figure 9b)', 560, 320),
        data: { values: done.map((j) => ({ size: j.size, speedup: j.speedup, seed: String(j.seed) })) },
        mark: { type: 'point', filled: true, opacity: 0.7 },
        encoding: {
          x: { field: 'size', type: 'quantitative', title: 'mappers + reducers' },
          y: {
            field: 'speedup',
            type: 'quantitative',
            title: 'speedup of F10 over PortLand (×, log scale)',
            scale: { type: 'log' },
          },
          color: { field: 'seed', type: 'nominal' },
        },
      },
    },
  ];
}

/** bytes in the units the scenario files use (decimal: 4MB, 256KB) */
function formatBytes(b: number): string {
  if (b >= 1e6 && b % 1e5 === 0) return `${b / 1e6}MB`;
  if (b >= 1e3 && b % 1e2 === 0) return `${b / 1e3}KB`;
  return `${b}B`;
}
