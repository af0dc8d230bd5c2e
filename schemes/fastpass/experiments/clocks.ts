/**
 * `fastpass-clocks` (Fastpass SIGCOMM'14 §6.3's claim; schemes/fastpass/experiments.ts): experiment A's
 * bottleneck queue on drifting clocks disciplined by PTP as deployed, with and without send lateness
 * and with software stamps, and the claim's control with the switches as transparent clocks.
 */
import { type ExperimentOptions, OSCILLATORS, SEND_JITTER } from '../../../sdk/index.js';
import {
  type FigureSpec,
  reproduceVariants,
  type Summary,
  withQuick,
  writeTable,
} from '../../../sdk/study.js';
import { QUICK_A } from './experiment-a.js';
import { DEPLOYED_PTP, kb } from './shared.js';

/** PTP as deployed, with the switches as transparent clocks instead (the control of §6.3's claim) */
const TC_PTP = '{timestamping: hardware, transparentClocks: true}';

const CLOCK_VARIANTS = [
  { name: 'ideal', set: {} },
  { name: 'ptp-hardware', set: { clocks: OSCILLATORS, ptp: DEPLOYED_PTP } },
  { name: 'ptp-hardware-send-jitter', set: { clocks: OSCILLATORS, ptp: DEPLOYED_PTP, jitter: SEND_JITTER } },
  {
    name: 'ptp-software-send-jitter',
    set: {
      clocks: OSCILLATORS,
      ptp: '{timestamping: software, transparentClocks: false}',
      jitter: SEND_JITTER,
    },
  },
] as const;

/**
 * §6.3's claim (the full run only): the same traffic, clocks and seed on the baseline (one change, the
 * scheme), and the control: both sides again with the switches as PTP transparent clocks.
 */
const CLAIM_VARIANTS = [
  { name: 'baseline-ptp-hardware', set: { 'scheme.kind': 'ecmp', clocks: OSCILLATORS, ptp: DEPLOYED_PTP } },
  { name: 'ptp-hardware-tc', set: { clocks: OSCILLATORS, ptp: TC_PTP } },
  { name: 'baseline-ptp-hardware-tc', set: { 'scheme.kind': 'ecmp', clocks: OSCILLATORS, ptp: TC_PTP } },
] as const;

/** §6.3's claim, side by side: which variant is Fastpass and which the baseline, without and with TCs */
const CLAIM_PAIRS = [
  { label: 'no transparent clocks', fp: 'ptp-hardware', base: 'baseline-ptp-hardware', id: '' },
  {
    label: 'transparent clocks (control)',
    fp: 'ptp-hardware-tc',
    base: 'baseline-ptp-hardware-tc',
    id: '_tc',
  },
] as const;

/**
 * `fastpass-clocks`: experiment A's bottleneck queue on the clocks Fastpass really runs on. Each seed
 * runs the scenario on ideal clocks (the example's, where the zero queue is built in), then on drifting
 * oscillators disciplined by PTP as the deployment had it (hardware stamps, no transparent clocks),
 * with and without the hosts' send lateness, and with software stamps. The oscillators are drawn from
 * the seed. The queue's figures include the first milliseconds before the servos lock.
 *
 * It also tests §6.3's claim, "Fastpass keeps queue-length variability low, enabling high quality time
 * synchronization without PTP switch support": the baseline on the same traffic, seed and clocks with
 * PTP as deployed (hardware stamps, no transparent clocks), the clock error after lock side by side,
 * and both sides with transparent clocks, the control (they take the switches' queueing out of the
 * offsets). The full run only (four runs a seed). PTP rides the control class (priority 7,
 * core/ptp.ts), which the switches serve first: the data's standing queue delays a PTP frame only by
 * the frame on the wire, not by the queue.
 */
export async function runClocks(opts: ExperimentOptions): Promise<string> {
  const variants = opts.quick ? CLOCK_VARIANTS : [...CLOCK_VARIANTS, ...CLAIM_VARIANTS];
  const figures: FigureSpec[] = CLOCK_VARIANTS.flatMap((v) => [
    {
      id: `p50_${v.name}`,
      label: `bottleneck queue p50, ${v.name}`,
      unit: 'KB',
      paper: v.name === 'ptp-hardware-send-jitter' ? 18 : null,
      ...(v.name === 'ptp-hardware-send-jitter' && { source: '§7.1' }),
    },
    { id: `p99_${v.name}`, label: `bottleneck queue p99, ${v.name}`, unit: 'KB', paper: null },
    { id: `late_${v.name}`, label: `late timeslots, ${v.name}`, unit: 'timeslots', paper: null, digits: 0 },
  ]);
  figures.push({
    id: 'clock_err_p99',
    label: 'clock error p99 after lock, ptp-hardware',
    unit: 'ns',
    paper: null,
  });
  for (const pair of opts.quick ? [] : CLAIM_PAIRS)
    for (const side of ['fp', 'base'] as const)
      for (const q of ['p50', 'p99'] as const)
        figures.push({
          id: `claim_${side}_${q}${pair.id}`,
          label: `clock error ${q} after lock, ${side === 'fp' ? 'Fastpass' : 'baseline'}, ${pair.label} (§6.3)`,
          unit: 'ns',
          paper: null,
          digits: 0,
        });
  const late = (s: Summary) => s.fastpass?.timeslots.late;
  return reproduceVariants(withQuick(opts, QUICK_A), {
    experiment: 'fastpass-clocks',
    paperScale: 'a rack of 32 servers at 10 Gbit/s, PTP with NIC hardware stamps, Linux hrtimers',
    figures,
    variants,
    table: (o, runs) => {
      const t = [
        `# Fastpass experiment A on real clocks: ${o.file}`,
        '',
        '| clocks | queue p50 | p99 | p99.9 | max | late timeslots | clock error after lock p50 / p99 / every sample p99 | throughput |',
        '| --- | --- | --- | --- | --- | --- | --- | --- |',
        ...runs.map((s, i) => {
          const q = s.queues.busiest;
          const c = s.clocks;
          return `| ${variants[i].name} | ${kb(q?.p50Bytes)} | ${kb(q?.p99Bytes)} | ${kb(q?.p999Bytes)} | ${kb(q?.maxBytes)} | ${late(s) ?? '-'} | ${c ? `${c.errP50Ns} / ${c.errP99Ns} / ${c.allSamples.errP99Ns} ns` : '-'} | ${s.throughput.gbps} Gbit/s |`;
        }),
      ].join('\n');
      writeTable(o.out, 'fastpass-clocks', t);
      return t;
    },
    values: (runs) => {
      const v: Record<string, number> = {};
      const byName = new Map(runs.map((s, i) => [variants[i].name, s]));
      for (const x of CLOCK_VARIANTS) {
        const s = byName.get(x.name)!;
        v[`p50_${x.name}`] = (s.queues.busiest?.p50Bytes ?? 0) / 1000;
        v[`p99_${x.name}`] = (s.queues.busiest?.p99Bytes ?? 0) / 1000;
        v[`late_${x.name}`] = late(s) ?? 0;
      }
      const hw = byName.get('ptp-hardware')?.clocks;
      if (hw) v.clock_err_p99 = hw.errP99Ns;
      for (const pair of CLAIM_PAIRS)
        for (const side of ['fp', 'base'] as const) {
          const c = byName.get(pair[side])?.clocks;
          if (!c) continue;
          v[`claim_${side}_p50${pair.id}`] = c.errP50Ns;
          v[`claim_${side}_p99${pair.id}`] = c.errP99Ns;
        }
      return v;
    },
  });
}
