/**
 * `fastpass-c` (Fastpass SIGCOMM'14 §7.2, experiment C; schemes/fastpass/experiments.ts): senders
 * joining then leaving; the median standard deviation of the senders' throughputs per interval, by
 * how many were active (summary.fairness), against the paper's.
 */
import type { ExperimentOptions } from '../../../sdk/index.js';
import { type FigureSpec, reproduceVariants, withQuick, writeTable } from '../../../sdk/study.js';
import { DEPLOYED, SIDES, type Side, sides, times } from './shared.js';

/**
 * Experiment C's schedule (§7.2): five senders to h0; one flow first, a new one every `phase` until all
 * five run for a phase, then one leaves every `phase` (the first to join leaves first; the last runs
 * to the end): nine phases, 1 to 5 to 1 senders. The paper's phase is 30 s, its interval 1 s.
 */
const cSchedule = (phaseMs: number, intervalMs: number): string[] => [
  `workload.duration=${9 * phaseMs}ms`,
  `run.interval=${intervalMs}ms`,
  ...[1, 2, 3, 4, 5].map(
    (h, i) =>
      `workload.flows.${i}={src: h${h}, dst: h0, size: 1GB, start: ${i * phaseMs}ms${h < 5 ? `, stop: ${(i + 5) * phaseMs}ms` : ''}}`,
  ),
];

/**
 * Both sides on the deployment's clocks (as experiment A), one change between them: the scheme. The
 * full run's intervals (5 ms) are longer than the baseline's round trip behind its full 5 MB buffer
 * (~4 ms), each phase five intervals: 225 ms of traffic a run.
 */
const C_VARIANTS = SIDES.map((v) => ({ name: v.name, set: { ...v.set, ...DEPLOYED } }));
/**
 * The full run's ablation: Fastpass with no timeslots kept free for FCP (`scheme.fcpShare=0`). Each
 * endpoint keeps one timeslot in 40 free at a fixed phase, and against the allocator's round robin
 * that phase hands one sender about one timeslot in a hundred more than the others, every interval;
 * without it the shares are equal to the frame.
 */
const C_ABLATION = {
  name: 'fastpass-no-reserve',
  set: { 'scheme.kind': 'fastpass', 'scheme.fcpShare': '0', ...DEPLOYED },
};
const FULL_C = cSchedule(25, 5);
/** `--quick`: phases of 3 ms, 1 ms intervals, one spine (the senders and receiver share the ToR) */
const QUICK_C = ['topology.spines=1', ...cSchedule(3, 1)];

/**
 * One full frame's bits: a sender's throughput in an interval moves in steps of this over the
 * interval, so a standard deviation of one step is all an even share can show (0.012 Mbit/s over the
 * paper's 1 s, 2.4 Mbit/s over 5 ms)
 */
const FRAME_BITS = 1500 * 8;

/** the paper's table (§7.2): median sd of the per-connection throughputs, Mbit/s, by connections */
const PAPER_C: Record<number, { base: number; fp: number; ratio: number }> = {
  3: { base: 543.86, fp: 15.89, ratio: 34.2 },
  4: { base: 628.49, fp: 0.146, ratio: 4304.7 },
  5: { base: 459.75, fp: 0.087, ratio: 5284.5 },
};

