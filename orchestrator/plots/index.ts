/**
 * Plots of a results folder (`<out>/plots/`) and of a sweep (`<sweep>/plots/`): the specs come from
 * `run.ts` and `sweep.ts`, the files from `render.ts`. Both return the problems met, as lines for the
 * caller to show; a plot never fails a run.
 */
import { join } from 'node:path';
import type { FabricResult } from '../engine/engine.js';
import type { FlowRow, Summary } from '../engine/results.js';
import { type PlotOutcome, writePlots } from './render.js';
import { type NodeSeries, runPlots } from './run.js';
import { type SweepPlotAxis, type SweepPlotRow, sweepPlots } from './sweep.js';

export type { Plot, PlotOutcome } from './render.js';
export { svgOf } from './render.js';

/** The run's plots into `<out>/plots/`. */
export function writeRunPlots(
  out: string,
  r: FabricResult,
  summary: Summary,
  flows: FlowRow[],
): Promise<PlotOutcome> {
  const queues: NodeSeries[] = [];
  const delivered: NodeSeries[] = [];
  const clocks: NodeSeries[] = [];
  for (const rep of r.reports) {
    for (const q of rep.queues) queues.push({ node: `${rep.name}:${q.port}→${q.peer}`, t: q.t, v: q.v });
    if (rep.delivered) delivered.push({ node: rep.name, ...rep.delivered });
    if (rep.clock) clocks.push({ node: rep.name, t: rep.clock.t, v: rep.clock.err });
  }
  // largest p99 error first (the summary's nodes are those after lock); nodes it leaves out last
  const p99 = new Map(summary.clocks?.nodes.map((n) => [n.node, n.errP99Ns]));
  clocks.sort((a, b) => (p99.get(b.node) ?? -1) - (p99.get(a.node) ?? -1));
  const plots = runPlots({
    flows,
    queues,
    clocks,
    delivered,
    t0: r.trafficStart,
    endNs: summary.virtualNs,
    faults: summary.faults,
  });
  return writePlots(join(out, 'plots'), plots);
}

/** A sweep's plots, one per figure against the swept values, into `<out>/plots/`. */
export function writeSweepPlots(
  out: string,
  axes: SweepPlotAxis[],
  rows: SweepPlotRow[],
): Promise<PlotOutcome> {
  return writePlots(join(out, 'plots'), sweepPlots(axes, rows));
}
