/**
 * `dcemu sweep` end to end: a grid of two loads on a tiny fabric runs as two fabrics, each into its
 * own results folder, and the summaries land in one table and in plots against the swept value; a
 * timestamping sweep plots clock error against the mode; a bad value fails the sweep before any run.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { CLI, dcemu, ownNodePids, ROOT, readJson, tempOut, waitForStderr } from './helpers.js';

describe('dcemu sweep', () => {
  it('runs every point of the grid and collects one row each', async () => {
    const out = tempOut('sweep');
    const r = await dcemu([
      'sweep',
      'test/fixtures/sweep-star.yaml',
      '--set',
      'workload.load=0.1,0.3',
      '--fix',
      'seed=9',
      '--out',
      out,
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const csv = readFileSync(join(out, 'sweep.csv'), 'utf8').trim().split('\n');
    expect(csv[0].split(',').slice(0, 6)).toEqual([
      'workload.load',
      'flows_completed',
      'flows_planned',
      'flows_failed',
      'flows_unexplained',
      'fct_p50_ns',
    ]);
    // no clocks in this scenario: no clock-error column
    expect(csv[0]).not.toContain('clock_err');
    expect(csv.slice(1).map((l) => l.split(',')[0])).toEqual(['0.1', '0.3']);
    // each point is a full results folder with the swept value and the fixed one in its scenario
    const dirs = ['000-workload.load=0.1', '001-workload.load=0.3'].map((d) => join(out, d));
    for (const [i, d] of dirs.entries()) {
      expect(existsSync(join(d, 'flows.csv'))).toBe(true);
      const s = readJson(join(d, 'summary.json'));
      const row = csv[i + 1].split(',');
      expect(Number(row[1])).toBe(s.flows.completed);
      expect(Number(row[2])).toBe(s.flows.planned);
      expect(readJson(join(d, 'scenario.json')).seed).toBe(9);
    }
    expect(Number(csv[2].split(',')[2])).toBeGreaterThan(Number(csv[1].split(',')[2]));
    expect(r.stdout).toContain('| workload.load | flows done/planned |');
    // each figure against the load, a number axis; every point also has its own run's plots
    for (const ext of ['vl.json', 'svg', 'png'])
      expect(existsSync(join(out, 'plots', `fct_p50_ns.${ext}`)), ext).toBe(true);
    const spec = readJson(join(out, 'plots', 'fct_p50_ns.vl.json'));
    expect(spec.encoding.x).toMatchObject({ field: 'x', type: 'quantitative', title: 'workload.load' });
    // in the reader's unit, ticks at the swept values
    const unit = /^FCT p50 \((ns|µs|ms)\)$/.exec(spec.encoding.y.title)![1];
    const scale = { ns: 1, µs: 1e3, ms: 1e6 }[unit]!;
    expect(spec.encoding.x.axis.values).toEqual([0.1, 0.3]);
    expect(spec.data.values.map((v: { x: number; y: number }) => [v.x, v.y])).toEqual([
      [0.1, Number((Number(csv[1].split(',')[5]) / scale).toPrecision(3))],
      [0.3, Number((Number(csv[2].split(',')[5]) / scale).toPrecision(3))],
    ]);
    for (const d of dirs) expect(existsSync(join(d, 'plots', 'fct-cdf.png'))).toBe(true);
    expect(await ownNodePids()).toEqual([]);
  });

  it('plots clock error against the timestamping mode', async () => {
    const out = tempOut('sweep-clocks');
    const r = await dcemu([
      'sweep',
      'test/fixtures/clocks-asym.yaml',
      '--set',
      'ptp.timestamping=hardware,software',
      '--fix',
      'workload.duration=4ms',
      '--fix',
      'run.plots=false',
      '--out',
      out,
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    for (const ext of ['vl.json', 'svg', 'png'])
      expect(existsSync(join(out, 'plots', `clock_err_p99_ns.${ext}`)), ext).toBe(true);
    const spec = readJson(join(out, 'plots', 'clock_err_p99_ns.vl.json'));
    expect(spec.encoding.x).toMatchObject({ type: 'nominal', sort: ['hardware', 'software'] });
    const csv = readFileSync(join(out, 'sweep.csv'), 'utf8').trim().split('\n');
    const col = csv[0].split(',').indexOf('clock_err_p99_ns');
    // µs: both modes leave the slaves about a microsecond off
    expect(spec.encoding.y.title).toBe('clock error p99 (µs)');
    expect(spec.data.values).toEqual(
      csv
        .slice(1)
        .map((l) => ({ x: l.split(',')[0], y: Number((Number(l.split(',')[col]) / 1000).toPrecision(3)) })),
    );
    // the asymmetric grandmaster link leaves hardware-stamped slaves ~1 µs off: a bar to see
    expect(spec.data.values[0].y).toBeGreaterThan(0.5);
    // both modes lock every slave (software stamps: delayed on send and receive, Follow_Ups in order)
    for (const point of ['000-ptp.timestamping=hardware', '001-ptp.timestamping=software'])
      expect(readJson(join(out, point, 'summary.json')).clocks.lockedNodes, point).toBe(3);
    expect(readFileSync(join(out, 'plots', 'clock_err_p99_ns.svg'), 'utf8')).toContain('ptp.timestamping');
    // run.plots=false for every point: the sweep's plots only
    expect(existsSync(join(out, '000-ptp.timestamping=hardware', 'plots'))).toBe(false);
    expect(existsSync(join(out, '000-ptp.timestamping=hardware', 'clocks.csv'))).toBe(true);
  });

  it('checks every point before running any', async () => {
    const out = tempOut('sweep-bad');
    const r = await dcemu([
      'sweep',
      'test/fixtures/sweep-star.yaml',
      '--set',
      'workload.load=0.2,7',
      '--out',
      out,
    ]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trim()).toMatch(
      /^dcemu: test\/fixtures\/sweep-star\.yaml:6: workload\.load: must be <= 1, got 7$/,
    );
    expect(existsSync(join(out, '000-workload.load=0.2'))).toBe(false);
  });

  it('stops on Ctrl-C: the points done are tabled, no other starts, nothing is left', async () => {
    const out = tempOut('sweep-sigint');
    // the second point is long (1 s of traffic, minutes of wall): Ctrl-C always lands inside it
    const args = [
      'sweep',
      'test/fixtures/sweep-star.yaml',
      '--set',
      'workload.duration=100us,1s,100us',
      '--out',
      out,
      '--no-plots',
    ];
    const run = execa(process.execPath, [CLI, ...args], { cwd: ROOT, reject: false });
    await waitForStderr(run, 'sweep 2/3');
    run.kill('SIGINT');
    const r = await run;
    expect(r.exitCode).toBe(130);
    const csv = readFileSync(join(out, 'sweep.csv'), 'utf8').trim().split('\n');
    expect(csv.slice(1).map((l) => l.split(',')[0])).toEqual(['100us']);
    expect(existsSync(join(out, '001-workload.duration=1s', 'summary.json'))).toBe(true);
    expect(existsSync(join(out, '002-workload.duration=100us'))).toBe(false);
    expect(await ownNodePids()).toEqual([]);
  });
});
