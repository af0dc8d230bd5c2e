import { join } from 'node:path';
import {
  changePct,
  type ExperimentOptions,
  type FlowRow,
  flowRows,
  idealFctAfterHandshake,
} from '../../sdk/index.js';
import { type FigureSpec, reproduceVariants, type Summary, withQuick, writeTable } from '../../sdk/study.js';
import { type AblationVariant, chosenVariants } from './definition/variants.js';

/** TOP's headline comparisons: the paper's value goes beside both */
const HEADLINE = new Set(['top', 'top-switch-expiry', 'top-ptp']);

/**
 * `--quick`: 2 ms of IMC'10 flows at 0.6 load from 4 hosts to 4 (1.2 of the 20 Gbit/s link between the
 * switches), 10 processes a run instead of 18 (the full run: 50 ms of web search at 0.15, 8 hosts a side)
 */
const QUICK = [
  'topology.hostsPerSide=4',
  'workload.senders=h0..h3',
  'workload.receivers=h4..h7',
  'workload.sizes=imc10',
  'workload.duration=2ms',
  'workload.load=0.6',
  'run.drain=8ms',
];

/** the figures each variant has against ExpressPass, and the paper's for TOP's */
const RELATIVE = [
  { key: 'fct', what: 'average FCT', paper: -44.24, source: '§3.3' },
  { key: 'slow', what: 'average slowdown (ideal: the data alone)', paper: -81.4, source: '§3.3' },
  // §3.3 footnote 1: "Slowdown can be less than 1 if all data packets are successfully received before
  // hand-shaking finished": the paper's optimal FCT counts the handshake
  {
    key: 'slowhs',
    what: 'average slowdown (ideal: the handshake, then the data; §3.3 footnote 1)',
    paper: -81.4,
    source: '§3.3',
  },
] as const;

/**
 * §3.3: "TOP ... is a good approximation of the ideal switch. The FCT/slowdown differences between them
 * are only 3.54 percent/9.7 percent on average"
 */
const AGAINST_IDEAL = [
  { key: 'fct', what: 'average FCT', paper: 3.54 },
  { key: 'slow', what: 'average slowdown (ideal: the data alone)', paper: 9.7 },
  { key: 'slowhs', what: 'average slowdown (ideal: the handshake, then the data)', paper: 9.7 },
] as const;

/** flow-size intervals (bytes, upper bound inclusive): decades, Fig. 4's own bounds not being in its text */
const INTERVALS: ReadonlyArray<readonly [string, string, number]> = [
  ['10k', '≤ 10 KB', 10e3],
  ['100k', '10–100 KB', 100e3],
  ['1m', '100 KB–1 MB', 1e6],
  ['10m', '1–10 MB', 10e6],
  ['more', '> 10 MB', Number.POSITIVE_INFINITY],
];

interface IntervalMeans {
  flows: number;
  /** mean FCT (ns) and slowdown of the interval's flows (every one completed: the experiment asserts it) */
  fctNs: number;
  slowdown: number;
  /** their mean slowdown with the handshake in the ideal (§3.3 footnote 1) */
  slowdownHandshake: number;
}

/** one run's flows by size interval; `handshakeNs` the round trip §3.3 footnote 1's ideal counts */
function byInterval(rows: readonly FlowRow[], handshakeNs: number): IntervalMeans[] {
  return INTERVALS.map((_, i) => {
    const lo = i === 0 ? 0 : INTERVALS[i - 1][2];
    const xs = rows.filter((r) => r.size > lo && r.size <= INTERVALS[i][2] && r.completed);
    const mean = (f: (r: FlowRow) => number) =>
      xs.length ? xs.reduce((a, r) => a + f(r), 0) / xs.length : 0;
    return {
      flows: xs.length,
      fctNs: mean((r) => r.fctNs),
      slowdown: mean((r) => r.slowdown),
      slowdownHandshake: mean((r) => r.fctNs / idealFctAfterHandshake(r.idealNs, handshakeNs)),
    };
  });
}

const intervalsOf = (seedDir: string, variants: readonly AblationVariant[], runs: Summary[]) =>
  variants.map((v, i) => byInterval(flowRows(join(seedDir, v.name)), runs[i].expresspass!.handshakeNs));

