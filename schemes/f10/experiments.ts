/**
 * F10's evaluation (F10 §7.4) as a command: `dcemu experiment f10-fig8` (`f10-fig6` is in
 * schemes/f10/experiments/fig6.ts, `f10-fig9` in schemes/f10/experiments/fig9.ts).
 *
 * fig8: for each seed, one workload and one failure trace drawn from the scenario's `chaos:` model
 * (log-normal times between failures and to repair, F10 §7.2 after Gill et al.) is run on F10 (an AB
 * FatTree, every mechanism), on F10 without congestion pushback, and on the PortLand-style baseline
 * (a standard FatTree); and, as the control, F10 and the baseline on the same workload without any
 * failure. The traces are the same: drawn once on the AB tree, a switch fault keeps its
 * name and a link fault becomes the link on the same port of the same upper switch in the other tree
 * (the trees differ only in which lower switch a core's port reaches). The headline is the loss the
 * failures add: each scheme's congestion drops with failures minus those of its control, PortLand's
 * over F10's, pooled over the seeds (the paper's "in total"). The per-interval congestion loss rate
 * (drops / frames offered, F10 §7.4's 500 µs intervals) of every run is pooled per variant into a
 * CDF plot and a table. (Links named in the scenario's own timeline are not carried over.)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { type ExperimentOptions, formatNs, percent } from '../../sdk/index.js';
import {
  cdf,
  frame,
  loadScenarioFile,
  type Plot,
  reproduce,
  resolveScenario,
  scaleOf,
  timelineScenario,
  withQuick,
  writePlots,
  writeTable,
} from '../../sdk/study.js';
import type { F10Settings } from './definition/settings.js';
import { type F10Summary, intervalRates, rateStats } from './definition/summary.js';
import { F10, PORTLAND, runOne, traces, type Variant } from './experiments/trace.js';

/** the headline: both schemes on the same workload and failure trace */
const FIG8_MAIN: Variant[] = [F10, PORTLAND];
/**
 * what full runs add, each measured against one of the main two: the controls (the same workload
 * without any failure) and the ablations (`--variants` picks among these)
 */
export const FIG8_OPTIONAL: Variant[] = [
  { ...F10, name: 'f10-no-failures', clean: true },
  { ...PORTLAND, name: 'portland-no-failures', clean: true },
  {
    name: 'f10-no-congestion-pushback',
    set: ['scheme.kind=f10', 'topology.variant=ab', 'scheme.congestion=false'],
  },
  {
    name: 'portland-local-failover',
    set: ['scheme.kind=portland', 'topology.variant=standard', 'scheme.localFailover=true'],
  },
];

/** the variants a run makes: the main two, and the optional ones asked for (all by default) */
function fig8Variants(quick: boolean, chosen?: readonly string[]): Variant[] {
  if (quick) return [...FIG8_MAIN, ...FIG8_OPTIONAL.filter((v) => v.clean)];
  if (chosen === undefined) return [...FIG8_MAIN, ...FIG8_OPTIONAL];
  return [...FIG8_MAIN, ...FIG8_OPTIONAL.filter((v) => chosen.includes(v.name))];
}

/** an interval whose congestion loss rate is below this is "negligible" (F10 §7.4 states no bound) */
const NEGLIGIBLE = 0.01;

/**
 * `--quick`: the example shrunk to 1 ms (what npm test runs): ON/OFF sources on 100 KB buffers, 4 µs
 * links (fewer sync messages per µs: the run's cost), every control-plane time at 1/5000 of the
 * paper's (epoch 200 µs, PortLand's reaction 13 µs, congestion window 100 µs), failures drawn in
 * [150, 300] µs, one at a time, that stay; the two schemes and their failure-free controls.
 */
const QUICK_FIG8 = [
  'links={host: {delay: 4us}, fabric: {delay: 4us}}',
  'ports={buffer: 100KB}',
  'scheme.timeScale=0.0002',
  'scheme.lossInterval=200us',
  'transport={kind: udp}',
  'workload={pattern: on-off, load: 0.5, duration: 900us}',
  'run.drain=100us',
  'chaos={window: {from: 150us, to: 300us}, concurrent: 1, failures: [{kind: link-down, targets: fabric, between: "lognormal(600us, 1)", repair: "lognormal(100ms, 1)"}, {kind: kill, targets: [agg*, core*], between: "lognormal(5ms, 1)"}]}',
];

