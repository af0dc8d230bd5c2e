/**
 * `fastpass-a` (Fastpass SIGCOMM'14 §7.1, experiment A; schemes/fastpass/experiments.ts): the
 * bottleneck queue's p50/p90/p99/p99.9 and the throughput, Fastpass against the baseline, with the
 * pings' RTTs and the variants that take the deployment apart (lateness, stack delay, no reserve).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ExperimentOptions, quantile, WireSize } from '../../../sdk/index.js';
import {
  type FigureSpec,
  reproduceVariants,
  type Summary,
  withQuick,
  writeTable,
} from '../../../sdk/study.js';
import { DEPLOYED, kb, type Side, sides } from './shared.js';

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
export const QUICK_A = ['workload.duration=4ms', 'topology.spines=1'];

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
