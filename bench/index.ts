/**
 * `npm run bench`: the figures the project claims, measured on this machine. Prints a table for people
 * and one `name value` line per figure for scripts:
 * - codec_frames_per_s: encode + decode of one-frame datagrams on one core;
 * - bare_relay_frames_per_s / switch_frames_per_s / switch_vs_bare_ratio: a closed-loop load (a fixed
 *   window of frames in flight, so nothing overflows) through a bare node:dgram relay process and
 *   through a real dcemu switch process, side by side in one run; loss is counted for both;
 * - datagram_floor_cpu_us: what a datagram costs bare node:dgram processes here (bench/floor.ts);
 * - quickstart_*, sync_speedup_vs_dilated, frame_hops_per_cpu_s, determinism: the quickstart in both
 *   time modes (skip with --no-quickstart); report_html_share: its results page written again, over its wall;
 *   quickstart_cpu_us_per_datagram and frame_hops_per_cpu_s_ceiling: the same run against the floor;
 * - startup_24_nodes_s, startup_unbundled_vs_bundled: start-up of a 24-node fabric with the nodes'
 *   bundles, and without them;
 * - pool_sweep_cpu_ratio, pool_sweep_wall_ratio: four short quickstart runs as one sweep (its node
 *   pool) against four runs of their own;
 * - fattree8_wall_s, fattree8_peak_rss_mb_per_process, fattree8_pss_mb_per_process: bench/fixtures/fattree8.yaml, 208 processes
 *   (skip with --no-fattree8);
 * - fattree12_wall_s, fattree12_pss_mb_per_process: bench/fixtures/fattree12.yaml, 612 processes, ~18 GB
 *   (skip with --no-fattree12);
 * - swarm_identical, swarm_wall_s, swarm_vs_process_wall: the quickstart on a one-machine Docker Swarm
 *   (`dcemu swarm init` when none runs, left after) against processes (skip with --no-swarm; n/a
 *   without a Docker daemon);
 * - swarm2_identical, swarm2_vs_process_wall, swarm2_vs_swarm1_wall, swarm2_rtt_*, swarm2_model_extra_s,
 *   swarm2_measured_extra_s: a k=4 FatTree split by pods over the two machines of a swarm lab, the cost
 *   of crossing machines beside its model (bench/swarm2.ts; skip with --no-swarm2; n/a without root or
 *   a lab);
 * - cpu_vs_ns3, cpu_vs_ns3_floor: dcemu's CPU per frame hop over ns-3's on the cross-check's dumbbell,
 *   and the least it could be with dcemu's datagrams at the floor (bench/ns3.ts; skip with --no-ns3; n/a
 *   without ns-3);
 * - fastpass_alloc_timeslots_per_s, fastpass_pathsel_us_per_timeslot: bench/fastpass.ts;
 * - flowtune_ned_iteration_us, flowtune_ned_ns_per_flow/_per_link (the compute model's calibration): bench/flowtune.ts.
 *
 * `--out <dir>` also writes them to `<dir>/bench.json` (name, value, note), with the machine they were
 * measured on: what `npm run doc-tables -- --only development-bench` turns into docs/development.md's table.
 */

import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { Codec } from '../core/codec.js';
import { FrameType, makeFrame } from '../core/frame.js';
import { packageRoot } from '../core/paths.js';
import { quantile } from '../orchestrator/registry/stats.js';
import { benchF10 } from './f10.js';
import { benchAllocator, benchPathsel } from './fastpass.js';
import { benchDatagramFloor, datagramsOf, type Floor } from './floor.js';
import { benchNed } from './flowtune.js';
import { benchBareRelay, benchSwitch } from './load.js';
import { benchNs3 } from './ns3.js';
import { cli, type Figures, report, runScenario, swarmState, timedCli } from './run.js';
import { benchSwarm2 } from './swarm2.js';

const figures: Figures = [];
const figure = (name: string, value: number, note: string) => figures.push([name, value, note]);

function benchCodec(ms = 1500): number {
  const codec = new Codec();
  const f = makeFrame({ t: FrameType.Data, s: 3, d: 12, f: 12345, q: 77, z: 1500, e: 1, a: 123456789.25 });
  let n = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < ms) {
    for (let i = 0; i < 1000; i++) {
      const r = codec.decode(codec.encode({ port: 2, seq: 1, ack: 0, promise: 0 }, [f]));
      if (!r.ok) throw new Error('codec round trip failed');
    }
    n += 1000;
  }
  return n / ((performance.now() - t0) / 1000);
}

