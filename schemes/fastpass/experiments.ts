/**
 * Fastpass's evaluation (SIGCOMM'14 §7.1–7.2) as reproductions (orchestrator/studies/reproduction.ts): each
 * seed runs the scenario twice, with Fastpass and with the paper's baseline (the same file with
 * `scheme.kind=ecmp`: the run's own transport, loss-based Reno in the examples, on plain ECMP); the
 * headline figures are aggregated over the seeds beside the paper's, and the first seed's full table
 * follows.
 *
 * - `fastpass-a` (experiment A): the bottleneck queue's p50/p90/p99/p99.9 and the throughput;
 * - `fastpass-c` (experiment C): senders joining then leaving; the median standard deviation of the
 *   senders' throughputs per interval, by how many were active (summary.fairness).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type BusiestQueue,
  type ExperimentOptions,
  OSCILLATORS,
  quantile,
  SEND_JITTER,
  WireSize,
} from '../../sdk/index.js';
import {
  type Fairness,
  type FigureSpec,
  reproduceVariants,
  type Summary,
  withQuick,
  writeTable,
} from '../../sdk/study.js';

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
function sides(runs: Summary[], variants: ReadonlyArray<{ name: string }> = SIDES): Side[] {
  return runs.map((s, i) => ({
    name: variants[i].name,
    queue: s.queues.busiest,
    gbps: s.throughput.gbps,
    fairness: s.fairness,
  }));
}

const kb = (b: number | undefined) => (b === undefined ? '-' : `${(b / 1000).toFixed(1)} KB`);
const times = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(0)}×` : a > 0 ? '∞' : '-');

/** the deployment's timing (§6): PTP with NIC hardware stamps and no PTP support in the switches */
const DEPLOYED_PTP = '{timestamping: hardware, transparentClocks: false}';
/** the deployment's clocks: drifting oscillators, PTP as deployed, the hosts' send lateness */
const DEPLOYED = { clocks: OSCILLATORS, ptp: DEPLOYED_PTP, jitter: SEND_JITTER };

/**
 * Experiment A's sides: Fastpass and the baseline on the same clocks as the deployment's (one change:
 * the scheme), and Fastpass on ideal clocks beside them (where the zero queue is built in).
 */
const A_VARIANTS = [
  { name: 'fastpass', set: { 'scheme.kind': 'fastpass', ...DEPLOYED } },
  { name: 'baseline', set: { 'scheme.kind': 'ecmp', ...DEPLOYED } },
  { name: 'fastpass-ideal', set: { 'scheme.kind': 'fastpass' } },
];

/**
 * The full run's ablation of the gap to the paper's 18 KB: Fastpass on the same clocks with its hosts'
 * sends later, by a lognormal of median 1 µs and 3 µs (the deployment's modelled lateness is 200 ns).
 * The paper puts its queue down to "jitter in endpoint transmission times" (§7.1).
 */
const LATENESS = ['1us', '3us'] as const;
const LATE_VARIANTS = LATENESS.map((m) => ({
  name: `fastpass-late-${m}`,
  set: { 'scheme.kind': 'fastpass', ...DEPLOYED, jitter: `{send: 'lognormal(${m}, 1)'}` },
}));

/**
 * The host's kernel and NIC path (`host.stackDelay`, host/host.ts): each frame crosses it once at its
 * sender and once at its receiver. 3 µs a side is what scripts/stack-delay.c measures on Linux: a
 * 64-byte UDP round trip over loopback takes two sends and two receives through the kernel (system
 * calls, UDP/IP, softirq, the waking of the receiving process), a median of about 12 µs, so 3 µs a
 * crossing. Loopback has no NIC (no DMA, no interrupt moderation), so this is a floor for the
 * paper's endpoints, not their figure. The paper's arbiter runs on DPDK (§6), off the kernel: the
 * arbiter role does not take it.
 */
