/**
 * F10's figure 6 (F10 §7.3) as a command: `dcemu experiment f10-fig6`. The scenario's own timeline
 * (one failure) on F10 and on the baseline, with fine loss intervals: losses over time around the
 * failure, by cause, and how long each took to recover.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ExperimentOptions, formatNs } from '../../../sdk/index.js';
import { frame, type Plot, timelineScenario, writePlots, writeTable } from '../../../sdk/study.js';
import type { F10Summary } from '../definition/summary.js';
import { F10, PORTLAND, runOne, setsFor, type Variant } from './trace.js';

const FIG6_VARIANTS: Variant[] = [F10, PORTLAND];

/** one interval's frames lost to one cause on one variant: fig6.json's rows and the plot's */
interface LossRow {
  variant: string;
  t: number;
  cause: string;
  frames: number;
}

export async function runFig6(opts: ExperimentOptions): Promise<string> {
  const { file, out, say } = opts;
  const set = opts.set ?? [];
  mkdirSync(out, { recursive: true });
  const rows: LossRow[] = [];
  const lines: string[] = [];
  const summaries: Record<string, F10Summary> = {};
  for (const v of FIG6_VARIANTS) {
    if (opts.signal?.aborted) break;
    const dir = join(out, v.name);
    mkdirSync(dir, { recursive: true });
    const s = setsFor(set, v);
    const scenario = join(dir, 'scenario.yaml');
    writeFileSync(
      scenario,
      timelineScenario(
        { text: readFileSync(file, 'utf8'), file },
        s,
        [],
        ` dcemu experiment f10-fig6: ${v.name} of ${file}`,
      ),
    );
    say(`f10-fig6: ${v.name}`);
    const f10 = await runOne(scenario, dir, opts.signal);
    if (f10 === null) break;
    summaries[v.name] = f10;
    rows.push(...lossRows(v.name, f10));
    lines.push(...recoveryLines(v.name, f10));
  }
  const md = fig6Table(file, summaries, rows, lines);
  writeTable(out, 'fig6', md, { scenario: file, rows });
  const plotted = await writePlots(out, [fig6Plot(rows)]);
  for (const p of plotted.problems) say(`warning: ${p}`);
  return `${md}\n`;
}

/** A run's frames lost per interval, to the failure and to congestion. */
function lossRows(variant: string, f10: F10Summary): LossRow[] {
  const rows: LossRow[] = [];
  const iv = f10.intervals;
  // frames lost at a failure before it was detected go in the interval it struck
  const before = iv.offered.map(() => 0);
  for (const f of f10.failures) {
    const i = Math.min(before.length - 1, Math.floor(f.t / iv.intervalNs));
    if (i >= 0) before[i] += f.lostBeforeDetection;
  }
  for (let i = 0; i < iv.offered.length; i++) {
    const t = (i * iv.intervalNs) / 1e6;
    rows.push({
      variant,
      t,
      cause: 'failure',
      frames: before[i] + iv.noRoute[i] + iv.intoDeadPort[i],
    });
    rows.push({ variant, t, cause: 'congestion', frames: iv.congestionDrops[i] });
  }
  return rows;
}

