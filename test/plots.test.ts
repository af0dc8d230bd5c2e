/**
 * Plots without fabrics: the run's and the sweep's Vega-Lite specs from small made-up data (which
 * plots appear, what they encode), the thinning that bounds their data, and real rendering to SVG and
 * PNG (signature, size, axis titles, text drawn with the shipped font).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderAsync } from '@resvg/resvg-js';
import { describe, expect, it } from 'vitest';
import { PNG_SCALE, writePlots } from '../orchestrator/plots/render.js';
import { CLOCK_NODES, QUEUE_PORTS, type RunPlotInput, runPlots } from '../orchestrator/plots/run.js';
import { sweepPlots } from '../orchestrator/plots/sweep.js';
import { cdf, thin } from '../orchestrator/plots/thin.js';
import { tempOut } from './helpers.js';

const T0 = 1_000_000; // physical time of the start of traffic
const SAMPLE = 5_000;

function series(n: number, f: (i: number) => number) {
  return {
    t: Array.from({ length: n }, (_, i) => T0 + i * SAMPLE),
    v: Array.from({ length: n }, (_, i) => f(i)),
  };
}

function input(over: Partial<RunPlotInput> = {}): RunPlotInput {
  return {
    flows: [
      { size: 20_000, finish: 50_000, fct: 40_000, slowdown: 1.5 },
      { size: 2_000_000, finish: 900_000, fct: 800_000, slowdown: 3 },
      { size: 50_000, finish: -1, fct: -1, slowdown: -1 },
    ],
    queues: Array.from({ length: 8 }, (_, k) => ({
      node: `leaf0:${k}→h${k}`,
      ...series(200, (i) => (i * k) % 3000),
    })),
    clocks: Array.from({ length: 14 }, (_, k) => ({
      node: `h${k}`,
      ...series(200, (i) => (k + 1) * 1000 - i * 10),
    })),
    // every host receives 1250 bytes per 5 µs sample (2 Gbit/s), none between 400 and 450 µs
    delivered: Array.from({ length: 4 }, (_, k) => {
      let total = 0;
      return {
        node: `h${k}`,
        ...series(200, (i) => (total += i * SAMPLE >= 400_000 && i * SAMPLE < 455_000 ? 0 : 1250)),
      };
    }),
    t0: T0,
    endNs: 200 * SAMPLE,
    faults: [
      { t: 400_000, at: 400_000, action: 'kill', node: 'spine0', detectedAt: 425_000, detectionNs: 25_000 },
    ],
    ...over,
  };
}

// biome-ignore lint/suspicious/noExplicitAny: specs are read back as plain JSON
const json = (x: unknown): any => JSON.parse(JSON.stringify(x));

describe('run plots', () => {
  it('draws every plot that has data, and only those', () => {
    expect(runPlots(input()).map((p) => p.name)).toEqual([
      'fct-cdf',
      'slowdown-cdf',
      'queues',
      'clock-error',
      'faults',
    ]);
    const none = runPlots(
      input({ flows: [{ size: 1, finish: -1, fct: -1, slowdown: -1 }], queues: [], clocks: [], faults: [] }),
    );
    expect(none).toEqual([]);
    // queues that never held a byte are no plot
    expect(
      runPlots(input({ queues: [{ node: 'leaf0:0→h0', ...series(10, () => 0) }] })).map((p) => p.name),
    ).not.toContain('queues');
  });

  it('plots FCT of completed flows on a log axis, a line per size class', () => {
    const spec = json(runPlots(input()).find((p) => p.name === 'fct-cdf')!.spec);
    expect(spec.title).toContain('2 of 3 started flows completed');
    expect(spec.encoding.x.scale.type).toBe('log');
    const lines = new Set(spec.data.values.map((v: { flows: string }) => v.flows));
    expect([...lines]).toEqual(['all (2)', '≤ 100 KB (1)', '100 KB – 10 MB (1)']);
    // FCT in µs: 40 µs and 800 µs, each reaching fraction 1 in its own class
    const all = spec.data.values.filter((v: { flows: string }) => v.flows === 'all (2)');
    expect(all).toEqual([
      { x: 40, p: 0.5, flows: 'all (2)' },
      { x: 800, p: 1, flows: 'all (2)' },
    ]);
  });

  it('keeps the busiest queues by peak and the clocks given first, times from the start of traffic', () => {
    const plots = runPlots(input());
    const q = json(plots.find((p) => p.name === 'queues')!.spec);
    const ports = [...new Set(q.data.values.map((v: { port: string }) => v.port))];
    expect(ports).toHaveLength(QUEUE_PORTS);
    expect(ports[0]).toBe('leaf0:7→h7');
    expect(ports).not.toContain('leaf0:0→h0');
    expect(q.data.values[0].t).toBe(0);
    const c = json(plots.find((p) => p.name === 'clock-error')!.spec);
    expect([...new Set(c.data.values.map((v: { node: string }) => v.node))]).toEqual(
      Array.from({ length: CLOCK_NODES }, (_, k) => `h${k}`),
    );
    // signed errors from −990 to 12,000 ns: symlog, out to whole decades
    expect(c.encoding.y.scale).toEqual({ type: 'symlog', domain: [-1000, 100_000] });
    expect(c.title).toContain(`the ${CLOCK_NODES} of 14`);
  });

  it('shows the delivered throughput falling to zero at a fault, with its firing and detection marked', () => {
    const spec = json(runPlots(input()).find((p) => p.name === 'faults')!.spec);
    const [overview, around] = spec.vconcat;
    const rules = overview.layer[1].data.values;
    expect(rules.map((r: { kind: string; t: number }) => [r.kind, r.t])).toEqual([
      ['fault fired', 400],
      ['first detected', 425],
    ]);
    // the close-up is in sample periods: 4 hosts x 1250 bytes per 5 µs = 8 Gbit/s, 0 while cut off
    const zoom = around.concat[0];
    expect(zoom.title.text).toBe('1: kill spine0');
    const rate = zoom.layer[0].data.values as Array<{ t: number; gbps: number }>;
    expect(rate.find((p) => p.t === 390)!.gbps).toBe(8);
    expect(rate.find((p) => p.t === 420)!.gbps).toBe(0);
    expect(rate.find((p) => p.t === 460)!.gbps).toBe(8);
  });

  it('falls back to completed flows for throughput when hosts sent no samples', () => {
    const spec = json(runPlots(input({ delivered: [] })).find((p) => p.name === 'faults')!.spec);
    expect(spec.vconcat).toBeUndefined();
    expect(spec.layer[0].encoding.y.title).toBe('bytes of flows completed (Gbit/s)');
  });
});

describe('plot data stays small', () => {
  it('cuts a CDF to evenly spaced ranks, keeping both ends', () => {
    const values = Array.from({ length: 10_000 }, (_, i) => 10_000 - i);
    const c = cdf(values, 100);
    expect(c).toHaveLength(100);
    expect(c[0]).toEqual({ x: 1, p: 1 / 10_000 });
    expect(c[99]).toEqual({ x: 10_000, p: 1 });
    expect(cdf([])).toEqual([]);
  });

  it('thins a series to buckets that keep their largest |value|', () => {
    const v = Array.from({ length: 1000 }, (_, i) => (i === 517 ? -900 : i % 7));
    const kept = thin(v, 50);
    expect(kept).toHaveLength(50);
    expect(kept).toContain(517);
    expect(thin([3, 1, 2], 50)).toEqual([0, 1, 2]);
  });
});

describe('sweep plots', () => {
  const rows = [
    {
      point: ['ptp.timestamping=hardware', 'ptp.transparentClocks=true'],
      figures: { clock_err_p99_ns: 0, drops_fault: 0, fct_p50_ns: null },
    },
    {
      point: ['ptp.timestamping=hardware', 'ptp.transparentClocks=false'],
      figures: { clock_err_p99_ns: 35, drops_fault: 0, fct_p50_ns: null },
    },
    {
      point: ['ptp.timestamping=software', 'ptp.transparentClocks=true'],
      figures: { clock_err_p99_ns: 4000, drops_fault: 0, fct_p50_ns: null },
    },
    {
      point: ['ptp.timestamping=software', 'ptp.transparentClocks=false'],
      figures: { clock_err_p99_ns: 5000, drops_fault: 0, fct_p50_ns: null },
    },
  ];
  const axes = [
    { key: 'ptp.timestamping', values: ['software', 'hardware'] },
    { key: 'ptp.transparentClocks', values: ['true', 'false'] },
  ];

  it('plots each figure against the first key, coloured by the second; none for figures zero or absent everywhere', () => {
    const plots = sweepPlots(axes, rows);
    expect(plots.map((p) => p.name)).toEqual(['clock_err_p99_ns']);
    const spec = json(plots[0].spec);
    expect(spec.encoding.x).toMatchObject({ field: 'x', type: 'nominal', sort: ['software', 'hardware'] });
    expect(spec.encoding.color).toMatchObject({
      field: 'series',
      title: 'ptp.transparentClocks',
      sort: ['true', 'false'],
    });
    // 0 to 5 µs: a symlog axis (zero kept) up to the next decade, bars labelled with their values, in
    // ns, the unit of its smallest value (35 ns), titled in words
    expect(spec.title).toBe('clock error p99 against timestamping');
    expect(spec.encoding.y.title).toBe('clock error p99 (ns, symlog)');
    expect(spec.encoding.y.scale).toEqual({ type: 'symlog', domain: [0, 10_000] });
    expect(spec.encoding.y.axis.values).toEqual([0, 1, 10, 100, 1000, 10_000]);
    expect(spec.layer.map((l: { mark: { type: string } }) => l.mark.type)).toEqual(['bar', 'text']);
    expect(spec.data.values[2]).toEqual({ x: 'software', y: 4000, series: 'true' });
  });

  it('uses a quantitative axis and lines when every swept value is a number', () => {
    const [p] = sweepPlots(
      [{ key: 'workload.load', values: ['0.1', '0.3'] }],
      [
        { point: ['workload.load=0.1'], figures: { fct_p99_ns: 100 } },
        { point: ['workload.load=0.3'], figures: { fct_p99_ns: 180 } },
      ],
    );
    const spec = json(p.spec);
    expect(spec.encoding.x.type).toBe('quantitative');
    expect(spec.layer.map((l: { mark: { type: string } }) => l.mark.type)).toEqual(['line']);
    expect(spec.encoding.y.scale).toBeUndefined();
    expect(spec.data.values).toEqual([
      { x: 0.1, y: 100 },
      { x: 0.3, y: 180 },
    ]);
  });

  it('shows times and completion as a reader reads them, ticks at the swept values', () => {
    const plots = sweepPlots(
      [{ key: 'workload.load', values: ['0.2', '0.4', '0.6'] }],
      [0.2, 0.4, 0.6].map((load, i) => ({
        point: [`workload.load=${load}`],
        figures: {
          fct_p99_ns: [2_000_000, 9_000_000, 16_000_000][i],
          flows_completed: [29, 28, 59][i],
          flows_planned: [29, 29, 65][i],
        },
      })),
    );
    const fct = json(plots.find((p) => p.name === 'fct_p99_ns')!.spec);
    expect(fct.title).toBe('FCT p99 against load');
    expect(fct.encoding.y.title).toBe('FCT p99 (ms)');
    expect(fct.data.values.map((v: { y: number }) => v.y)).toEqual([2, 9, 16]);
    expect(fct.encoding.x.axis.values).toEqual([0.2, 0.4, 0.6]);
    const done = json(plots.find((p) => p.name === 'completion')!.spec);
    expect(done.encoding.y.title).toBe('flows completed (% of planned)');
    expect(done.data.values.map((v: { y: number }) => v.y)).toEqual([100, 96.6, 90.8]);
  });
});

describe('rendering', () => {
  it('writes spec, SVG and PNG per plot, with axis titles drawn in the shipped font', async () => {
    const dir = tempOut('plots');
    const plots = runPlots(input()).filter((p) => p.name === 'fct-cdf' || p.name === 'faults');
    const outcome = await writePlots(dir, plots);
    expect(outcome).toEqual({ written: ['fct-cdf', 'faults'], problems: [] });
    const spec = JSON.parse(readFileSync(join(dir, 'fct-cdf.vl.json'), 'utf8'));
    expect(spec.data.values.length).toBeGreaterThan(0);
    const svg = readFileSync(join(dir, 'fct-cdf.svg'), 'utf8');
    expect(svg).toContain('FCT (µs, log)');
    expect(svg).toContain('fraction of flows');
    const w = Number(/<svg[^>]* width="(\d+)"/.exec(svg)![1]);
    const h = Number(/<svg[^>]* height="(\d+)"/.exec(svg)![1]);
    const png = readFileSync(join(dir, 'fct-cdf.png'));
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    // IHDR: width and height, big-endian, at bytes 16 and 20
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([w * PNG_SCALE, h * PNG_SCALE]);
    // the same SVG with no font at all draws no text: ours must differ from it
    const bare = (
      await renderAsync(svg, {
        font: { loadSystemFonts: false },
        fitTo: { mode: 'zoom', value: PNG_SCALE },
        background: 'white',
      })
    ).asPng();
    expect(png.equals(bare)).toBe(false);
    expect(readFileSync(join(dir, 'faults.svg'), 'utf8')).toContain('data delivered to hosts (Gbit/s)');
  });

  it('says which plot could not be drawn, keeps its spec, and still draws the others', async () => {
    const dir = tempOut('plots');
    const good = runPlots(input()).find((p) => p.name === 'slowdown-cdf')!;
    // biome-ignore lint/suspicious/noExplicitAny: a spec Vega-Lite rejects on purpose
    const bad = { name: 'broken', spec: { data: { values: [] }, mark: 'no-such-mark' } as any };
    const outcome = await writePlots(dir, [bad, good]);
    expect(outcome.written).toEqual(['slowdown-cdf']);
    expect(outcome.problems).toHaveLength(1);
    expect(outcome.problems[0]).toMatch(/^plot broken not drawn: /);
    expect(readFileSync(join(dir, 'broken.vl.json'), 'utf8')).toContain('no-such-mark');
  });
});