/** the suite's short quickstart: 14 nodes, 3 ms of traffic (test/helpers.ts QUICKSTART_SHORT) */
const SHORT = [
  'topology.hostsPerLeaf=2',
  'workload={pattern: all-to-all, fixedSize: 100KB, load: 0.4, duration: 3ms}',
  'timeline.0.at=1500us',
  'run.drain=2ms',
  'run.plots=false',
];

/**
 * Four short quickstart runs (seeds 7 to 10) as one sweep, whose node pool runs each point in the
 * processes of the one before (orchestrator/runtime/pool.ts), against the same four as runs of their
 * own: CPU and wall of all processes, the orchestrators' three more start-ups included.
 */
async function benchPool(): Promise<void> {
  const seeds = [7, 8, 9, 10];
  const set = SHORT.flatMap((s) => ['--set', s]);
  let alone = { wallS: 0, cpuS: 0 };
  for (const seed of seeds) {
    const out = mkdtempSync(join(tmpdir(), 'dcemu-bench-'));
    const r = await timedCli([
      'run',
      'examples/quickstart.yaml',
      '--out',
      out,
      '-q',
      ...set,
      '--set',
      `seed=${seed}`,
    ]);
    alone = { wallS: alone.wallS + r.wallS, cpuS: alone.cpuS + r.cpuS };
  }
  const out = mkdtempSync(join(tmpdir(), 'dcemu-bench-'));
  const fix = SHORT.flatMap((s) => ['--fix', s]);
  const pooled = await timedCli([
    'sweep',
    'examples/quickstart.yaml',
    '--set',
    `seed=${seeds.join(',')}`,
    ...fix,
    '--no-plots',
    '--out',
    out,
  ]);
  figure(
    'pool_sweep_cpu_ratio',
    pooled.cpuS / alone.cpuS,
    `CPU of four short quickstart runs as one sweep (pooled processes) over four runs of their own (${pooled.cpuS.toFixed(1)} / ${alone.cpuS.toFixed(1)} s)`,
  );
  figure(
    'pool_sweep_wall_ratio',
    pooled.wallS / alone.wallS,
    `wall of the same (${pooled.wallS.toFixed(1)} / ${alone.wallS.toFixed(1)} s)`,
  );
}

const quickstart = (extra: string[]) => runScenario('examples/quickstart.yaml', extra);

/**
 * Wall seconds from the command line's start line to every node ready, for 24 processes: the
 * ExpressPass test fixture on 4 leaves of 4 hosts and 4 spines (a 10 µs workload), median of 3;
 * `unbundled` starts the nodes' module tree instead of their bundles (DCEMU_UNBUNDLED=1).
 */
async function startupS(unbundled: boolean): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const out = mkdtempSync(join(tmpdir(), 'dcemu-bench-'));
    const run = execa(
      process.execPath,
      ['dist/orchestrator/cli.js', 'run', 'test/fixtures/expresspass.yaml', '--out', out, '-q'].concat([
        '--set',
        'topology={kind: leaf-spine, leaves: 4, spines: 4, hostsPerLeaf: 4}',
        '--set',
        'workload.duration=10us',
      ]),
      { cwd: packageRoot(), reject: false, env: unbundled ? { DCEMU_UNBUNDLED: '1' } : {} },
    );
    let starting = 0;
    let ready = 0;
    run.stderr?.on('data', (d: Buffer) => {
      const text = d.toString();
      if (starting === 0 && text.includes('starting')) starting = performance.now();
      if (ready === 0 && text.includes('nodes ready')) ready = performance.now();
    });
    await run;
    times.push((ready - starting) / 1000);
  }
  return times.sort((a, b) => a - b)[1];
}

async function benchStartup(): Promise<void> {
  const bundled = await startupS(false);
  const unbundled = await startupS(true);
  figure('startup_24_nodes_s', bundled, '24 node processes started, connected and bound (median of 3)');
  figure(
    'startup_unbundled_vs_bundled',
    unbundled / bundled,
    'the same with each node loading its module tree instead of its bundle',
  );
}

/**
 * One memory figure of each node process, MB, from the `node stopped` line of its log (a node the
 * timeline killed has none: it reported at its kill, and died): `maxRssKb` its peak RSS, which counts
 * the ~48 MB of Node's binary and libraries every node shares; `pssKb` its proportional set size at
 * the end (shared pages split among their users), what one more process costs the machine.
 */
