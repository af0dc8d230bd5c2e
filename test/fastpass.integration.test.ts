/**
 * Fastpass end to end, as real processes in conservative mode (exact: figures are asserted as
 * measured): experiment A against the loss-based baseline (queue and throughput, the former checked
 * again from queues.csv), queue growth with clock error, the primary arbiter killed and paused, a
 * spine killed (fault isolation), a lossy fabric link, host clocks stepped.
 */
// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pingRtts } from '../schemes/fastpass/experiments.js';
import { dcemu, KEEPALIVE_1MS, quickExperiment, readJson, runScenario, tempOut } from './helpers.js';

// biome-ignore lint/suspicious/noExplicitAny: summary.json as written
type Summary = any;

const run = runScenario;

/** the receiver port's sampled queue, from queues.csv (an independent reading of the series) */
function receiverQueue(out: string): number[] {
  return readFileSync(join(out, 'queues.csv'), 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((l) => l.split(','))
    .filter(([node, port]) => node === 'leaf0' && port === '0')
    .map((f) => Number(f[4]))
    .sort((a, b) => a - b);
}

const SPINE = 'test/fixtures/fastpass-spine.yaml';

/**
 * The fixture as it is (spine0 killed at 1 ms) with the arbiters on the `cost` compute model, run once
 * for the killed-spine and the compute-model tests
 */
let spineCostRun: ReturnType<typeof run> | null = null;
function spineCost(): ReturnType<typeof run> {
  spineCostRun ??= run('fastpass-cost', SPINE, ['--set', 'compute={arbiter: {model: cost}}']);
  return spineCostRun;
}

describe('Fastpass', () => {
  it("experiments A and B on the deployment's clocks: near-zero queue at the baseline's throughput, pings far faster (dcemu experiment fastpass-a)", async () => {
    const out = tempOut('fastpass-a');
    // --quick: one seed, the example's 6 hosts (the full run: the paper's rack of 32), 4 ms of traffic
    const r = await dcemu(['experiment', 'fastpass-a', '--quick', '--out', out]);
    expect(r.exitCode, r.stderr).toBe(0);
    const seed = join(out, 'seed-1');
    const side = (name: string) => ({ out: join(seed, name), s: readJson(join(seed, name, 'summary.json')) });
    const [fp, base, ideal] = [side('fastpass'), side('baseline'), side('fastpass-ideal')];
    // the reproduction: the paper's value beside ours, the scale and the seed
    const rep = readJson(join(out, 'reproduction.json'));
    expect(rep).toMatchObject({
      experiment: 'fastpass-a',
      seeds: [1],
      quick: true,
      scale: '6 hosts in 1 rack at 10 Gbit/s, 4 ms of traffic',
    });
    const fig = (id: string) => rep.figures.find((f: { id: string }) => f.id === id);
    expect(fig('fp_p50_kb')).toMatchObject({ paper: 18, values: [1.5], mean: 1.5, ci95: null });
    expect(fig('base_p50_kb').paper).toBe(4351);
    expect(fig('ping_ratio').paper).toBe(15.5);
    // one seed: no interval, and the table says so
    expect(r.stdout).toContain('(one seed: no interval)');
    expect(r.stdout).toContain('| bottleneck queue p50, Fastpass | KB | 18.00 (§7.1 A) | 1.50 | 1.50 |');
    // one change between the sides: the scheme. Fastpass and the baseline on the same drifting,
    // PTP-disciplined clocks with send lateness; Fastpass on ideal clocks beside them
    expect([fp.s.scheme, base.s.scheme, ideal.s.scheme]).toEqual(['fastpass', 'ecmp', 'fastpass']);
    expect([fp.s.clocks.errP99Ns, base.s.clocks.errP99Ns]).toEqual([1160, 1504]);
    expect(fp.s.queues.busiest).toMatchObject({
      port: 'leaf0:0',
      p50Bytes: 1500,
      p90Bytes: 1628,
      p99Bytes: 4500,
    });
    expect(ideal.s.queues.busiest).toMatchObject({
      port: 'leaf0:0',
      p50Bytes: 0,
      p90Bytes: 0,
      p99Bytes: 120,
    });
    expect(base.s.queues.busiest).toMatchObject({
      port: 'leaf0:0',
      p50Bytes: 3_672_336,
      p90Bytes: 4_998_000,
    });
    // independently: the receiver port's samples
    const q = receiverQueue(ideal.out);
    const qb = receiverQueue(base.out);
    expect(q[Math.floor(q.length / 2)]).toBe(0);
    expect(qb[Math.floor(qb.length / 2)]).toBeGreaterThanOrEqual(50 * 1500);
    expect([fp.s.throughput.gbps, base.s.throughput.gbps, ideal.s.throughput.gbps]).toEqual([
      9.467, 9.938, 9.515,
    ]);
    expect(fp.s.throughput.gbps).toBeGreaterThanOrEqual(0.95 * base.s.throughput.gbps);
    // nothing lost; a few timeslots sent late on real clocks, none on ideal ones
    expect(fp.s.drops.congestion).toBe(0);
    const f = fp.s.fastpass;
    expect(f.timeslots).toMatchObject({ allocated: 3437, used: 3365, late: 4, unused: 0 });
    expect(ideal.s.fastpass.timeslots).toMatchObject({ allocated: 3459, used: 3398, late: 0, unused: 0 });
    expect(f).toMatchObject({ allocationsLost: 0, qdiscDrops: 0, retransmitted: 0, resets: 6 });
    expect(f.fcp.overhead).toBeGreaterThan(0);
    expect(f.fcp.overhead).toBeLessThan(0.04);
    // the throughput cost split as §7.1 splits it: here the re-requested (late) timeslots, 4 frames of
    // the baseline's bytes; the FCP reserve's part is the full run's ablation
    expect(fig('cost_total_pct')).toMatchObject({ paper: 1.6 });
    expect(fig('cost_total_pct').values[0]).toBeCloseTo(4.739, 3);
    expect(fig('cost_rerequest_pct').values[0]).toBeCloseTo(0.121, 3);
    expect(fig('cost_fcp_pct')).toBeUndefined();
    // experiment B: 5 pings each way in the first ms; round trip = request + reply completion times
    const fpPings = pingRtts(readFileSync(join(fp.out, 'flows.csv'), 'utf8'));
    const basePings = pingRtts(readFileSync(join(base.out, 'flows.csv'), 'utf8'));
    expect([fpPings.rtts.length, fpPings.incomplete, basePings.rtts.length, basePings.incomplete]).toEqual([
      5, 0, 5, 0,
    ]);
    expect(fig('fp_ping_p50_ms').values[0]).toBeCloseTo(0.176, 3);
    expect(fig('base_ping_p50_ms').values[0]).toBeCloseTo(1.453, 3);
    // the baseline's queue is still filling in the first ms: 8x here, ~20x once it is full (full run)
    expect(fig('ping_ratio').values[0]).toBeGreaterThan(5);
  });

  it('experiment A on real clocks: PTP-disciplined oscillators and send lateness make the queue the ideal clocks hide (dcemu experiment fastpass-clocks --quick)', async () => {
    // nothing fails here: the figures are those of keepalives every 1 ms (KEEPALIVE_1MS)
    const { stdout, fig } = await quickExperiment('fastpass-clocks', KEEPALIVE_1MS);
    // the ideal clocks' queue is built in; the deployment's clocks (hardware stamps, no transparent
    // clocks: the switches' queueing enters the offsets) give some, send lateness more (a frame at the
    // median, a late timeslot more), software stamps more again (at the p99)
    expect([fig('p50_ideal'), fig('p99_ideal'), fig('late_ideal')]).toEqual([0, 0.112, 0]);
    expect([fig('p50_ptp-hardware'), fig('p99_ptp-hardware'), fig('late_ptp-hardware')]).toEqual([0, 3, 4]);
    expect([fig('p50_ptp-hardware-send-jitter'), fig('late_ptp-hardware-send-jitter')]).toEqual([1.5, 5]);
    expect(fig('p99_ptp-hardware-send-jitter')).toBe(3);
    expect(fig('p99_ptp-software-send-jitter')).toBeCloseTo(3.09, 3);
    expect(fig('clock_err_p99')).toBe(700);
    expect(stdout).toContain(
      '| bottleneck queue p50, ptp-hardware-send-jitter | KB | 18.00 (§7.1) | 1.50 | 1.50 |',
    );
  });

  it('queues grow with clock error: about one MTU per timeslot of divergence (§2)', async () => {
    const at = (offset: string) =>
      // one spine: the rack's traffic stays under its ToR, so the example's other three carry nothing
      run(`fastpass-clock-${offset.length}`, 'examples/fastpass.yaml', [
        '--set',
        'topology.spines=1',
        '--set',
        'workload.duration=1ms',
        '--set',
        `clocks.offset=${offset}`,
      ]);
    const [exact, skewed] = await Promise.all([at('0'), at('uniform(-2.4us,2.4us)')]);
    // 1 ms of traffic: exact clocks queue no full packet
    expect(exact.s.clocks.errP99Ns).toBe(48);
    expect(exact.s.fastpass.queue).toMatchObject({ p50Bytes: 0, p99Bytes: 128 });
    // ±2.4 µs: senders up to four timeslots apart, a packet or two queued behind the one on the wire
    expect(skewed.s.clocks.errP99Ns).toBe(2304);
    expect(skewed.s.fastpass.queue).toMatchObject({ p50Bytes: 0, p90Bytes: 1500, p99Bytes: 3000 });
  });

  it('experiment C: senders join and then leave; Fastpass shares evenly at every count, far more than the baseline (§7.2; dcemu experiment fastpass-c)', async () => {
    const out = tempOut('fastpass-c');
    // --quick's schedule (phases of 3 ms, 27 ms) shortened to 19 ms: a sender joins every 2 ms, the
    // five run together for 3 ms, then the first to join leaves first, one every 2 ms; the last runs
    // to the end. Each count but 5 gets two intervals joining and two leaving; 5 gets three, whose
    // median leaves out the one the fifth joins in (with 2 ms there, it was that transition's sd)
    const r = await dcemu([
      'experiment',
      'fastpass-c',
      '--quick',
      '--out',
      out,
      ...[1, 2, 3, 4, 5].flatMap((h, i) => [
        '--set',
        `workload.flows.${i}={src: h${h}, dst: h0, size: 1GB, start: ${2 * i}ms${h < 5 ? `, stop: ${11 + 2 * i}ms` : ''}}`,
      ]),
      '--set',
      'workload.duration=19ms',
      ...KEEPALIVE_1MS,
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    // one seed: the scenario's own (3); both sides on the deployment's clocks
    const fp = readJson(join(out, 'seed-3', 'fastpass', 'summary.json'));
    const base = readJson(join(out, 'seed-3', 'baseline', 'summary.json'));
    // over 1 ms intervals, not the paper's 1 s: the ratio is shown, not set beside the paper's
    expect(r.stdout).toContain(
      "| baseline / Fastpass, 5 senders (the paper's 5285× over 1 s intervals: not comparable) | × | - | 222 | 222 |",
    );
    // median standard deviation of the senders' throughputs per 1 ms interval, Mbit/s, by senders
    // active, and over how many intervals
    const med = (s: Summary) =>
      Object.fromEntries(
        Object.entries(s.fairness.byActive).map(([k, v]) => [
          k,
          [(v as Summary).p50Mbps, (v as Summary).intervals],
        ]),
      );
    expect(med(fp)).toEqual({ 2: [6, 4], 3: [11.314, 4], 4: [13.416, 4], 5: [9.6, 3] });
    expect(med(base)).toEqual({ 2: [966, 4], 3: [2262.933, 4], 4: [2310.53, 4], 5: [2132.937, 3] });
    // under a frame per interval apart with five senders (one frame in 1 ms is 12 Mbit/s)
    expect(fp.fairness.byActive[5].p50Mbps).toBeLessThan(12);
    for (const k of [3, 4, 5])
      expect(base.fairness.byActive[k].p50Mbps / fp.fairness.byActive[k].p50Mbps).toBeGreaterThan(100);
    // the four that left were stopped by the workload, on both sides; the last ran to the end
    for (const s of [fp, base]) expect(s.flows).toMatchObject({ stopped: 4, completed: 0, unexplained: 0 });
    const outcomes = readFileSync(join(out, 'seed-3', 'fastpass', 'outcomes.csv'), 'utf8');
    expect(outcomes).toContain('1,h1,h0,stopped,stopped by the workload at 11.00 ms');
    // 9.474 against 9.958 Gbit/s
    expect(fp.throughput.gbps).toBeGreaterThan(0.95 * base.throughput.gbps);
  });

  it('a FatTree: paths through aggregation switches and cores assigned hierarchically, nothing lost', async () => {
    const { s } = await run('fastpass-fattree', 'test/fixtures/fastpass-fattree.yaml', KEEPALIVE_1MS);
    expect(s.drops).toMatchObject({ congestion: 0, fault: 0, noRoute: 0 });
    expect(s.flows).toMatchObject({ planned: 12, completed: 6, failed: 0, unexplained: 0, retransmits: 0 });
    expect(s.fastpass.timeslots).toMatchObject({ allocated: 2124, used: 1891, late: 0 });
    // a receiver's port: packets of paths 2 and 6 links long meet there now and then
    expect(s.queues.busiest).toMatchObject({ port: 'edge7:1', p50Bytes: 0, p99Bytes: 6000, maxBytes: 9000 });
  });

  it('a killed primary: the secondary takes over after Td and traffic flows again within 2 ms', async () => {
    const { s } = await run('fastpass-failover', 'examples/fastpass-failover.yaml', [
      '--set',
      // up to just after the new primary's first packets (at ~2.03 ms)
      'workload.duration=2100us',
      '--set',
      'run.drain=300us',
      '--set',
      'timeline=[{at: 1ms, action: kill, node: arb0}]',
    ]);
    const [fo] = s.fastpass.failovers;
    expect(s.fastpass.failovers).toHaveLength(1);
    expect(fo).toMatchObject({ arbiter: 'arb1', term: 1, primaryDownAt: 1_000_000 });
    expect(fo.detectionNs).toBe(904_205);
    expect(fo.toFirstAllocationNs).toBe(989_400);
    expect(fo.toFirstPacketNs).toBe(1_025_600);
    expect(fo.toFirstPacketNs).toBeLessThanOrEqual(2_000_000);
    // the old primary's timeslots all ran out before the new one's: nothing lost in the fabric
    expect(fo.packetsLost).toBe(0);
    expect(s.drops).toMatchObject({ congestion: 0, fault: 0 });
    expect(s.flows.unexplained).toBe(0);
  });

  it('a paused primary comes back to a new primary and steps down', async () => {
    const { s } = await run('fastpass-pause', SPINE, [
      '--set',
      'timeline=[{at: 1ms, action: pause, node: arb0}, {at: 2.5ms, action: resume, node: arb0}]',
    ]);
    expect(s.fastpass.failovers.map((f: Summary) => [f.arbiter, f.term, f.detectionNs])).toEqual([
      ['arb1', 1, 905_651],
    ]);
    expect(s.fastpass.stepDowns).toEqual([{ arbiter: 'arb0', t: 2_500_000 }]);
    expect(s.flows.completed).toBe(4);
    // the transports' timeouts while nothing was allocated are no loss: no spine isolated
    expect(s.fastpass.retransmitted).toBe(227);
    expect(s.fastpass.isolation).toEqual([]);
  });

  it('a killed spine: receivers report the losses, fault isolation takes the spine out, flows complete', async () => {
    // the arbiters on `cost` (the compute-model test's run): the secondary isolates the spine later
    // than without the model (570 µs after the kill: docs/fastpass.md)
    const { s } = await spineCost();
    expect(s.flows).toMatchObject({ completed: 4, unexplained: 0 });
    expect(s.fastpass.timeslots).toMatchObject({ allocated: 1438, late: 0 });
    const iso = s.fastpass.isolation;
    expect(iso.map((i: Summary) => [i.arbiter, i.spine, i.isolated])).toEqual([
      ['arb0', 0, true],
      ['arb1', 0, true],
    ]);
    // after the kill at 1 ms: 0.58 ms (the primary), 1.37 ms (its secondary)
    expect(iso.map((i: Summary) => i.t)).toEqual([1_580_928, 2_366_992]);
    expect(s.fastpass.queue.p99Bytes).toBeLessThanOrEqual(1500);
  });

  it('compute model cost: allocation and path selection take alloc- and pathsel-core time; a core 10× slower falls behind the horizon', async () => {
    const [cost, slow] = await Promise.all([
      spineCost(),
      run('fastpass-cost-slow', SPINE, [
        '--set',
        'compute={arbiter: {model: cost, scale: 10}}',
        '--set',
        'run.drain=1ms',
      ]),
    ]);
    // 141 ns per timeslot allocated, 93 ns per cross-rack packet coloured (schemes/fastpass/arbiter/cost.ts)
    expect(cost.s.compute.nodes).toEqual([
      {
        node: 'arb0',
        model: 'cost',
        busyNs: 0,
        busyFraction: 0,
        charged: 298,
        waited: 0,
        maxWaitNs: 0,
        pools: {
          alloc: { cores: 1, busyNs: 202_758, busyFraction: 0.0441 },
          pathsel: { cores: 1, busyNs: 133_734, busyFraction: 0.0291 },
        },
      },
    ]);
    expect(cost.s.flows).toMatchObject({ completed: 4, unexplained: 0 });
    expect(cost.s.fastpass.timeslots).toMatchObject({ allocated: 1438, late: 0 });
    // each batch of 8 timeslots (9.6 µs) now needs up to ~45 µs of one alloc-core: allocations reach
    // the endpoints after their timeslots, which are asked for again, and no flow completes; the work
    // charged outlasts the run (a busy share above 1 is a backlog)
    expect(slow.s.compute.nodes[0].pools.alloc.busyFraction).toBe(1.0194);
    expect(slow.s.fastpass.timeslots).toMatchObject({ allocated: 2892, late: 1951 });
    expect(slow.s.flows.completed).toBe(0);
  });

  it('a lossy fabric link, stepped and drifting host clocks: timeslots re-requested, every flow complete', async () => {
    const [lossy, stepped, drifting] = await Promise.all([
      run('fastpass-lossy', SPINE, [
        '--set',
        'timeline=[{at: 1ms, action: link-lossy, link: [leaf0, spine1], loss: 0.02}]',
      ]),
      run('fastpass-step', SPINE, [
        '--set',
        'clocks.offset=0',
        '--set',
        'timeline=[{at: 1ms, action: clock-step, node: h1, step: 30us}, {at: 1.5ms, action: clock-step, node: h7, step: -30us}]',
      ]),
      run('fastpass-drift', SPINE, [
        '--set',
        'clocks.offset=0',
        '--set',
        'timeline=[{at: 500us, action: clock-freq, node: h0, freq: 1000}, {at: 500us, action: clock-freq, node: h1, freq: -1000}]',
      ]),
    ]);
    expect(lossy.s.flows.completed).toBe(4);
    expect(lossy.s.drops.fault).toBe(18);
    expect(lossy.s.fastpass.retransmitted).toBe(2);
    // sporadic losses are no fault: one reporter is not enough to isolate a spine
    expect(lossy.s.fastpass.isolation).toEqual([]);
    expect(stepped.s.flows.completed).toBe(4);
    expect(stepped.s.fastpass.timeslots.late).toBe(3);
    // two senders' clocks drift 1000 ppm apart, 2.5 µs by the end: their timeslots still carry them
    expect(drifting.s.clocks.errMaxNs).toBe(2504);
    expect(drifting.s.flows.completed).toBe(4);
    expect(drifting.s.fastpass.timeslots).toMatchObject({ late: 0, unused: 0 });
  });
});
