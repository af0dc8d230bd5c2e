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
import { cpSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatNs } from '../../core/time.js';
import type { Summary } from '../../orchestrator/collect.js';
import { reproduceVariants, withQuick } from '../../orchestrator/reproduction.js';
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
      {
        id: 'priority_max_us',
        label: 'slowest convergence to 1/N, rates, control at strict priority (ablation)',
        unit: 'µs',
        paper: null,
        digits: 1,
      },
    ],
    variants: [
      { name: 'flowtune', set: { 'scheme.kind': 'flowtune' } },
      { name: 'dctcp', set: { 'scheme.kind': 'ecmp' } },
      // the ablation: control frames above data (the default shares the data queues, as the paper)
      { name: 'flowtune-priority', set: { 'scheme.kind': 'flowtune', 'scheme.control': 'priority' } },
    ],
    table: convergenceTable,
    values: (runs) => {
      const [ft, dc, prio] = runs;
      const f = ft.flowtune!.convergence;
      const pmax = prio.flowtune!.convergence.maxNs;
      const thr = (ft.fairness?.convergence ?? []).filter((c) => c.active > 1);
      return {
        ...(f.maxNs !== null && { rates_max_us: f.maxNs / 1000 }),
        ...(f.p50Ns !== null && { rates_p50_us: f.p50Ns / 1000 }),
        ...(thr.length > 0 &&
          thr.every((c) => c.convergedNs !== null) && {
            thr_max_us: Math.max(...thr.map((c) => c.convergedNs!)) / 1000,
          }),
        dctcp_never: (dc.fairness?.convergence ?? []).filter((c) => c.convergedNs === null).length,
        ...(pmax !== null && { priority_max_us: pmax / 1000 }),
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

/**
 * `--quick`: half the web workload (3 ms; ~150 one-packet flowlets a run), 2 ms to drain, the
 * allocator killed at 2 ms instead of 4
 */
const QUICK_WEB = ['workload.duration=3ms', 'run.drain=2ms', 'timeline.0.at=2ms'];

export async function runWebsearch(opts: ExperimentOptions): Promise<string> {
  const p99 = (s: Summary, b: string) => s.flows.bySize[b]?.p99Ns;
  return reproduceVariants(withQuick(opts, QUICK_WEB), {
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
      // the full run only: the quick one's ablation is flowtune-convergence's
      ...(opts.quick
        ? []
        : [
            {
              id: 'ratio_1_priority',
              label:
                'p99 FCT of 1-packet flowlets, DCTCP / Flowtune with its control at strict priority (ablation)',
              unit: '×',
              paper: null,
              digits: 1,
            },
            {
              id: 'ratio_1_iw2',
              label:
                'the same, DCTCP / Flowtune, both starting flowlets with 2 frames instead of 10 (ablation)',
              unit: '×',
              paper: '8.6–10.9',
              source: '§6.5',
              digits: 1,
            },
            {
              id: 'ratio_1_pf',
              label: 'p99 FCT of 1-packet flowlets, pFabric / Flowtune',
              unit: '×',
              paper: '1.7–2.4',
              source: '§6.5',
              digits: 2,
            },
            {
              id: 'ratio_1_pf_iw2',
              label: 'the same, Flowtune starting flowlets with 2 frames (ablation)',
              unit: '×',
              paper: '1.7–2.4',
              source: '§6.5',
              digits: 2,
            },
          ]),
    ],
    variants: [
      { name: 'flowtune', set: { 'scheme.kind': 'flowtune' } },
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
            // the initial window's share of the short flowlets' tail: 2 frames (ns-2's TCP starts
            // with 1 or 2), both sides
            {
              name: 'flowtune-iw2',
              set: { 'scheme.kind': 'flowtune', 'transport.initCwnd': '2', timeline: '[]' },
            },
            { name: 'dctcp-iw2', set: { 'scheme.kind': 'ecmp', 'transport.initCwnd': '2' } },
            // the paper's other baseline at this load (flowtune-loads runs it at every load)
            { name: 'pfabric', set: { ...pfabric(installPfabric(opts.out)), timeline: '[]' } },
          ]),
    ],
    table: websearchTable,
    values: (runs) => {
      // the full run's ablations follow the first three (the quick run has none)
      const [, alive, dc] = runs;
      const [prio, iw2, dcIw2, pf] = runs.slice(3) as Array<Summary | undefined>;
      /** `a`'s p99 FCT over `b`'s, flowlets of size bucket `bucket` */
      const over = (a: Summary | undefined, b: Summary | undefined, bucket = '1') => {
        const x = a && p99(a, bucket);
        const y = b && p99(b, bucket);
        return x !== undefined && y !== undefined && y > 0 ? x / y : undefined;
      };
      const r1 = over(dc, alive);
      const r2 = over(dc, alive, '2-10');
      const rp = over(dc, prio);
      const extra = {
        ratio_1_iw2: over(dcIw2, iw2),
        ratio_1_pf: over(pf, alive),
        ratio_1_pf_iw2: over(pf, iw2),
      };
      return {
        ...(r1 !== undefined && { ratio_1: r1 }),
        ...(r2 !== undefined && { ratio_2_10: r2 }),
        ...(rp !== undefined && { ratio_1_priority: rp }),
        ...Object.fromEntries(Object.entries(extra).filter(([, v]) => v !== undefined)),
        ...(alive.queues.p99Bytes > 0 && { queue_ratio: dc.queues.p99Bytes / alive.queues.p99Bytes }),
        flows_1: dc.flows.bySize['1']?.flows ?? 0,
      };
    },
  });
}

