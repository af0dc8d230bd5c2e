/**
 * dcemu's baseline against ns-3 (docs/ns3.md): a small DCTCP incast, a 4:1 dumbbell, senders whose own
 * links are their bottleneck, and loss-based Reno filling a deep buffer, one seed each, run in dcemu and in their ns-3 twin, must agree within the
 * bounds the full cross-check justified (`dcemu experiment ns3-crosscheck`, docs/reproductions.md). Outside CI the test skips, saying so,
 * where ns-3 is not installed; in CI (.ci/run installs libns3-dev and g++) it runs.
 */
// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CASES, crossCheckCase } from '../orchestrator/ns3/crosscheck.js';
import { ns3Missing, twinInput } from '../orchestrator/ns3/twin.js';
import { dcemu, KEEPALIVE_SETTING, tempOut } from './helpers.js';

const missing = ns3Missing();
const skip = missing !== null && process.env.CI !== 'true';
if (skip) console.warn(`ns3: SKIPPED the ns-3 cross-check: ${missing}`);

/** keepalives every 1 ms (nothing fails in these runs; ns-3 has none): the star's flows and queues are the same bytes at both intervals */
const QUIET = { [KEEPALIVE_SETTING.key]: KEEPALIVE_SETTING.value };

describe.skipIf(skip)('dcemu against ns-3', () => {
  it('a DCTCP incast on one switch: per-flow FCTs, the queue and the marks agree', async () => {
    const dir = tempOut('ns3-star');
    const r = await crossCheckCase({ name: 'star', file: 'examples/ns3/star-incast.yaml' }, dir, {
      'workload.duration': '2ms',
      ...QUIET,
    });
    const f = r!.figures;
    expect(f.star_completed_dcemu).toBe(f.star_completed_ns3);
    expect(f.star_completed_dcemu).toBeGreaterThan(10);
    // the input names every link, port and flow of the run (what the twin read)
    const input = twinInput(join(dir, 'dcemu'), 1);
    expect(input).toMatch(/^link h0 0 sw0 0 10000000000 1000$/m);
    expect(input).toMatch(/^egress sw0 8 400000 30000$/m);
    expect(input).toMatch(/^egress h0 0 8000000 0$/m);
    expect(input.match(/^flow /gm)).toHaveLength(f.star_completed_dcemu);
    expect(f.star_ratio_p50).toBeGreaterThan(BOUNDS.ratio[0]);
    expect(f.star_ratio_p50).toBeLessThan(BOUNDS.ratio[1]);
    expect(f.star_fct_p99_dcemu_us / f.star_fct_p99_ns3_us).toBeGreaterThan(BOUNDS.p99[0]);
    expect(f.star_fct_p99_dcemu_us / f.star_fct_p99_ns3_us).toBeLessThan(BOUNDS.p99[1]);
    expect(f.star_queue_p99_dcemu_kb / f.star_queue_p99_ns3_kb).toBeGreaterThan(BOUNDS.starQueue[0]);
    expect(f.star_queue_p99_dcemu_kb / f.star_queue_p99_ns3_kb).toBeLessThan(BOUNDS.starQueue[1]);
    expect(f.star_marks_dcemu).toBeGreaterThan(0);
    expect(f.star_marks_ns3).toBeGreaterThan(0);
    // `dcemu ns3` on the same run folder: the same twin, the same figures, in the same table
    const cli = await dcemu(['ns3', join(dir, 'dcemu'), '--out', join(dir, 'ns3-cli')]);
    expect(cli.exitCode).toBe(0);
    expect(cli.stdout).toMatch(
      /^\| ns3_star_incast: per-flow FCT dcemu \/ ns-3, median \| × \| 1\.000 \(agreement\) \| /m,
    );
    const table = JSON.parse(readFileSync(join(dir, 'ns3-cli/ns3.json'), 'utf8')) as {
      figures: Array<{ id: string; values: number[] }>;
    };
    const ours = (id: string) => table.figures.find((x) => x.id === `ns3_star_incast_${id}`)?.values;
    for (const id of ['ratio_p50', 'fct_p99_ns3_us', 'queue_p99_ns3_kb', 'marks_ns3', 'completed_ns3'])
      expect(ours(id), id).toEqual([f[`star_${id}`]]);
  }, 180_000);

  it('DCTCP over a 4:1 dumbbell with web-search sizes: per-flow FCT ratios and the bottleneck agree', async () => {
    const dir = tempOut('ns3-dumbbell');
    const r = await crossCheckCase({ name: 'dumbbell', file: 'examples/ns3/dumbbell.yaml' }, dir, {
      'workload.duration': '10ms',
      ...QUIET,
    });
    const f = r!.figures;
    // at 0.8 of the 4:1 link, the busiest queue is a receiver's downlink, where flows to it meet
    expect(r!.bottleneck).toEqual({ node: 'sw1', port: 1 });
    expect(f.dumbbell_completed_dcemu).toBe(f.dumbbell_completed_ns3);
    expect(f.dumbbell_completed_dcemu).toBeGreaterThan(5);
    expect(f.dumbbell_ratio_p50).toBeGreaterThan(BOUNDS.ratio[0]);
    expect(f.dumbbell_ratio_p50).toBeLessThan(BOUNDS.ratio[1]);
    expect(f.dumbbell_fct_p99_dcemu_us / f.dumbbell_fct_p99_ns3_us).toBeGreaterThan(BOUNDS.p99[0]);
    expect(f.dumbbell_fct_p99_dcemu_us / f.dumbbell_fct_p99_ns3_us).toBeLessThan(BOUNDS.p99[1]);
    expect(f.dumbbell_retx_ns3).toBe(f.dumbbell_retx_dcemu);
  }, 180_000);

  it("senders whose own links are their bottleneck: no frame lost at a NIC on either side, the short flows' FCTs between ns-3's with one and two packets in its device", async () => {
    const dir = tempOut('ns3-nicbound');
    const c = CASES.find((x) => x.name === 'nicbound')!;
    const r = await crossCheckCase(c, dir, { 'workload.duration': '10ms', ...QUIET }, undefined, {}, [
      { name: 'dq2', options: { 'device-queue': '2p' } },
    ]);
    const f = r!.figures;
    // the host stack on both sides: fq_codel at the NICs, the 4 MiB send buffer
    const input = twinInput(join(dir, 'dcemu'), 1);
    expect(input).toMatch(/^host fq_codel 4194304 1048576 1$/m);
    // two 200 MB flows outlast the 10 ms; every 10 KB flow completes on both sides
    expect(f.nicbound_completed_dcemu).toBe(f.nicbound_completed_ns3);
    expect(f.nicbound_completed_dcemu).toBe(36);
    expect([f.nicbound_drops_all_dcemu, f.nicbound_drops_all_ns3]).toEqual([0, 0]);
    expect([f.nicbound_retx_dcemu, f.nicbound_retx_ns3]).toEqual([0, 0]);
    // dcemu commits 2 µs of departures (~1.7 frames) ahead: its short flows wait between ns-3's with a
    // one-packet and a two-packet device queue (docs/decisions/0007-linux-host-stack.md)
    expect(f.nicbound_ratio_p50).toBeGreaterThan(1);
    expect(f.nicbound_ratio_p50).toBeLessThan(1.08);
    expect(f.nicbound_dq2_ratio_p50).toBeLessThan(1);
    expect(f.nicbound_dq2_ratio_p50).toBeGreaterThan(0.95);
    expect(f.nicbound_fct_p99_dcemu_us).toBeLessThan(25);
  }, 240_000);

  it("loss-based Reno filling a 5 MB buffer (Fastpass experiment A's baseline): delivery, queue and drops agree", async () => {
    const dir = tempOut('ns3-rack');
    // the case as the experiment runs it (its twin carries the window as the send buffer)
    const rack = CASES.find((c) => c.name === 'rack')!;
    const r = await crossCheckCase(rack, dir, { 'workload.duration': '10ms', ...QUIET });
    const f = r!.figures;
    expect(r!.bottleneck).toEqual({ node: 'leaf0', port: 0 });
    // 80 windows of 43 frames overflow the buffer: both sides drop, and about as many
    expect(f.rack_drops_dcemu).toBeGreaterThan(50);
    expect(f.rack_drops_ns3 / f.rack_drops_dcemu).toBeGreaterThan(BOUNDS.drops[0]);
    expect(f.rack_drops_ns3 / f.rack_drops_dcemu).toBeLessThan(BOUNDS.drops[1]);
    expect(f.rack_delivered_ratio).toBeGreaterThan(BOUNDS.delivered[0]);
    expect(f.rack_delivered_ratio).toBeLessThan(BOUNDS.delivered[1]);
    expect(f.rack_queue_ratio_p50).toBeGreaterThan(BOUNDS.rackQueue[0]);
    expect(f.rack_queue_ratio_p50).toBeLessThan(BOUNDS.rackQueue[1]);
    expect(f.rack_marks_dcemu).toBe(0);
    expect(f.rack_marks_ns3).toBe(0);
  }, 180_000);
});