/** a size interval's mean by the figure's key */
const ofKey = (m: IntervalMeans, key: (typeof RELATIVE)[number]['key']) =>
  key === 'fct' ? m.fctNs : key === 'slow' ? m.slowdown : m.slowdownHandshake;

export async function runAblation(opts: ExperimentOptions): Promise<string> {
  const VARIANTS = chosenVariants(opts.variants);
  return reproduceVariants(withQuick(opts, QUICK), {
    experiment: 'top-ablation',
    paperScale:
      'NS-3 (§3.2): a 4:1 dumbbell of 40 + 40 servers on 10 Gbps links, 10,000 flows of web search, data mining or IMC10 sizes',
    figures: ablationFigures(VARIANTS),
    variants: VARIANTS,
    table: (o, runs) => ablationTable(o, runs, VARIANTS),
    values: (runs, out) => ablationValues(runs, out, VARIANTS),
  });
}

/** the figures of the chosen variants: each against its base, TOP's by size and against the ideal */
function ablationFigures(VARIANTS: readonly AblationVariant[]): FigureSpec[] {
  const has = (name: string) => VARIANTS.some((v) => v.name === name);
  return [
    ...RELATIVE.flatMap((f) =>
      VARIANTS.filter((v) => v.base !== undefined).map((v) => ({
        id: `${f.key}_${v.name}`,
        label: `${f.what}, ${v.name} against ${v.base}`,
        unit: '%',
        paper: HEADLINE.has(v.name) ? f.paper : null,
        ...(HEADLINE.has(v.name) && { source: f.source }),
        digits: 1,
      })),
    ),
    ...(has('top') ? INTERVALS : []).flatMap(([key, label]) =>
      RELATIVE.map((f) => ({
        id: `${f.key}_top_${key}`,
        label: `${f.what} of flows ${label}, top against expresspass (seeds with such flows)`,
        unit: '%',
        paper:
          f.key === 'fct'
            ? 'below 0 for most flows, "slightly larger" for large flows in the last interval (§3.3, Fig. 4a/4b)'
            : 'below 0 for most flows (§3.3, Fig. 4)',
        digits: 1,
      })),
    ),
    ...(has('top') && has('top-ideal-classes') ? AGAINST_IDEAL : []).map((f) => ({
      id: `${f.key}_top_vs_ideal`,
      label: `${f.what}, top against top-ideal-classes`,
      unit: '%',
      paper: `a difference of ${f.paper}% "on average" (sign not given)`,
      source: '§3.3',
      digits: 1,
    })),
    ...(has('top-ptp')
      ? [
          {
            id: 'expired_valid_top-ptp',
            label: 'valid tokens dropped as expired, top-ptp',
            unit: 'tokens',
            paper: null,
            digits: 0,
          },
        ]
      : []),
    { id: 'flows', label: 'flows in the trace', unit: 'flows', paper: null, digits: 0 },
    {
      id: 'unfinished',
      label: 'flows a variant did not complete (all variants)',
      unit: 'flows',
      paper: 0,
      digits: 0,
      bound: { max: 0 },
    },
    {
      id: 'data_lost',
      label: 'data frames lost to full buffers (all variants)',
      unit: 'frames',
      paper: 0,
      digits: 0,
      bound: { max: 0 },
    },
  ];
}

