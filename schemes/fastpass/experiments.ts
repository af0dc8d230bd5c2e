/**
 * Fastpass's evaluation (SIGCOMM'14 §7.1–7.2) as reproductions (orchestrator/reproduction.ts): each
 * seed runs the scenario twice, with Fastpass and with the paper's baseline (the same file with
 * `scheme.kind=ecmp`: the run's own transport, loss-based Reno in the examples, on plain ECMP); the
 * headline figures are aggregated over the seeds beside the paper's, and the first seed's full table
 * follows.
 *
 * - `fastpass-a` (experiment A): the bottleneck queue's p50/p90/p99/p99.9 and the throughput;
 * - `fastpass-c` (experiment C): the median standard deviation of the senders' throughputs per
 *   interval, by how many were active (summary.fairness).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { OSCILLATORS, SEND_JITTER } from '../../orchestrator/clock-presets.js';
import type { BusiestQueue, Fairness, Summary } from '../../orchestrator/collect.js';
import { reproduceVariants, withQuick } from '../../orchestrator/reproduction.js';
import type { ExperimentOptions } from '../../orchestrator/schemes/types.js';

interface Side {
  name: string;
  queue: BusiestQueue | null;
  gbps: number;
  fairness: Fairness | null;
}

const SIDES = [
  { name: 'fastpass', set: { 'scheme.kind': 'fastpass' } },
  { name: 'baseline', set: { 'scheme.kind': 'ecmp' } },
] as const;

/** what the tables read of each side's run */
function sides(runs: Summary[]): Side[] {
  return runs.map((s, i) => ({
    name: SIDES[i].name,
    queue: s.queues.busiest,
    gbps: s.throughput.gbps,
    fairness: s.fairness,
  }));
}

const kb = (b: number | undefined) => (b === undefined ? '-' : `${(b / 1000).toFixed(1)} KB`);
const times = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(0)}×` : a > 0 ? '∞' : '-');

/**
 * `--quick`: the first 4 ms of traffic, on one spine instead of the example's four: the rack's traffic
 * stays under its ToR, so the spines carry nothing but keepalives, and the figures are the same with one
 * (three idle processes fewer a run)
 */
const QUICK_A = ['workload.duration=4ms', 'topology.spines=1'];

export async function runExperimentA(opts: ExperimentOptions): Promise<string> {
  return reproduceVariants(withQuick(opts, QUICK_A), {
    experiment: 'fastpass-a',
    paperScale: "a rack of 32 servers at 10 Gbit/s under Facebook's production load, hours",
    figures: [
      { id: 'fp_p50_kb', label: 'bottleneck queue p50, Fastpass', unit: 'KB', paper: 18, source: '§7.1' },
      { id: 'base_p50_kb', label: 'bottleneck queue p50, baseline', unit: 'KB', paper: 4351, source: '§7.1' },
      { id: 'fp_p99_kb', label: 'bottleneck queue p99, Fastpass', unit: 'KB', paper: null },
      {
        id: 'throughput_pct',
        label: 'throughput, Fastpass against the baseline',
        unit: '%',
        paper: -1.6,
        source: '§7.1',
        digits: 1,
      },
    ],
    variants: SIDES,
    table: (o, runs) => tableA(o, sides(runs)),
    values: (runs) => {
      const [fp, base] = sides(runs);
      return {
        fp_p50_kb: (fp.queue?.p50Bytes ?? 0) / 1000,
        base_p50_kb: (base.queue?.p50Bytes ?? 0) / 1000,
        fp_p99_kb: (fp.queue?.p99Bytes ?? 0) / 1000,
        throughput_pct: ((fp.gbps - base.gbps) / (base.gbps || 1)) * 100,
      };
    },
  });
}

function tableA(opts: ExperimentOptions, both: Side[]): string {
  const [fp, base] = both;
  const lines = [
    `# Fastpass experiment A (§7.1): ${opts.file}`,
    '',
    '| | bottleneck port | p50 | p90 | p99 | p99.9 | throughput |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...both.map(
      (s) =>
        `| ${s.name} | ${s.queue?.port ?? '-'} | ${kb(s.queue?.p50Bytes)} | ${kb(s.queue?.p90Bytes)} | ${kb(s.queue?.p99Bytes)} | ${kb(s.queue?.p999Bytes)} | ${s.gbps} Gbit/s |`,
    ),
    '',
    `Queue p50 ${kb(base.queue?.p50Bytes)} → ${kb(fp.queue?.p50Bytes)} with Fastpass (the paper: 4,351 KB → 18 KB); throughput ${(((fp.gbps - base.gbps) / (base.gbps || 1)) * 100).toFixed(1)}% against the baseline (the paper: −1.6%).`,
  ];
  const table = lines.join('\n');
  writeFileSync(join(opts.out, 'fastpass-a.md'), `${table}\n`);
  writeFileSync(join(opts.out, 'fastpass-a.json'), `${JSON.stringify(both, null, 2)}\n`);
  return table;
}

/** `--quick`: the example on one spine (its senders and receiver share the ToR, as in experiment A) */
const QUICK_C = ['topology.spines=1'];