/**
 * pFabric (Alizadeh et al., SIGCOMM'13), the paper's other baseline in figure 8: the scheme package of
 * examples/schemes/pfabric, written against the public SDK and run as any user's package is. Its switches keep shallow buffers by design, about twice the
 * bandwidth-delay product (pFabric §4): the web scenario's fabric round trip is 21.6 µs (eight 1.5 µs
 * links and eight 1.2 µs frames), 27 KB at 10 Gbit/s, so 54 KB ports on its side only.
 */
const pfabric = (module: string) => ({
  'scheme.kind': 'pfabric',
  'scheme.module': module,
  'ports.buffer': '54KB',
});

/** this installation of dcemu (the package root) */
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/**
 * The pFabric package as a user installs it: its files copied into the experiment's folder (what ran
 * stays with the results), with this dcemu as its installed dependency; the module to load.
 */
function installPfabric(out: string): string {
  const from = join(ROOT, 'examples/schemes/pfabric');
  const to = join(out, 'pfabric-package');
  rmSync(to, { recursive: true, force: true });
  cpSync(from, to, { recursive: true, filter: (f) => !/[/\\](node_modules|test)$/.test(f) });
  mkdirSync(join(to, 'node_modules'), { recursive: true });
  symlinkSync(ROOT, join(to, 'node_modules', 'dcemu'));
  return join(to, 'index.js');
}

/** runs per load: Flowtune, DCTCP, pFabric */
const SIDES = 3;

/** the loads of the paper's figure 8 */
const LOADS = [0.2, 0.4, 0.6, 0.8] as const;
/** the example's 6 ms at 0.6 load, stretched at lower loads so that each run has about as many flowlets */
const durationAt = (load: number): string => `${Math.round((6 * 0.6 * 1000) / load)}us`;

/**
 * `flowtune-loads`: the web workload at loads 0.2, 0.4, 0.6 and 0.8 (the paper's figure 8 spans them),
 * Flowtune (its allocator left alive: the example's timeline kills it) against DCTCP and pFabric on
 * the same trace at each load; each load's run is stretched to about as many flowlets as the example's.
 * `--quick`: loads 0.2 and 0.8 only, at a quarter of the length, and 1 ms to drain (every flowlet of
 * up to 10 packets done: DCTCP's slowest takes ~0.6 ms; the long flows are cut short).
 */
export async function runLoads(opts: ExperimentOptions): Promise<string> {
  const PFABRIC = pfabric(installPfabric(opts.out));
  const loads = opts.quick ? [0.2, 0.8] : LOADS;
  const length = opts.quick ? 4 : 1;
  const variants = loads.flatMap((load) => {
    const at = {
      'workload.load': String(load),
      'workload.duration': durationAt(load * length),
      timeline: '[]',
      ...(opts.quick && { 'run.drain': '1ms' }),
    };
    return [
      { name: `flowtune-${load}`, set: { ...at, 'scheme.kind': 'flowtune' } },
      { name: `dctcp-${load}`, set: { ...at, 'scheme.kind': 'ecmp' } },
      { name: `pfabric-${load}`, set: { ...at, ...PFABRIC } },
    ];
  });
  const bucket = (s: Summary, b: string) => s.flows.bySize[b];
  return reproduceVariants(opts, {
    experiment: 'flowtune-loads',
    paperScale: '9 racks of 16 servers at 10 Gbit/s (ns-2), loads 0.2–0.8',
    figures: loads.flatMap((load) => [
      {
        id: `ratio_1_${load}`,
        label: `p99 FCT of 1-packet flowlets, DCTCP / Flowtune, load ${load}`,
        unit: '×',
        paper: '8.6–10.9',
        source: '§6.5, over the loads',
        digits: 1,
      },
      {
        id: `ratio_2_10_${load}`,
        label: `the same, 2–10 packets, load ${load}`,
        unit: '×',
        paper: '2.1–2.9',
        source: '§6.5, over the loads',
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
        id: `ratio_1_pf_${load}`,
        label: `p99 FCT of 1-packet flowlets, pFabric / Flowtune, load ${load}`,
        unit: '×',
        paper: '1.7–2.4',
        source: '§6.5, over the loads',
        digits: 1,
      },
      {
        id: `slow_1_pf_${load}`,
        label: `normalized FCT p99 of 1-packet flowlets, pFabric, load ${load}`,
        unit: '×',
        paper: null,
        digits: 2,
      },
    ]),
    variants,
    table: (o, runs) => loadsTable(o, loads, runs),
    values: (runs) => {
      const v: Record<string, number> = {};
      loads.forEach((load, i) => {
        const [ft, dc, pf] = runs.slice(SIDES * i, SIDES * (i + 1));
        for (const [side, b, id] of [
          [dc, '1', `ratio_1_${load}`],
          [dc, '2-10', `ratio_2_10_${load}`],
          [pf, '1', `ratio_1_pf_${load}`],
        ] as const) {
          const f = bucket(ft, b)?.p99Ns;
          const d = bucket(side, b)?.p99Ns;
          if (f !== undefined && d !== undefined && f > 0) v[id] = d / f;
        }
        for (const [side, id] of [
          [ft, `slow_1_${load}`],
          [dc, `slow_1_dctcp_${load}`],
          [pf, `slow_1_pf_${load}`],
        ] as const) {
          const x = bucket(side, '1')?.p99Slowdown;
          if (x !== undefined) v[id] = x;
        }
      });
      return v;
    },
  });
}

