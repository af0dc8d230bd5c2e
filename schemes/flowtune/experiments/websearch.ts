/**
 * `flowtune-websearch` (Flowtune TR'16 §6.5, figures 8 and 9; schemes/flowtune/experiments.ts): p99
 * FCT by flowlet size and the p99 queue under the web workload, Flowtune as the scenario has it (its
 * timeline kills the allocator), with the allocator left alive, and DCTCP.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ExperimentOptions } from '../../../sdk/index.js';
import { reproduceVariants, type Summary, withQuick } from '../../../sdk/study.js';
import { pathP99, pathTable } from '../definition/queueing.js';
import {
  installPfabric,
  measured,
  normCell,
  normRatio,
  PAPER_RANGES,
  pfabric,
  queueingFigures,
  queueingValues,
  rangesOf,
  ratioCell,
  us,
  write,
} from './shared.js';

/** the full run's ablations whose figure 9 metric is reported (FIFO queues: pFabric's are not) */
const ABLATION_QUEUEING = [
  ['flowtune-priority', 'Flowtune, control at strict priority'],
  ['flowtune-iw2', 'Flowtune starting flowlets with 2 frames'],
  ['flowtune-iw2-priority', 'Flowtune, both'],
  ['dctcp-iw2', 'DCTCP starting flowlets with 2 frames'],
  ['dctcp-nic-ecn', "DCTCP, its NICs marking at the switches' K"],
] as const;

/**
 * `--quick`: half the web workload (3 ms; ~150 one-packet flowlets a run), 2 ms to drain, and the
 * allocator left alive beside DCTCP only (the scenario as it is, its allocator killed, in full runs)
 */
const QUICK_WEB = ['workload.duration=3ms', 'run.drain=2ms'];

/** a seed's runs by variant name */
type Runs = Record<string, Summary | undefined>;

export async function runWebsearch(opts: ExperimentOptions): Promise<string> {
  const variants = websearchVariants(opts);
  const named = (runs: Summary[]): Runs => Object.fromEntries(variants.map((v, i) => [v.name, runs[i]]));
  return reproduceVariants(withQuick(opts, QUICK_WEB), {
    experiment: 'flowtune-websearch',
    paperScale: '9 racks of 16 servers at 10 Gbit/s (ns2), loads 0.2–0.8',
    figures: websearchFigures(opts.quick === true),
    variants,
    table: (o, runs) => websearchTable(o, named(runs)),
    values: (runs, out) => websearchValues(named(runs), out),
  });
}

/** a run's p99 FCT of flowlets of size bucket `b` */
const p99 = (s: Summary, b: string) => s.flows.bySize[b]?.p99Ns;
/** a ratio's figure, with the paper's value over its loads where it gives one */
const norm = (id: string, label: string, paper: string | null = null) => ({
  id,
  label,
  unit: '×',
  paper,
  ...(paper !== null && { source: '§6.5, over loads 0.2–0.8' }),
  digits: 1,
});

/** flowtune-websearch's figures: §6.5's ratios and figure 9's queueing; the ablations' in full runs */
function websearchFigures(quick: boolean) {
  return [
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
    ...(quick
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
  ];
}

/**
 * Flowtune as the scenario has it (full runs), with its allocator left alive, and DCTCP; the ablations
 * in full runs
 */
function websearchVariants(opts: ExperimentOptions): Array<{ name: string; set: Record<string, string> }> {
  return [
    ...(opts.quick ? [] : [{ name: 'flowtune', set: { 'scheme.kind': 'flowtune' } }]),
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
  ];
}

/** flowtune-websearch's figures from its runs (the quick run has no ablation) */
function websearchValues(runs: Runs, out: string): Record<string, number> {
  const [alive, dc] = [runs['flowtune-alive']!, runs.dctcp!];
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
    ...(runs['flowtune-priority'] !== undefined && {
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
}

function websearchTable(opts: ExperimentOptions, runs: Runs): string {
  const [killed, alive, dc, prio] = [
    runs.flowtune,
    runs['flowtune-alive']!,
    runs.dctcp!,
    runs['flowtune-priority'],
  ];
  const buckets = [
    ...new Set(Object.values(runs).flatMap((s) => (s === undefined ? [] : Object.keys(s.flows.bySize)))),
  ];
  const p99 = (s: Summary, b: string) => s.flows.bySize[b]?.p99Ns;
  const ratio = (a: number | undefined, b: number | undefined) =>
    a !== undefined && b !== undefined && b > 0 ? `${(a / b).toFixed(1)}×` : '-';
  const f = killed?.flowtune;
  const lines = [
    `# Flowtune vs DCTCP under the web workload (§6.5): ${opts.file}`,
    '',
    'p99 FCT by flowlet size in full frames; "flowtune": the scenario as it is, its allocator killed (full runs); "alive": the same run without its timeline (the allocator is not killed); "priority": alive, with the control frames at strict priority above data (an ablation).',
    '',
    '| size | flows | flowtune | flowtune alive | dctcp | dctcp / alive | priority |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...buckets.map(
      (b) =>
        `| ${b} | ${dc.flows.bySize[b]?.flows ?? 0} | ${killed ? us(p99(killed, b)) : '-'} | ${us(p99(alive, b))} | ${us(p99(dc, b))} | ${ratio(p99(dc, b), p99(alive, b))} | ${prio ? us(p99(prio, b)) : '-'} |`,
    ),
    `| queue p99 | | ${killed ? `${(killed.queues.p99Bytes / 1000).toFixed(1)} KB` : '-'} | ${(alive.queues.p99Bytes / 1000).toFixed(1)} KB | ${(dc.queues.p99Bytes / 1000).toFixed(1)} KB | ${ratio(dc.queues.p99Bytes, alive.queues.p99Bytes)} | ${prio ? `${(prio.queues.p99Bytes / 1000).toFixed(1)} KB` : '-'} |`,
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
    `The paper (§6.5, normalized, over loads 0.2–0.8): 8.6–10.9× lower p99 FCT than DCTCP for 1-packet flowlets, 2.1–2.9× for 1–10 packets; 12× lower p99 queueing delay at 0.8.${killed && f ? ` With the allocator killed: ${f.fallbacks.length} host lapses, ${killed.flows.completed}/${killed.flows.started} flows completed.` : ''}`,
  ];
  return write(opts, 'flowtune-websearch', lines.join('\n'), {
    bySize: { flowtune: killed?.flows.bySize ?? null, alive: alive.flows.bySize, dctcp: dc.flows.bySize },
    fallbacks: f?.fallbacks ?? null,
  });
}