function ablationValues(
  runs: Summary[],
  out: string,
  VARIANTS: readonly AblationVariant[],
): Record<string, number> {
  const has = (name: string) => VARIANTS.some((v) => v.name === name);
  const x = runs.map((s) => s.expresspass!);
  const of = (name: string) => x[VARIANTS.findIndex((v) => v.name === name)];
  const v: Record<string, number> = {
    flows: runs[0].flows.planned,
    // every variant must finish every flow: averages over different sets of flows compare nothing
    unfinished: runs.reduce((a, s) => a + s.flows.planned - s.flows.completed, 0),
    data_lost: x.reduce((a, s) => a + s.data.droppedCongestion, 0),
  };
  if (has('top-ptp')) v['expired_valid_top-ptp'] = of('top-ptp').tokens?.expiredValid ?? 0;
  VARIANTS.forEach((variant, i) => {
    if (variant.base === undefined) return;
    const base = of(variant.base);
    v[`fct_${variant.name}`] = changePct(x[i].fct.avgNs, base.fct.avgNs);
    v[`slow_${variant.name}`] = changePct(x[i].slowdown.avg, base.slowdown.avg);
    v[`slowhs_${variant.name}`] = changePct(x[i].slowdownHandshake.avg, base.slowdownHandshake.avg);
  });
  if (!has('top')) return v;
  if (has('top-ideal-classes')) {
    const [top, ideal] = [of('top'), of('top-ideal-classes')];
    v.fct_top_vs_ideal = changePct(top.fct.avgNs, ideal.fct.avgNs);
    v.slow_top_vs_ideal = changePct(top.slowdown.avg, ideal.slowdown.avg);
    v.slowhs_top_vs_ideal = changePct(top.slowdownHandshake.avg, ideal.slowdownHandshake.avg);
  }
  const iv = intervalsOf(out, VARIANTS, runs);
  const [xp, top] = ['expresspass', 'top'].map((n) => iv[VARIANTS.findIndex((x) => x.name === n)]);
  INTERVALS.forEach(([key], j) => {
    if (xp[j].flows === 0) return;
    for (const f of RELATIVE) v[`${f.key}_top_${key}`] = changePct(ofKey(top[j], f.key), ofKey(xp[j], f.key));
  });
  return v;
}

function ablationTable(
  opts: ExperimentOptions,
  runs: Summary[],
  VARIANTS: readonly AblationVariant[],
): string {
  const x = runs.map((s) => s.expresspass!);
  const iv = intervalsOf(opts.out, VARIANTS, runs);
  const us = (ns: number) => `${(ns / 1000).toFixed(1)} µs`;
  const lines = [
    `# TOP ablation: ${opts.file}`,
    '',
    'One change per row, the same trace and buffers; the last two on PTP-disciplined clocks with late sends.',
    'Slowdown is FCT over an ideal FCT: the data alone in the empty network (sd), or the handshake and then',
    `the data (sd+hs, §3.3 footnote 1; the handshake is the unloaded round trip of the 84 B credit request and the first credit on the longest host path: ${us(x[0].handshakeNs)}):`,
    '',
    '| variant | flows | avg FCT | p99 FCT | < 100 KB avg | avg sd | p99 sd | avg sd+hs | p99 sd+hs | data lost | largest queue |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...VARIANTS.map(
      (v, i) =>
        `| ${v.name} | ${runs[i].flows.completed}/${runs[i].flows.planned} | ${us(x[i].fct.avgNs)} | ${us(x[i].fct.p99Ns)} | ${us(x[i].fct.small.avgNs)} | ${x[i].slowdown.avg} | ${x[i].slowdown.p99} | ${x[i].slowdownHandshake.avg} | ${x[i].slowdownHandshake.p99} | ${x[i].data.droppedCongestion} | ${(x[i].maxQueueBytes / 1000).toFixed(1)} KB |`,
    ),
    '',
    `The credit bound on queues (every variant): ${(x[0].queueBoundBytes / 1000).toFixed(1)} KB.`,
    '',
    'By flow size (Fig. 4: average FCT / average sd / average sd+hs of the flows in each interval; - : none):',
    '',
    `| variant | ${INTERVALS.map(([, label]) => label).join(' | ')} |`,
    `| --- | ${INTERVALS.map(() => '---').join(' | ')} |`,
    ...VARIANTS.map(
      (v, i) =>
        `| ${v.name} | ${iv[i].map((m) => (m.flows === 0 ? '-' : `${us(m.fctNs)} / ${m.slowdown.toFixed(2)} / ${m.slowdownHandshake.toFixed(2)} (${m.flows})`)).join(' | ')} |`,
    ),
  ];
  const table = lines.join('\n');
  writeTable(
    opts.out,
    'top-ablation',
    table,
    VARIANTS.map((v, i) => ({
      variant: v.name,
      fct: x[i].fct,
      slowdown: x[i].slowdown,
      slowdownHandshake: x[i].slowdownHandshake,
      bySize: INTERVALS.map(([key, label], j) => ({ key, label, ...iv[i][j] })),
    })),
  );
  return table;
}
