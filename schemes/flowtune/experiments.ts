/**
 * Flowtune's evaluation (TR'16 §6.3, §6.5) as reproductions (orchestrator/reproduction.ts), each seed
 * against DCTCP on the same trace (the scenario with `scheme.kind=ecmp`: the baseline transport, DCTCP
 * in the examples, on plain ECMP); the headline figures over the seeds, then the first seed's table:
 *
 * - `flowtune-convergence` (§6.3, figure 4): per start and stop of a sender, the time until every flow
 *   is within 10% of its fair share: Flowtune's from the rates the hosts applied, and both schemes'
 *   from the throughput per `run.interval` (summary.fairness.convergence);
 * - `flowtune-websearch` (§6.5, figure 8): p99 FCT by flowlet size and the p99 queue, for Flowtune as
 *   the scenario has it (its timeline kills the allocator), Flowtune with the allocator left alive
 *   (`timeline=[]`), and DCTCP; the lapses of the first run.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatNs } from '../../core/time.js';
import type { Summary } from '../../orchestrator/collect.js';
import { reproduceVariants } from '../../orchestrator/reproduction.js';
import type { ExperimentOptions } from '../../orchestrator/schemes/types.js';

const us = (ns: number | null | undefined) => (ns === null || ns === undefined ? 'never' : formatNs(ns));

function write(opts: ExperimentOptions, name: string, table: string, data: unknown): string {
  writeFileSync(join(opts.out, `${name}.md`), `${table}\n`);
  writeFileSync(join(opts.out, `${name}.json`), `${JSON.stringify(data, null, 2)}\n`);
  return table;
}

export async function runConvergence(opts: ExperimentOptions): Promise<string> {
  return reproduceVariants(opts, {
    experiment: 'flowtune-convergence',
    paperScale: 'five senders to one receiver at 10 Gbit/s (ns-2), 1 ms apart',
    figures: [
      {
        id: 'rates_max_us',
        label: 'slowest convergence to 1/N, Flowtune’s rates',
        unit: 'µs',
        paper: 20,
        source: '§6.3',
        digits: 1,
      },
      {
        id: 'rates_p50_us',
        label: 'median convergence, Flowtune’s rates',
        unit: 'µs',
        paper: null,
        digits: 1,
      },
      {
        id: 'thr_max_us',
        label: 'slowest convergence, Flowtune’s throughput (per run.interval)',
        unit: 'µs',
        paper: null,
        digits: 1,
      },
      {
        id: 'dctcp_never',
        label: 'changes DCTCP’s throughput never came within 10% of',
        unit: 'of 7',
        paper: null,
        digits: 0,
      },
    ],
    variants: [
      { name: 'flowtune', set: { 'scheme.kind': 'flowtune' } },
      { name: 'dctcp', set: { 'scheme.kind': 'ecmp' } },
    ],
    table: convergenceTable,
    values: (runs) => {
      const [ft, dc] = runs;
      const f = ft.flowtune!.convergence;
      const thr = (ft.fairness?.convergence ?? []).filter((c) => c.active > 1);
      return {
        ...(f.maxNs !== null && { rates_max_us: f.maxNs / 1000 }),
        ...(f.p50Ns !== null && { rates_p50_us: f.p50Ns / 1000 }),
        ...(thr.length > 0 &&
          thr.every((c) => c.convergedNs !== null) && {
            thr_max_us: Math.max(...thr.map((c) => c.convergedNs!)) / 1000,
          }),
        dctcp_never: (dc.fairness?.convergence ?? []).filter((c) => c.convergedNs === null).length,
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

export async function runWebsearch(opts: ExperimentOptions): Promise<string> {
  const p99 = (s: Summary, b: string) => s.flows.bySize[b]?.p99Ns;
  return reproduceVariants(opts, {
    experiment: 'flowtune-websearch',
    paperScale: '9 racks of 16 servers at 10 Gbit/s (ns-2), loads 0.2–0.8',
    figures: [
      {
        id: 'ratio_1',
        label: 'p99 FCT of 1-packet flowlets, DCTCP / Flowtune',
        unit: '×',
        paper: '8.6–10.9',
        source: '§6.5',
        digits: 1,
      },
      {
        id: 'ratio_2_10',
        label: 'the same, 2–10 packets',
        unit: '×',
        paper: '2.1–2.9',
        source: '§6.5',
        digits: 1,
      },
      {
        id: 'queue_ratio',
        label: 'p99 queue, DCTCP / Flowtune',
        unit: '×',
        paper: 12,
        source: '§6.5 (queueing delay)',
        digits: 1,
      },
      { id: 'flows_1', label: '1-packet flowlets measured', unit: 'flows', paper: null, digits: 0 },
    ],
    variants: [
      { name: 'flowtune', set: { 'scheme.kind': 'flowtune' } },
      { name: 'flowtune-alive', set: { 'scheme.kind': 'flowtune', timeline: '[]' } },
      { name: 'dctcp', set: { 'scheme.kind': 'ecmp' } },
    ],
    table: websearchTable,
    values: (runs) => {
      const [, alive, dc] = runs;
      const ratio = (b: string) => {
        const a = p99(alive, b);
        const d = p99(dc, b);
        return a !== undefined && d !== undefined && a > 0 ? d / a : undefined;
      };
      const r1 = ratio('1');
      const r2 = ratio('2-10');
      return {
        ...(r1 !== undefined && { ratio_1: r1 }),
        ...(r2 !== undefined && { ratio_2_10: r2 }),
        ...(alive.queues.p99Bytes > 0 && { queue_ratio: dc.queues.p99Bytes / alive.queues.p99Bytes }),
        flows_1: dc.flows.bySize['1']?.flows ?? 0,
      };
    },
  });
}

function websearchTable(opts: ExperimentOptions, runs: Summary[]): string {
  const [killed, alive, dc] = runs;
  const buckets = [...new Set(runs.flatMap((s) => Object.keys(s.flows.bySize)))];
  const p99 = (s: Summary, b: string) => s.flows.bySize[b]?.p99Ns;
  const ratio = (a: number | undefined, b: number | undefined) =>
    a !== undefined && b !== undefined && b > 0 ? `${(a / b).toFixed(1)}×` : '-';
  const f = killed.flowtune!;
  const lines = [
    `# Flowtune vs DCTCP under the web workload (§6.5): ${opts.file}`,
    '',
    'p99 FCT by flowlet size in full frames; "alive": the same run without its timeline (the allocator is not killed).',
    '',
    '| size | flows | flowtune | flowtune alive | dctcp | dctcp / alive |',
    '| --- | --- | --- | --- | --- | --- |',
    ...buckets.map(
      (b) =>
        `| ${b} | ${dc.flows.bySize[b]?.flows ?? 0} | ${us(p99(killed, b))} | ${us(p99(alive, b))} | ${us(p99(dc, b))} | ${ratio(p99(dc, b), p99(alive, b))} |`,
    ),
    `| queue p99 | | ${(killed.queues.p99Bytes / 1000).toFixed(1)} KB | ${(alive.queues.p99Bytes / 1000).toFixed(1)} KB | ${(dc.queues.p99Bytes / 1000).toFixed(1)} KB | ${ratio(dc.queues.p99Bytes, alive.queues.p99Bytes)} |`,
    '',
    `The paper: 8.6–10.9× lower p99 FCT than DCTCP for 1-packet flowlets, 2.1–2.9× for 1–10 packets, 12× lower p99 queueing delay. With the allocator killed: ${f.fallbacks.length} host lapses, ${killed.flows.completed}/${killed.flows.started} flows completed.`,
  ];
  return write(opts, 'flowtune-websearch', lines.join('\n'), {
    bySize: { flowtune: killed.flows.bySize, alive: alive.flows.bySize, dctcp: dc.flows.bySize },
    fallbacks: f.fallbacks,
  });
}
