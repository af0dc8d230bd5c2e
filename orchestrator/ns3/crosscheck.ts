/**
 * `dcemu experiment ns3-crosscheck` (docs/ns3.md): dcemu's baseline against ns-3's. Each case runs in
 * dcemu, then its ns-3 twin (orchestrator/ns3/twin.ts) runs the same fabric, flows and transport
 * settings; per seed the two are compared flow by flow (the distribution of dcemu's FCT over ns-3's,
 * FCT percentiles per size range on both sides), and at the bottleneck (queue percentiles, ECN marks,
 * drops) and in retransmissions; and what each side cost, per frame hop of the same traffic
 * (costFigures). Every case is a single-path fabric, so ns-3's routing sends every flow the way dcemu's
 * does.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { WireSize } from '../../core/frame.js';
import { segmentCount } from '../../host/transport/types.js';
import { RuntimeError } from '../engine/errors.js';
import type { Summary } from '../engine/results.js';
import { quantile } from '../registry/stats.js';
import type { ExperimentOptions } from '../registry/types.js';
import { type CpuReading, cpuSince, processTreeCpu } from '../runtime/process-cpu.js';
import { overridesOf, runForSummary } from '../studies/experiments.js';
import { type FigureSpec, reproduce, scaleOf } from '../studies/reproduction.js';
import {
  type FlowResult,
  ns3Missing,
  readFlows,
  readQueue,
  runTwin,
  type TwinOptions,
  type TwinRun,
  twinBinary,
} from './twin.js';

export interface Case {
  name: string;
  file: string;
  /** what it is, in words */
  what: string;
  /** `--quick`: shorter, and whether it runs at all */
  quick: string[] | null;
  /** bulk flows that outlast the run: compared by what they delivered, not by FCT */
  bulk?: true;
  /** the twin's settings for this case (what it must do differently to run it at all) */
  twin?: TwinOptions;
}

export const CASES: readonly Case[] = [
  {
    name: 'star',
    file: 'examples/ns3/star-incast.yaml',
    what: 'DCTCP incast of 8 senders into one receiver on one switch',
    quick: ['workload.duration=2ms'],
  },
  {
    name: 'dumbbell',
    file: 'examples/ns3/dumbbell.yaml',
    what: 'DCTCP, web-search sizes, 8 senders to 8 receivers over a 4:1 dumbbell',
    quick: ['workload.duration=10ms'],
  },
  {
    name: 'leafspine',
    file: 'examples/ns3/leaf-spine.yaml',
    what: "the quickstart's fabric with one spine (single path), web-search sizes, no failure",
    quick: null,
  },
  {
    name: 'nicbound',
    file: 'examples/ns3/nic-bound.yaml',
    what: 'senders whose own links are their bottleneck: a 200 MB DCTCP flow from each of two hosts, beside a 10 KB flow from the same host every 500 µs',
    quick: ['workload.duration=10ms'],
  },
  {
    name: 'rack',
    file: 'examples/ns3/rack-reno.yaml',
    what: "Fastpass experiment A's baseline: 80 bulk Reno flows, 64 KB windows, into one receiver through a 5 MB buffer",
    quick: ['workload.duration=10ms'],
    bulk: true,
    // ns-3 3.37 crashes on this case with a receive window (docs/ns3.md): the window is the send buffer
    twin: { window: 'sndbuf' },
  },
];

/**
 * The ns-3 side changed one thing at a time, on the same dcemu runs (only the twin runs again): what
 * each setting of the twin is worth, so a difference can be named by the one that removes it.
 */
const ABLATIONS: ReadonlyArray<{ name: string; what: string; options: TwinOptions }> = [
  {
    name: 'handshake_rto',
    what: "ns-3's first RTO from its handshake's RTT sample (the minimum), not dcemu's 5 x the minimum",
    options: { 'first-rto': 'handshake' },
  },
  {
    name: 'ns3_dctcp',
    what: "ns-3's own DCTCP, whose ssthresh has no floor (the twin's keeps 2 segments, as Linux and dcemu do)",
    options: { 'dctcp-floor': '0' },
  },
  {
    name: 'ecn_minus_1500',
    what: 'the marking threshold 1,500 B lower (ns-3 counting the packet its device holds, as dcemu counts committed frames)',
    options: { 'ecn-offset': '-1500' },
  },
  {
    name: 'classic_recovery',
    what: "the window cut at once on an ECE or a loss (classic recovery) instead of ns-3's proportional rate reduction",
    options: { recovery: 'classic' },
  },
];

