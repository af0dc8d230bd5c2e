/**
 * End-to-end runs of the built CLI: real node processes, real UDP, results read from the results
 * folder. Each test also checks that no node process outlives its run.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CLI,
  dcemu,
  ownNodePids,
  QUICKSTART_SHORT,
  ROOT,
  readJson,
  runDyingOfABug,
  sleep,
  startRun,
  tempOut,
  waitForStderr,
} from './helpers.js';

afterEach(async () => {
  // a failed test must not leave processes behind for the next one
  const left = await ownNodePids();
  for (const pid of left) process.kill(pid, 'SIGKILL');
  expect(left).toEqual([]);
});

function csvRows(file: string): string[][] {
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((l) => l.split(','));
}

describe('dcemu run (process runtime)', () => {
  it('carries traffic on a leaf-spine, survives a killed spine and leaves nothing running', async () => {
    const out = tempOut('small');
    const runLog = join(tempOut('small-runlog'), 'runs.jsonl');
    const r = await dcemu(['run', 'test/fixtures/small.yaml', '--out', out, '-q'], {
      plots: true,
      env: { DCEMU_RUN_LOG: runLog },
    });
    expect(r.exitCode, r.stderr).toBe(0);
    const s = readJson(join(out, 'summary.json'));
    expect(s.processes).toMatchObject({ started: 8, leftRunning: 0 });
    expect(s.flows.started).toBeGreaterThan(10);
    // fixed-size flows and a surviving spine: every flow completes, also those cut by the failure
    expect(s.flows.completed).toBe(s.flows.started);
    expect(s.flows.fctP50Ns).toBeGreaterThan(0);
    expect(s.flows.slowdownP50).toBeGreaterThanOrEqual(0.99);
    const [kill] = s.faults;
    expect(kill).toMatchObject({ action: 'kill', node: 'spine0' });
    // liveness 10 µs x 3: declared down 30 µs after the last frame heard, which came at most 10 µs
    // before the kill (idle links carry a keepalive every 10 µs)
    expect(kill.detectionNs).toBeGreaterThan(0);
    // (+ up to 5 µs: the fault is stamped when the orchestrator fires it, a few real ms before it lands)
    expect(kill.detectionNs).toBeLessThanOrEqual(35_000);
    expect(kill.flowsRecovered).toBe(kill.flowsInFlight);
    for (const f of [
      'flows.csv',
      'queues.csv',
      'events.jsonl',
      'nodes.json',
      'scenario.json',
      'topology.json',
    ]) {
      expect(existsSync(join(out, f)), f).toBe(true);
    }
    const flows = csvRows(join(out, 'flows.csv'));
    expect(flows.length).toBe(s.flows.started);
    // after detection no flow turns at the dead spine any more
    const lateFlows = flows.filter((f) => Number(f[4]) > kill.detectedAt);
    for (const f of lateFlows) expect(f[11]).not.toContain('spine0');
    expect(csvRows(join(out, 'queues.csv')).length).toBeGreaterThan(100);
    const events = readFileSync(join(out, 'events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(events.some((e) => e.kind === 'port-down-detected' && e.peer === 'spine0')).toBe(true);
    const logs = readdirSync(join(out, 'logs'));
    expect(logs).toContain('leaf0.log');
    expect(logs).toContain('h3.log');
    // the plots of what it has data for (no clocks here): spec, SVG, PNG each
    expect(readdirSync(join(out, 'plots')).sort()).toEqual(
      ['faults', 'fct-cdf', 'queues', 'slowdown-cdf'].flatMap((p) => [
        `${p}.png`,
        `${p}.svg`,
        `${p}.vl.json`,
      ]),
    );
    const faults = readJson(join(out, 'plots', 'faults.vl.json'));
    const rules = faults.vconcat[0].layer[1].data.values;
    expect(rules[0]).toMatchObject({ kind: 'fault fired', t: kill.t / 1e6 });
    expect(rules[1]).toMatchObject({ kind: 'first detected', t: Math.round(kill.detectedAt / 1e3) / 1e3 });
    // hosts sampled what they received: data delivered before the kill
    const rate = faults.vconcat[0].layer[0].data.values as Array<{ t: number; gbps: number }>;
    expect(rate.some((p) => p.t < kill.t / 1e6 && p.gbps > 0)).toBe(true);
    expect(readFileSync(join(out, 'plots', 'fct-cdf.svg'), 'utf8')).toContain('FCT (µs, log)');
    // the run log (DCEMU_RUN_LOG): one line for this run, labelled with this test (test/cpu-probe.ts),
    // its cost the nodes' own counts
    const logged = readFileSync(runLog, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const nodes = readJson(join(out, 'nodes.json')) as Array<{ counters: Record<string, number> }>;
    expect(logged).toEqual([
      {
        runId: s.runId,
        scenario: s.scenario,
        runtime: 'process',
        sync: 'conservative',
        out,
        label: `test/run.integration.test.ts\t${expect.getState().currentTestName!.split(' > ').at(-1)}`,
        nodes: nodes.length,
        datagrams: nodes.reduce((n, x) => n + x.counters.datagramsOut, 0),
        nullMessages: nodes.reduce((n, x) => n + x.counters.nullMessages, 0),
        framesHandled: s.fidelity.framesHandled,
        virtualNs: s.virtualNs,
        wallMs: s.wallMs,
      },
    ]);
    expect(logged[0].datagrams).toBeGreaterThan(logged[0].nullMessages);
  });

  it('executes every timeline action: link down/up, lossy link, pause/resume', async () => {
    const out = tempOut('faults');
    const r = await dcemu(['run', 'test/fixtures/faults.yaml', '--out', out, '-q']);
    expect(r.exitCode, r.stderr).toBe(0);
    const s = readJson(join(out, 'summary.json'));
    expect(s.faults.map((f: { action: string }) => f.action)).toEqual([
      'link-down',
      'link-up',
      'link-lossy',
      'pause',
      'resume',
      'link-up',
    ]);
    const events = readFileSync(join(out, 'events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const down = events.find(
      (e) => e.kind === 'port-down-detected' && e.node === 'leaf0' && e.peer === 'spine1',
    );
    const up = events.find((e) => e.kind === 'port-up-detected' && e.node === 'leaf0' && e.peer === 'spine1');
    expect(down).toBeDefined();
    expect(up).toBeDefined();
    expect(up.t).toBeGreaterThan(down.t);
    expect(s.faults[0].detectionNs).toBeLessThanOrEqual(35_000);
    // frames lost to the cut link and the lossy link are counted as fault drops
    expect(s.drops.fault).toBeGreaterThan(0);
    // the paused spine is detected by its neighbours
    expect(
      events.some((e) => e.kind === 'port-down-detected' && e.peer === 'spine1' && e.t > s.faults[3].t),
    ).toBe(true);
    expect(s.flows.completed).toBe(s.flows.started);
    expect(s.processes.leftRunning).toBe(0);
  });

  it('reports a node that crashes mid-run and still tears everything down', async () => {
    const out = tempOut('crash');
    // a progress line every 50 ms of wall: the one that counts the crash says the orchestrator saw it
    const run = startRun('test/fixtures/long.yaml', out, {
      progress: true,
      args: ['--progress-every', '0.05'],
    });
    await waitForStderr(run, 'traffic starts');
    // this run's h2 only (its run id starts with the orchestrator's pid): other fabrics may be running
    const pids = await execa('pgrep', ['-f', `dcemu-run dcemu-${run.pid}-[^ ]+ --dcemu-node h2$`], {
      reject: false,
    });
    const h2 = Number(pids.stdout.split('\n')[0]);
    expect(h2).toBeGreaterThan(0);
    const seen = waitForStderr(run, / faults 1\//);
    process.kill(h2, 'SIGKILL');
    await seen;
    run.kill('SIGINT');
    const r = await run;
    expect(r.exitCode).toBe(130);
    const s = readJson(join(out, 'summary.json'));
    expect(s.processes.leftRunning).toBe(0);
    expect(s.processes.missingReports).toEqual([{ node: 'h2', reason: 'crashed (signal SIGKILL)' }]);
    expect(s.crashes).toEqual([expect.objectContaining({ node: 'h2', reason: 'signal SIGKILL' })]);
    expect(s.reproducible).toBe(false);
    const events = readFileSync(join(out, 'events.jsonl'), 'utf8');
    expect(events).toContain('"kind":"node-crashed","node":"h2"');
  });

  it('conservative mode: a node SIGKILLed mid-traffic ends its links at its last promise; the run goes on at once and says it crashed', async () => {
    const out = tempOut('crash-conservative');
    // the quickstart cut to 6 ms, 2 hosts a leaf, its spine kill moved to 3 ms: the crash comes before
    // 2 ms (below), and the kill fires however soon the flows finish (the run may end at 4 ms, the
    // workload's end, once every flow is done)
    const run = startRun('examples/quickstart.yaml', out, {
      progress: true,
      args: [
        '--set',
        'workload.duration=4ms',
        '--set',
        'run.drain=2ms',
        '--set',
        'topology.hostsPerLeaf=2',
        '--set',
        'timeline=[{at: 3ms, action: kill, node: spine0}]',
        '--progress-every',
        '0.05',
      ],
    });
    await waitForStderr(run, 'traffic starts');
    const pids = await execa('pgrep', ['-f', `dcemu-run dcemu-${run.pid}-[^ ]+ --dcemu-node leaf1$`], {
      reject: false,
    });
    const leaf1 = Number(pids.stdout.split('\n')[0]);
    expect(leaf1).toBeGreaterThan(0);
    // mid-traffic, however busy the machine: a progress line past the first flow's start and before
    // 2 ms says where the fabric is (a line comes every ~50-100 µs of virtual time here)
    await waitForStderr(run, /virtual ([1-9]\d\d\.\d µs|1\.\d\d ms) \//);
    process.kill(leaf1, 'SIGKILL');
    const r = await run;
    // the run went on at once: never stopped by the stall watchdog
    expect(r.stderr).not.toContain('made no progress');
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stderr).toMatch(
      /node leaf1 crashed at .* \(signal SIGKILL\); the run went on without it and is not reproducible/,
    );
    const s = readJson(join(out, 'summary.json'));
    expect(s.crashes).toEqual([expect.objectContaining({ node: 'leaf1', reason: 'signal SIGKILL' })]);
    expect(s.reproducible).toBe(false);
    expect(s.processes).toMatchObject({ started: 14, leftRunning: 0 });
    // the spine the timeline killed reported what it carried up to its kill; the crashed leaf could not
    expect(s.processes.missingReports).toEqual([{ node: 'leaf1', reason: 'crashed (signal SIGKILL)' }]);
    const spine0 = readJson(join(out, 'nodes.json')).find((n: { name: string }) => n.name === 'spine0');
    expect(spine0.haltedAt, r.stderr).toBe(3_000_000);
    expect(spine0.framesHandled).toBeGreaterThan(0);
    // it ran to its end: the spine kill at 3 ms fired too, and every flow is accounted for
    expect(s.faults.map((f: { action: string }) => f.action).sort()).toEqual(['crash', 'kill']);
    expect(s.flows.unexplained).toBe(0);
    expect(s.flows.started).toBeGreaterThan(0);
    // the leaf's neighbours saw its links fall silent
    const downs = readFileSync(join(out, 'events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((e) => e.kind === 'port-down-detected' && e.peer === 'leaf1');
    expect(downs.length).toBeGreaterThan(0);
  });

  it('stops every node on Ctrl-C and still writes the results', async () => {
    const out = tempOut('sigint');
    const run = startRun('test/fixtures/long.yaml', out);
    await waitForStderr(run, 'traffic starts');
    expect((await ownNodePids()).length).toBe(4);
    run.kill('SIGINT');
    const r = await run;
    expect(r.exitCode).toBe(130);
    expect(r.stderr).toContain('interrupted');
    expect(readJson(join(out, 'summary.json')).processes).toMatchObject({ started: 4, leftRunning: 0 });
    expect(await ownNodePids()).toEqual([]);
  });

  it('leaves no node behind when the orchestrator itself is killed', async () => {
    const out = tempOut('orchkill');
    const run = startRun('test/fixtures/long.yaml', out);
    await waitForStderr(run, 'traffic starts');
    expect((await ownNodePids()).length).toBe(4);
    run.kill('SIGKILL');
    await run;
    // nodes notice the lost control channel and end themselves
    for (let i = 0; i < 50 && (await ownNodePids()).length > 0; i++) await sleep(100);
    expect(await ownNodePids()).toEqual([]);
  });

  it('says so when the orchestrator dies of a bug, and leaves no node behind', async () => {
    const stderr = await runDyingOfABug(tempOut('bug'));
    // the process runtime has nothing to remove: its nodes end themselves when their control goes
    expect(stderr).not.toContain('removing');
    for (let i = 0; i < 50 && (await ownNodePids()).length > 0; i++) await sleep(100);
    expect(await ownNodePids()).toEqual([]);
  });

  it('keeps every node report when Ctrl-C reaches the whole process group, as in a terminal', async () => {
    const out = tempOut('sigint-group');
    const run = startRun('test/fixtures/long.yaml', out, {
      detached: true,
      progress: true,
      args: ['--progress-every', '0.05'],
    });
    await waitForStderr(run, 'traffic starts');
    // once a flow has started, however busy the machine
    await waitForStderr(run, /\([1-9]\d* started\)/);
    process.kill(-run.pid!, 'SIGINT');
    const r = await run;
    expect(r.exitCode).toBe(130);
    const s = readJson(join(out, 'summary.json'));
    expect(s.processes).toMatchObject({ started: 4, leftRunning: 0, missingReports: [] });
    expect(s.flows.started).toBeGreaterThan(0);
    expect(await ownNodePids()).toEqual([]);
  });
});

describe('dcemu run, cut short (process runtime)', () => {
  it('SIGTERM to the whole process group (as `timeout` sends it) inside a long grant keeps every node report and says where it stopped', async () => {
    const out = tempOut('sigterm-group');
    // a progress line every 0.2 s of wall
    const run = startRun('examples/quickstart.yaml', out, {
      detached: true,
      progress: true,
      args: ['--progress-every', '0.2'],
    });
    await waitForStderr(run, 'traffic starts');
    // before the workload's end the fabric runs inside one grant up to the spine kill at 5 ms; a
    // progress line at 100 µs or more says the first flow (at 82.4 µs) has started, however slow or
    // busy the machine (a fixed sleep carried 638 frames on a loaded one; the first progress line
    // came once at 76 µs, before any flow)
    await waitForStderr(run, /virtual (\d+\.\d+ ms|[1-9]\d\d\.\d µs) \//);
    process.kill(-run.pid!, 'SIGTERM');
    const r = await run;
    expect(r.exitCode).toBe(130);
    expect(r.stderr).toContain('interrupted (SIGTERM)');
    const s = readJson(join(out, 'summary.json'));
    expect(s.interrupted).toMatchObject({ by: 'SIGTERM', during: 'traffic' });
    // where it stopped: past the start, before the end (19.4 ms when it runs to the end)
    expect(s.interrupted.atNs).toBeGreaterThan(0);
    expect(s.interrupted.atNs).toBeLessThan(19_000_000);
    // (a node ahead of the slowest may have logged events past it)
    expect(s.virtualNs).toBeGreaterThanOrEqual(s.interrupted.atNs);
    expect(s.processes).toMatchObject({ started: 22, leftRunning: 0, missingReports: [] });
    // the flows and frames it really carried, unfinished ones running (none unexplained)
    expect(s.flows.started).toBeGreaterThan(0);
    expect(s.flows.unexplained).toBe(0);
    // (the lost reports gave 0 frames handled)
    expect(s.fidelity.framesHandled).toBeGreaterThan(0);
    const flows = csvRows(join(out, 'flows.csv'));
    expect(flows.length).toBe(s.flows.started);
    expect(flows.filter((f) => f.includes('unexplained'))).toEqual([]);
    expect(await ownNodePids()).toEqual([]);
  });

  it('Ctrl-C to the group during start-up stops what started and writes a summary saying so', async () => {
    const out = tempOut('sigint-startup');
    const run = startRun('examples/quickstart.yaml', out, { detached: true });
    // as soon as the first node processes exist, before all are connected and configured
    while ((await ownNodePids()).length === 0) await sleep(10);
    process.kill(-run.pid!, 'SIGINT');
    const r = await run;
    expect(r.exitCode).toBe(130);
    expect(r.stderr).toContain('interrupted (SIGINT)');
    expect(r.stderr).not.toContain('Error');
    const s = readJson(join(out, 'summary.json'));
    expect(s.interrupted).toMatchObject({ by: 'SIGINT', during: 'start-up', atNs: 0 });
    expect(s.processes).toMatchObject({ started: 22, leftRunning: 0 });
    expect(s.flows.started).toBe(0);
    expect(existsSync(join(out, 'logs'))).toBe(true);
    expect(await ownNodePids()).toEqual([]);
  });

  it('Ctrl-C at any early moment: a one-line message, or a results folder saying it was interrupted; never a stack trace or a process left', async () => {
    // from while the command line's modules load to while its nodes connect
    for (const delayMs of [0, 15, 40, 80, 150]) {
      const out = tempOut(`early-${delayMs}`);
      const run = execa(process.execPath, [CLI, 'run', 'examples/quickstart.yaml', '--out', out], {
        cwd: ROOT,
        reject: false,
      });
      await sleep(delayMs);
      run.kill('SIGINT');
      const r = await run;
      expect(await ownNodePids()).toEqual([]);
      // before Node runs any of dcemu's code (its own start-up, ~40 ms) the signal's default action
      // ends it: nothing had started, nothing is left
      if (r.signal === 'SIGINT') {
        expect(r.stderr, `${delayMs} ms`).toBe('');
        expect(existsSync(join(out, 'logs')), `${delayMs} ms`).toBe(false);
        continue;
      }
      expect(r.exitCode, `${delayMs} ms: ${r.stderr}`).toBe(130);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      if (existsSync(join(out, 'summary.json')))
        expect(readJson(join(out, 'summary.json')).interrupted, `${delayMs} ms`).toMatchObject({
          by: 'SIGINT',
        });
      else
        expect(r.stderr.trim(), `${delayMs} ms`).toBe('dcemu: interrupted (SIGINT) before any node started');
      expect(await ownNodePids()).toEqual([]);
    }
  });
});

describe('dcemu user errors', () => {
  it('names file, line and field of a typo in one line, without a stack trace', async () => {
    const r = await dcemu(['run', 'test/fixtures/typo.yaml']);
    expect(r.exitCode).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/typo\.yaml:10: workload\.lod: unknown field \(did you mean 'load'\?\)/);
  });

  it('refuses a fabric this machine cannot hold before starting anything, and names --force', async () => {
    const big = ['--set', 'topology.kind=fat-tree', '--set', 'topology.k=16', '--set', 'timeline=[]'];
    const r = await dcemu(['run', 'examples/quickstart.yaml', ...big]);
    expect(r.exitCode).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines.at(-1)).toMatch(
      /^dcemu: examples\/quickstart\.yaml: 1344 nodes need ~39\.4 GB of memory \(~30 MB per process\); this machine has [\d.]+ GB: use --force to start anyway$/,
    );
    expect(await ownNodePids()).toEqual([]);
  });

  it('reports a missing scenario file in one line', async () => {
    const r = await dcemu(['run', 'no/such.yaml']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trim()).toMatch(/^dcemu: no\/such\.yaml: no such scenario file$/);
  });
});

describe('dcemu topo', () => {
  it('prints the quickstart topology as JSON and as dot', async () => {
    const json = await dcemu(['topo', 'examples/quickstart.yaml', '--format', 'json']);
    expect(json.exitCode).toBe(0);
    const topo = JSON.parse(json.stdout);
    expect(topo.nodes).toHaveLength(22);
    expect(topo.links).toHaveLength(24);
    const dot = await dcemu(['topo', 'examples/quickstart.yaml']);
    expect(dot.stdout).toMatch(/^graph /);
    expect(dot.stdout).toContain('spine1');
  });

  it('checks a hand-written F10 topology and names the miswired link', async () => {
    const json = await dcemu(['topo', 'examples/f10-failover.yaml', '--format', 'json']);
    const dir = tempOut('topo');
    const good = join(dir, 'good.json');
    writeFileSync(good, json.stdout);
    const ok = await dcemu(['check-topology', good]);
    expect(ok.exitCode).toBe(0);
    // cross two agg–core links by hand: agg0 gets core1's place at core2, agg1 core0's
    const topo = JSON.parse(json.stdout);
    const swap = (a: string, b: string, c: string, d: string) => {
      for (const l of topo.links) {
        if (l.a.node === a && l.b.node === b) l.b.node = d;
        else if (l.a.node === c && l.b.node === d) l.b.node = b;
      }
    };
    swap('agg0', 'core0', 'agg1', 'core2');
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify(topo, null, 2));
    const r = await dcemu(['check-topology', bad]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/agg0:\d+/);
    expect(r.stderr).not.toContain('    at ');
  });
});

/**
 * Every node process of this file ends by itself (their orchestrator was just killed): none is left
 * once they had the time to notice. How fast they go is the bench's to measure, not a test's.
 */
