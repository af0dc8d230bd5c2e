/**
 * `dcemu experiment clock-pdv`: PTP's clock error under the delay variation a fabric gives it
 * (docs/clocks.md#delay-variation). On examples/clock-pdv.yaml (hardware stamps, end to end, switches
 * not PTP-aware, h0 the grandmaster and the reference), one thing at a time:
 *
 * - an asymmetric link (the grandmaster's uplink slower one way), quiet: end-to-end PTP takes the path
 *   as symmetric, so every slave behind it is off by half the asymmetry (IEEE 1588's offset from the
 *   four stamps: ((t2 − t1) − (t4 − t3)) / 2); transparent clocks and peer-to-peer delay do not remove
 *   it (they correct residence time and measure the mean link delay), nor do boundary clocks (each
 *   hop's slave sees the same asymmetry), which the theory says and the runs check (the boundary-clock
 *   variant's p99 and max can also hold the far rack's hosts before their first servo step: the
 *   hierarchy forms one switch per announce interval and reaches them at the warm-up's end;
 *   docs/clocks.md#delay-variation);
 * - delay that varies on every link (normal, its standard deviation swept), quiet: noise the servo
 *   filters; transparent clocks do not see it (it is on the wire, not in a switch);
 * - the fabric's own queues at swept loads of web-search traffic, without and with transparent clocks:
 *   residence time that transparent clocks remove;
 * - software stamps on a quiet fabric: the host's own stamp noise, for scale.
 *
 * Each variant's figures are the slaves' true clock error over every sample after the warm-up (p50,
 * p99, max) and the share of them whose servo declared lock, beside the theory where it gives one.
 * Exact in conservative mode.
 */
import type { Overrides } from '../api.js';
import type { Summary } from '../engine/collect.js';
import type { ExperimentOptions } from '../registry/types.js';
import { type FigureSpec, fmt, reproduceVariants, writeTable } from './reproduction.js';

/** a quiet fabric: one small flow near the end, so that the workload has one (PTP alone runs) */
const QUIET = '{pattern: list, duration: 6ms, flows: [{src: h2, dst: h3, size: 1KB, start: 5ms}]}';
/** the grandmaster's uplink, one way slower by `ns` */
const asymmetric = (ns: number) => `[{link: [h0, leaf0], from: h0, delay: ${1000 + ns}ns}]`;
const TC =
  '{timestamping: hardware, switchClocks: transparent, warmup: 4ms, syncInterval: 100us, announceInterval: 1ms, candidates: [h0]}';
const BC =
  '{timestamping: hardware, switchClocks: boundary, warmup: 4ms, syncInterval: 100us, announceInterval: 1ms, candidates: [h0]}';
const SOFTWARE =
  '{timestamping: software, switchClocks: none, warmup: 4ms, syncInterval: 100us, announceInterval: 1ms, candidates: [h0]}';
const P2P =
  '{timestamping: hardware, switchClocks: transparent, delayMechanism: p2p, warmup: 4ms, syncInterval: 100us, announceInterval: 1ms, candidates: [h0]}';
/** every link's delay normal around its 1 µs, standard deviation `ns` */
const varying = (ns: number) => `{rate: 10Gbps, delay: {dist: normal, mean: 1us, jitter: ${ns}ns}}`;

interface Variant {
  name: string;
  words: string;
  set: Overrides;
  /** what the theory says the slaves' |error| is, ns (null: it gives no figure) */
  theoryNs: number | null;
}

function variants(quick: boolean): Variant[] {
  const asyms = quick ? [1000] : [200, 1000, 4000];
  const sigmas = quick ? [] : [100, 300];
  const loads = quick ? [0.5] : [0.3, 0.6];
  return [
    ...(quick
      ? []
      : [{ name: 'quiet', words: 'quiet, symmetric links', set: { workload: QUIET }, theoryNs: 0 }]),
    ...asyms.map((a) => ({
      name: `asym-${a}ns`,
      words: `the grandmaster's uplink ${a} ns slower one way, quiet`,
      set: { workload: QUIET, 'links.each': asymmetric(a) },
      theoryNs: a / 2,
    })),
    {
      name: 'asym-1000ns-tc',
      words: 'the same 1000 ns asymmetry, transparent clocks',
      set: { workload: QUIET, 'links.each': asymmetric(1000), ptp: TC },
      theoryNs: 500,
    },
    ...(quick
      ? []
      : ([
          {
            name: 'asym-1000ns-p2p',
            words: 'the same 1000 ns asymmetry, peer-to-peer delay, transparent clocks',
            set: { workload: QUIET, 'links.each': asymmetric(1000), ptp: P2P },
            theoryNs: 500,
          },
          {
            name: 'asym-1000ns-bc',
            words: 'the same 1000 ns asymmetry, boundary clocks in the switches',
            set: { workload: QUIET, 'links.each': asymmetric(1000), ptp: BC },
            theoryNs: 500,
          },
          {
            name: 'quiet-sw',
            words: 'quiet, symmetric links, software stamps',
            set: { workload: QUIET, ptp: SOFTWARE },
            theoryNs: null,
          },
        ] as Variant[])),
    ...sigmas.flatMap((sd): Variant[] => [
      {
        name: `pdv-${sd}ns`,
        words: `every link's delay normal, σ ${sd} ns, quiet`,
        set: { workload: QUIET, 'links.host': varying(sd), 'links.fabric': varying(sd) },
        theoryNs: null,
      },
      {
        name: `pdv-${sd}ns-tc`,
        words: `every link's delay normal, σ ${sd} ns, quiet, transparent clocks`,
        set: { workload: QUIET, 'links.host': varying(sd), 'links.fabric': varying(sd), ptp: TC },
        theoryNs: null,
      },
    ]),
    ...loads.flatMap((load): Variant[] => [
      {
        name: `load-${load}`,
        words: `web-search traffic at load ${load}, switches not PTP-aware`,
        set: { 'workload.load': load },
        theoryNs: null,
      },
      {
        name: `load-${load}-tc`,
        words: `web-search traffic at load ${load}, transparent clocks`,
        set: { 'workload.load': load, ptp: TC },
        theoryNs: null,
      },
    ]),
  ];
}