function loadsTable(opts: ExperimentOptions, loads: readonly number[], runs: Summary[]): string {
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
    const [ft, dc, pf] = runs.slice(SIDES * i, SIDES * (i + 1));
    for (const b of Object.keys(dc.flows.bySize)) {
      const [f, d, p] = [ft, dc, pf].map((s) => s.flows.bySize[b]);
      lines.push(
        `| ${load} | ${b} | ${d.flows} | ${cell(f)} | ${cell(d)} | ${cell(p)} | ${over(d.p99Ns, f?.p99Ns)} | ${over(p?.p99Ns, f?.p99Ns)} |`,
      );
    }
  });
  return write(opts, 'flowtune-loads', lines.join('\n'), {
    bySize: Object.fromEntries(
      loads.map((l, i) => {
        const [ft, dc, pf] = runs.slice(SIDES * i, SIDES * (i + 1));
        return [l, { flowtune: ft.flows.bySize, dctcp: dc.flows.bySize, pfabric: pf.flows.bySize }];
      }),
    ),
  });
}

function websearchTable(opts: ExperimentOptions, runs: Summary[]): string {
  const [killed, alive, dc, prio] = runs as [Summary, Summary, Summary, Summary | undefined];
  const buckets = [...new Set(runs.flatMap((s) => Object.keys(s.flows.bySize)))];
  const p99 = (s: Summary, b: string) => s.flows.bySize[b]?.p99Ns;
  const ratio = (a: number | undefined, b: number | undefined) =>
    a !== undefined && b !== undefined && b > 0 ? `${(a / b).toFixed(1)}×` : '-';
  const f = killed.flowtune!;
  const lines = [
    `# Flowtune vs DCTCP under the web workload (§6.5): ${opts.file}`,
    '',
    'p99 FCT by flowlet size in full frames; "alive": the same run without its timeline (the allocator is not killed); "priority": alive, with the control frames at strict priority above data (an ablation).',
    '',
    '| size | flows | flowtune | flowtune alive | dctcp | dctcp / alive | priority |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...buckets.map(
      (b) =>
        `| ${b} | ${dc.flows.bySize[b]?.flows ?? 0} | ${us(p99(killed, b))} | ${us(p99(alive, b))} | ${us(p99(dc, b))} | ${ratio(p99(dc, b), p99(alive, b))} | ${prio ? us(p99(prio, b)) : '-'} |`,
    ),
    `| queue p99 | | ${(killed.queues.p99Bytes / 1000).toFixed(1)} KB | ${(alive.queues.p99Bytes / 1000).toFixed(1)} KB | ${(dc.queues.p99Bytes / 1000).toFixed(1)} KB | ${ratio(dc.queues.p99Bytes, alive.queues.p99Bytes)} | ${prio ? `${(prio.queues.p99Bytes / 1000).toFixed(1)} KB` : '-'} |`,
    '',
    `The paper: 8.6–10.9× lower p99 FCT than DCTCP for 1-packet flowlets, 2.1–2.9× for 1–10 packets, 12× lower p99 queueing delay. With the allocator killed: ${f.fallbacks.length} host lapses, ${killed.flows.completed}/${killed.flows.started} flows completed.`,
  ];
  return write(opts, 'flowtune-websearch', lines.join('\n'), {
    bySize: { flowtune: killed.flows.bySize, alive: alive.flows.bySize, dctcp: dc.flows.bySize },
    fallbacks: f.fallbacks,
  });
}
