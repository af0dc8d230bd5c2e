/**
 * `flowtune-loads` (Flowtune TR'16 §6.5, figures 8 and 9 across loads 0.2-0.8;
 * schemes/flowtune/experiments.ts): the web workload at each load, Flowtune against DCTCP and pFabric
 * (the example package, installed as a user's is) on the same trace, per range and load, the queueing
 * delay on paths, and the ablations in full runs.
 */
import type { ExperimentOptions } from '../../../sdk/index.js';
import { reproduceVariants, type Summary } from '../../../sdk/study.js';
import { pathP99, pathTable } from '../definition/queueing.js';
import {
  installPfabric,
  measured,
  normCell,
  normRatio,
  PAPER_RANGES,
  paperRatio,
  pfabric,
  queueingFigures,
  queueingValues,
  type RangeP99,
  rangesOf,
  ratioCell,
  us,
  write,
} from './shared.js';

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
 * `--quick`: loads 0.2 and 0.8 only, at a quarter of the length, and 150 µs to drain (every flowlet
 * of up to 10 packets done: on seed 7 the last, DCTCP's at 0.8, ends 76 µs after the traffic; the
 * long flows are cut short).
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
      ...(opts.quick && { 'run.drain': '150us' }),
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
    ...(ablations.length > 0 ? ablationFigures(load) : []),
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

/** flowtune-loads' ablation figures at `load` (full runs): DCTCP against each Flowtune ablation, per range, and their slowdowns */
function ablationFigures(load: number) {
  return [
    ...(['1', '2-10'] as const).flatMap((range) => [
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
    ]),
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
  ];
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