/**
 * the slaves' |error| over every sample from traffic start (after the PTP warm-up), locked or not: a
 * servo that never declares lock under strong delay variation still steers its clock, and "after
 * lock" would then be empty
 */
const STATS = [
  ['p50', 'errP50Ns', 'p50'],
  ['p99', 'errP99Ns', 'p99'],
  ['max', 'errMaxNs', 'max'],
] as const;

export async function runClockPdv(opts: ExperimentOptions): Promise<string> {
  const vs = variants(opts.quick === true);
  const o = opts.quick ? { ...opts, set: ['workload.duration=2ms', ...(opts.set ?? [])] } : opts;
  const figures: FigureSpec[] = vs.flatMap((v) => [
    ...STATS.map(([key, , words]) => ({
      id: `${v.name}_${key}_ns`,
      label: `slaves' |clock error| ${words}, every sample after the warm-up, ${v.words}${v.theoryNs !== null ? ` (theory: ${v.theoryNs} ns)` : ''}`,
      unit: 'ns',
      paper: null,
      digits: 0,
    })),
    {
      id: `${v.name}_locked`,
      label: `share of the slaves whose servo declared lock, ${v.words}`,
      unit: '%',
      paper: null,
      digits: 0,
    },
    ...(v.theoryNs !== null && v.theoryNs > 0
      ? [
          {
            id: `${v.name}_over_theory`,
            label: `the same p50 over the theory's ${v.theoryNs} ns (half the asymmetry)`,
            unit: '×',
            paper: null,
            digits: 3,
          },
        ]
      : []),
  ]);
  const clocks = (s: Summary) => {
    if (!s.clocks) throw new Error('clock-pdv: a run without clocks (the scenario needs clocks: and ptp:)');
    return s.clocks;
  };
  return reproduceVariants(o, {
    experiment: 'clock-pdv',
    paperScale:
      'no paper: IEEE 1588 end to end takes the path as symmetric, so an asymmetry a offsets a slave by a/2; transparent clocks remove switch residence time, not link asymmetry or wire delay variation',
    figures,
    variants: vs.map((v) => ({ name: v.name, set: v.set })),
    table: (so, runs) => {
      const rows = vs.map((v, i) => {
        const c = clocks(runs[i]);
        const a = c.allSamples;
        return `| ${v.words} | ${c.lockedNodes}/${c.slaves} | ${fmt(a.errP50Ns, 0)} | ${fmt(a.errP99Ns, 0)} | ${fmt(a.errMaxNs, 0)} | ${fmt(c.meanErrNs, 0)} | ${v.theoryNs === null ? '-' : fmt(v.theoryNs, 0)} |`;
      });
      const table = [
        '| what varies | slaves locked | error p50 (ns), every sample | p99 | max | mean after lock, signed | theory |',
        '| --- | --- | --- | --- | --- | --- | --- |',
        ...rows,
      ].join('\n');
      writeTable(so.out, 'clock-pdv', table);
      return table;
    },
    values: (runs) => {
      const v: Record<string, number> = {};
      vs.forEach((x, i) => {
        const c = clocks(runs[i]);
        for (const [key, field] of STATS) v[`${x.name}_${key}_ns`] = c.allSamples[field];
        v[`${x.name}_locked`] = c.slaves > 0 ? (100 * c.lockedNodes) / c.slaves : 0;
        if (x.theoryNs !== null && x.theoryNs > 0)
          v[`${x.name}_over_theory`] = c.allSamples.errP50Ns / x.theoryNs;
      });
      return v;
    },
  });
}
