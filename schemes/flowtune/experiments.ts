/**
 * Flowtune's evaluation (TR'16 §6.3, §6.5) as reproductions (orchestrator/studies/reproduction.ts), each seed
 * against DCTCP on the same trace (the scenario with `scheme.kind=ecmp`: the baseline transport, DCTCP
 * in the examples, on plain ECMP); the headline figures over the seeds, then the first seed's table:
 *
 * - `flowtune-convergence` (§6.3, figure 4): per start and stop of a sender, the senders 10 ms apart
 *   as the paper's (1 ms, the example's, beside it and at `--quick`), the time until every flow is
 *   within 10% of its fair share: Flowtune's from the rates the hosts applied, and both schemes' from
 *   the throughput per `run.interval` (summary.fairness.convergence);
 * - `flowtune-websearch` (§6.5, figure 8): p99 FCT by flowlet size and the p99 queue, for Flowtune as
 *   the scenario has it (its timeline kills the allocator), Flowtune with the allocator left alive
 *   (`timeline=[]`), and DCTCP; the lapses of the first run. The headline ratios are §6.5's: p99s of
 *   FCTs normalized by the empty network's, per the paper's size ranges (`p99ByRange`), raw beside;
 *   and figure 9's p99 queueing delay on 2-hop and 4-hop paths (schemes/flowtune/definition/queueing.ts);
 * - `flowtune-loads` (§6.5, figures 8 and 9 across their loads 0.2-0.8): the same against DCTCP and
 *   pFabric, per range and load, and the queueing delay on paths (the paper's 12× is at 0.8).
 */
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ExperimentOptions, formatNs, quantile, segmentCount } from '../../sdk/index.js';
import {
  loadScenarioFile,
  reproduceVariants,
  resolveScenario,
  type Summary,
  withQuick,
  writeTable,
} from '../../sdk/study.js';
import { HOPS, over, type PathP99, pathP99, pathTable } from './definition/queueing.js';

const us = (ns: number | null | undefined) => (ns === null || ns === undefined ? 'never' : formatNs(ns));

