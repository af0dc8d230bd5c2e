/**
 * `dcemu experiment f10-fig8 --quick` end to end: one seed's workload and failure trace (the example
 * shrunk to 1 ms of line-rate flows, failures drawn 20× as often) run on F10, F10 without congestion
 * pushback and the PortLand baseline; reproduction.json beside the paper's figures, the tables, the CDF
 * plot, and the same trace on every variant (a link named by its upper switch and port).
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
      // seed 2 draws the workload and four fabric link faults in [232, 289] µs; they stay to the end
      // of the run
      ['experiment', 'f10-fig8', '--quick', '--seed', '2', '--out', out],
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
    // the headline: the drops the failures add (with them minus the failure-free control), PortLand's
    // over F10's, pooled over the seeds as the paper's "in total"
    expect(fig.excess_ratio).toMatchObject({ paper: 7.6, values: [(1180 - 706) / (699 - 519)] });
    expect(fig.excess_ratio.total).toBe((1180 - 706) / (699 - 519));
    expect(fig.raw_ratio.total).toBe(1180 / 699);
    expect(stdout).toContain('| 2.6 in total (per seed 2.6) | 2.6 |');
    // the pushback ablation runs only at full scale
    expect(fig.nopushback_over_f10.values).toEqual([]);
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
    // four link failures, none repaired within the run
    expect(f10.map((e) => e.action)).toEqual(['link-down', 'link-down', 'link-down', 'link-down']);
    // the same failures at the same times; a link keeps its upper switch (the lower end may differ)
    expect(portland.map((e) => [e.at, e.action, e.node, e.link?.[0]])).toEqual(
      f10.map((e) => [e.at, e.action, e.node, e.link?.[0]]),
    );
    expect([timeline('f10-no-failures'), timeline('portland-no-failures')]).toEqual([[], []]);
  });

  it('gives exact figures (conservative mode)', () => {
    // congestion drops in the fabric over the run's 5 intervals of 200 µs (seed 2)
    expect(report.variants.map((v) => [v.variant, v.drops, v.intervals])).toEqual([
      ['f10', 699, 5],
      ['portland', 1180, 5],
      ['f10-no-failures', 519, 5],
      ['portland-no-failures', 706, 5],
    ]);
    // most of PortLand's loss here is there without failures (its tree and ECMP on line-rate flows):
    // counted raw, the failures' share is overstated
    const byName = Object.fromEntries(report.variants.map((v) => [v.variant, v]));
    expect(byName['portland-no-failures'].drops).toBeGreaterThan(byName['f10-no-failures'].drops);
  });
});

describe('dcemu experiment', () => {
  it('lists the experiments, and names them when asked for one that does not exist', async () => {
    const list = await dcemu(['experiment']);
    expect(list.exitCode).toBe(0);
    expect(list.stdout).toContain('f10-fig8');
    expect(list.stdout).toContain('f10-fig6'); // run in f10.integration.test.ts
    const bad = await dcemu(['experiment', 'fig9']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain("no experiment 'fig9'");
    expect(bad.stderr).toContain('f10-fig8');
    // --variants only where an experiment lists its variants, and only names it lists
    const fixed = await dcemu(['experiment', 'f10-fig8', '--variants', 'f10']);
    expect(fixed.exitCode).toBe(2);
    expect(fixed.stderr).toContain('experiment f10-fig8: runs all of its variants; it takes no --variants');
    const unknown = await dcemu(['experiment', 'top-ablation', '--variants', 'top,tpo']);
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toContain("--variants: no variant 'tpo'; there are expresspass, ");
  });
});