function memoryMb(out: string, field: 'maxRssKb' | 'pssKb' = 'maxRssKb'): number[] {
  const dir = join(out, 'logs');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.log'))
    .flatMap((f) => {
      const m = new RegExp(`"${field}":(\\d+)`).exec(readFileSync(join(dir, f), 'utf8'));
      return m ? [Number(m[1]) / 1024] : [];
    });
}

/** the median of `xs` (the summary's quantile, at rank floor(n/2)) */
const median = (xs: number[]): number =>
  quantile(
    [...xs].sort((a, b) => a - b),
    0.5,
  );

/** bench/fixtures/fattree12.yaml: 612 processes, what a 24 GB machine holds */
async function benchFattree12(): Promise<void> {
  const r = await runScenario('bench/fixtures/fattree12.yaml', []);
  const s = r.summary;
  const pss = memoryMb(r.out, 'pssKb');
  figure(
    'fattree12_wall_s',
    r.wallS,
    `k=12 FatTree, ${s.processes.started} processes, 1 ms at 0.3 load: ${s.flows.completed}/${s.flows.planned} flows, ${s.fidelity.framesHandled} frames, ${r.cpuS.toFixed(0)} CPU-s`,
  );
  figure(
    'fattree12_pss_mb_per_process',
    Math.max(...pss),
    `largest proportional set size of the ${pss.length} node processes at their end, MB`,
  );
}

async function benchFattree8(): Promise<void> {
  const r = await runScenario('bench/fixtures/fattree8.yaml', []);
  const s = r.summary;
  const page = await timedCli(['report', r.out]);
  figure(
    'fattree8_report_html_share',
    page.wallS / r.wallS,
    `dcemu report on the k=8 FatTree's folder (208 processes' queues, its 80 switches laid out) wall / the run's wall (${page.wallS.toFixed(1)} / ${r.wallS.toFixed(0)} s)`,
  );
  const rss = memoryMb(r.out);
  const pss = memoryMb(r.out, 'pssKb');
  figure(
    'fattree8_wall_s',
    r.wallS,
    `k=8 FatTree, ${s.processes.started} processes, 2 ms at 0.3 load: ${s.flows.completed}/${s.flows.planned} flows, ${s.fidelity.framesHandled} frames; who held whom: dcemu holds ${r.out}`,
  );
  figure('fattree8_cpu_s', r.cpuS, 'CPU seconds of all its processes');
  figure(
    'fattree8_peak_rss_mb_per_process',
    Math.max(...rss),
    `largest peak RSS of the ${rss.length} node processes, MB (goal <= 80)`,
  );
  figure(
    'fattree8_pss_mb_per_process',
    Math.max(...pss),
    `largest proportional set size (shared pages split among the processes) of the ${pss.length} node processes at their end, MB: what one more process costs (goal <= 40)`,
  );
}