const STACK_DELAY = '3us';
/** Experiment A and B with the host's stack path on both sides (the full run only): one change, `host.stackDelay`. */
const STACK_VARIANTS = [
  { name: 'fastpass-stack', set: { 'scheme.kind': 'fastpass', ...DEPLOYED, 'host.stackDelay': STACK_DELAY } },
  { name: 'baseline-stack', set: { 'scheme.kind': 'ecmp', ...DEPLOYED, 'host.stackDelay': STACK_DELAY } },
];
/**
 * §7.1 splits the throughput cost: "Most of the 1.6% difference in throughput can be attributed to
 * Fastpass reserving about 1% of the achieved throughput for FCP traffic. The remainder is due to the
 * client re-requesting timeslots when packet transmissions were delayed more than the allowed
 * threshold (§6.3)." The FCP part here is this ablation's (the full run only): Fastpass on the same
 * clocks with no timeslots kept free for FCP (`scheme.fcpShare: 0`). The re-request part is counted in
 * the Fastpass run itself: each allocated timeslot left unused (late, or a clock stepped past it) is a
 * full frame of the receiver's link not sent then.
 */
const NO_RESERVE = {
  name: 'fastpass-no-reserve',
  set: { 'scheme.kind': 'fastpass', 'scheme.fcpShare': '0', ...DEPLOYED },
};

/**
 * Experiment B's pings (§7.1): "a fifth machine sends a small request to the receiving server every
 * 10 ms". Here h5 sends a 64-byte request to h0 and h0 a 64-byte reply to h5 at the same instants, every
 * 200 µs; a ping's round trip is the request's completion time plus the reply's. The reply does not
 * wait for the request (a real ping's does), so under Fastpass each leg's arbiter round trip overlaps
 * the other leg's; the sum counts both legs' waits either way. The last ping starts `until`, early
 * enough that it completes behind the baseline's full buffer (~4 ms) before the run ends: a ping cut
 * off by the end would leave the slowest out.
 */
const pings = (until: string) => [
  `workload.flows.4={src: h5, dst: h0, size: 64B, start: 100us, every: 200us, until: ${until}}`,
  `workload.flows.5={src: h0, dst: h5, size: 64B, start: 100us, every: 200us, until: ${until}}`,
];

/**
 * The paper's rack: 32 servers on one ToR, one of them the arbiter (dcemu's arbiter is a node of its
 * own on the ToR, so 31 hosts); four send, one receives, one pings, the rest idle but on PTP.
 */
const FULL_A = ['topology.hostsPerLeaf=31', ...pings('15ms')];

/**
 * `--quick`: the example's 6 hosts, the first 4 ms of traffic, on one spine instead of four: the rack's
 * traffic stays under its ToR, so the spines carry nothing but keepalives, and the figures are the same
 * with one (three idle processes fewer a run)
 */
const QUICK_A = ['workload.duration=4ms', 'topology.spines=1'];

/** Round trips of the pings in a run's flows.csv, µs, ascending; and how many did not complete. */
export function pingRtts(flowsCsv: string): { rtts: number[]; incomplete: number } {
  const [header, ...rows] = flowsCsv.trim().split('\n');
  const col = Object.fromEntries(header.split(',').map((h, i) => [h, i]));
  const legs = new Map<string, { req?: number; rep?: number }>();
  for (const line of rows) {
    const r = line.split(',');
    if (r[col.size] !== '64') continue;
    const dir =
      r[col.src] === 'h5' && r[col.dst] === 'h0'
        ? 'req'
        : r[col.src] === 'h0' && r[col.dst] === 'h5'
          ? 'rep'
          : null;
    if (!dir) continue;
    const at = r[col.start_ns];
    const leg = legs.get(at) ?? {};
    const fct = Number(r[col.fct_ns]);
    leg[dir] = r[col.fct_ns] !== '' && fct >= 0 ? fct : Number.NaN;
    legs.set(at, leg);
  }
  const rtts: number[] = [];
  let incomplete = 0;
  for (const { req, rep } of legs.values()) {
    const rtt = (req ?? Number.NaN) + (rep ?? Number.NaN);
    if (Number.isFinite(rtt)) rtts.push(rtt / 1000);
    else incomplete++;
  }
  return { rtts: rtts.sort((a, b) => a - b), incomplete };
}

