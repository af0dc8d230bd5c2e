import { join } from 'node:path';
import { type CountedSpread, type ExperimentOptions, flowRows, spreadOf } from '../../../sdk/index.js';
import { type FigureSpec, fmt, reproduceVariants, type Summary, writeTable } from '../../../sdk/study.js';
import { deltaAdmissionNs, loadPct, SPREAD } from './index.js';

interface Point {
  rpc: number;
  bestEffort: number;
}

const SIDES = [
  {
    key: 'harmony',
    label: 'Harmony',
    // reading A of the reject (asked again inside δadmission of its arrival, rejected after), given up after
    scheme: '{kind: harmony, K: 8, rejectAfter: window, onReject: give-up}',
  },
  { key: 'dctcp', label: 'DCTCP (the baseline)', scheme: '{kind: ecmp}' },
] as const;

/**
 * The example's fabric (16 hosts, 10 Gbit/s), 10 ms of arrivals (430–770 RPCs, but only 12–38
 * web-search flows a run: their p99 is nearly their max), the paper's three points; the drain is long
 * enough for the largest web-search flow (30 MB) at a share of the line rate
 */
const FULL = {
  set: ['workload.duration=10ms', 'run.drain=40ms'],
  points: [
    { rpc: 0.3, bestEffort: 0.3 },
    { rpc: 0.4, bestEffort: 0.2 },
    { rpc: 0.5, bestEffort: 0.1 },
  ] as Point[],
};
/** `--quick` (npm test): 8 hosts in 2 racks, 1 ms of arrivals, the first and the last point */
const QUICK = {
  set: ['topology.leaves=2', 'workload.duration=1ms', 'run.drain=3ms'],
  points: [
    { rpc: 0.3, bestEffort: 0.3 },
    { rpc: 0.5, bestEffort: 0.1 },
  ] as Point[],
};

const pointKey = (p: Point) => `rpc${loadPct(p.rpc)}-be${loadPct(p.bestEffort)}`;

/** One run's RPCs (the flows not sent best effort) and best-effort flows, each counted whole. */
export function classes(runDir: string): { rpc: CountedSpread; bestEffort: CountedSpread } {
  const rows = flowRows(runDir);
  return {
    rpc: spreadOf(rows.filter((r) => !r.bestEffort)),
    bestEffort: spreadOf(rows.filter((r) => r.bestEffort)),
  };
}

export async function runFig7(opts: ExperimentOptions): Promise<string> {
  const plan = opts.quick ? QUICK : FULL;
  const { points } = plan;
  const o = { ...opts, set: [...plan.set, ...(opts.set ?? [])] };
  // Harmony's δadmission on this fabric: the window of the RPCs' admissible arrivals on both sides
  const delta = deltaAdmissionNs(o.file, [...o.set, `scheme=${SIDES[0].scheme}`]);
  const variants = points.flatMap((p) =>
    SIDES.map((side) => ({
      name: `${side.key}-${pointKey(p)}`,
      set: {
        scheme: side.scheme,
        'workload.fixedSize': '128KB',
        'workload.load': p.rpc,
        // §5's workload for the RPCs, at Harmony's δadmission on both sides (the same arrivals)
        'workload.admissible': delta,
        'workload.background': `{pattern: all-to-all, sizes: websearch, load: ${p.bestEffort}}`,
      },
    })),
  );
  return reproduceVariants(o, {
    experiment: 'harmony-fig7',
    paperScale:
      '144 hosts (9 ToRs of 16) at 100 Gbit/s, 32 MB switch buffers, 128 KB RPCs at 0.3–0.5 beside web search at 0.3–0.1, against HPCC and dcPIM, packet-level simulation (§5, §5.2)',
    figures: fig7Figures(points),
    variants,
    table: (so, _runs) => fig7Table(points, so),
    values: (_runs: Summary[], seedDir: string) => fig7Values(points, seedDir),
  });
}

