/**
 * The tests whose outcome depends on wall time, so that vitest.config.ts runs this file alone, after
 * the rest: dilated runs (real time is in the result: a neighbour's load makes a run late). Outside CI
 * the docker test skips, saying so, when no Docker daemon answers.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { checkLeftoversEachTest, dockerAnswers, events } from './docker-helpers.js';
import { dcemu, ownNodePids, QUICKSTART_SHORT, readJson, tempOut } from './helpers.js';

afterEach(async () => {
  // a failed test must not leave processes behind
  const left = await ownNodePids();
  for (const pid of left) process.kill(pid, 'SIGKILL');
  expect(left).toEqual([]);
});

describe('examples/quickstart.yaml, dilated', () => {
  // the exact run the dilated one is compared with (test/quickstart.integration.test.ts checks it)
  const exactOut = tempOut('quickstart-exact');
  beforeAll(async () => {
    const r = await dcemu(['run', 'examples/quickstart.yaml', '--out', exactOut, '-q', ...QUICKSTART_SHORT]);
    expect(r.exitCode, r.stderr).toBe(0);
  }, 200_000);

  it('dilated mode agrees statistically (the median flow and the mean FCT within 15%)', async (ctx) => {
    const out = tempOut('quickstart-dilated');
    // these flows start four times as often as the quickstart's, so this run accepts misses up to 1%
    // (at tdf 2000 on 2 cores they were ~0.4% once, with the FCTs within 5% in sum and 0.2% at the
    // median flow)
    const r = await dcemu([
      'run',
      'examples/quickstart.yaml',
      '--sync',
      'dilated',
      // tdf 4000, not the default 2000: on this 2-vCPU machine the run missed 0.65-1.6% of its events at
      // 2000 (above the 1% threshold now and then) and 0.009-0.05% at 4000 (docs/architecture.md)
      '--tdf',
      '4000',
      '--set',
      'run.missThreshold=0.01',
      '--out',
      out,
      '-q',
      ...QUICKSTART_SHORT,
    ]);
    const s = readJson(join(out, 'summary.json'));
    expect(s.sync).toBe('dilated');
    expect(s.tdf).toBe(4000);
    // the spine killed at 1.5 ms stopped and reported what it carried before its process died (on
    // the control message, a turn of its event loop after the kill's time: ~1 µs of fabric time here,
    // 4 ms of wall at tdf 4000; the bound leaves a busy machine two seconds of wall)
    expect(s.processes.missingReports).toEqual([]);
    const spine0 = readJson(join(out, 'nodes.json')).find((n: { name: string }) => n.name === 'spine0');
    expect(spine0.haltedAt).toBeGreaterThanOrEqual(1_500_000);
    expect(spine0.haltedAt).toBeLessThan(2_000_000);
    expect(spine0.framesHandled).toBeGreaterThan(0);
    // an unfaithful dilated run exits 1 and says so, and its figures cannot be compared: in CI that
    // fails the test (the agreement README states would go unchecked); elsewhere the test counts as
    // skipped (not passed), with the reason
    if (!s.fidelity.ok) {
      expect(r.exitCode).toBe(1);
      expect(r.stderr).toContain('causality misses');
      const why = `quickstart dilated: unfaithful on this machine (miss rate ${s.fidelity.missRate}), not compared`;
      if (process.env.CI === 'true') expect.fail(why);
      console.warn(why);
      ctx.skip(why);
    }
    expect(r.exitCode, r.stderr).toBe(0);
    expect(s.flows.completed).toBe(108);
    // the same flows in both modes, compared flow by flow: a p50 alone is no fair yardstick, as the
    // FCTs next to it may lie 15–20% apart (one flow changing rank moves it that far)
    const fct = (dir: string) =>
      readFileSync(join(dir, 'flows.csv'), 'utf8')
        .trim()
        .split('\n')
        .slice(1)
        .map((l) => Number(l.split(',')[6]));
    const exact = fct(exactOut);
    const dilated = fct(out);
    const ratios = exact.map((e, i) => dilated[i] / e).sort((a, b) => a - b);
    expect(Math.abs(ratios[Math.floor(ratios.length / 2)] - 1)).toBeLessThan(0.15);
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    expect(Math.abs(sum(dilated) / sum(exact) - 1)).toBeLessThan(0.15);
  }, 200_000);
});

const docker = await dockerAnswers();
const skip = !docker && process.env.CI !== 'true';
if (skip)
  console.warn(
    'timing.integration: no Docker daemon answers: the dilated docker test is skipped (it runs in CI)',
  );

describe.skipIf(skip)('dcemu run --runtime docker --sync dilated', () => {
  beforeAll(async () => {
    // the image of this build (already built by test/containers.integration.test.ts: then a lookup)
    const r = await dcemu(['image', 'build']);
    expect(r.exitCode, r.stderr).toBe(0);
  }, 300_000);

  checkLeftoversEachTest();

  it('stops and starts a container, disconnects and reconnects another: all fire and are detected', async () => {
    const out = tempOut('docker-faults');
    const r = await dcemu([
      'run',
      'test/fixtures/docker-faults.yaml',
      // the daemon's own timing in the loop: dilated mode
      '--sync',
      'dilated',
      // what is asserted is that the actions fire and are detected, not the dilated run's fidelity: at
      // tdf 1000 (a virtual ms a wall second), the actions 1 ms apart or more (a restarted container's
      // node is back ~0.75 s after its start here), traffic up to just after the last action. After
      // the connect the run goes on for 5 wall seconds: the reconnected container must resolve its
      // peers' addresses again, and a kernel whose first ARP requests go unanswered retries each
      // second, three times (retrans_time 1 s, mcast_solicit 3), before it starts over; with the
      // fixture's 3 ms of drain one leaf of two once heard nothing within the 3.2 s left
      '--allow-unfaithful',
      '--tdf',
      '1000',
      '--set',
      'timeline=[{at: 1ms, action: stop, node: spine0}, {at: 2ms, action: start, node: spine0}, {at: 4ms, action: disconnect, node: spine1}, {at: 5ms, action: connect, node: spine1}]',
      '--set',
      'workload.duration=5200us',
      '--set',
      'run.drain=4800us',
      '--runtime',
      'docker',
      '--out',
      out,
      '-q',
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const s = readJson(join(out, 'summary.json'));
    const [stop, start, disconnect, connect] = s.faults;
    expect(s.faults.map((f: { action: string; node: string }) => `${f.action} ${f.node}`)).toEqual([
      'stop spine0',
      'start spine0',
      'disconnect spine1',
      'connect spine1',
    ]);
    const ev = events(out);
    // which leaves saw it (a link may flap once while a container comes back: count leaves, not events)
    const between = (kind: string, peer: string, from: number, to: number) => [
      ...new Set(
        ev.filter((e) => e.kind === kind && e.peer === peer && e.t > from && e.t < to).map((e) => e.node),
      ),
    ];
    // the stopped spine is declared down by both leaves; after its restart it rejoins and comes back up
    expect(between('port-down-detected', 'spine0', stop.t, start.t).length).toBe(2);
    const restarted = ev.find((e) => e.kind === 'node-restarted' && e.node === 'spine0');
    expect(restarted?.t).toBeGreaterThan(start.t);
    expect(between('port-up-detected', 'spine0', start.t, disconnect.t).length).toBe(2);
    // the disconnected spine and its leaves see each other go, then come back after connect
    expect(between('port-down-detected', 'spine1', disconnect.t, connect.t).length).toBe(2);
    // (what the leaves saw of spine1 and how long the daemon took, should it fail)
    const seen = JSON.stringify({
      faults: s.faults,
      events: ev.filter((e) => e.peer === 'spine1' || e.node === 'spine1'),
    });
    expect(between('port-up-detected', 'spine1', connect.t, Number.POSITIVE_INFINITY).length, seen).toBe(2);
    expect(stop.detectionNs).toBeGreaterThan(0);
    expect(disconnect.detectionNs).toBeGreaterThan(0);
    expect(s.processes).toMatchObject({ started: 8, leftRunning: 0 });
  });
});