export async function runExperimentA(opts: ExperimentOptions): Promise<string> {
  const scaled = opts.quick
    ? withQuick(opts, [...QUICK_A, ...pings('1ms')])
    : { ...opts, set: [...FULL_A, ...(opts.set ?? [])] };
  // the ablations in the full run only (lateness, the host's stack path, no FCP reserve: five runs a seed)
  const variants = opts.quick ? A_VARIANTS : [...A_VARIANTS, ...LATE_VARIANTS, ...STACK_VARIANTS, NO_RESERVE];
  return reproduceVariants(scaled, {
    experiment: 'fastpass-a',
    paperScale:
      'a rack of 32 servers at 10 Gbit/s (one the arbiter), 4 senders × 20 TCP flows to one receiver, 20 minutes; PTP with NIC hardware stamps',
    figures: [...FIGURES_A, ...SPLIT_FIGURES_A, ...lateFiguresA(opts.quick === true)],
    variants,
    table: (o, runs) =>
      tableA(
        o,
        sides(runs, variants),
        variants.map((v) => rttsOf(o.out, v.name)),
      ),
    values: (runs, out) => valuesA(runs, out, variants),
  });
}

/** A variant's ping round trips, from its flows.csv. */
function rttsOf(out: string, name: string) {
  return pingRtts(readFileSync(join(out, name, 'flows.csv'), 'utf8'));
}

/** Experiment A's figures beside the paper's (§7.1 A and B). */
const FIGURES_A = [
  { id: 'fp_p50_kb', label: 'bottleneck queue p50, Fastpass', unit: 'KB', paper: 18, source: '§7.1 A' },
  { id: 'fp_p99_kb', label: 'bottleneck queue p99, Fastpass', unit: 'KB', paper: 53, source: '§7.1 A' },
  {
    id: 'base_p50_kb',
    label: 'bottleneck queue p50, baseline',
    unit: 'KB',
    paper: 4351,
    source: '§7.1 A',
  },
  {
    id: 'base_p99_kb',
    label: 'bottleneck queue p99, baseline',
    unit: 'KB',
    paper: 5224,
    source: '§7.1 A',
  },
  {
    id: 'ideal_p50_kb',
    label: 'bottleneck queue p50, Fastpass on ideal clocks',
    unit: 'KB',
    paper: null,
  },
  {
    id: 'ideal_p99_kb',
    label: 'bottleneck queue p99, Fastpass on ideal clocks',
    unit: 'KB',
    paper: null,
  },
  {
    id: 'throughput_pct',
    label: 'throughput, Fastpass against the baseline',
    unit: '%',
    paper: -1.6,
    source: '§7.1 A',
    digits: 1,
  },
  {
    id: 'fp_ping_p50_ms',
    label: 'ping round trip p50, Fastpass',
    unit: 'ms',
    paper: 0.23,
    source: '§7.1 B',
    digits: 3,
  },
  {
    id: 'base_ping_p50_ms',
    label: 'ping round trip p50, baseline',
    unit: 'ms',
    paper: 3.56,
    source: '§7.1 B',
    digits: 3,
  },
  {
    id: 'fp_ping_p99_ms',
    label: 'ping round trip p99, Fastpass',
    unit: 'ms',
    paper: 0.32,
    source: '§7.1 B',
    digits: 3,
  },
  {
    id: 'ping_ratio',
    label: 'ping round trip p50, baseline / Fastpass',
    unit: '×',
    paper: 15.5,
    source: '§7.1 B',
    digits: 1,
  },
];

/**
 * The throughput cost split as §7.1 splits it, in % of the baseline's throughput: the FCP part (the
 * no-reserve ablation, full run only), the re-request part (unused allocated timeslots), what remains.
 */