/** the size ranges of dcemu's summary (frames of a flow) */
const RANGES: ReadonlyArray<[string, number, number]> = [
  ['1', 0, 1],
  ['2-10', 1, 10],
  ['11-100', 10, 100],
  ['>100', 100, Number.POSITIVE_INFINITY],
];

/** the ns-3 tables' reference: the agreement each ratio aims at, beside ns-3's twin (not a paper) */
export const NS3_REFERENCE = { column: 'target', subject: 'The reference' } as const;

/** a figure of the machine (CPU, wall), not of the run: two runs of the same code differ in it */
const machine = (spec: FigureSpec): FigureSpec => ({ ...spec, exact: false });

/** The figures of one case (`c.name` prefixes their ids and labels), with those of each ablation. */
export function figuresOf(
  c: Pick<Case, 'name' | 'bulk'>,
  ablations: ReadonlyArray<{ name: string }>,
): FigureSpec[] {
  const f = (
    id: string,
    label: string,
    unit: string,
    paper: number | null = null,
    digits = 2,
  ): FigureSpec => ({
    id: `${c.name}_${id}`,
    label: `${c.name}: ${label}`,
    unit,
    paper,
    ...(paper !== null && { source: 'agreement' }),
    digits,
  });
  // what each side's run cost (costFigures): the CPU and wall figures are the machine's
  const cost = [
    machine(
      f('cpu_dcemu_s', 'CPU of the run, dcemu (its node processes and the orchestrator)', 's', null, 2),
    ),
    machine(f('cpu_ns3_s', 'CPU of the run, ns-3 (the twin process)', 's', null, 3)),
    machine(f('wall_dcemu_s', 'wall time of the run, dcemu (start-up and teardown included)', 's', null, 2)),
    machine(f('wall_ns3_s', 'wall time of the run, ns-3', 's', null, 3)),
    machine(f('kernel_share_dcemu', 'share of the CPU in the kernel, dcemu', '', null, 3)),
    f('frames_handled_dcemu', 'frames handled by a node, dcemu (keepalives included)', 'frames', null, 0),
    f('hops_dcemu', 'frame hops, dcemu (frames handled by a node, keepalives not)', 'frames', null, 0),
    f('hops_ns3', 'packet hops, ns-3 (packets its queue discs passed to a device)', 'frames', null, 0),
    machine(f('cpu_us_per_hop_dcemu', 'CPU per frame hop, dcemu', 'µs', null, 2)),
    machine(f('cpu_us_per_hop_ns3', 'CPU per packet hop, ns-3', 'µs', null, 3)),
    machine(f('cpu_per_hop_ratio', 'CPU per hop, dcemu / ns-3', '×', null, 2)),
  ];
  const common = [
    ...cost,
    f('queue_p50_dcemu_kb', 'bottleneck queue p50, dcemu', 'KB', null, 1),
    f('queue_p50_ns3_kb', 'bottleneck queue p50, ns-3', 'KB', null, 1),
    f('queue_p99_dcemu_kb', 'bottleneck queue p99, dcemu', 'KB', null, 1),
    f('queue_p99_ns3_kb', 'bottleneck queue p99, ns-3', 'KB', null, 1),
    f('marks_dcemu', 'ECN marks at the bottleneck, dcemu', 'frames', null, 0),
    f('marks_ns3', 'ECN marks at the bottleneck, ns-3', 'frames', null, 0),
    f('drops_dcemu', 'drops at the bottleneck, dcemu', 'frames', null, 0),
    f('drops_ns3', 'drops at the bottleneck, ns-3', 'frames', null, 0),
    f('drops_all_dcemu', 'drops anywhere (host NICs included), dcemu', 'frames', null, 0),
    f('drops_all_ns3', 'drops anywhere (host NICs included), ns-3', 'frames', null, 0),
    f('retx_dcemu', 'retransmitted segments, dcemu', 'frames', null, 0),
    f('retx_ns3', 'retransmitted segments, ns-3', 'frames', null, 0),
  ];
  if (c.bulk)
    return [
      f('delivered_ratio', 'frames delivered in the run, dcemu / ns-3', '×', 1, 4),
      f('delivered_dcemu', 'frames delivered in the run, dcemu', 'frames', null, 0),
      f('delivered_ns3', 'frames delivered in the run, ns-3', 'frames', null, 0),
      f('queue_ratio_p50', 'bottleneck queue p50, dcemu / ns-3', '×', 1, 3),
      ...common,
    ];
  return [
    f('ratio_p50', 'per-flow FCT dcemu / ns-3, median', '×', 1, 3),
    f('ratio_p10', 'per-flow FCT dcemu / ns-3, p10', '×', 1, 3),
    f('ratio_p90', 'per-flow FCT dcemu / ns-3, p90', '×', 1, 3),
    ...RANGES.flatMap(([r]) => [
      f(`p50_${r}`, `FCT p50 of ${r}-frame flows, dcemu / ns-3`, '×', 1, 3),
      f(`p99_${r}`, `FCT p99 of ${r}-frame flows, dcemu / ns-3`, '×', 1, 3),
    ]),
    f('fct_p50_dcemu_us', 'FCT p50, dcemu', 'µs', null, 1),
    f('fct_p50_ns3_us', 'FCT p50, ns-3', 'µs', null, 1),
    f('fct_p99_dcemu_us', 'FCT p99, dcemu', 'µs', null, 1),
    f('fct_p99_ns3_us', 'FCT p99, ns-3', 'µs', null, 1),
    ...common,
    f('completed_dcemu', 'flows completed, dcemu', 'flows', null, 0),
    f('completed_ns3', 'flows completed, ns-3', 'flows', null, 0),
    ...ablations.flatMap((a) => [
      f(`${a.name}_ratio_p50`, `${a.name}: per-flow FCT dcemu / ns-3, median`, '×', 1, 3),
      f(`${a.name}_ratio_p10`, `${a.name}: per-flow FCT dcemu / ns-3, p10`, '×', 1, 3),
      f(`${a.name}_ratio_p90`, `${a.name}: per-flow FCT dcemu / ns-3, p90`, '×', 1, 3),
      f(`${a.name}_fct_p99_ns3_us`, `${a.name}: FCT p99, ns-3`, 'µs', null, 1),
      f(`${a.name}_queue_p99_ns3_kb`, `${a.name}: bottleneck queue p99, ns-3`, 'KB', null, 1),
      f(`${a.name}_marks_ns3`, `${a.name}: ECN marks at the bottleneck, ns-3`, 'frames', null, 0),
      f(`${a.name}_retx_ns3`, `${a.name}: retransmitted segments, ns-3`, 'frames', null, 0),
    ]),
  ];
}