/** A run's failures as the table's lines: when each was detected, routed around, recovered, balanced. */
function recoveryLines(variant: string, f10: F10Summary): string[] {
  const lines: string[] = [];
  const iv = f10.intervals;
  for (const [k, f] of f10.failures.entries()) {
    // recovered: the last interval with loss to the failure (after detection, before the next) ends
    const until = f10.failures[k + 1]?.t ?? Number.POSITIVE_INFINITY;
    let last = -1;
    for (let i = 0; i < iv.offered.length; i++) {
      const start = i * iv.intervalNs;
      if (start + iv.intervalNs > f.t && start < until && iv.noRoute[i] + iv.intoDeadPort[i] > 0) last = i;
    }
    // F10: rerouted locally and pushback done; the baseline: the controller's routes installed
    const routed =
      f10.scheme === 'f10'
        ? Math.max(f.firstRerouteAt ?? f.detectedAt ?? f.t, f.pushbackCompleteAt ?? f.t)
        : f.rebalanceAt;
    const recovered = Math.max(routed ?? f.t, last >= 0 ? (last + 1) * iv.intervalNs : f.t);
    // load balance recovered (§7.4's 35 ms): the last interval losing frames to congestion ends
    let congested = -1;
    let lastIn = -1;
    for (let i = 0; i < iv.offered.length; i++) {
      const start = i * iv.intervalNs;
      if (start + iv.intervalNs <= f.t || start >= until) continue;
      lastIn = i;
      if (iv.congestionDrops[i] > 0) congested = i;
    }
    // still losing in the last interval before the next failure or the run's end: not balanced yet
    const balanced =
      congested < 0
        ? '-'
        : `${congested === lastIn ? '> ' : ''}${formatNs((congested + 1) * iv.intervalNs - f.t)}`;
    lines.push(
      `| ${variant} | ${f.action} ${f.target} at ${formatNs(f.t)} | ${f.detectionNs === null ? '-' : formatNs(f.detectionNs)} | ${routed === null ? '-' : formatNs(routed - f.t)} | ${formatNs(recovered - f.t)} | ${balanced} | ${f.lostBeforeDetection} / ${f.lostAfterDetection} |`,
    );
  }
  return lines;
}

/** fig6.md: the failures' recovery times, and the frames each variant lost by cause. */
function fig6Table(
  file: string,
  summaries: Record<string, F10Summary>,
  rows: readonly LossRow[],
  lines: readonly string[],
): string {
  const interval = Object.values(summaries)[0]?.intervals.intervalNs;
  const timing = summaries.portland?.timing ?? null;
  return [
    `# F10 figure 6: losses over time around a failure (intervals of ${interval ? formatNs(interval) : '-'})`,
    '',
    `${file}: its own timeline on F10 (AB FatTree) and on the PortLand-style baseline (standard FatTree).`,
    "Routed around: F10's local rerouting and pushback done, the baseline's controller routes installed. Recovered: that, and no frame lost to the failure after it (to the end of the last interval losing one). Load balanced: no frame lost to congestion after it (to the end of the last interval losing one; '-': none lost; '>': still losing when the next failure came or the run ended).",
    timing === null
      ? ''
      : `Control-plane times at ${timing.timeScale} of the paper's: F10's epoch ${formatNs(timing.epochNs)}, PortLand's reaction ${formatNs(timing.reactionDelayNs)}; the paper's "F10 was able to recover load balancing in 35 ms" (§7.4) is ${formatNs(35e6 * timing.timeScale)} at this scale.`,
    '',
    '| variant | failure | detected after | routed around after | recovered after | load balanced after | lost before / after detection |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...lines,
    '',
    '| variant | frames lost to failures | to congestion |',
    '| --- | --- | --- |',
    ...FIG6_VARIANTS.filter((v) => rows.some((r) => r.variant === v.name)).map((v) => {
      const sum = (cause: string) =>
        rows.filter((r) => r.variant === v.name && r.cause === cause).reduce((s, r) => s + r.frames, 0);
      return `| ${v.name} | ${sum('failure')} | ${sum('congestion')} |`;
    }),
  ].join('\n');
}

/** Frames lost per interval by cause, a panel per variant (the paper's figure 6). */
function fig6Plot(rows: LossRow[]): Plot {
  return {
    name: 'fig6-losses-over-time',
    spec: {
      ...frame('Frames lost per interval around the failure (F10 figure 6)', 560, 160),
      data: { values: rows },
      mark: { type: 'line', interpolate: 'step-after' },
      encoding: {
        x: { field: 't', type: 'quantitative', title: 'virtual time from traffic start (ms)' },
        y: { field: 'frames', type: 'quantitative', title: 'data frames lost' },
        color: { field: 'cause', type: 'nominal' },
        row: { field: 'variant', type: 'nominal', title: null },
      },
    },
  };
}