const SPLIT_FIGURES_A: FigureSpec[] = [
  {
    id: 'cost_total_pct',
    label: "throughput cost, Fastpass against the baseline (the bytes' share)",
    unit: '%',
    paper: 1.6,
    source: '§7.1 A',
    digits: 2,
  },
  {
    id: 'cost_rerequest_pct',
    label: 'of it, re-requested timeslots: allocated ones left unused (late, or a clock stepped past)',
    unit: '%',
    paper: null,
    digits: 2,
  },
];

/** The ablations' figures (the full run only): lateness, the host's stack path, no FCP reserve. */
function lateFiguresA(quick: boolean): FigureSpec[] {
  if (quick) return [];
  const stack = (
    id: string,
    label: string,
    unit: string,
    paper: number | null,
    source: string,
    digits = 3,
  ) => ({
    id: `${id}_stack`,
    label: `${label}, hosts' stack path ${STACK_DELAY} a side`,
    unit,
    paper,
    ...(paper !== null && { source }),
    digits,
  });
  return [
    {
      id: 'cost_fcp_pct',
      label: "of it, FCP's reserved timeslots (Fastpass with fcpShare 0 against Fastpass)",
      unit: '%',
      paper: 1,
      source: '§7.1 A, "about 1%"',
      digits: 2,
    },
    {
      id: 'cost_other_pct',
      label: 'of it, the rest (the total less the FCP and re-request parts)',
      unit: '%',
      paper: null,
      digits: 2,
    },
    ...LATENESS.flatMap((m) =>
      (['p50', 'p99'] as const).map((q) => ({
        id: `late_${m}_${q}_kb`,
        label: `bottleneck queue ${q}, Fastpass sending late by lognormal(${m}, 1)`,
        unit: 'KB',
        paper: null,
      })),
    ),
    stack('fp_ping_p50', 'ping round trip p50, Fastpass', 'ms', 0.23, '§7.1 B'),
    stack('base_ping_p50', 'ping round trip p50, baseline', 'ms', 3.56, '§7.1 B'),
    stack('fp_ping_p99', 'ping round trip p99, Fastpass', 'ms', 0.32, '§7.1 B'),
    stack('ping_ratio', 'ping round trip p50, baseline / Fastpass', '×', 15.5, '§7.1 B', 1),
    stack('fp_p50_kb', 'bottleneck queue p50, Fastpass', 'KB', 18, '§7.1 A', 2),
    stack('fp_p99_kb', 'bottleneck queue p99, Fastpass', 'KB', 53, '§7.1 A', 2),
    stack('throughput_pct', 'throughput, Fastpass against the baseline', '%', -1.6, '§7.1 A', 1),
  ];
}