export interface Comparison {
  figures: Record<string, number>;
  /** the bottleneck both sides are read at: dcemu's busiest switch port */
  bottleneck: { node: string; port: number };
}

/** dcemu's per-port counters of one port, from nodes.json, and its drops at every port */
function dcemuPort(
  results: string,
  node: string,
  port: number,
): { ecnMarks: number; drops: number; dropsAll: number } {
  const nodes = JSON.parse(readFileSync(join(results, 'nodes.json'), 'utf8')) as Array<{
    name: string;
    ports?: Array<{ index: number; ecnMarks: number; drops: number }>;
  }>;
  const p = nodes.find((n) => n.name === node)?.ports?.find((x) => x.index === port);
  const dropsAll = nodes.reduce((a, n) => a + (n.ports ?? []).reduce((b, x) => b + (x.drops ?? 0), 0), 0);
  return { ecnMarks: p?.ecnMarks ?? 0, drops: p?.drops ?? 0, dropsAll };
}

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);

/**
 * compare's flow figures, through `put`: each flow's FCT over the twin's (the flows both completed),
 * the FCT quantiles' ratios per size range, and each side's FCT quantiles.
 */
function flowFigures(
  put: (k: string, v: number) => void,
  dcemu: FlowResult[],
  twinFlows: FlowResult[],
): void {
  const theirs = new Map(twinFlows.map((f) => [f.id, f]));
  const both = dcemu.filter((f) => f.fctNs !== null && theirs.get(f.id)?.fctNs != null);
  const ratios = sorted(both.map((f) => f.fctNs! / theirs.get(f.id)!.fctNs!));
  if (ratios.length > 0) {
    put('ratio_p50', quantile(ratios, 0.5));
    put('ratio_p10', quantile(ratios, 0.1));
    put('ratio_p90', quantile(ratios, 0.9));
  }
  for (const [r, lo, hi] of RANGES) {
    const inRange = both.filter((f) => {
      const n = segmentCount(f.size);
      return n > lo && n <= hi;
    });
    if (inRange.length === 0) continue;
    const ours = sorted(inRange.map((f) => f.fctNs!));
    const ns3 = sorted(inRange.map((f) => theirs.get(f.id)!.fctNs!));
    put(`p50_${r}`, quantile(ours, 0.5) / quantile(ns3, 0.5));
    put(`p99_${r}`, quantile(ours, 0.99) / quantile(ns3, 0.99));
  }
  const fcts = (fl: FlowResult[]) => sorted(fl.filter((f) => f.fctNs !== null).map((f) => f.fctNs! / 1000));
  if (both.length > 0) {
    put('fct_p50_dcemu_us', quantile(fcts(dcemu), 0.5));
    put('fct_p50_ns3_us', quantile(fcts(twinFlows), 0.5));
    put('fct_p99_dcemu_us', quantile(fcts(dcemu), 0.99));
    put('fct_p99_ns3_us', quantile(fcts(twinFlows), 0.99));
  }
}