interface RunResult {
  variant: string;
  seed: number;
  dir: string;
  faults: number;
  f10: F10Summary;
  rates: number[];
}

/** the share (%) of `rates` that are 0, or null without intervals */
const zeroShare = (rates: readonly number[]): number | null =>
  rates.length === 0 ? null : (100 * rates.filter((r) => r === 0).length) / rates.length;

/** the congestion drops of runs, and the data frames their hosts offered */
const totalsOf = (runs: readonly RunResult[]): { drops: number; offered: number } => ({
  drops: runs.reduce((s, r) => s + r.f10.congestionLoss.total, 0),
  offered: runs.reduce((s, r) => s + r.f10.intervals.offered.reduce((a, b) => a + b, 0), 0),
});

/** the loss rate of totals: frames dropped over frames offered */
const rateOf = (t: { drops: number; offered: number }): number => t.drops / Math.max(1, t.offered);

/** the loss rate of a run (or runs) */
const lossOf = (runs: readonly RunResult[]): number => rateOf(totalsOf(runs));

/** F10 §7.4's figure 8 claims, per seed (mean ± 95% interval over the seeds in reproduction.json) */
const FIG8_FIGURES = [
  {
    id: 'total_ratio',
    label: "PortLand's congestion loss over F10's with the failures, in total (the paper's quantity)",
    unit: '×',
    paper: 7.6,
    source: '§7.4 ("In total, PortLand has 7.6× the congestion loss of F10 for UDP traffic")',
    digits: 1,
    pooled: { over: 'portland_frames', under: 'f10_frames' },
  },
  {
    id: 'excess_ratio',
    label:
      "beside it: the loss the failures add, PortLand's over F10's (with the failures minus the control)",
    unit: '×',
    paper: null,
    digits: 1,
    pooled: { over: 'portland_excess_frames', under: 'f10_excess_frames' },
  },
  {
    id: 'control_ratio',
    label: "beside it: without any failure (the controls), PortLand's over F10's",
    unit: '×',
    paper: null,
    digits: 1,
    pooled: { over: 'portland_control_frames', under: 'f10_control_frames' },
  },
  {
    id: 'f10_frames',
    label: 'F10: congestion drops with the failures',
    unit: 'frames',
    paper: null,
    digits: 0,
  },
  {
    id: 'portland_frames',
    label: 'PortLand: congestion drops with the failures',
    unit: 'frames',
    paper: null,
    digits: 0,
  },
  { id: 'f10_loss_pct', label: "F10's congestion loss with the failures", unit: '%', paper: null, digits: 3 },
  {
    id: 'portland_loss_pct',
    label: "PortLand's congestion loss with the failures",
    unit: '%',
    paper: null,
    digits: 3,
  },
  {
    id: 'f10_control_frames',
    label: 'F10: congestion drops without failures (control)',
    unit: 'frames',
    paper: null,
    digits: 0,
  },
  {
    id: 'portland_control_frames',
    label: 'PortLand: congestion drops without failures (control)',
    unit: 'frames',
    paper: null,
    digits: 0,
  },
  {
    id: 'f10_negligible_pct',
    label: `F10: intervals with congestion loss below ${100 * NEGLIGIBLE}% ("negligible": the paper states no bound)`,
    unit: '%',
    paper: '≈ 75',
    source: '§7.4 ("F10 sees negligible loss for 3/4 of time periods")',
    digits: 0,
  },
  {
    id: 'f10_clean_pct',
    label: 'F10: intervals with no congestion loss at all',
    unit: '%',
    paper: null,
    digits: 0,
  },
  {
    id: 'portland_lossy_pct',
    label: 'PortLand: intervals with congestion loss',
    unit: '%',
    paper: 'nearly all',
    source: '§7.4 ("PortLand nearly always has congestion")',
    digits: 0,
  },
  {
    id: 'failures',
    label: 'failures drawn',
    unit: 'failures',
    paper: null,
    digits: 0,
  },
  {
    id: 'nopushback_over_f10',
    label: 'ablation: F10 without congestion pushback, its loss with the failures over F10’s',
    unit: '×',
    paper: null,
    digits: 2,
  },
  {
    id: 'local_failover_over_portland',
    label:
      'ablation: PortLand whose switches also prune a dead uplink at once, its loss with the failures over PortLand’s',
    unit: '×',
    paper: null,
    digits: 2,
  },
] as const;