async function noNodeLeft(): Promise<void> {
  const t0 = Date.now();
  while ((await ownNodePids()).length > 0 && Date.now() - t0 < 20_000) await sleep(50);
  expect(await ownNodePids()).toEqual([]);
}

describe('dcemu run, its orchestrator killed (process runtime)', () => {
  it('leaves no node behind when the orchestrator is killed during start-up', async () => {
    const out = tempOut('startkill');
    const run = startRun('test/fixtures/long.yaml', out);
    // kill it as soon as its first nodes exist, before they are all connected and configured
    while ((await ownNodePids()).length === 0) await sleep(10);
    run.kill('SIGKILL');
    await run;
    await noNodeLeft();
  });

  it('leaves no pooled process behind when a sweep’s orchestrator is killed in its second point', async () => {
    const out = tempOut('pool-kill');
    const fixed = QUICKSTART_SHORT.flatMap((a) => (a === '--set' ? ['--fix'] : [a]));
    const sweep = execa(
      process.execPath,
      [CLI, 'sweep', 'examples/quickstart.yaml', '--set', 'seed=7,8', ...fixed, '--out', out],
      { cwd: ROOT, reject: false },
    );
    await waitForStderr(sweep, 'sweep 2/2');
    // the first point's 13 processes (its killed spine's went with it) and the second's new spine
    while ((await ownNodePids()).length < 14) await sleep(10);
    sweep.kill('SIGKILL');
    await sweep;
    await noNodeLeft();
  });
});