/** The figures of one case's seed, named `<case>_<figure>`. */
export function compare(
  name: string,
  dcemuDir: string,
  dcemu: FlowResult[],
  twin: Awaited<ReturnType<typeof runTwin>>,
  busiest: string,
  bulk = false,
): Comparison {
  const [node, portText] = busiest.split(':');
  const port = Number(portText);
  const out: Record<string, number> = {};
  const put = (k: string, v: number) => {
    if (Number.isFinite(v)) out[`${name}_${k}`] = v;
  };
  flowFigures(put, dcemu, twin.flows);
  // the same window on both sides: dcemu stops sampling when its run ends (all flows done, or the
  // drain's end), the twin samples to the drain's end
  const ourSamples = readQueue(join(dcemuDir, 'queues.csv'), node, port);
  const lastNs = ourSamples.at(-1)?.tNs ?? 0;
  const qOurs = sorted(ourSamples.map((q) => q.bytes));
  const qNs3 = sorted(
    readQueue(join(twin.dir, 'queues.csv'), node, port)
      .filter((q) => q.tNs <= lastNs)
      .map((q) => q.bytes),
  );
  put('queue_p50_dcemu_kb', quantile(qOurs, 0.5) / 1000);
  put('queue_p50_ns3_kb', quantile(qNs3, 0.5) / 1000);
  put('queue_p99_dcemu_kb', quantile(qOurs, 0.99) / 1000);
  put('queue_p99_ns3_kb', quantile(qNs3, 0.99) / 1000);
  if (bulk) {
    // bulk flows send only full frames: the data frames that reached the receivers in the run (in
    // order or not), dcemu's wire bytes over the frame size, ns-3's payload over the segment size
    const { throughput } = JSON.parse(readFileSync(join(dcemuDir, 'summary.json'), 'utf8')) as Summary;
    const delivered = throughput.bytes / WireSize.Mtu;
    const theirsDelivered = twin.flows.reduce((a, f) => a + f.arrived, 0) / WireSize.Mss;
    put('delivered_dcemu', delivered);
    put('delivered_ns3', theirsDelivered);
    put('delivered_ratio', delivered / theirsDelivered);
    put('queue_ratio_p50', quantile(qOurs, 0.5) / quantile(qNs3, 0.5));
  }
  const ours = dcemuPort(dcemuDir, node, port);
  const ns3Port = twin.ports.find((p) => p.node === node && p.port === port);
  put('marks_dcemu', ours.ecnMarks);
  put('marks_ns3', ns3Port?.marks ?? 0);
  put('drops_dcemu', ours.drops);
  put('drops_ns3', ns3Port?.drops ?? 0);
  put('drops_all_dcemu', ours.dropsAll);
  put(
    'drops_all_ns3',
    twin.ports.reduce((a, p) => a + p.drops, 0),
  );
  put(
    'retx_dcemu',
    dcemu.reduce((a, f) => a + f.retransmits, 0),
  );
  put(
    'retx_ns3',
    twin.flows.reduce((a, f) => a + f.retransmits, 0),
  );
  put('completed_dcemu', dcemu.filter((f) => f.fctNs !== null).length);
  put('completed_ns3', twin.flows.filter((f) => f.fctNs !== null).length);
  return { figures: out, bottleneck: { node, port } };
}

