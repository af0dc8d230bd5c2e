/**
 * `dcemu experiment f10-fig8` end to end on a shortened scenario: one seed's workload and failure
 * trace run on F10, F10 without congestion pushback and the PortLand baseline; the tables, the CDF
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

interface Entry {
  at: string;
  action: string;
  node?: string;
  link?: [string, string];
}

describe('dcemu experiment f10-fig8', () => {
  const out = tempOut('fig8');
  let report: { variants: VariantRow[] };
  let stdout = '';
  beforeAll(async () => {
    const r = await dcemu(
      [
        'experiment',
        'f10-fig8',
        'test/fixtures/f10-fig8.yaml',
        '--seeds',
        '1',
        '--set',
        'scheme.congestion={window: 200us}',
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
  }, 300_000);

  it('writes the table, the data and the CDF plot', () => {
    expect(stdout).toContain('# F10 figure 8: congestion loss per 200.0 µs interval');
    expect(readFileSync(join(out, 'fig8.md'), 'utf8')).toBe(stdout.slice(0, stdout.indexOf('\nresults in')));
    for (const ext of ['vl.json', 'svg', 'png'])
      expect(existsSync(join(out, `fig8-congestion-loss-cdf.${ext}`))).toBe(true);
    expect(report.variants.map((v) => v.variant)).toEqual(['f10', 'f10-no-congestion-pushback', 'portland']);
  });

  it('runs the same workload and failure trace on every variant', () => {
    const offered = report.variants.map((v) => v.offered);
    expect(new Set(offered).size).toBe(1);
    const timeline = (v: string): Entry[] =>
      parse(readFileSync(join(out, 'seed-2', v, 'scenario.yaml'), 'utf8')).timeline ?? [];
    const f10 = timeline('f10');
    const portland = timeline('portland');
    expect(f10.length).toBeGreaterThan(0);
    expect(timeline('f10-no-congestion-pushback')).toEqual(f10);
    // the same failures at the same times; a link keeps its upper switch (the lower end may differ)
    expect(portland.map((e) => [e.at, e.action, e.node, e.link?.[0]])).toEqual(
      f10.map((e) => [e.at, e.action, e.node, e.link?.[0]]),
    );
  });

  it('gives exact figures (conservative mode)', () => {
    const byName = Object.fromEntries(report.variants.map((v) => [v.variant, v]));
    // congestion drops in the fabric over the run's 5 intervals of 200 µs (seed 2, the fixture's)
    expect(report.variants.map((v) => [v.variant, v.drops, v.intervals])).toEqual([
      ['f10', 402, 5],
      ['f10-no-congestion-pushback', 641, 5],
      ['portland', 947, 5],
    ]);
    expect(byName.f10.drops).toBeLessThan(byName['f10-no-congestion-pushback'].drops);
    // two of the trace's cut links come back in time (up for 200 µs before an epoch): the controller
    // reinstalls each, and both its switches acknowledge it before scheduled flows use it (F10 §5.3)
    for (const v of ['f10', 'portland']) {
      const s = readJson(join(out, 'seed-2', v, 'summary.json'));
      expect(s.f10.controller, v).toMatchObject({ reinstalled: 2, acknowledged: 4 });
    }
    expect(byName.f10.drops).toBeLessThan(byName.portland.drops);
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
  });
});