export async function runExperimentC(opts: ExperimentOptions): Promise<string> {
  return reproduceVariants(withQuick(opts, QUICK_C), {
    experiment: 'fastpass-c',
    paperScale: 'five senders to one receiver at 10 Gbit/s, 1 s intervals',
    figures: [
      {
        id: 'fp_sd5',
        label: 'median sd of 5 senders’ throughputs, Fastpass',
        unit: 'Mbit/s',
        paper: null,
        digits: 3,
      },
      { id: 'base_sd5', label: 'the same, baseline', unit: 'Mbit/s', paper: null, digits: 1 },
      { id: 'ratio5', label: 'baseline / Fastpass', unit: '×', paper: 5200, source: '§7.2', digits: 0 },
    ],
    variants: SIDES,
    table: (o, runs) => tableC(o, sides(runs)),
    values: (runs) => {
      const [fp, base] = sides(runs);
      const f = fp.fairness?.byActive['5']?.p50Mbps;
      const b = base.fairness?.byActive['5']?.p50Mbps;
      return {
        ...(f !== undefined && { fp_sd5: f }),
        ...(b !== undefined && { base_sd5: b }),
        ...(f !== undefined && b !== undefined && f > 0 && { ratio5: b / f }),
      };
    },
  });
}

function tableC(opts: ExperimentOptions, both: Side[]): string {
  const [fp, base] = both;
  const active = [
    ...new Set([...Object.keys(fp.fairness?.byActive ?? {}), ...Object.keys(base.fairness?.byActive ?? {})]),
  ].sort((a, b) => Number(a) - Number(b));
  const med = (s: Side, k: string) => s.fairness?.byActive[k]?.p50Mbps;
  const lines = [
    `# Fastpass experiment C (§7.2): ${opts.file}`,
    '',
    `Median standard deviation of the senders' throughputs per ${(fp.fairness?.intervalNs ?? 0) / 1e6} ms interval, Mbit/s:`,
    '',
    '| senders active | fastpass | baseline | lower by |',
    '| --- | --- | --- | --- |',
    ...active.map(
      (k) =>
        `| ${k} | ${med(fp, k) ?? '-'} | ${med(base, k) ?? '-'} | ${times(med(base, k) ?? 0, med(fp, k) ?? 0)} |`,
    ),
    '',
    `Throughput ${fp.gbps} vs ${base.gbps} Gbit/s. The paper: over 5200× lower with five connections, over 1 s intervals.`,
  ];
  const table = lines.join('\n');
  writeFileSync(join(opts.out, 'fastpass-c.md'), `${table}\n`);
  writeFileSync(join(opts.out, 'fastpass-c.json'), `${JSON.stringify(both, null, 2)}\n`);
  return table;
}

/** the deployment's timing (§6): PTP with NIC hardware stamps and no PTP support in the switches */
const DEPLOYED_PTP = '{timestamping: hardware, transparentClocks: false}';

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
 * `fastpass-clocks`: experiment A's bottleneck queue on the clocks Fastpass really runs on. Each seed
 * runs the scenario on ideal clocks (the example's, where the zero queue is built in), then on drifting
 * oscillators disciplined by PTP as the deployment had it (hardware stamps, no transparent clocks),
 * with and without the hosts' send lateness, and with software stamps. The oscillators are drawn from
 * the seed. The queue's figures include the first milliseconds before the servos lock.
 */
export async function runClocks(opts: ExperimentOptions): Promise<string> {
  const figures = CLOCK_VARIANTS.flatMap((v) => [
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
  const late = (s: Summary) => s.fastpass!.timeslots.late;
  return reproduceVariants(withQuick(opts, QUICK_A), {
    experiment: 'fastpass-clocks',
    paperScale: 'a rack of 32 servers at 10 Gbit/s, PTP with NIC hardware stamps, Linux hrtimers',
    figures,
    variants: CLOCK_VARIANTS,
    table: (o, runs) => {
      const t = [
        `# Fastpass experiment A on real clocks: ${o.file}`,
        '',
        '| clocks | queue p50 | p99 | p99.9 | max | late timeslots | clock error p99 after lock / every sample | throughput |',
        '| --- | --- | --- | --- | --- | --- | --- | --- |',
        ...runs.map((s, i) => {
          const q = s.queues.busiest;
          const c = s.clocks;
          return `| ${CLOCK_VARIANTS[i].name} | ${kb(q?.p50Bytes)} | ${kb(q?.p99Bytes)} | ${kb(q?.p999Bytes)} | ${kb(q?.maxBytes)} | ${late(s)} | ${c ? `${c.errP99Ns} ns / ${c.allSamples.errP99Ns} ns` : '-'} | ${s.throughput.gbps} Gbit/s |`;
        }),
      ].join('\n');
      writeFileSync(join(o.out, 'fastpass-clocks.md'), `${t}\n`);
      return t;
    },
    values: (runs) => {
      const v: Record<string, number> = {};
      runs.forEach((s, i) => {
        const name = CLOCK_VARIANTS[i].name;
        v[`p50_${name}`] = (s.queues.busiest?.p50Bytes ?? 0) / 1000;
        v[`p99_${name}`] = (s.queues.busiest?.p99Bytes ?? 0) / 1000;
        v[`late_${name}`] = late(s);
      });
      if (runs[1].clocks) v.clock_err_p99 = runs[1].clocks.errP99Ns;
      return v;
    },
  });
}