describe('dcemu ns3 <results>', () => {
  it('refuses a folder that holds no run, and a run whose scheme has no twin, in one line each', async () => {
    const empty = tempOut('ns3-empty');
    const none = await dcemu(['ns3', empty]);
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toBe(
      `dcemu: ns3: ${empty} is not a run's results folder (no summary.json, scenario.json, topology.json, flows.csv, queues.csv, nodes.json); give the folder of a dcemu run`,
    );
    // a run of a scheme: ns-3 knows none (checked before ns-3 is looked for)
    const run = join(tempOut('ns3-fastpass'), 'run');
    mkdirSync(run);
    for (const f of ['topology.json', 'flows.csv', 'queues.csv', 'nodes.json'])
      writeFileSync(join(run, f), '');
    writeFileSync(join(run, 'summary.json'), JSON.stringify({ scheme: 'fastpass', queues: {} }));
    writeFileSync(
      join(run, 'scenario.json'),
      JSON.stringify({
        name: 'x',
        seed: 1,
        workload: { durationNs: 1 },
        run: { drainNs: 1 },
        transport: { kind: 'baseline' },
      }),
    );
    const fp = await dcemu(['ns3', run]);
    expect(fp.exitCode).toBe(2);
    expect(fp.stderr).toBe(
      "dcemu: ns3: the run's scheme is fastpass, which has no ns-3 twin: only a best-effort run (scheme ecmp, the baseline transport) has one",
    );
  });
});

/**
 * From the full cross-check (docs/reproductions.md, ns3-crosscheck; docs/ns3.md): the median per-flow
 * FCT ratio is within 1% of 1 in every seed without loss (0.995 in the star's overflowing seed, outside
 * these quick runs), and the overall FCT p99 within 1% in these cases' seeds; the bottleneck's queue
 * p99 within 6-12%. In the rack, delivery agrees within 0.1% and drops within 1%; its queue's p50 is
 * 1.32× ns-3's over 20 ms with fq_codel at the senders (1.10× with FIFO NICs on both sides), within
 * these bounds over these 10 ms. The bounds are 0.95-1.05 for the median, 2% for the p99, 0.85-1.2 for
 * queues, 1% for delivery and 15% for drops: room for another build of ns-3, none for a change of a
 * few percent in dcemu's FCTs. The NIC-bound case's own bounds are in its test.
 */
const BOUNDS = {
  ratio: [0.95, 1.05],
  p99: [0.98, 1.02],
  starQueue: [0.85, 1.2],
  rackQueue: [0.85, 1.2],
  delivered: [0.99, 1.01],
  drops: [0.85, 1.15],
};
