/**
 * Fastpass's evaluation (SIGCOMM'14 §7.1–7.2) as commands: each runs its scenario twice, with
 * Fastpass and with the paper's baseline (the same file with `scheme.kind=ecmp`: the run's own
 * transport, loss-based Reno in the examples, on plain ECMP), and tables the two side by side.
 *
 * - `fastpass-a` (experiment A): the bottleneck queue's p50/p90/p99/p99.9 and the throughput;
 * - `fastpass-c` (experiment C): the median standard deviation of the senders' throughputs per
 *   interval, by how many were active (summary.fairness).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BusiestQueue, Fairness } from '../../orchestrator/collect.js';
import { runVariants } from '../../orchestrator/experiments.js';
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

/** runs the scenario once per side; null when aborted */
async function runBoth(opts: ExperimentOptions, label: string): Promise<Side[] | null> {
  const runs = await runVariants(opts, label, SIDES);
  return (
    runs?.map((s, i) => ({
      name: SIDES[i].name,
      queue: s.queues.busiest,
      gbps: s.throughput.gbps,
      fairness: s.fairness,
    })) ?? null
  );
}

const kb = (b: number | undefined) => (b === undefined ? '-' : `${(b / 1000).toFixed(1)} KB`);
const times = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(0)}×` : a > 0 ? '∞' : '-');

export async function runExperimentA(opts: ExperimentOptions): Promise<string> {
  const sides = await runBoth(opts, 'fastpass-a');
  if (sides === null) return '';
  const [fp, base] = sides;
  const lines = [
    `# Fastpass experiment A (§7.1): ${opts.file}`,
    '',
    '| | bottleneck port | p50 | p90 | p99 | p99.9 | throughput |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...sides.map(
      (s) =>
        `| ${s.name} | ${s.queue?.port ?? '-'} | ${kb(s.queue?.p50Bytes)} | ${kb(s.queue?.p90Bytes)} | ${kb(s.queue?.p99Bytes)} | ${kb(s.queue?.p999Bytes)} | ${s.gbps} Gbit/s |`,
    ),
    '',
    `Queue p50 ${kb(base.queue?.p50Bytes)} → ${kb(fp.queue?.p50Bytes)} with Fastpass (the paper: 4,351 KB → 18 KB); throughput ${(((fp.gbps - base.gbps) / (base.gbps || 1)) * 100).toFixed(1)}% against the baseline (the paper: −1.6%).`,
  ];
  const table = lines.join('\n');
  writeFileSync(join(opts.out, 'fastpass-a.md'), `${table}\n`);
  writeFileSync(join(opts.out, 'fastpass-a.json'), `${JSON.stringify(sides, null, 2)}\n`);
  return table;
}

export async function runExperimentC(opts: ExperimentOptions): Promise<string> {
  const sides = await runBoth(opts, 'fastpass-c');
  if (sides === null) return '';
  const [fp, base] = sides;
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
  writeFileSync(join(opts.out, 'fastpass-c.json'), `${JSON.stringify(sides, null, 2)}\n`);
  return table;
}