export async function runExperimentC(opts: ExperimentOptions): Promise<string> {
  const scaled = opts.quick ? withQuick(opts, QUICK_C) : { ...opts, set: [...FULL_C, ...(opts.set ?? [])] };
  const variants = opts.quick ? C_VARIANTS : [...C_VARIANTS, C_ABLATION];
  return reproduceVariants(scaled, {
    experiment: 'fastpass-c',
    paperScale:
      'five senders to one receiver at 10 Gbit/s, joining and then leaving every 30 s (270 s), 1 s intervals',
    figures: [
      ...[3, 4, 5].flatMap((k): FigureSpec[] => [
        // per run.interval (5 ms), where the paper's are over 1 s: a throughput's sd moves in steps of a
        // frame over the interval, so these and their ratio are not set beside the paper's (the
        // frames figure below is comparable)
        {
          id: `fp_sd${k}`,
          label: `median sd of ${k} senders’ throughputs per interval, Fastpass (the paper's: ${PAPER_C[k].fp} over 1 s)`,
          unit: 'Mbit/s',
          paper: null,
          digits: 3,
        },
        {
          id: `base_sd${k}`,
          label: `the same, baseline (the paper's: ${PAPER_C[k].base} over 1 s)`,
          unit: 'Mbit/s',
          paper: null,
          digits: 1,
        },
        {
          id: `ratio${k}`,
          label: `baseline / Fastpass, ${k} senders (the paper's ${Math.round(PAPER_C[k].ratio)}× over 1 s intervals: not comparable)`,
          unit: '×',
          paper: null,
          digits: 0,
        },
      ]),
      {
        id: 'fp_frames5',
        label: 'the same sd in full frames per interval, Fastpass, 5 senders',
        unit: 'frames',
        paper: (PAPER_C[5].fp * 1e6) / FRAME_BITS,
        source: '§7.2, 0.087 Mbit/s over 1 s',
        digits: 2,
      },
      ...(opts.quick ? [] : [4, 5]).map(
        (k): FigureSpec => ({
          id: `fp_sd${k}_no_reserve`,
          label: `median sd of ${k} senders’ throughputs, Fastpass without its FCP timeslots (ablation)`,
          unit: 'Mbit/s',
          paper: null,
          digits: 3,
        }),
      ),
    ],
    variants,
    table: (o, runs) => tableC(o, sides(runs, variants)),
    values: (runs) => {
      const [fp, base, bare] = sides(runs, variants);
      const out: Record<string, number> = {};
      for (const k of ['3', '4', '5']) {
        const f = fp.fairness?.byActive[k]?.p50Mbps;
        const b = base.fairness?.byActive[k]?.p50Mbps;
        if (f !== undefined) out[`fp_sd${k}`] = f;
        if (b !== undefined) out[`base_sd${k}`] = b;
        if (f !== undefined && b !== undefined && f > 0) out[`ratio${k}`] = b / f;
      }
      for (const k of ['4', '5']) {
        const x = bare?.fairness?.byActive[k]?.p50Mbps;
        if (x !== undefined) out[`fp_sd${k}_no_reserve`] = x;
      }
      const ns = fp.fairness?.intervalNs;
      if (out.fp_sd5 !== undefined && ns) out.fp_frames5 = (out.fp_sd5 * 1e6 * (ns / 1e9)) / FRAME_BITS;
      return out;
    },
  });
}

function tableC(opts: ExperimentOptions, all: Side[]): string {
  const [fp, base, bare] = all;
  const active = [
    ...new Set([...Object.keys(fp.fairness?.byActive ?? {}), ...Object.keys(base.fairness?.byActive ?? {})]),
  ].sort((a, b) => Number(a) - Number(b));
  const med = (s: Side, k: string) => s.fairness?.byActive[k]?.p50Mbps;
  const n = (s: Side, k: string) => s.fairness?.byActive[k]?.intervals ?? 0;
  const lines = [
    `# Fastpass experiment C (§7.2): ${opts.file}`,
    '',
    `Median standard deviation of the senders' throughputs per ${(fp.fairness?.intervalNs ?? 0) / 1e6} ms interval, Mbit/s (over how many intervals):`,
    '',
    `| senders active | fastpass | baseline | lower by | the paper |${bare ? ' fastpass without FCP timeslots |' : ''}`,
    `| --- | --- | --- | --- | --- |${bare ? ' --- |' : ''}`,
    ...active.map((k) => {
      const p = PAPER_C[Number(k)];
      return `| ${k} | ${med(fp, k) ?? '-'} (${n(fp, k)}) | ${med(base, k) ?? '-'} (${n(base, k)}) | ${times(med(base, k) ?? 0, med(fp, k) ?? 0)} | ${p ? `${p.base} / ${p.fp} = ${p.ratio}×` : '-'} |${bare ? ` ${med(bare, k) ?? '-'} |` : ''}`;
    }),
    '',
    `Throughput ${fp.gbps} vs ${base.gbps} Gbit/s. The paper's intervals are 1 s, its phases 30 s.`,
  ];
  const table = lines.join('\n');
  writeTable(opts.out, 'fastpass-c', table, all);
  return table;
}