/** the control-plane times of the scenario's F10 runs, as the reproduction's scale says them */
function timingOf(file: string, set: readonly string[]): string {
  const s = resolveScenario(loadScenarioFile(file, [...set, 'scheme.kind=f10'])).scheme as F10Settings;
  const p = resolveScenario(loadScenarioFile(file, [...set, 'scheme.kind=portland'])).scheme as F10Settings;
  return `control-plane times at ${s.timeScale} of the paper's (F10's epoch ${formatNs(s.epochNs)}, congestion window ${s.congestion ? formatNs(s.congestion.windowNs) : '-'}; PortLand's reaction ${formatNs(p.reactionDelayNs)})`;
}

export async function runFig8(options: ExperimentOptions): Promise<string> {
  const opts = withQuick(options, QUICK_FIG8);
  const { file, out, say } = opts;
  const set = opts.set ?? [];
  const variants = fig8Variants(opts.quick === true, opts.variants);
  mkdirSync(out, { recursive: true });
  const results: RunResult[] = [];
  const timing = timingOf(file, set);
  const done = await reproduce(opts, {
    experiment: 'f10-fig8',
    scale: `${scaleOf(file, set)}, ${variants.length} variants; ${timing}`,
    paperScale: '1,728 hosts (24-port switches, 3-level trees) at 10 Gbit/s',
    figures: FIG8_FIGURES,
    runSeed: async (seed, seedDir) => {
      const runs = await fig8Seed(opts, variants, seed, seedDir);
      if (runs === null) return null;
      results.push(...runs);
      return fig8Values(runs);
    },
  });
  if (done === null) return '';
  const { report, byVariant } = fig8Report(file, out, variants, results, timing);
  const { md, interval } = fig8Table(report, byVariant, variants, results, file, opts.quick === true);
  writeTable(out, 'fig8', md, report);
  const plotted = await writePlots(out, [fig8Plot(byVariant, variants, interval)]);
  for (const p of plotted.problems) say(`warning: ${p}`);
  return `${done.table}\n\n${md}`;
}

/** One seed's runs, every variant on the same workload and failure trace; null when aborted. */
async function fig8Seed(
  opts: ExperimentOptions & { out: string },
  variants: Variant[],
  seed: number,
  seedDir: string,
): Promise<RunResult[] | null> {
  const { file, say } = opts;
  const set = opts.set ?? [];
  const runs: RunResult[] = [];
  // the seed draws the workload as well as the failures: seeds differ in both
  for (const t of traces(file, [...set, `seed=${seed}`], variants, seed)) {
    if (opts.signal?.aborted) return null;
    const dir = join(seedDir, t.v.name);
    mkdirSync(dir, { recursive: true });
    const scenario = join(dir, 'scenario.yaml');
    const faults = new Set(t.entries.map((e) => e.fault)).size;
    writeFileSync(
      scenario,
      timelineScenario(
        t.p,
        t.s,
        t.entries,
        ` dcemu experiment f10-fig8: ${t.v.name}, seed ${seed} of ${file}: ${faults} failures drawn from its chaos: section`,
      ),
    );
    say(`f10-fig8: seed ${seed}, ${t.v.name}: ${faults} failures`);
    const f10 = await runOne(scenario, dir, opts.signal);
    if (f10 === null) return null;
    const rates = intervalRates(f10.intervals.congestionDrops, f10.intervals.offered);
    runs.push({ variant: t.v.name, seed, dir, faults, f10, rates });
  }
  return runs;
}