/** One seed's figures: the bottleneck queue of each side, throughput, ping round trips. */
function valuesA(runs: Summary[], out: string, variants: typeof A_VARIANTS): Record<string, number> {
  const all = sides(runs, variants);
  const [fp, base, ideal] = all;
  const late: Record<string, number> = {};
  for (const m of LATENESS) {
    const q = all.find((x) => x.name === `fastpass-late-${m}`)?.queue;
    if (q) {
      late[`late_${m}_p50_kb`] = q.p50Bytes / 1000;
      late[`late_${m}_p99_kb`] = q.p99Bytes / 1000;
    }
  }
  const [pf, pb] = [rttsOf(out, 'fastpass'), rttsOf(out, 'baseline')];
  const p50 = (p: { rtts: number[] }) => quantile(p.rtts, 0.5) / 1000;
  const run = (name: string) => runs[variants.findIndex((v) => v.name === name)] as Summary | undefined;
  // the throughput cost and its parts, in % of the baseline's data bytes over the same window
  const [fpRun, baseRun] = [runs[0], runs[1]];
  const pct = (bytes: number) => (bytes / (baseRun.throughput.bytes || 1)) * 100;
  const ts = fpRun.fastpass?.timeslots;
  const split: Record<string, number> = {
    cost_total_pct: pct(baseRun.throughput.bytes - fpRun.throughput.bytes),
    cost_rerequest_pct: pct(((ts?.late ?? 0) + (ts?.unused ?? 0)) * WireSize.Mtu),
  };
  const bare = run(NO_RESERVE.name);
  if (bare) {
    split.cost_fcp_pct = pct(bare.throughput.bytes - fpRun.throughput.bytes);
    split.cost_other_pct = split.cost_total_pct - split.cost_fcp_pct - split.cost_rerequest_pct;
  }
  const [fs, bs] = [run('fastpass-stack'), run('baseline-stack')];
  if (fs && bs) {
    const [pfs, pbs] = [rttsOf(out, 'fastpass-stack'), rttsOf(out, 'baseline-stack')];
    Object.assign(split, {
      fp_ping_p50_stack: p50(pfs),
      base_ping_p50_stack: p50(pbs),
      fp_ping_p99_stack: quantile(pfs.rtts, 0.99) / 1000,
      ping_ratio_stack: p50(pbs) / (p50(pfs) || 1),
      fp_p50_kb_stack: (fs.queues.busiest?.p50Bytes ?? 0) / 1000,
      fp_p99_kb_stack: (fs.queues.busiest?.p99Bytes ?? 0) / 1000,
      throughput_pct_stack: ((fs.throughput.gbps - bs.throughput.gbps) / (bs.throughput.gbps || 1)) * 100,
    });
  }
  return {
    ...split,
    fp_p50_kb: (fp.queue?.p50Bytes ?? 0) / 1000,
    fp_p99_kb: (fp.queue?.p99Bytes ?? 0) / 1000,
    base_p50_kb: (base.queue?.p50Bytes ?? 0) / 1000,
    base_p99_kb: (base.queue?.p99Bytes ?? 0) / 1000,
    ideal_p50_kb: (ideal.queue?.p50Bytes ?? 0) / 1000,
    ideal_p99_kb: (ideal.queue?.p99Bytes ?? 0) / 1000,
    throughput_pct: ((fp.gbps - base.gbps) / (base.gbps || 1)) * 100,
    fp_ping_p50_ms: p50(pf),
    base_ping_p50_ms: p50(pb),
    fp_ping_p99_ms: quantile(pf.rtts, 0.99) / 1000,
    ping_ratio: p50(pb) / (p50(pf) || 1),
    ...late,
  };
}

function tableA(
  opts: ExperimentOptions,
  all: Side[],
  pings: Array<{ rtts: number[]; incomplete: number }>,
): string {
  const [fp, base] = all;
  const ms = (us: number) => `${(us / 1000).toFixed(3)} ms`;
  const lines = [
    `# Fastpass experiments A and B (§7.1): ${opts.file}`,
    '',
    '| | bottleneck port | p50 | p90 | p99 | p99.9 | throughput | ping p50 | p90 | p99 | pings |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...all.map((s, i) => {
      const p = pings[i];
      return `| ${s.name} | ${s.queue?.port ?? '-'} | ${kb(s.queue?.p50Bytes)} | ${kb(s.queue?.p90Bytes)} | ${kb(s.queue?.p99Bytes)} | ${kb(s.queue?.p999Bytes)} | ${s.gbps} Gbit/s | ${ms(quantile(p.rtts, 0.5))} | ${ms(quantile(p.rtts, 0.9))} | ${ms(quantile(p.rtts, 0.99))} | ${p.rtts.length}${p.incomplete ? ` (+${p.incomplete} unfinished)` : ''} |`;
    }),
    '',
    `Queue p50 ${kb(base.queue?.p50Bytes)} → ${kb(fp.queue?.p50Bytes)} with Fastpass on the deployment's clocks (the paper: 4,351 KB → 18 KB); throughput ${(((fp.gbps - base.gbps) / (base.gbps || 1)) * 100).toFixed(1)}% against the baseline (the paper: −1.6%); ping p50 ${ms(quantile(pings[1].rtts, 0.5))} → ${ms(quantile(pings[0].rtts, 0.5))} (the paper: 3.56 → 0.23 ms).`,
  ];
  const table = lines.join('\n');
  writeTable(opts.out, 'fastpass-a', table, all);
  return table;
}

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