/** what one side's run took: the CPU of its processes and its wall time */
export interface RunCost {
  cpu: CpuReading | null;
  wallS: number;
}

/** a piece of work, and what it cost (processTreeCpu: every process it started and waited for) */
async function costOf<T>(work: () => Promise<T>): Promise<{ value: T; cost: RunCost }> {
  const cpu0 = processTreeCpu();
  const t0 = performance.now();
  const value = await work();
  return { value, cost: { cpu: cpuSince(cpu0, processTreeCpu()), wallS: (performance.now() - t0) / 1000 } };
}

/** keepalives every node sent (core/liveness.ts), from nodes.json: frames ns-3's links have no counterpart of */
function keepalivesOf(results: string): number {
  const nodes = JSON.parse(readFileSync(join(results, 'nodes.json'), 'utf8')) as Array<{
    counters?: Record<string, number>;
  }>;
  return nodes.reduce((a, n) => a + (n.counters?.keepalivesSent ?? 0), 0);
}

/**
 * What the two sides cost, named `<case>_<figure>`: CPU and wall of each run, the hops each side's
 * frames made, and the CPU per hop. dcemu's hops are the frames its nodes handled (one per frame per
 * link crossed), less its keepalives (core/liveness.ts: the link detector's frames, which ns-3's links
 * do without), so both sides count the same traffic; ns-3's, the packets its queue discs passed to a
 * device (one per packet per link it was sent on; its handshakes and FINs among them, a few per flow).
 */
export function costFigures(
  name: string,
  dcemu: RunCost,
  hops: { framesHandled: number; keepalives: number },
  ns3: RunCost,
  twin: Pick<TwinRun, 'ports'>,
): Record<string, number> {
  const out: Record<string, number> = {};
  const put = (k: string, v: number) => {
    if (Number.isFinite(v)) out[`${name}_${k}`] = v;
  };
  const hopsOurs = hops.framesHandled - hops.keepalives;
  const hopsNs3 = twin.ports.reduce((a, p) => a + p.tx, 0);
  put('wall_dcemu_s', dcemu.wallS);
  put('wall_ns3_s', ns3.wallS);
  put('frames_handled_dcemu', hops.framesHandled);
  put('hops_dcemu', hopsOurs);
  put('hops_ns3', hopsNs3);
  if (dcemu.cpu === null || ns3.cpu === null) return out;
  const ours = dcemu.cpu.userS + dcemu.cpu.systemS;
  const theirs = ns3.cpu.userS + ns3.cpu.systemS;
  put('cpu_dcemu_s', ours);
  put('cpu_ns3_s', theirs);
  put('kernel_share_dcemu', dcemu.cpu.systemS / ours);
  const perHopOurs = (ours * 1e6) / hopsOurs;
  // a twin under the clock's tick (10 ms) reads as 0 s: no per-hop figure rather than an infinite ratio
  const perHopTheirs = theirs > 0 ? (theirs * 1e6) / hopsNs3 : Number.NaN;
  put('cpu_us_per_hop_dcemu', perHopOurs);
  put('cpu_us_per_hop_ns3', perHopTheirs);
  put('cpu_per_hop_ratio', perHopOurs / perHopTheirs);
  return out;
}