/** One seed's figures: the variants' congestion loss, their ratios in total, with and without failures. */
function fig8Values(runs: RunResult[]): Record<string, number> {
  const by = (name: string) => runs.filter((r) => r.variant === name);
  const has = (name: string) => by(name).length > 0;
  const drops = (name: string) => totalsOf(by(name)).drops;
  const f10 = lossOf(by('f10'));
  const values: Record<string, number> = {
    f10_frames: drops('f10'),
    portland_frames: drops('portland'),
    f10_loss_pct: 100 * f10,
    portland_loss_pct: 100 * lossOf(by('portland')),
    failures: by('f10')[0]?.faults ?? 0,
  };
  // a seed where F10 lost nothing has no ratio of its own (it still pools)
  if (drops('f10') > 0) values.total_ratio = drops('portland') / drops('f10');
  if (has('f10-no-failures') && has('portland-no-failures')) {
    const control = { f10: drops('f10-no-failures'), portland: drops('portland-no-failures') };
    const excess = { f10: drops('f10') - control.f10, portland: drops('portland') - control.portland };
    Object.assign(values, {
      f10_control_frames: control.f10,
      portland_control_frames: control.portland,
      f10_excess_frames: excess.f10,
      portland_excess_frames: excess.portland,
    });
    if (excess.f10 > 0) values.excess_ratio = excess.portland / excess.f10;
    if (control.f10 > 0) values.control_ratio = control.portland / control.f10;
  }
  if (has('f10-no-congestion-pushback'))
    values.nopushback_over_f10 = lossOf(by('f10-no-congestion-pushback')) / f10;
  if (has('portland-local-failover'))
    values.local_failover_over_portland = lossOf(by('portland-local-failover')) / lossOf(by('portland'));
  const rates = by('f10')[0]?.rates ?? [];
  if (rates.length > 0) {
    values.f10_clean_pct = zeroShare(rates)!;
    values.f10_negligible_pct = (100 * rates.filter((r) => r < NEGLIGIBLE).length) / rates.length;
  }
  const lossy = zeroShare(by('portland')[0]?.rates ?? []);
  if (lossy !== null) values.portland_lossy_pct = 100 - lossy;
  return values;
}

/** Every variant's pooled intervals and totals, and the report fig8.json holds. */
function fig8Report(file: string, out: string, variants: Variant[], results: RunResult[], timing: string) {
  const byVariant = variants.map((v) => {
    const runs = results.filter((r) => r.variant === v.name);
    const rates = runs.flatMap((r) => r.rates);
    const negligible = rates.filter((r) => r < NEGLIGIBLE).length;
    return { variant: v.name, runs: runs.length, ...totalsOf(runs), ...rateStats(rates), negligible, rates };
  });
  const get = (name: string) => byVariant.find((v) => v.variant === name);
  const ratio = (under: number | undefined, over: number | undefined): number | null =>
    under === undefined || over === undefined
      ? null
      : under === 0
        ? over === 0
          ? 1
          : Number.POSITIVE_INFINITY
        : over / under;
  const [f10, portland] = [get('f10')!, get('portland')!];
  const [f10Clean, portlandClean] = [get('f10-no-failures'), get('portland-no-failures')];
  const report = {
    scenario: file,
    timing,
    negligible: NEGLIGIBLE,
    seeds: [...new Set(results.map((r) => r.seed))],
    intervalNs: results[0]?.f10.intervals.intervalNs ?? null,
    variants: byVariant.map(({ rates: _r, ...v }) => v),
    portlandOverF10: {
      // the drops with the failures, pooled: the paper's "in total", the headline
      total: ratio(f10.drops, portland.drops),
      mean: ratio(f10.mean ?? undefined, portland.mean ?? undefined),
      excess:
        f10Clean && portlandClean
          ? ratio(f10.drops - f10Clean.drops, portland.drops - portlandClean.drops)
          : null,
      control: f10Clean && portlandClean ? ratio(f10Clean.drops, portlandClean.drops) : null,
    },
    runs: results.map((r) => ({
      variant: r.variant,
      seed: r.seed,
      faults: r.faults,
      dir: relative(out, r.dir),
      timing: r.f10.timing,
      congestionLoss: r.f10.congestionLoss,
      congestionPushback: r.f10.congestionPushback,
      lost: r.f10.lost,
    })),
  };
  return { report, byVariant };
}

