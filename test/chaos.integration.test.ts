/**
 * `dcemu chaos` end to end: real runs under drawn faults, a planted violation found, reduced and
 * written as a reproducer, and a run reproduced exactly from the scenario file it ran.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { CLI, dcemu, ownNodePids, ROOT, readJson, readJunit, tempOut, waitForStderr } from './helpers.js';

// a fabric link down or lossy breaks the planted assertion (no frame may be lost to the fault layer)
const SCENARIO = `# the planted failure: the fault layer may drop nothing
name: chaos-it
seed: 5
topology: { kind: leaf-spine, leaves: 2, spines: 2, hostsPerLeaf: 2 }
links:
  host: { rate: 10Gbps, delay: 1us }
  fabric: { rate: 10Gbps, delay: 1us }
liveness: { interval: 10us, multiplier: 3 }
workload: { pattern: all-to-all, fixedSize: 30KB, load: 0.3, duration: 1ms }
run: { drain: 2ms }
chaos:
  failures:
    - kind: link-down
      targets: [[leaf1, spine*]]
      between: lognormal(600us, 1)
      repair: lognormal(100us, 1)
    - kind: pause
      targets: spine*
      between: lognormal(2ms, 1)
      repair: lognormal(50us, 0.5)
    - kind: link-lossy
      targets: [[leaf0, spine*]]
      loss: 0.2
      between: lognormal(600us, 0.5)
      repair: 300us
  invariants:
    assert: ['drops.fault == 0']
`;

describe('dcemu chaos', () => {
  it('finds the planted violation, reduces it to a reproducer, and a run reproduces exactly', async () => {
    const dir = tempOut('chaos');
    const file = join(dir, 'chaos-it.yaml');
    writeFileSync(file, SCENARIO);
    const out = join(dir, 'out');
    const r = await dcemu([
      'chaos',
      file,
      '--runs',
      '2',
      '--seed',
      '1',
      '--out',
      out,
      '--minimize',
      '4',
      '--junit',
      join(dir, 'chaos.xml'),
    ]);
    expect(r.stderr).not.toMatch(/at .*\.js:\d+/); // no stack trace
    const report = readJson(join(out, 'chaos.json'));
    expect(report.runs).toHaveLength(2);
    expect(r.stdout).toContain('| seed | faults |');
    const failing = report.failingSeeds as number[];
    expect(failing.length).toBeGreaterThan(0);
    expect(r.exitCode).toBe(1);
    const bad = report.runs.find((x: { seed: number }) => x.seed === failing[0]);
    expect(bad.violations.map((v: { invariant: string }) => v.invariant)).toContain('assert');
    // every planned flow of every run completed or failed for a reason
    for (const run of report.runs) {
      expect(run.flows.unexplained).toBe(0);
      expect(run.flows.completed + run.flows.failed).toBe(run.flows.planned);
      expect(run.flows.planned).toBeGreaterThan(0);
    }
    // the reproducer: the failing run's faults, fewer after reduction, still breaking the assertion
    // exact: conservative runs are reproducible, so the draw and the reduction are too
    expect(failing).toEqual([1, 2]);
    expect(bad.faults).toBe(5);
    expect(bad.repro.faults).toBe(1);
    const repro = readFileSync(bad.repro.file, 'utf8');
    expect(repro).toMatch(
      /^# dcemu chaos: run of seed \d+ of .*: breaks assert with \d+ of the run's \d+ faults/,
    );
    expect(repro).not.toMatch(/^chaos:/m);
    expect(repro).toMatch(/action: link-(down|lossy)/);
    // it carries what it breaks, and none of the source's comments (they described the source)
    expect(repro).toMatch(/^invariants:\n {2}assert: \[ 'drops\.fault == 0' \]$/m);
    expect(repro).not.toContain('the planted failure');
    // `dcemu run` on it checks the invariants again: it fails, naming what broke, while it breaks
    const rerun = await dcemu([
      'run',
      bad.repro.file,
      '--out',
      join(dir, 'repro'),
      '-q',
      '--junit',
      join(dir, 'repro.xml'),
    ]);
    expect(rerun.exitCode).toBe(1);
    expect(rerun.stderr).toMatch(
      /dcemu: error: invariant assert broken: 'drops\.fault == 0': drops\.fault is \d+/,
    );
    expect(readJson(join(dir, 'repro/summary.json')).drops.fault).toBeGreaterThan(0);
    expect(
      readJson(join(dir, 'repro/invariants.json')).map((v: { invariant: string }) => v.invariant),
    ).toEqual(['assert']);

    // JUnit, read by a JUnit parser: a case per chaos run, failing with what it broke and its reproducer
    const chaosXml = await readJunit(join(dir, 'chaos.xml'));
    expect(chaosXml).toMatchObject({ tests: 2, failures: 2 });
    const runCases = chaosXml.testsuite[0].testcase!;
    expect(runCases.map((c) => c.name)).toEqual(
      report.runs.map((x: { seed: number; faults: number }) => `seed ${x.seed} (${x.faults} faults)`),
    );
    expect(runCases[report.runs.indexOf(bad)].failure![0].message).toBe(
      `invariants broken: assert; reproducer ${bad.repro.file}`,
    );
    expect(runCases[report.runs.indexOf(bad)].failure![0].inner).toContain(
      `reproduce: dcemu run ${bad.repro.file}`,
    );
    // the reproducer's run: its invariants (the assert fails, the rest hold) and every flow a case
    const runXml = await readJunit(join(dir, 'repro.xml'));
    const [inv, fl] = runXml.testsuite;
    const failed = (cs: typeof inv.testcase) => (cs ?? []).filter((c) => c.failure).map((c) => c.name);
    expect(failed(inv.testcase)).toEqual(['assert drops.fault == 0']);
    expect(inv.testcase!.map((c) => c.name)).toContain('flows-accounted');
    const rs = readJson(join(dir, 'repro/summary.json'));
    expect(fl.tests).toBe(rs.flows.planned);
    expect(fl.failures).toBe(rs.flows.planned - rs.flows.completed);

    // the scenario a run executed gives the same run again, frame for frame
    const ran = join(out, `seed-${failing[0]}`);
    const again = await dcemu(['run', join(ran, 'scenario.yaml'), '--out', join(dir, 'again'), '-q']);
    expect(again.exitCode).toBe(1);
    expect(again.stderr).toContain('invariant assert broken');
    expect(readFileSync(join(dir, 'again/flows.csv'), 'utf8')).toBe(
      readFileSync(join(ran, 'flows.csv'), 'utf8'),
    );
    const a = readJson(join(dir, 'again/summary.json'));
    const b = readJson(join(ran, 'summary.json'));
    expect(a.drops).toEqual(b.drops);
    expect(a.fidelity.framesHandled).toBe(b.fidelity.framesHandled);
    expect(a.faults).toEqual(b.faults);
    expect(existsSync(join(ran, 'invariants.json'))).toBe(true);
  }, 240_000);

  it('refuses a scenario without a failure model, by file and line', async () => {
    const file = join(tempOut('chaos-none'), 'plain.yaml');
    writeFileSync(file, `# no failure model\n${SCENARIO.slice(0, SCENARIO.indexOf('chaos:'))}`);
    const r = await dcemu(['chaos', file, '--runs', '1']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toBe(
      `dcemu: ${file}:3: no chaos: section (the failure model of a chaos run; see docs/chaos.md)`,
    );
  });

  // found by chaos on the quickstart (seed 11): a pause that starts and ends between two barriers
  // (steps of 100 µs) was stopped for real after the grant past its end had gone out, and nothing
  // woke it: a 60 s stall
  it('runs through a pause that ends inside one barrier step', async () => {
    const dir = tempOut('chaos-pause');
    const file = join(dir, 'pause.yaml');
    writeFileSync(
      file,
      `${SCENARIO.slice(0, SCENARIO.indexOf('chaos:'))}timeline:
  - { at: 540us, action: pause, node: leaf0 }
  - { at: 590us, action: resume, node: leaf0 }
`,
    );
    const r = await dcemu(['run', file, '--out', join(dir, 'out'), '-q', '--no-plots']);
    expect(r.exitCode, r.stderr).toBe(0);
    const s = readJson(join(dir, 'out/summary.json'));
    expect(s.flows.completed).toBe(s.flows.planned);
    expect(s.faults.map((f: { action: string; t: number }) => [f.action, f.t])).toEqual([
      ['pause', 540_000],
      ['resume', 590_000],
    ]);
  }, 120_000);

  it('stops on Ctrl-C: the current run is collected, no other starts, nothing is left', async () => {
    const dir = tempOut('chaos-sigint');
    const file = join(dir, 'chaos-it.yaml');
    writeFileSync(file, SCENARIO);
    const out = join(dir, 'out');
    // (no reduction runs: run 2 starts right after run 1, which breaks the planted invariant)
    const run = execa(
      process.execPath,
      [CLI, 'chaos', file, '--runs', '5', '--minimize', '0', '--out', out],
      {
        cwd: ROOT,
        reject: false,
      },
    );
    await waitForStderr(run, 'chaos run 2/5');
    run.kill('SIGINT');
    const r = await run;
    expect(r.exitCode).toBe(130);
    expect(r.stderr).toContain('interrupted');
    const report = readJson(join(out, 'chaos.json'));
    expect(report.runs.map((x: { seed: number }) => x.seed)).toEqual([1]);
    expect(await ownNodePids()).toEqual([]);
  }, 120_000);
});