async function benchQuickstart(floor: Floor): Promise<void> {
  const a = await quickstart([]);
  const b = await quickstart([]);
  const d = await quickstart(['--sync', 'dilated']);
  const frames = a.summary.fidelity.framesHandled;
  figure('quickstart_conservative_wall_s', a.wallS, 'quickstart wall time, conservative mode');
  figure('quickstart_dilated_wall_s', d.wallS, `quickstart wall time, dilated mode at tdf ${d.summary.tdf}`);
  figure('sync_speedup_vs_dilated', d.wallS / a.wallS, 'dilated wall / conservative wall (goal >= 5)');
  // the results page, written again from the run's folder by its own command (a run writes it after
  // its plots): its share of the run's wall time
  const page = await timedCli(['report', a.out]);
  figure(
    'report_html_share',
    page.wallS / a.wallS,
    `dcemu report (report.html: ELK's layout, Vega's charts) wall / the quickstart's wall (${page.wallS.toFixed(2)} / ${a.wallS.toFixed(1)} s)`,
  );
  figure(
    'frame_hops_per_cpu_s',
    frames / a.cpuS,
    `frames handled / CPU s of all processes, conservative (goal >= 50,000)`,
  );
  // the same run against the bare datagram floor (bench/floor.ts): what its datagrams alone cost here
  const datagrams = datagramsOf(a.out);
  figure(
    'quickstart_cpu_us_per_datagram',
    (a.cpuS * 1e6) / datagrams,
    `CPU s of all processes / datagrams its nodes sent (${datagrams}), start-up and teardown included`,
  );
  figure(
    'frame_hops_per_cpu_s_ceiling',
    frames / ((datagrams * floor.cpuUsPerDatagram) / 1e6),
    `frames handled / (its datagrams x datagram_floor_cpu_us): frame_hops_per_cpu_s if dcemu's own work and start-up cost nothing`,
  );
  figure(
    'quickstart_miss_rate',
    d.summary.fidelity.missRate,
    'dilated causality misses / frames (goal < 0.001)',
  );
  const rss = memoryMb(a.out);
  figure(
    'rss_mb_per_process',
    median(rss),
    `median peak RSS of the quickstart's ${rss.length} node processes, MB (largest ${Math.max(...rss).toFixed(0)}; ~48 of it Node's binary and libraries, shared by every process)`,
  );
  const pss = memoryMb(a.out, 'pssKb');
  figure(
    'pss_mb_per_process',
    median(pss),
    `median proportional set size of the quickstart's ${pss.length} node processes at their end, MB: what one more process costs (largest ${Math.max(...pss).toFixed(0)}; goal <= 40)`,
  );
  // a CPU-bound neighbour process per core: what a busy or shared machine costs per frame
  const busy = cpus().map(() =>
    execa(process.execPath, ['-e', 'for (;;) {}'], { reject: false, stdio: 'ignore' }),
  );
  const c = await quickstart([]);
  for (const p of busy) p.kill('SIGKILL');
  await Promise.all(busy);
  figure(
    'contention_cpu_ratio',
    c.cpuS / a.cpuS,
    `quickstart CPU s with a busy neighbour per core over idle (${c.cpuS.toFixed(1)} / ${a.cpuS.toFixed(1)}; goal <= 1.5)`,
  );
  // the same bytes on every run, the busy one included
  const same = ['flows.csv', 'queues.csv', 'events.jsonl'].every((f) => {
    const first = readFileSync(join(a.out, f), 'utf8');
    return [b, c].every((r) => readFileSync(join(r.out, f), 'utf8') === first);
  });
  figure(
    'determinism_identical',
    same ? 1 : 0,
    'three conservative quickstart runs, one beside busy neighbours, give the same bytes (1) or not (0)',
  );
  process.stdout.write(`determinism ${same ? 'identical' : 'differs'}\n`);
}

/**
 * The quickstart on the swarm runtime and on processes: the same bytes (1) or not (0), and the walls.
 * A swarm this makes (none ran) it leaves after.
 */
async function benchSwarm(): Promise<void> {
  const state = await swarmState();
  if (state === null) {
    process.stdout.write('swarm_identical n/a: no Docker daemon answers\n');
    return;
  }
  const ours = state !== 'active';
  if (ours) {
    const init = await cli(['swarm', 'init']);
    if (init.exitCode !== 0) throw new Error(`dcemu swarm init: ${init.stderr}`);
  }
  try {
    const image = await cli(['image', 'build']);
    if (image.exitCode !== 0) throw new Error(`dcemu image build: ${image.stderr}`);
    const p = await quickstart([]);
    const w = await quickstart(['--runtime', 'swarm']);
    const same = ['flows.csv', 'queues.csv', 'events.jsonl'].every(
      (f) => readFileSync(join(w.out, f), 'utf8') === readFileSync(join(p.out, f), 'utf8'),
    );
    figure(
      'swarm_identical',
      same ? 1 : 0,
      "the quickstart on a one-machine swarm gives the process runtime's bytes (1) or not (0)",
    );
    figure(
      'swarm_wall_s',
      w.wallS,
      `the quickstart on a one-machine swarm, start-up (${w.summary.processes.started} services, an overlay, the control relay) and teardown included`,
    );
    figure('swarm_vs_process_wall', w.wallS / p.wallS, `swarm wall / process wall (${p.wallS.toFixed(1)} s)`);
  } finally {
    if (ours) await cli(['swarm', 'leave']);
  }
}