function fig7Values(points: readonly Point[], seedDir: string): Record<string, number> {
  const v: Record<string, number> = {};
  for (const p of points) {
    const k = pointKey(p);
    const c = SIDES.map((side) => classes(join(seedDir, `${side.key}-${k}`)));
    SIDES.forEach((side, si) => {
      const { rpc, bestEffort } = c[si];
      v[`${side.key}_missing_${k}`] = rpc.missing + bestEffort.missing;
      for (const [key] of SPREAD) {
        const x = rpc[key];
        if (x !== null) v[`${side.key}_rpc_${key}_${k}`] = x;
      }
      if (bestEffort.mean !== null) v[`${side.key}_be_mean_${k}`] = bestEffort.mean;
      if (bestEffort.p99 !== null) v[`${side.key}_be_p99_${k}`] = bestEffort.p99;
    });
    const ratio = (a: number | null, b: number | null) => (a !== null && b !== null && a > 0 ? b / a : null);
    const r = {
      rpc_p99: ratio(c[0].rpc.p99, c[1].rpc.p99),
      be_mean: ratio(c[0].bestEffort.mean, c[1].bestEffort.mean),
      be_p99: ratio(c[0].bestEffort.p99, c[1].bestEffort.p99),
    };
    for (const [key, x] of Object.entries(r)) if (x !== null) v[`ratio_${key}_${k}`] = x;
  }
  return v;
}

function fig7Figures(points: readonly Point[]): FigureSpec[] {
  return points.flatMap((p) => {
    const k = pointKey(p);
    const at = `RPCs at ${p.rpc}, best effort at ${p.bestEffort}`;
    return [
      ...SIDES.map((side) => ({
        id: `${side.key}_missing_${k}`,
        label: `${side.label}: RPCs and best-effort flows not done (rejected, or not finished by the end), ${at}`,
        unit: 'flows',
        // §5.2: "the total offered load is 0.6 and hence remains sustainable for all protocols"
        paper: '0 (total load 0.6 "remains sustainable for all protocols", §5.2)',
        digits: 0,
      })),
      ...SIDES.flatMap((side) =>
        SPREAD.map(([key, name]) => ({
          id: `${side.key}_rpc_${key}_${k}`,
          label: `${side.label}: RPC slowdown ${name}, ${at}`,
          unit: '×',
          paper: null,
        })),
      ),
      ...SIDES.flatMap((side) =>
        (['mean', 'p99'] as const).map((key) => ({
          id: `${side.key}_be_${key}_${k}`,
          label: `${side.label}: best-effort slowdown ${key}, ${at}`,
          unit: '×',
          paper: null,
        })),
      ),
      {
        id: `ratio_rpc_p99_${k}`,
        label: `RPC p99 slowdown, DCTCP / Harmony, ${at}`,
        unit: '×',
        paper:
          'above 1: "significantly better tail latencies for congestion-free traffic" (§5.2, against HPCC and dcPIM)',
      },
      {
        id: `ratio_be_mean_${k}`,
        label: `best-effort mean slowdown, DCTCP / Harmony, ${at}`,
        unit: '×',
        paper:
          'above 1: "significantly better mean ... latencies for best-effort traffic" (§5.2, against HPCC and dcPIM)',
      },
      {
        id: `ratio_be_p99_${k}`,
        label: `best-effort p99 slowdown, DCTCP / Harmony, ${at}`,
        unit: '×',
        paper: 'above 1: "... and tail latencies for best-effort traffic" (§5.2, against HPCC and dcPIM)',
      },
    ];
  });
}

function fig7Table(points: readonly Point[], so: ExperimentOptions & { out: string }): string {
  const cell = (x: number | null, d = 2) => (x === null ? '∞' : fmt(x, d));
  const rows = points.flatMap((p) =>
    SIDES.map((side) => {
      const c = classes(join(so.out, `${side.key}-${pointKey(p)}`));
      const r = c.rpc;
      const b = c.bestEffort;
      return `| ${p.rpc} + ${p.bestEffort} | ${side.label} | ${r.flows - r.missing}/${r.flows} | ${SPREAD.map(([key]) => cell(r[key])).join(' | ')} | ${b.flows - b.missing}/${b.flows} | ${cell(b.mean)} | ${cell(b.p99)} |`;
    }),
  );
  const table = [
    `### Fig. 7: 128 KB RPCs beside web-search best-effort flows (${so.file})`,
    '',
    'Slowdown: completion time over the empty network’s. Every flow counts: one rejected or not done is an infinite slowdown (∞ where a quantile falls on one; no mean while any is missing).',
    '',
    '| load RPC + best effort | side | RPCs done | RPC min | mean | p99 | p99.9 | max | best-effort done | best-effort mean | p99 |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
  writeTable(so.out, 'fig7', table);
  return table;
}
