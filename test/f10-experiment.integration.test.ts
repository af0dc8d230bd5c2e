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
      // seed 2 draws four fabric link faults in [0.47, 0.78] ms, all repaired, two in time to be reinstalled
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
    expect(fig.portland_over_f10.paper).toBe(7.6);
    // PortLand loses 2.6× F10's share of the offered frames to congestion (394 and 150 of 6315)
    expect(fig.portland_over_f10.values).toEqual([394 / 6315 / (150 / 6315)]);
    expect(fig.nopushback_over_f10.values).toEqual([420 / 6315 / (150 / 6315)]);
    // the fixed-half ablation runs only at full scale
    expect(fig.shed05_over_f10.values).toEqual([]);
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
    // congestion drops in the fabric over the run's 5 intervals of 200 µs (seed 2)
    expect(report.variants.map((v) => [v.variant, v.drops, v.intervals])).toEqual([
      ['f10', 150, 5],
      ['f10-no-congestion-pushback', 420, 5],
      ['portland', 394, 5],
    ]);
    expect(byName.f10.drops).toBeLessThan(byName['f10-no-congestion-pushback'].drops);
    // Without congestion pushback F10 loses more to congestion than PortLand here, yet delivers more:
    // PortLand's switches keep sending into dead links until the controller's routes come (166 frames
    // after detection, 49 without a route), and a frame lost there never reaches a congested queue;
    // F10 moves those flows onto the surviving links at once (623 frames moved to another parent),
    // where line-rate flows collide. Counted end to end, it loses fewer frames.
    const summary = (v: string) => readJson(join(out, 'seed-2', v, 'summary.json'));
    const noPb = summary('f10-no-congestion-pushback');
    const pl = summary('portland');
    expect(pl.f10.lost).toMatchObject({ afterDetection: 166, noRoute: 49 });
    expect(noPb.f10.reroutes.up).toBe(623);
    expect([noPb.frames.received, pl.frames.received]).toEqual([5335, 5282]);
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