const skipQuickstart = process.argv.includes('--no-quickstart');
const codec = benchCodec();
figure(
  'codec_frames_per_s',
  codec,
  'msgpackr encode + decode of one-frame datagrams, one core (goal >= 1,000,000)',
);
const allocPerS = benchAllocator();
figure(
  'fastpass_alloc_timeslots_per_s',
  allocPerS,
  '256 endpoints, saturated all-to-all demand, one core (paper: ~23M per core; goal within 3x)',
);
const pathselUs = benchPathsel();
figure(
  'fastpass_pathsel_us_per_timeslot',
  pathselUs,
  'edge-colouring a full timeslot of 16 racks x 32 endpoints, one core (paper: < 12 µs)',
);
// the compute model's costs (schemes/fastpass/arbiter/cost.ts)
figure('fastpass_alloc_ns_per_timeslot', 1e9 / allocPerS, 'compute model: ALLOC_NS_PER_TIMESLOT');
figure(
  'fastpass_pathsel_ns_per_edge',
  (pathselUs * 1000) / 512,
  'compute model: PATHSEL_NS_PER_EDGE (512 cross-rack packets)',
);
const ned3072 = benchNed();
figure(
  'flowtune_ned_iteration_us',
  ned3072,
  'one NED iteration + F-NORM, 384 endpoints / 3072 flows, one core (paper: 8.29 µs on 4 cores; aim <= 35)',
);
// the compute model's cost of an iteration (schemes/flowtune/arbiter/cost.ts), fitted on two sizes
// over the same 960 links: a line through 768 and 3072 flows
{
  const ned768 = benchNed(1500, 384, 12, 8, 768);
  const perFlow = ((ned3072 - ned768) * 1000) / (3072 - 768);
  figure('flowtune_ned_ns_per_flow', perFlow, 'compute model: NED cost per flow (cost.ts: NED_NS_PER_FLOW)');
  figure(
    'flowtune_ned_ns_per_link',
    (ned768 * 1000 - 768 * perFlow) / 960,
    'compute model: NED cost per link (cost.ts: NED_NS_PER_LINK)',
  );
}
// the compute model's costs of F10's controller (schemes/f10/arbiter/cost.ts)
{
  const f10 = benchF10();
  figure(
    'f10_epoch_ns_per_path_hop',
    f10.pathHopNs,
    'compute model: EPOCH_NS_PER_PATH_HOP (k=8 AB tree, every ToR pair)',
  );
  figure('f10_epoch_ns_per_port', f10.portNs, 'compute model: EPOCH_NS_PER_PORT');
  figure(
    'f10_routes_ns_per_tor_port',
    f10.routesNs,
    'compute model: ROUTES_NS_PER_TOR_PORT (PortLand recomputation)',
  );
}
const seconds = 3000;
const bare = await benchBareRelay(seconds);
const sw = await benchSwitch(seconds);
figure(
  'bare_relay_frames_per_s',
  bare.framesPerS,
  `bare node:dgram relay process, lost ${bare.sent - bare.received}`,
);
figure('switch_frames_per_s', sw.framesPerS, `dcemu switch process, lost ${sw.sent - sw.received}`);
figure('switch_vs_bare_ratio', sw.framesPerS / bare.framesPerS, 'switch / bare relay (goal >= 0.70)');
figure('switch_lost_frames', sw.sent - sw.received, 'frames the switch lost under closed-loop load (goal 0)');
// With 32 frames in flight the switch sends frames that leave together in one datagram, which the
// bare relay cannot do; with one frame in flight neither batches, so this pair compares per-frame cost.
const bare1 = await benchBareRelay(seconds / 2, 1);
const sw1 = await benchSwitch(seconds / 2, 1);
figure('bare_relay_w1_frames_per_s', bare1.framesPerS, 'bare relay, one frame in flight (latency-bound)');
figure('switch_w1_frames_per_s', sw1.framesPerS, 'switch, one frame in flight (latency-bound, no batching)');
figure('switch_vs_bare_w1_ratio', sw1.framesPerS / bare1.framesPerS, 'per-frame cost ratio without batching');
await benchStartup();
await benchPool();
const floor = await benchDatagramFloor();
figure(
  'datagram_floor_cpu_us',
  floor.cpuUsPerDatagram,
  `CPU per datagram sent and received by bare node:dgram processes, 11 pairs answering each other at once (${(100 * floor.systemShare).toFixed(0)}% in the kernel): the floor under every dcemu datagram`,
);
if (!skipQuickstart) await benchQuickstart(floor);
if (!process.argv.includes('--no-ns3')) await benchNs3(figure, floor);
if (!process.argv.includes('--no-fattree8')) await benchFattree8();
if (!process.argv.includes('--no-fattree12')) await benchFattree12();
if (!process.argv.includes('--no-swarm')) await benchSwarm();
if (!process.argv.includes('--no-swarm2')) await benchSwarm2(figure);

report(figures);
