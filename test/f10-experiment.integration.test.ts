/**
 * `dcemu experiment f10-fig8 --quick` end to end: one seed's workload and failure trace (the example
 * shrunk to ON/OFF sources, here 0.6 ms of them, one failure drawn early that stays) run on F10 and
 * the PortLand baseline and on both without the failure; reproduction.json beside the paper's figures, the tables,
 * the CDF plot, and the same trace on every variant (a link named by its upper switch and port). And
 * `f10-fig9 --quick` with its job window cut to 550 µs: one seed's MapReduce shuffles and failure
 * trace on F10 and PortLand, each job's completion time on both and the speedup.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { dcemu, readJson, tempOut } from './helpers.js';

interface VariantRow {
  variant: string;
  drops: number;
  offered: number;
  intervals: number;
}

interface Figure {
  id: string;
  paper: number | string | null;
  values: number[];
  total?: number | null;
}

interface Entry {
  at: string;
  action: string;
  node?: string;
  link?: [string, string];
}

describe('dcemu experiment f10-fig8', () => {
  const out = tempOut('fig8');
  let report: { variants: VariantRow[] };
  let reproduction: { quick: boolean; seeds: number[]; figures: Figure[] };
  let stdout = '';
  beforeAll(async () => {
    const r = await dcemu(
      // seed 2 draws the workload and one fabric link fault at 232 µs (one at a time: the others
      // drawn fall while it is out); it stays to the end of the run. 0.6 ms of traffic where --quick
      // has 0.9 ms: 129k datagrams over the 4 runs, 181k at 0.9 ms. No run draws its own plots
      // (run.plots): the experiment's CDF below is drawn all the same
      [
        'experiment',
        'f10-fig8',
        '--quick',
        '--seed',
        '2',
        '--set',
        'workload.duration=600us',
        '--set',
        'run.plots=false',
        '--out',
        out,
      ],
      {
        timeout: 300_000,
      },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    stdout = r.stdout;
    report = readJson(join(out, 'fig8.json'));
    reproduction = readJson(join(out, 'reproduction.json'));
  }, 300_000);

  it('writes reproduction.json beside the paper, the table, the data and the CDF plot', () => {
    expect(stdout).toContain('# F10 figure 8: congestion loss per 200.0 µs interval');
    const md = readFileSync(join(out, 'fig8.md'), 'utf8');
    expect(stdout).toContain(md);
    expect(reproduction).toMatchObject({ quick: true, seeds: [2] });
    const fig = Object.fromEntries(reproduction.figures.map((f) => [f.id, f]));
    // the headline is the paper's quantity: the congestion drops with the failures, PortLand's over
    // F10's, pooled over the seeds ("in total"); beside it what the failures add and the controls'
    expect(fig.total_ratio).toMatchObject({ paper: 7.6, values: [358 / 40] });
    expect(fig.total_ratio.total).toBe(358 / 40);
    expect(stdout).toContain('| 9.0 in total (per seed 9.0) | 9.0 |');
    // the failure takes PortLand's frames into the dead link instead of its queues: it adds less
    // congestion loss to PortLand than to F10 (a negative ratio)
    expect(fig.excess_ratio.total).toBe((358 - 509) / (40 - 14));
    expect(fig.control_ratio.total).toBe(509 / 14);
    // the intervals with no loss, and below 1% (the paper's "negligible"), and PortLand's with loss
    expect([fig.f10_clean_pct.values, fig.f10_negligible_pct.values, fig.portland_lossy_pct.values]).toEqual([
      [50],
      [50],
      [75],
    ]);
    // the ablations run only at full scale
    expect(fig.nopushback_over_f10.values).toEqual([]);
    expect(fig.local_failover_over_portland.values).toEqual([]);
    // the time scale is stated
    expect(stdout).toContain("control-plane times at 0.0002 of the paper's (F10's epoch 200.0 µs");
    for (const ext of ['vl.json', 'svg', 'png'])
      expect(existsSync(join(out, `fig8-congestion-loss-cdf.${ext}`))).toBe(true);
    expect(report.variants.map((v) => v.variant)).toEqual([
      'f10',
      'portland',
      'f10-no-failures',
      'portland-no-failures',
    ]);
  });

  it('runs the same workload on every variant, the same failure trace on both schemes and none on the controls', () => {
    const offered = report.variants.map((v) => v.offered);
    expect(new Set(offered).size).toBe(1);
    const timeline = (v: string): Entry[] =>
      parse(readFileSync(join(out, 'seed-2', v, 'scenario.yaml'), 'utf8')).timeline ?? [];
    const f10 = timeline('f10');
    const portland = timeline('portland');
    // one link failure, not repaired within the run
    expect(f10.map((e) => e.action)).toEqual(['link-down']);
    // the same failures at the same times; a link keeps its upper switch (the lower end may differ)
    expect(portland.map((e) => [e.at, e.action, e.node, e.link?.[0]])).toEqual(
      f10.map((e) => [e.at, e.action, e.node, e.link?.[0]]),
    );
    expect([timeline('f10-no-failures'), timeline('portland-no-failures')]).toEqual([[], []]);
  });

  it('gives exact figures (conservative mode)', () => {
    // congestion drops in the fabric over the run's 4 intervals of 200 µs (0.7 ms with the drain, seed 2)
    expect(report.variants.map((v) => [v.variant, v.drops, v.intervals])).toEqual([
      ['f10', 40, 4],
      ['portland', 358, 4],
      ['f10-no-failures', 14, 4],
      ['portland-no-failures', 509, 4],
    ]);
    // most of PortLand's loss here is there without failures (its tree and ECMP on bursty sources)
    const byName = Object.fromEntries(report.variants.map((v) => [v.variant, v]));
    expect(byName['portland-no-failures'].drops).toBeGreaterThan(byName['f10-no-failures'].drops);
  });
});

interface Fig9Job {
  size: number;
  f10: number | null;
  portland: number | null;
  speedup: number | null;
}

describe('dcemu experiment f10-fig9', () => {
  const out = tempOut('fig9');
  let report: { jobs: Fig9Job[] };
  let reproduction: { quick: boolean; seeds: number[]; figures: Figure[] };
  let stdout = '';
  beforeAll(async () => {
    // seed 1 draws 6 jobs (134 flows) in 550 µs (--quick's 1 ms drew 12 jobs, 307 flows: 110k
    // datagrams, 62k here) and one fabric link fault at 221 µs that stays; no run draws its own plots
    // (run.plots), the experiment's two are drawn all the same
    const r = await dcemu(
      [
        'experiment',
        'f10-fig9',
        '--quick',
        '--seed',
        '1',
        '--set',
        'workload.duration=550us',
        '--set',
        'run.plots=false',
        '--out',
        out,
      ],
      { timeout: 300_000 },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    stdout = r.stdout;
    report = readJson(join(out, 'fig9.json'));
    reproduction = readJson(join(out, 'reproduction.json'));
  }, 300_000);

  it('writes reproduction.json beside the paper, the table, the data and both plots', () => {
    expect(stdout).toContain('# F10 figure 9: MapReduce shuffle speedup');
    expect(stdout).toContain(readFileSync(join(out, 'fig9.md'), 'utf8'));
    expect(reproduction).toMatchObject({ quick: true, seeds: [1] });
    for (const name of ['fig9a-speedup-cdf', 'fig9b-speedup-by-job-size'])
      for (const ext of ['vl.json', 'svg', 'png']) expect(existsSync(join(out, `${name}.${ext}`))).toBe(true);
  });

  it('runs the same jobs and the same failure trace on both schemes', () => {
    const scenario = (v: string) => parse(readFileSync(join(out, 'seed-1', v, 'scenario.yaml'), 'utf8'));
    const [f10, portland] = [scenario('f10'), scenario('portland')];
    expect(f10.workload.pattern).toBe('list');
    expect(f10.workload.flows).toHaveLength(134);
    expect(portland.workload).toEqual(f10.workload);
    expect(f10.transport).toEqual({ kind: 'baseline', cc: 'reno' });
    const entries = (s: { timeline?: Entry[] }) =>
      (s.timeline ?? []).map((e) => [e.at, e.action, e.link?.[0]]);
    expect(f10.timeline.map((e: Entry) => e.action)).toEqual(['link-down']);
    expect(entries(portland)).toEqual(entries(f10));
  });

  it('gives exact figures (conservative mode)', () => {
    // each job's size (mappers + reducers) and completion time (ns) on F10 and on PortLand, seed 1
    expect(report.jobs.map((j) => [j.size, j.f10, j.portland])).toEqual([
      [4, 588771, 467858],
      [14, 80354, 71454],
      [9, 128541, 128464],
      [8, 101852, 102272],
      [14, 64484, 85261],
      [10, 112070, 122733],
    ]);
    const fig = Object.fromEntries(reproduction.figures.map((f) => [f.id, f]));
    // every job finished on both schemes
    for (const id of ['jobs', 'f10_finished', 'portland_finished']) expect(fig[id].values).toEqual([6]);
    expect(fig.failures.values).toEqual([1]);
    // the median of 6: halfway between the 3rd and 4th speedups
    const speedups = report.jobs.map((j) => j.portland! / j.f10!).sort((a, b) => a - b);
    expect(fig.speedup_median.paper).toBe(1.3);
    expect(fig.speedup_median.values[0]).toBeCloseTo((speedups[2] + speedups[3]) / 2, 12);
    expect(fig.faster_pct.values).toEqual([(100 * speedups.filter((x) => x > 1).length) / 6]);
  });
});

describe('dcemu experiment', () => {
  it('lists the experiments, and names them when asked for one that does not exist', async () => {
    const list = await dcemu(['experiment']);
    expect(list.exitCode).toBe(0);
    expect(list.stdout).toContain('f10-fig8');
    expect(list.stdout).toContain('f10-fig9');
    expect(list.stdout).toContain('f10-fig6'); // run in f10.integration.test.ts
    const bad = await dcemu(['experiment', 'fig9']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain("no experiment 'fig9'");
    expect(bad.stderr).toContain('f10-fig8');
    // --variants only where an experiment lists its variants, and only names it lists
    const fixed = await dcemu(['experiment', 'f10-fig6', '--variants', 'f10']);
    expect(fixed.exitCode).toBe(2);
    expect(fixed.stderr).toContain('experiment f10-fig6: runs all of its variants; it takes no --variants');
    const unknown = await dcemu(['experiment', 'top-ablation', '--variants', 'top,tpo']);
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toContain("--variants: no variant 'tpo'; there are expresspass, ");
  });
});