/**
 * One case of one seed: the dcemu run, its twin, the comparison (null: aborted); with `ablations`, the
 * twin again with each one's options, its figures named `<case>_<ablation>_<figure>`.
 */
export async function crossCheckCase(
  c: Pick<Case, 'name' | 'file' | 'bulk' | 'twin'>,
  dir: string,
  set: Record<string, string>,
  signal?: AbortSignal,
  twinOptions: TwinOptions = {},
  ablations: ReadonlyArray<{ name: string; options: TwinOptions }> = [],
): Promise<Comparison | null> {
  const ours = join(dir, 'dcemu');
  // built before either side is timed (a first build is tens of CPU seconds of g++)
  await twinBinary();
  const { value: s, cost: ourCost } = await costOf(() => runForSummary(c.file, ours, set, signal));
  if (s === null) return null;
  const sc = JSON.parse(readFileSync(join(ours, 'scenario.json'), 'utf8')) as {
    workload: { durationNs: number };
    run: { drainNs: number };
  };
  const endNs = sc.workload.durationNs + sc.run.drainNs;
  const flows = readFlows(join(ours, 'flows.csv'));
  const busiest = s.queues.busiest?.port;
  // every figure of the bottleneck is read at dcemu's busiest port: a run without queue samples has none
  if (busiest === undefined)
    throw new RuntimeError(`ns3-crosscheck ${c.name}: the run sampled no switch queue (run.sample)`);
  const { value: twin, cost: twinCost } = await costOf(() =>
    runTwin(ours, join(dir, 'ns3'), endNs, { ...c.twin, ...twinOptions }),
  );
  const result = compare(c.name, ours, flows, twin, busiest, c.bulk);
  Object.assign(
    result.figures,
    costFigures(
      c.name,
      ourCost,
      { framesHandled: s.fidelity.framesHandled, keepalives: keepalivesOf(ours) },
      twinCost,
      twin,
    ),
  );
  for (const a of ablations) {
    const t = await runTwin(ours, join(dir, `ns3-${a.name}`), endNs, {
      ...c.twin,
      ...twinOptions,
      ...a.options,
    });
    Object.assign(result.figures, compare(`${c.name}_${a.name}`, ours, flows, t, busiest, c.bulk).figures);
  }
  return result;
}

export async function runNs3Crosscheck(opts: ExperimentOptions): Promise<string> {
  const missing = ns3Missing();
  if (missing !== null) {
    opts.say(`ns3-crosscheck: skipped: ${missing}`);
    return `ns3-crosscheck: skipped: ${missing}`;
  }
  const cases = CASES.filter((c) => !opts.quick || c.quick !== null);
  const user = overridesOf(opts.set ?? []);
  const done = await reproduce(opts, {
    experiment: 'ns3-crosscheck',
    scale: cases
      .map((c) => `${c.name}: ${c.what}; ${scaleOf(c.file, opts.quick ? (c.quick ?? []) : [])}`)
      .join('; '),
    paperScale: 'ns-3 3.37 (Debian libns3-dev) running the same fabric, flows and TCP settings',
    reference: NS3_REFERENCE,
    figures: cases.flatMap((c) => figuresOf(c, opts.quick || c.bulk ? [] : ABLATIONS)),
    runSeed: async (seed, dir) => {
      const all: Record<string, number> = {};
      for (const c of cases) {
        opts.say(`ns3-crosscheck: ${c.name}, seed ${seed}`);
        const quick = opts.quick ? overridesOf(c.quick ?? []) : {};
        const r = await crossCheckCase(
          c,
          join(dir, c.name),
          { ...quick, ...user, seed: String(seed) },
          opts.signal,
          {},
          // the ablations vary DCTCP and FCT-side settings: a bulk Reno case is compared without them
          opts.quick || c.bulk ? [] : ABLATIONS,
        );
        if (r === null) return null;
        Object.assign(all, r.figures);
      }
      return all;
    },
  });
  return done?.table ?? 'ns3-crosscheck: interrupted';
}