function write(opts: ExperimentOptions, name: string, table: string, data: unknown): string {
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
const rangesOf = (seedDir: string, variant: string) =>
  p99ByRange(readFileSync(join(seedDir, variant, 'flows.csv'), 'utf8'));

/**
 * `a`'s normalized p99 over `b`'s in one range, where both sides completed every flowlet of it (a p99
 * over the completed ones only would leave out the slowest)
 */
function normRatio(
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
const normCell = (x: RangeP99 | undefined) =>
  x === undefined ? '-' : x.completed < x.flows ? `${x.completed}/${x.flows}` : x.p99Norm.toFixed(2);
const ratioCell = (x: number | undefined) => (x === undefined ? '-' : `${x.toFixed(2)}×`);

/** the paper's value for a normalized ratio in a range, against DCTCP or pFabric (§6.5's text) */
function paperRatio(against: 'dctcp' | 'pfabric', range: string): string | null {
  if (against === 'dctcp') return range === '1' ? '8.6–10.9' : range.endsWith('-10') ? '2.1–2.9' : null;
  return range === '1' ? '1.7–2.4' : range === '>1000' ? 'up to 2.4' : null;
}

/**
 * Figure 9's figures (§6.5) beside Flowtune's and DCTCP's runs: p99 queueing delay on 2-hop and 4-hop
 * paths (schemes/flowtune/definition/queueing.ts), at the run's sampling and at the paper's 1 ms, and their
 * ratio; `id`s end in `suffix`, labels in `where`; the paper's 12× only at `paperLoad` (its 0.8).
 */
function queueingFigures(suffix: string, where: string, paperLoad: boolean) {
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
function queueingValues(ft: PathP99, dc: PathP99, suffix: string): Record<string, number | undefined> {
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
const measured = (v: Record<string, number | undefined>) =>
  Object.fromEntries(Object.entries(v).filter(([, x]) => x !== undefined)) as Record<string, number>;

/**
 * §6.3's spacing: "every 10 ms one of the senders would start a flow to the receiver. Thereafter,
 * every 10 ms one of the senders stops"
 */
const PAPER_SPACING = 10;

/**
 * The overrides that stretch the example's list of flows by `factor`: every start and size (so each
 * flow still stops about when its turn comes, at its fair share), the traffic and the drain. The
 * example (examples/flowtune.yaml) spaces its senders 1 ms apart; `factor` 10 gives §6.3's 10 ms.
 */
function stretched(opts: ExperimentOptions, factor: number): Record<string, string> {
  const sc = resolveScenario(loadScenarioFile(opts.file, opts.set ?? []));
  const name = (id: number) => sc.topology.nodes.find((n) => n.id === id)!.name;
  const flows = (sc.workload.flows ?? []).map(
    (f) => `{src: ${name(f.src)}, dst: ${name(f.dst)}, size: ${f.size * factor}, start: ${f.start * factor}}`,
  );
  return {
    'workload.flows': `[${flows.join(', ')}]`,
    'workload.duration': String(sc.workload.durationNs * factor),
    'run.drain': String(sc.run.drainNs * factor),
  };
}

/**
 * `flowtune-convergence`: the example's five senders spaced as §6.3 has them, 10 ms apart (the
 * example's 1 ms times 10, sizes with it), Flowtune against DCTCP, and the ablation with control at
 * strict priority; the example as it is (1 ms apart) beside them. `--quick` runs the example as it is
 * only, its senders 1 ms apart, and says so.
 */
export async function runConvergence(opts: ExperimentOptions): Promise<string> {
  const apart = opts.quick ? '1 ms apart (--quick; §6.3: 10 ms)' : `${PAPER_SPACING} ms apart, as §6.3`;
  const example = stretched(opts, 1);
  const run = opts.quick
    ? opts
    : {
        ...opts,
        set: [
          ...Object.entries(stretched(opts, PAPER_SPACING)).map(([k, v]) => `${k}=${v}`),
          ...(opts.set ?? []),
        ],
      };
  const fig = (id: string, label: string, unit = 'µs', digits = 1) => ({
    id,
    label,
    unit,
    paper: null,
    digits,
  });
  return reproduceVariants(run, {
    experiment: 'flowtune-convergence',
    paperScale:
      'five senders to one receiver (ns-2), "every 10 ms one of the senders would start a flow to the receiver. Thereafter, every 10 ms one of the senders stops" (§6.3)',
    figures: [
      {
        id: 'rates_max_us',
        label: `slowest convergence to 1/N, Flowtune’s rates, senders ${apart}`,
        unit: 'µs',
        paper: 20,
        source: '§6.3',
        digits: 1,
      },
      fig('rates_p50_us', 'median convergence, Flowtune’s rates'),
      fig('thr_max_us', 'slowest convergence, Flowtune’s throughput (per run.interval)'),
      fig('dctcp_never', `changes DCTCP’s throughput never came within 10% of, senders ${apart}`, 'of 7', 0),
      {
        id: 'dctcp_max_ms',
        label: 'slowest convergence of those it came within 10% of, DCTCP’s throughput',
        unit: 'ms',
        paper: 'several ms',
        source: '§6.3',
        digits: 2,
      },
      fig('priority_max_us', 'slowest convergence to 1/N, rates, control at strict priority (ablation)'),
      ...(opts.quick
        ? []
        : [
            fig(
              'rates_max_us_1ms',
              'slowest convergence to 1/N, Flowtune’s rates, senders 1 ms apart (the example)',
            ),
            fig(
              'dctcp_never_1ms',
              'changes DCTCP’s throughput never came within 10% of, senders 1 ms apart',
              'of 7',
              0,
            ),
          ]),
    ],
    variants: [
      { name: 'flowtune', set: { 'scheme.kind': 'flowtune' } },
      { name: 'dctcp', set: { 'scheme.kind': 'ecmp' } },
      // the ablation: control frames above data (the default shares the data queues, as the paper)
      { name: 'flowtune-priority', set: { 'scheme.kind': 'flowtune', 'scheme.control': 'priority' } },
      // the example's own 1 ms spacing, beside the paper's
      ...(opts.quick
        ? []
        : [
            { name: 'flowtune-1ms', set: { ...example, 'scheme.kind': 'flowtune' } },
            { name: 'dctcp-1ms', set: { ...example, 'scheme.kind': 'ecmp' } },
          ]),
    ],
    table: convergenceTable,
    values: (runs) => {
      const [ft, dc, prio, ft1, dc1] = runs;
      const f = ft.flowtune!.convergence;
      const pmax = prio.flowtune!.convergence.maxNs;
      const thr = (ft.fairness?.convergence ?? []).filter((c) => c.active > 1);
      const never = (s: Summary) =>
        (s.fairness?.convergence ?? []).filter((c) => c.convergedNs === null).length;
      const dcDone = (dc.fairness?.convergence ?? []).flatMap((c) =>
        c.convergedNs === null ? [] : [c.convergedNs],
      );
      return {
        ...(f.maxNs !== null && { rates_max_us: f.maxNs / 1000 }),
        ...(f.p50Ns !== null && { rates_p50_us: f.p50Ns / 1000 }),
        ...(thr.length > 0 &&
          thr.every((c) => c.convergedNs !== null) && {
            thr_max_us: Math.max(...thr.map((c) => c.convergedNs!)) / 1000,
          }),
        dctcp_never: never(dc),
        ...(dcDone.length > 0 && { dctcp_max_ms: Math.max(...dcDone) / 1e6 }),
        ...(pmax !== null && { priority_max_us: pmax / 1000 }),
        ...(ft1?.flowtune?.convergence.maxNs != null && {
          rates_max_us_1ms: ft1.flowtune.convergence.maxNs / 1000,
        }),
        ...(dc1 !== undefined && { dctcp_never_1ms: never(dc1) }),
      };
    },
  });
}

function convergenceTable(opts: ExperimentOptions, runs: Summary[]): string {
  const [ft, dc] = runs;
  const f = ft.flowtune!;
  const interval = ft.fairness?.intervalNs ?? 0;
  const measured = (s: Summary, t: number) =>
    s.fairness?.convergence.find((c) => Math.abs(c.t - t) < interval / 2);
  const lines = [
    `# Flowtune convergence (§6.3): ${opts.file}`,
    '',
    `Time from each start and stop until every flow is within 10% of its fair share. Flowtune's from the rates its hosts applied; both from the throughput per ${formatNs(interval)} (an interval's end: the earliest it can show).`,
    '',
    '| event | at | flows | flowtune (rates) | flowtune (throughput) |',
    '| --- | --- | --- | --- | --- |',
    ...f.convergence.first.map((e) => {
      const m = measured(ft, e.t);
      return `| ${e.event} flow ${e.flow} | ${formatNs(e.t)} | ${e.active} | ${us(e.convergedNs)} | ${e.active < 2 ? '-' : us(m?.convergedNs)} |`;
    }),
    '',
    'DCTCP on the same trace (its flows finish at other times):',
    '',
    '| change at | flows | dctcp (throughput) |',
    '| --- | --- | --- |',
    ...(dc.fairness?.convergence ?? []).map(
      (c) => `| ${formatNs(c.t)} | ${c.active} | ${us(c.convergedNs)} |`,
    ),
    '',
    `Flowtune: ${f.convergence.converged}/${f.convergence.events} events converged, max ${us(f.convergence.maxNs)} (the paper: within 20 µs). Bottleneck queue p99 ${((ft.queues.busiest?.p99Bytes ?? 0) / 1000).toFixed(1)} KB vs ${((dc.queues.busiest?.p99Bytes ?? 0) / 1000).toFixed(1)} KB with DCTCP.`,
  ];
  return write(opts, 'flowtune-convergence', lines.join('\n'), {
    flowtune: f,
    fairness: [ft.fairness, dc.fairness],
  });
}

/**
 * `--quick`: half the web workload (3 ms; ~150 one-packet flowlets a run), 2 ms to drain, the
 * allocator killed at 2 ms instead of 4
 */
const QUICK_WEB = ['workload.duration=3ms', 'run.drain=2ms', 'timeline.0.at=2ms'];

export async function runWebsearch(opts: ExperimentOptions): Promise<string> {
  const p99 = (s: Summary, b: string) => s.flows.bySize[b]?.p99Ns;
  const norm = (id: string, label: string, paper: string | null = null) => ({
    id,
    label,
    unit: '×',
    paper,
    ...(paper !== null && { source: '§6.5, over loads 0.2–0.8' }),
    digits: 1,
  });
  return reproduceVariants(withQuick(opts, QUICK_WEB), {
    experiment: 'flowtune-websearch',
    paperScale: '9 racks of 16 servers at 10 Gbit/s (ns2), loads 0.2–0.8',
    figures: [
      norm('norm_1', 'normalized p99 FCT of 1-packet flowlets, DCTCP / Flowtune', '8.6–10.9'),
      norm('norm_1_10', 'the same, 1–10 packets', '2.1–2.9'),
      norm('norm_2_10', 'the same, 2–10 packets (the other reading of "1-10")', '2.1–2.9'),
      norm('ratio_1', 'raw p99 FCT of 1-packet flowlets, DCTCP / Flowtune (not normalized)'),
      {
        id: 'slow_1',
        label: 'normalized p99 FCT of 1-packet flowlets, Flowtune itself',
        unit: '×',
        paper: null,
        digits: 2,
      },
      // figure 9 at this load (the paper's 12× is at 0.8: flowtune-loads)
      ...queueingFigures('', ', at this load', false),
      {
        id: 'queue_ratio',
        label:
          "p99 over every switch port's sampled queue in bytes, DCTCP / Flowtune (ours: not the paper's metric, which is figure 9's above)",
        unit: '×',
        paper: null,
        digits: 1,
      },
      { id: 'flows_1', label: '1-packet flowlets measured', unit: 'flows', paper: null, digits: 0 },
      // the full run only: the quick one's ablation is flowtune-convergence's
      ...(opts.quick
        ? []
        : [
            norm(
              'norm_1_priority',
              'normalized p99 FCT of 1-packet flowlets, DCTCP / Flowtune with its control at strict priority (ablation)',
            ),
            norm(
              'norm_1_iw2',
              'the same, DCTCP / Flowtune, both starting flowlets with 2 frames instead of 10 (ablation)',
            ),
            {
              ...norm('norm_1_pf', 'normalized p99 FCT of 1-packet flowlets, pFabric / Flowtune', '1.7–2.4'),
              digits: 2,
            },
            {
              ...norm('norm_1_pf_iw2', 'the same, Flowtune starting flowlets with 2 frames (ablation)'),
              digits: 2,
            },
            {
              ...norm(
                'norm_1_pf_iw2_priority',
                'the same, Flowtune starting flowlets with 2 frames and its control at strict priority (both ablations together)',
              ),
              digits: 2,
            },
            norm(
              'norm_1_iw2_priority',
              'normalized p99 FCT of 1-packet flowlets, DCTCP / Flowtune, both starting flowlets with 2 frames, Flowtune’s control at strict priority (both ablations together)',
            ),
            norm(
              'norm_1_nic_ecn',
              "normalized p99 FCT of 1-packet flowlets, DCTCP / Flowtune, DCTCP's NICs marking at the switches' K (ablation)",
            ),
            norm('norm_2_10_nic_ecn', 'the same, 2–10 packets (ablation)'),
            ...ABLATION_QUEUEING.map(([variant, label]) => ({
              id: `qdelay_4_${variant}`,
              label: `p99 queueing delay on 4-hop paths (figure 9's metric, every run.sample), ${label}`,
              unit: 'µs',
              paper: null,
              digits: 1,
            })),
          ]),
    ],
    variants: [
      { name: 'flowtune', set: { 'scheme.kind': 'flowtune' } },
      { name: 'flowtune-alive', set: { 'scheme.kind': 'flowtune', timeline: '[]' } },
      { name: 'dctcp', set: { 'scheme.kind': 'ecmp' } },
      // the ablation: the allocator's and hosts' control frames above data (the default shares its queues)
      ...(opts.quick
        ? []
        : [
            {
              name: 'flowtune-priority',
              set: { 'scheme.kind': 'flowtune', 'scheme.control': 'priority', timeline: '[]' },
            },
            // the initial window's share of the short flowlets' tail: 2 frames (ns2's TCP starts
            // with 1 or 2), both sides
            {
              name: 'flowtune-iw2',
              set: { 'scheme.kind': 'flowtune', 'transport.initCwnd': '2', timeline: '[]' },
            },
            // both at once: the initial window and the control's class
            {
              name: 'flowtune-iw2-priority',
              set: {
                'scheme.kind': 'flowtune',
                'transport.initCwnd': '2',
                'scheme.control': 'priority',
                timeline: '[]',
              },
            },
            { name: 'dctcp-iw2', set: { 'scheme.kind': 'ecmp', 'transport.initCwnd': '2' } },
            // the paper's other baseline at this load (flowtune-loads runs it at every load)
            { name: 'pfabric', set: { ...pfabric(installPfabric(opts.out)), timeline: '[]' } },
            // DCTCP with its hosts' NIC queues marking as the switches do (the default NIC marks
            // nothing, and a sender whose own link is the bottleneck queues there unmarked)
            { name: 'dctcp-nic-ecn', set: { 'scheme.kind': 'ecmp', 'ports.hostEcnThreshold': '30KB' } },
          ]),
    ],
    table: websearchTable,
    values: (runs, out) => {
      // the full run's ablations follow the first three (the quick run has none)
      const [, alive, dc] = runs;
      const r = (variant: string) => rangesOf(out, variant);
      const [ranAlive, ranDc] = [r('flowtune-alive'), r('dctcp')];
      const raw = p99(dc, '1');
      const rawAlive = p99(alive, '1');
      const figures: Record<string, number | undefined> = {
        slow_1: ranAlive['1']?.completed === ranAlive['1']?.flows ? ranAlive['1']?.p99Norm : undefined,
        ...queueingValues(pathP99(out, 'flowtune-alive'), pathP99(out, 'dctcp'), ''),
        norm_1: normRatio(ranDc, ranAlive, '1'),
        norm_1_10: normRatio(ranDc, ranAlive, '1-10'),
        norm_2_10: normRatio(ranDc, ranAlive, '2-10'),
        ratio_1: raw !== undefined && rawAlive !== undefined && rawAlive > 0 ? raw / rawAlive : undefined,
        ...(runs.length > 3 && {
          norm_1_priority: normRatio(ranDc, r('flowtune-priority'), '1'),
          norm_1_iw2: normRatio(r('dctcp-iw2'), r('flowtune-iw2'), '1'),
          norm_1_pf: normRatio(r('pfabric'), ranAlive, '1'),
          norm_1_pf_iw2: normRatio(r('pfabric'), r('flowtune-iw2'), '1'),
          norm_1_pf_iw2_priority: normRatio(r('pfabric'), r('flowtune-iw2-priority'), '1'),
          norm_1_iw2_priority: normRatio(r('dctcp-iw2'), r('flowtune-iw2-priority'), '1'),
          ...Object.fromEntries(
            ABLATION_QUEUEING.map(([variant]) => [`qdelay_4_${variant}`, pathP99(out, variant).fine[4]]),
          ),
          norm_1_nic_ecn: normRatio(r('dctcp-nic-ecn'), ranAlive, '1'),
          norm_2_10_nic_ecn: normRatio(r('dctcp-nic-ecn'), ranAlive, '2-10'),
        }),
        ...(alive.queues.p99Bytes > 0 && { queue_ratio: dc.queues.p99Bytes / alive.queues.p99Bytes }),
        flows_1: dc.flows.bySize['1']?.flows ?? 0,
      };
      return measured(figures);
    },
  });
}

/** the full run's ablations whose figure 9 metric is reported (FIFO queues: pFabric's are not) */
const ABLATION_QUEUEING = [
  ['flowtune-priority', 'Flowtune, control at strict priority'],
  ['flowtune-iw2', 'Flowtune starting flowlets with 2 frames'],
  ['flowtune-iw2-priority', 'Flowtune, both'],
  ['dctcp-iw2', 'DCTCP starting flowlets with 2 frames'],
  ['dctcp-nic-ecn', "DCTCP, its NICs marking at the switches' K"],
] as const;

/**
 * pFabric (Alizadeh et al., SIGCOMM'13), the paper's other baseline in figure 8: the scheme package of
 * examples/schemes/pfabric, written against the public SDK and run as any user's package is. Its switches keep shallow buffers by design, about twice the
 * bandwidth-delay product (pFabric §4): the web scenario's fabric round trip is 21.6 µs (eight 1.5 µs
 * links and eight 1.2 µs frames), 27 KB at 10 Gbit/s, so 54 KB ports on its side only.
 */
const pfabric = (module: string) => ({
  'scheme.kind': 'pfabric',
  'scheme.module': module,
  'ports.buffer': '54KB',
});

/** this installation of dcemu (the package root) */
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/**
 * The pFabric package as a user installs it: its files copied into the experiment's folder (what ran
 * stays with the results), with this dcemu as its installed dependency; the module to load.
 */
function installPfabric(out: string): string {
  const from = join(ROOT, 'examples/schemes/pfabric');
  const to = join(out, 'pfabric-package');
  rmSync(to, { recursive: true, force: true });
  cpSync(from, to, { recursive: true, filter: (f) => !/[/\\](node_modules|test)$/.test(f) });
  mkdirSync(join(to, 'node_modules'), { recursive: true });
  symlinkSync(ROOT, join(to, 'node_modules', 'dcemu'));
  return join(to, 'index.js');
}

/** runs per load: Flowtune, DCTCP, pFabric; then (full runs) the ablations of `ABLATIONS` */
const SIDES = 3;

/** the ACKs' share of a link carrying a full flow the other way: a 64-byte ACK per 1,500-byte frame */
const ACK_SHARE = 64 / 1500;

/**
 * The ablations at every load, one change each against the sides above: both sides starting flowlets
 * with 2 frames instead of 10 (ns2's TCP starts with 1 or 2); DCTCP with its hosts' NIC queues
 * marking ECN as its switches do (by default a NIC marks nothing, as a host's does; a sender whose own
 * link is the bottleneck then queues there unmarked); Flowtune's allocator leaving the ACKs their room
 * (the 1% headroom plus the ACKs of a full reverse flow on every link: reserved as an upper bound, not
 * counted flow by flow); Flowtune with §6.4's larger update threshold, 0.05 (capacities less 5% too,
 * as the paper couples them)
 */
const ABLATIONS = [
  { key: 'flowtune-iw2', set: { 'scheme.kind': 'flowtune', 'transport.initCwnd': '2' } },
  { key: 'dctcp-iw2', set: { 'scheme.kind': 'ecmp', 'transport.initCwnd': '2' } },
  { key: 'dctcp-nic-ecn', set: { 'scheme.kind': 'ecmp', 'ports.hostEcnThreshold': '30KB' } },
  {
    key: 'flowtune-acks',
    set: { 'scheme.kind': 'flowtune', 'scheme.headroom': (0.01 + ACK_SHARE).toFixed(4) },
  },
  { key: 'flowtune-threshold', set: { 'scheme.kind': 'flowtune', 'scheme.threshold': '0.05' } },
] as const;

/** the loads of the paper's figure 8 */
const LOADS = [0.2, 0.4, 0.6, 0.8] as const;
/** the example's 6 ms at 0.6 load, stretched at lower loads so that each run has about as many flowlets */
const durationAt = (load: number): string => `${Math.round((6 * 0.6 * 1000) / load)}us`;

/**
 * `flowtune-loads`: the web workload at loads 0.2, 0.4, 0.6 and 0.8 (the paper's figure 8 spans them),
 * Flowtune (its allocator left alive: the example's timeline kills it) against DCTCP and pFabric on
 * the same trace at each load; each load's run is stretched to about as many flowlets as the example's.
 * `--quick`: loads 0.2 and 0.8 only, at a quarter of the length, and 1 ms to drain (every flowlet of
 * up to 10 packets done: DCTCP's slowest takes ~0.6 ms; the long flows are cut short).
 */
export async function runLoads(opts: ExperimentOptions): Promise<string> {
  const PFABRIC = pfabric(installPfabric(opts.out));
  const loads = opts.quick ? [0.2, 0.8] : LOADS;
  const length = opts.quick ? 4 : 1;
  // the ablations in full runs only (npm test's quick run keeps its three sides)
  const ablations = opts.quick ? [] : ABLATIONS;
  const perLoad = SIDES + ablations.length;
  const variants = loads.flatMap((load) => {
    const at = {
      'workload.load': String(load),
      'workload.duration': durationAt(load * length),
      timeline: '[]',
      ...(opts.quick && { 'run.drain': '1ms' }),
    };
    return [
      { name: `flowtune-${load}`, set: { ...at, 'scheme.kind': 'flowtune' } },
      { name: `dctcp-${load}`, set: { ...at, 'scheme.kind': 'ecmp' } },
      { name: `pfabric-${load}`, set: { ...at, ...PFABRIC } },
      ...ablations.map((a) => ({ name: `${a.key}-${load}`, set: { ...at, ...a.set } })),
    ];
  });
  return reproduceVariants(opts, {
    experiment: 'flowtune-loads',
    paperScale: '9 racks of 16 servers at 10 Gbit/s (ns2), loads 0.2–0.8',
    figures: loadsFigures(loads, ablations.length > 0),
    variants,
    table: (o, runs) => loadsTable(o, loads, runs, perLoad),
    values: (runs, out) => loadsValues(runs, out, loads, perLoad, ablations),
  });
}

const bucket = (s: Summary, b: string) => s.flows.bySize[b];

/** a normalized ratio's figure, beside the paper's value for its range against `against` */
function normFigure(id: string, label: string, against: 'dctcp' | 'pfabric', range: string) {
  const paper = paperRatio(against, range);
  return {
    id,
    label,
    unit: '×',
    paper,
    ...(paper !== null && { source: '§6.5, over the loads' }),
    digits: 2,
  };
}
const versus = (against: 'dctcp' | 'pfabric', load: number) =>
  PAPER_RANGES.map(([range]) =>
    normFigure(
      `norm_${against === 'dctcp' ? 'dc' : 'pf'}_${range}_${load}`,
      `normalized p99 FCT of ${range}-packet flowlets, ${against === 'dctcp' ? 'DCTCP' : 'pFabric'} / Flowtune, load ${load}`,
      against,
      range,
    ),
  );

/** flowtune-loads' figures at each load: the normalized ratios beside the paper's ranges, the raw ratio, each side's slowdown, the queues; the ablations' in full runs. */
function loadsFigures(loads: readonly number[], withAblations: boolean) {
  const ablations = withAblations ? [null] : [];
  return loads.flatMap((load) => [
    ...versus('dctcp', load),
    ...versus('pfabric', load),
    {
      id: `ratio_1_${load}`,
      label: `raw p99 FCT of 1-packet flowlets, DCTCP / Flowtune, load ${load} (not normalized)`,
      unit: '×',
      paper: null,
      digits: 1,
    },
    {
      id: `slow_1_${load}`,
      label: `normalized FCT p99 of 1-packet flowlets, Flowtune, load ${load}`,
      unit: '×',
      paper: null,
      digits: 2,
    },
    {
      id: `slow_1_dctcp_${load}`,
      label: `the same, DCTCP, load ${load}`,
      unit: '×',
      paper: null,
      digits: 2,
    },
    {
      id: `slow_1_pf_${load}`,
      label: `the same, pFabric, load ${load}`,
      unit: '×',
      paper: null,
      digits: 2,
    },
    ...(ablations.length > 0
      ? (['1', '2-10'] as const).flatMap((range) => [
          normFigure(
            `norm_dc_${range}_iw2_${load}`,
            `normalized p99 FCT of ${range}-packet flowlets, DCTCP / Flowtune, both starting with 2 frames, load ${load} (ablation)`,
            'dctcp',
            range,
          ),
          normFigure(
            `norm_dc_${range}_nicecn_${load}`,
            `normalized p99 FCT of ${range}-packet flowlets, DCTCP with marking NICs / Flowtune, load ${load} (ablation)`,
            'dctcp',
            range,
          ),
          normFigure(
            `norm_dc_${range}_acks_${load}`,
            `normalized p99 FCT of ${range}-packet flowlets, DCTCP / Flowtune leaving ACKs their room (headroom ${(0.01 + ACK_SHARE).toFixed(3)}), load ${load} (ablation)`,
            'dctcp',
            range,
          ),
          normFigure(
            `norm_dc_${range}_thr_${load}`,
            `normalized p99 FCT of ${range}-packet flowlets, DCTCP / Flowtune at update threshold 0.05, load ${load} (ablation)`,
            'dctcp',
            range,
          ),
        ])
      : []),
    ...(ablations.length > 0
      ? [
          {
            id: `slow_1_acks_${load}`,
            label: `normalized FCT p99 of 1-packet flowlets, Flowtune leaving ACKs their room, load ${load} (ablation)`,
            unit: '×',
            paper: null,
            digits: 2,
          },
          {
            id: `slow_1_thr_${load}`,
            label: `the same, Flowtune at update threshold 0.05, load ${load} (ablation)`,
            unit: '×',
            paper: null,
            digits: 2,
          },
        ]
      : []),
    ...queueingFigures(`_${load}`, `, load ${load}`, load === 0.8),
    {
      id: `queue_ratio_${load}`,
      label: `p99 over every switch port's sampled queue in bytes, DCTCP / Flowtune, load ${load} (ours: not the paper's metric)`,
      unit: '×',
      paper: null,
      digits: 1,
    },
  ]);
}

/** One seed's figures of flowtune-loads (the runs in variant order: the sides, then the ablations, per load). */
function loadsValues(
  runs: Summary[],
  out: string,
  loads: readonly number[],
  perLoad: number,
  ablations: ReadonlyArray<(typeof ABLATIONS)[number]>,
): Record<string, number> {
  const v: Record<string, number> = {};
  loads.forEach((load, i) => {
    const [ft, dc, pf] = runs.slice(perLoad * i, perLoad * i + SIDES);
    const [rf, rd, rp] = ['flowtune', 'dctcp', 'pfabric'].map((side) => rangesOf(out, `${side}-${load}`));
    for (const [range] of PAPER_RANGES)
      for (const [side, key] of [
        [rd, 'dc'],
        [rp, 'pf'],
      ] as const) {
        const x = normRatio(side, rf, range);
        if (x !== undefined) v[`norm_${key}_${range}_${load}`] = x;
      }
    const f = bucket(ft, '1')?.p99Ns;
    const d = bucket(dc, '1')?.p99Ns;
    if (f !== undefined && d !== undefined && f > 0) v[`ratio_1_${load}`] = d / f;
    for (const [side, id] of [
      [ft, `slow_1_${load}`],
      [dc, `slow_1_dctcp_${load}`],
      [pf, `slow_1_pf_${load}`],
    ] as const) {
      const x = bucket(side, '1')?.p99Slowdown;
      if (x !== undefined) v[id] = x;
    }
    if (ft.queues.p99Bytes > 0) v[`queue_ratio_${load}`] = dc.queues.p99Bytes / ft.queues.p99Bytes;
    Object.assign(
      v,
      measured(queueingValues(pathP99(out, `flowtune-${load}`), pathP99(out, `dctcp-${load}`), `_${load}`)),
    );
    if (ablations.length > 0) {
      const [fi, di, dn, fa, ft5] = ablations.map((a) => rangesOf(out, `${a.key}-${load}`));
      for (const range of ['1', '2-10']) {
        for (const [id, dctcp, flowtune] of [
          ['iw2', di, fi],
          ['nicecn', dn, rf],
          ['acks', rd, fa],
          ['thr', rd, ft5],
        ] as const) {
          const x = normRatio(dctcp, flowtune, range);
          if (x !== undefined) v[`norm_dc_${range}_${id}_${load}`] = x;
        }
      }
      // the two Flowtune ablations' own runs: the 4th and 5th after the sides
      const [sa, st] = [3, 4].map((j) => runs[perLoad * i + SIDES + j]);
      for (const [side, id] of [
        [sa, `slow_1_acks_${load}`],
        [st, `slow_1_thr_${load}`],
      ] as const) {
        const x = bucket(side, '1')?.p99Slowdown;
        if (x !== undefined) v[id] = x;
      }
    }
  });
  return v;
}

function loadsTable(
  opts: ExperimentOptions,
  loads: readonly number[],
  runs: Summary[],
  perLoad: number,
): string {
  const lines = [
    `# Flowtune vs DCTCP across loads (§6.5, figure 8): ${opts.file}`,
    '',
    "p99 FCT (normalized: FCT over the flowlet's line-rate time) by flowlet size in full frames; pFabric on its own shallow ports (54 KB).",
    '',
    '| load | size | flows | flowtune | dctcp | pfabric | dctcp / flowtune | pfabric / flowtune |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  const cell = (x: Summary['flows']['bySize'][string] | undefined) =>
    x ? `${us(x.p99Ns)} (${x.p99Slowdown})` : '-';
  const over = (a: number | undefined, b: number | undefined) =>
    a !== undefined && b !== undefined && b > 0 ? `${(a / b).toFixed(1)}×` : '-';
  loads.forEach((load, i) => {
    const [ft, dc, pf] = runs.slice(perLoad * i, perLoad * i + SIDES);
    for (const b of Object.keys(dc.flows.bySize)) {
      const [f, d, p] = [ft, dc, pf].map((s) => s.flows.bySize[b]);
      lines.push(
        `| ${load} | ${b} | ${d.flows} | ${cell(f)} | ${cell(d)} | ${cell(p)} | ${over(d.p99Ns, f?.p99Ns)} | ${over(p?.p99Ns, f?.p99Ns)} |`,
      );
    }
  });
  lines.push(
    '',
    "§6.5's metric: the p99 of each flowlet's FCT over its empty network's, by the paper's ranges (packets); a ratio only where both sides completed every flowlet of the range (completed/flowlets otherwise).",
    '',
    '| load | range | flows | flowtune | dctcp | pfabric | dctcp / flowtune | pfabric / flowtune |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  );
  const ranges: Record<string, Record<string, RangeP99>> = {};
  for (const load of loads) {
    const [f, d, p] = ['flowtune', 'dctcp', 'pfabric'].map((side) => {
      const r = rangesOf(opts.out, `${side}-${load}`);
      ranges[`${side}-${load}`] = r;
      return r;
    });
    for (const [range] of PAPER_RANGES)
      if (d[range])
        lines.push(
          `| ${load} | ${range} | ${d[range].flows} | ${normCell(f[range])} | ${normCell(d[range])} | ${normCell(p[range])} | ${ratioCell(normRatio(d, f, range))} | ${ratioCell(normRatio(p, f, range))} |`,
        );
  }
  lines.push(
    '',
    ...pathTable(
      loads.flatMap((l) => [`flowtune-${l}`, `dctcp-${l}`].map((v) => [v, pathP99(opts.out, v)] as const)),
    ),
  );
  return write(opts, 'flowtune-loads', lines.join('\n'), {
    ranges,
    bySize: Object.fromEntries(
      loads.map((l, i) => {
        const [ft, dc, pf] = runs.slice(perLoad * i, perLoad * i + SIDES);
        return [l, { flowtune: ft.flows.bySize, dctcp: dc.flows.bySize, pfabric: pf.flows.bySize }];
      }),
    ),
  });
}

function websearchTable(opts: ExperimentOptions, runs: Summary[]): string {
  const [killed, alive, dc, prio] = runs as [Summary, Summary, Summary, Summary | undefined];
  const buckets = [...new Set(runs.flatMap((s) => Object.keys(s.flows.bySize)))];
  const p99 = (s: Summary, b: string) => s.flows.bySize[b]?.p99Ns;
  const ratio = (a: number | undefined, b: number | undefined) =>
    a !== undefined && b !== undefined && b > 0 ? `${(a / b).toFixed(1)}×` : '-';
  const f = killed.flowtune!;
  const lines = [
    `# Flowtune vs DCTCP under the web workload (§6.5): ${opts.file}`,
    '',
    'p99 FCT by flowlet size in full frames; "alive": the same run without its timeline (the allocator is not killed); "priority": alive, with the control frames at strict priority above data (an ablation).',
    '',
    '| size | flows | flowtune | flowtune alive | dctcp | dctcp / alive | priority |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...buckets.map(
      (b) =>
        `| ${b} | ${dc.flows.bySize[b]?.flows ?? 0} | ${us(p99(killed, b))} | ${us(p99(alive, b))} | ${us(p99(dc, b))} | ${ratio(p99(dc, b), p99(alive, b))} | ${prio ? us(p99(prio, b)) : '-'} |`,
    ),
    `| queue p99 | | ${(killed.queues.p99Bytes / 1000).toFixed(1)} KB | ${(alive.queues.p99Bytes / 1000).toFixed(1)} KB | ${(dc.queues.p99Bytes / 1000).toFixed(1)} KB | ${ratio(dc.queues.p99Bytes, alive.queues.p99Bytes)} | ${prio ? `${(prio.queues.p99Bytes / 1000).toFixed(1)} KB` : '-'} |`,
    '',
    '',
    "§6.5's metric: the p99 of each flowlet's FCT over its empty network's, by the paper's ranges (packets); a ratio only where both sides completed every flowlet of the range.",
    '',
    '| range | flows | flowtune alive | dctcp | dctcp / alive |',
    '| --- | --- | --- | --- | --- |',
    ...(() => {
      const [a, d] = [rangesOf(opts.out, 'flowtune-alive'), rangesOf(opts.out, 'dctcp')];
      return PAPER_RANGES.filter(([r]) => d[r]).map(([r]) => {
        const x = normRatio(d, a, r);
        return `| ${r} | ${d[r].flows} | ${normCell(a[r])} | ${normCell(d[r])} | ${ratioCell(x)} |`;
      });
    })(),
    '',
    ...pathTable(
      ['flowtune-alive', 'dctcp', ...ABLATION_QUEUEING.map(([v]) => v)]
        .filter((v) => existsSync(join(opts.out, v, 'queues.csv')))
        .map((v) => [v, pathP99(opts.out, v)] as const),
    ),
    '',
    `The paper (§6.5, normalized, over loads 0.2–0.8): 8.6–10.9× lower p99 FCT than DCTCP for 1-packet flowlets, 2.1–2.9× for 1–10 packets; 12× lower p99 queueing delay at 0.8. With the allocator killed: ${f.fallbacks.length} host lapses, ${killed.flows.completed}/${killed.flows.started} flows completed.`,
  ];
  return write(opts, 'flowtune-websearch', lines.join('\n'), {
    bySize: { flowtune: killed.flows.bySize, alive: alive.flows.bySize, dctcp: dc.flows.bySize },
    fallbacks: f.fallbacks,
  });
}
