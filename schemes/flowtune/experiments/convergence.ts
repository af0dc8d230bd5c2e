/**
 * `flowtune-convergence` (Flowtune TR'16 §6.3, figure 4; schemes/flowtune/experiments.ts): per start
 * and stop of a sender, the time until every flow is within 10% of its fair share, Flowtune against
 * DCTCP, the senders spaced 10 ms apart as the paper's and 1 ms as the example's.
 */
import { type ExperimentOptions, formatNs } from '../../../sdk/index.js';
import { loadScenarioFile, reproduceVariants, resolveScenario, type Summary } from '../../../sdk/study.js';
import { us, write } from './shared.js';

/**
 * §6.3's spacing: "every 10 ms one of the senders would start a flow to the receiver. Thereafter,
 * every 10 ms one of the senders stops"
 */
const PAPER_SPACING = 10;

/** `--quick`'s spacing: the example's 1 ms halved (its sizes, traffic and drain with it) */
const QUICK_SPACING = 0.5;

/**
 * The overrides that stretch the example's list of flows by `factor`: every start and size (so each
 * flow still stops about when its turn comes, at its fair share), the traffic and the drain. The
 * example (examples/flowtune.yaml) spaces its senders 1 ms apart; `factor` 10 gives §6.3's 10 ms,
 * 0.5 `--quick`'s 0.5 ms.
 */
function stretched(opts: ExperimentOptions, factor: number): Record<string, string> {
  const sc = resolveScenario(loadScenarioFile(opts.file, opts.set ?? []));
  const name = (id: number) => sc.topology.nodes.find((n) => n.id === id)!.name;
  const flows = (sc.workload.flows ?? []).map(
    (f) =>
      `{src: ${name(f.src)}, dst: ${name(f.dst)}, size: ${Math.round(f.size * factor)}, start: ${Math.round(f.start * factor)}}`,
  );
  return {
    'workload.flows': `[${flows.join(', ')}]`,
    'workload.duration': String(Math.round(sc.workload.durationNs * factor)),
    'run.drain': String(Math.round(sc.run.drainNs * factor)),
  };
}

/**
 * `flowtune-convergence`: the example's five senders spaced as §6.3 has them, 10 ms apart (the
 * example's 1 ms times 10, sizes with it), Flowtune against DCTCP, and the ablation with control at
 * strict priority; the example as it is (1 ms apart) beside them. `--quick` runs the first three only,
 * its senders 0.5 ms apart (the example's halved: still ten times its slowest convergence, and five
 * of DCTCP's 100 µs intervals per step), and says so.
 */
export async function runConvergence(opts: ExperimentOptions): Promise<string> {
  const apart = opts.quick
    ? `${QUICK_SPACING} ms apart (--quick; §6.3: ${PAPER_SPACING} ms)`
    : `${PAPER_SPACING} ms apart, as §6.3`;
  const example = stretched(opts, 1);
  const run = {
    ...opts,
    set: [
      ...Object.entries(stretched(opts, opts.quick ? QUICK_SPACING : PAPER_SPACING)).map(
        ([k, v]) => `${k}=${v}`,
      ),
      ...(opts.set ?? []),
    ],
  };
  const fig = (id: string, label: string, unit = 'µs', digits = 1) => ({
    id,
    label,
    unit,
    paper: null,
    digits,
  });
  return reproduceVariants(run, {
    experiment: 'flowtune-convergence',
    paperScale:
      'five senders to one receiver (ns-2), "every 10 ms one of the senders would start a flow to the receiver. Thereafter, every 10 ms one of the senders stops" (§6.3)',
    figures: [
      {
        id: 'rates_max_us',
        label: `slowest convergence to 1/N, Flowtune’s rates, senders ${apart}`,
        unit: 'µs',
        paper: 20,
        source: '§6.3',
        digits: 1,
      },
      fig('rates_p50_us', 'median convergence, Flowtune’s rates'),
      fig('thr_max_us', 'slowest convergence, Flowtune’s throughput (per run.interval)'),
      fig('dctcp_never', `changes DCTCP’s throughput never came within 10% of, senders ${apart}`, 'of 7', 0),
      {
        id: 'dctcp_max_ms',
        label: 'slowest convergence of those it came within 10% of, DCTCP’s throughput',
        unit: 'ms',
        paper: 'several ms',
        source: '§6.3',
        digits: 2,
      },
      fig('priority_max_us', 'slowest convergence to 1/N, rates, control at strict priority (ablation)'),
      ...(opts.quick
        ? []
        : [
            fig(
              'rates_max_us_1ms',
              'slowest convergence to 1/N, Flowtune’s rates, senders 1 ms apart (the example)',
            ),
            fig(
              'dctcp_never_1ms',
              'changes DCTCP’s throughput never came within 10% of, senders 1 ms apart',
              'of 7',
              0,
            ),
          ]),
    ],
    variants: [
      { name: 'flowtune', set: { 'scheme.kind': 'flowtune' } },
      { name: 'dctcp', set: { 'scheme.kind': 'ecmp' } },
      // the ablation: control frames above data (the default shares the data queues, as the paper)
      { name: 'flowtune-priority', set: { 'scheme.kind': 'flowtune', 'scheme.control': 'priority' } },
      // the example's own 1 ms spacing, beside the paper's
      ...(opts.quick
        ? []
        : [
            { name: 'flowtune-1ms', set: { ...example, 'scheme.kind': 'flowtune' } },
            { name: 'dctcp-1ms', set: { ...example, 'scheme.kind': 'ecmp' } },
          ]),
    ],
    table: convergenceTable,
    values: convergenceValues,
  });
}

/** flowtune-convergence's figures from its runs: Flowtune, DCTCP, the ablation, then (full runs) the example's spacing */
function convergenceValues(runs: Summary[]) {
  const [ft, dc, prio, ft1, dc1] = runs;
  const f = ft.flowtune!.convergence;
  const pmax = prio.flowtune!.convergence.maxNs;
  const thr = (ft.fairness?.convergence ?? []).filter((c) => c.active > 1);
  const never = (s: Summary) => (s.fairness?.convergence ?? []).filter((c) => c.convergedNs === null).length;
  const dcDone = (dc.fairness?.convergence ?? []).flatMap((c) =>
    c.convergedNs === null ? [] : [c.convergedNs],
  );
  return {
    ...(f.maxNs !== null && { rates_max_us: f.maxNs / 1000 }),
    ...(f.p50Ns !== null && { rates_p50_us: f.p50Ns / 1000 }),
    ...(thr.length > 0 &&
      thr.every((c) => c.convergedNs !== null) && {
        thr_max_us: Math.max(...thr.map((c) => c.convergedNs!)) / 1000,
      }),
    dctcp_never: never(dc),
    ...(dcDone.length > 0 && { dctcp_max_ms: Math.max(...dcDone) / 1e6 }),
    ...(pmax !== null && { priority_max_us: pmax / 1000 }),
    ...(ft1?.flowtune?.convergence.maxNs != null && {
      rates_max_us_1ms: ft1.flowtune.convergence.maxNs / 1000,
    }),
    ...(dc1 !== undefined && { dctcp_never_1ms: never(dc1) }),
  };
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