type Fig8 = ReturnType<typeof fig8Report>;

/** fig8.md: the variants' loss per interval, the headline ratio, and each seed's. */
function fig8Table(
  report: Fig8['report'],
  byVariant: Fig8['byVariant'],
  variants: Variant[],
  results: RunResult[],
  file: string,
  quick: boolean,
): { md: string; interval: string } {
  const interval = report.intervalNs === null ? '-' : formatNs(report.intervalNs);
  const times = (x: number | null) =>
    x === null ? '-' : Number.isFinite(x) ? `${x.toFixed(1)}×` : 'F10 lost nothing';
  const share = (n: number, of: number) => (of > 0 ? `${((100 * n) / of).toFixed(0)}%` : '-');
  const r = report.portlandOverF10;
  const lines = [
    `# F10 figure 8: congestion loss per ${interval} interval`,
    '',
    `${file}${quick ? ' (quick)' : ''}, seeds ${report.seeds.join(', ')}; the same workload and failure trace per seed on every variant; ${report.timing}. Intervals of all seeds pooled.`,
    'Loss rate of an interval: data frames dropped on full buffers / data frames hosts offered in it.',
    '',
    `| variant | runs | intervals | with no loss | below ${100 * NEGLIGIBLE}% | p50 | p75 | p90 | p99 | mean | frames dropped / offered |`,
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...byVariant.map(
      (v) =>
        `| ${v.variant} | ${v.runs} | ${v.intervals} | ${share(v.zero, v.intervals)} | ${share(v.negligible, v.intervals)} | ${percent(v.p50, 3)} | ${percent(v.p75, 3)} | ${percent(v.p90, 3)} | ${percent(v.p99, 3)} | ${percent(v.mean, 3)} | ${v.drops} / ${v.offered} |`,
    ),
    '',
    `In total, PortLand's congestion loss with the failures is ${times(r.total)} F10's (the paper: "In total, PortLand has 7.6× the congestion loss of F10 for UDP traffic", §7.4); without any failure ${times(r.control)}; the loss the failures add ${times(r.excess)}; mean per interval ${times(r.mean)}.`,
    '',
    '| seed | failures | ' + variants.map((v) => `${v.name} mean / p50`).join(' | ') + ' |',
    `| --- | --- | ${variants.map(() => '---').join(' | ')} |`,
    ...report.seeds.map((seed) => {
      const rs = variants.map((v) => results.find((x) => x.seed === seed && x.variant === v.name));
      return `| ${seed} | ${rs[0]?.faults ?? '-'} | ${rs.map((x) => (x ? `${percent(x.f10.congestionLoss.mean, 3)} / ${percent(x.f10.congestionLoss.p50, 3)}` : '-')).join(' | ')} |`;
    }),
  ];
  return { md: `${lines.join('\n')}\n`, interval };
}

/** The CDF of every variant's per-interval congestion loss (the paper's figure 8). */
function fig8Plot(byVariant: Fig8['byVariant'], variants: Variant[], interval: string): Plot {
  const values = byVariant.flatMap((v) =>
    cdf(v.rates.map((r) => r * 100)).map((pt) => ({ variant: v.variant, loss: pt.x, p: pt.p })),
  );
  return {
    name: 'fig8-congestion-loss-cdf',
    spec: {
      ...frame(`Congestion loss per ${interval} interval (F10 figure 8)`, 560, 320),
      data: { values },
      mark: { type: 'line', interpolate: 'step-after' },
      encoding: {
        x: { field: 'loss', type: 'quantitative', title: 'congestion loss rate in the interval (%)' },
        y: { field: 'p', type: 'quantitative', title: 'CDF of intervals', scale: { domain: [0, 1] } },
        color: { field: 'variant', type: 'nominal', sort: variants.map((v) => v.name) },
      },
    },
  };
}
