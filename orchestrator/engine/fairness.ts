/**
 * Fairness (summary.fairness; collect.ts): what each sender delivered per `run.interval`, the spread
 * of the active senders' throughputs, and how long the shares took to settle after each change.
 */
import type { FlowRecord, NodeReport } from '../../core/messages.js';
import { quantile } from '../registry/stats.js';
import type { Fairness } from './results.js';

/** Data bytes each sender delivered to every receiver, per `run.interval` since the traffic start. */
export function bytesBySource(reports: readonly NodeReport[]): Map<number, number[]> {
  const bySrc = new Map<number, number[]>();
  for (const rep of reports)
    for (const [src, bins] of rep.bySource ?? []) {
      const acc = bySrc.get(src) ?? [];
      bins.forEach((b, i) => {
        acc[i] = (acc[i] ?? 0) + b;
      });
      bySrc.set(src, acc);
    }
  return bySrc;
}

/**
 * Per `run.interval`, the throughput each active sender got (its data bytes at every receiver) and
 * their standard deviation: a sender is active in an interval when one of its flows started before it
 * and had not finished by its end (§7.2: "the standard deviation of the per-connection throughputs
 * achieved in each 1-second interval", median over the intervals with the same number of connections).
 */
export function fairness(
  reports: readonly NodeReport[],
  flows: ReadonlyArray<Pick<FlowRecord, 'src' | 'start' | 'finish'>>,
  intervalNs: number,
  endNs: number,
): Fairness | null {
  const bySrc = bytesBySource(reports);
  const n = Math.floor(endNs / intervalNs);
  const all: number[] = [];
  const groups = new Map<number, number[]>();
  for (let i = 0; i < n; i++) {
    const from = i * intervalNs;
    const to = from + intervalNs;
    const active = new Set<number>();
    for (const f of flows) if (f.start <= from && (f.finish < 0 || f.finish >= to)) active.add(f.src);
    if (active.size < 2) continue;
    const mbps = [...active].map((s) => ((bySrc.get(s)?.[i] ?? 0) * 8e3) / intervalNs);
    const mean = mbps.reduce((a, b) => a + b, 0) / mbps.length;
    const sd = Math.sqrt(mbps.reduce((a, b) => a + (b - mean) ** 2, 0) / mbps.length);
    all.push(sd);
    const g = groups.get(active.size) ?? [];
    g.push(sd);
    groups.set(active.size, g);
  }
  if (all.length === 0) return null;
  const convergence = equalShares(flows, (src, i) => bySrc.get(src)?.[i] ?? 0, intervalNs, n);
  const q = (xs: number[], p: number) =>
    Math.round(
      quantile(
        [...xs].sort((a, b) => a - b),
        p,
      ) * 1000,
    ) / 1000;
  return {
    intervalNs,
    intervals: all.length,
    stddevMbps: { p50: q(all, 0.5), p90: q(all, 0.9), max: q(all, 1) },
    byActive: Object.fromEntries(
      [...groups]
        .sort(([a], [b]) => a - b)
        .map(([k, g]) => [String(k), { intervals: g.length, p50Mbps: q(g, 0.5) }]),
    ),
    convergence,
  };
}

/** changes of the active senders `Fairness.convergence` lists at most (the first ones) */
const CONVERGENCE_CHANGES = 1000;

/**
 * `Fairness.convergence`: from every change of the active senders (kept incrementally: a flow is
 * active from its start until its finish), intervals of `bytes(src, i)`.
 */
function equalShares(
  flows: ReadonlyArray<Pick<FlowRecord, 'src' | 'start' | 'finish'>>,
  bytes: (src: number, interval: number) => number,
  intervalNs: number,
  n: number,
): Fairness['convergence'] {
  const edges: Array<[number, number, number]> = [];
  for (const f of flows) {
    edges.push([f.start, f.src, 1]);
    if (f.finish >= 0) edges.push([f.finish, f.src, -1]);
  }
  edges.sort((a, b) => a[0] - b[0]);
  const count = new Map<number, number>();
  const out: Fairness['convergence'] = [];
  for (let e = 0; e < edges.length && out.length < CONVERGENCE_CHANGES; ) {
    const t = edges[e][0];
    for (; e < edges.length && edges[e][0] === t; e++) {
      const [, src, d] = edges[e];
      const c = (count.get(src) ?? 0) + d;
      if (c > 0) count.set(src, c);
      else count.delete(src);
    }
    const next = e < edges.length ? edges[e][0] : n * intervalNs;
    const active = [...count.keys()];
    if (active.length < 2) continue;
    let converged: number | null = null;
    for (let i = Math.ceil(t / intervalNs); (i + 1) * intervalNs <= next && i < n; i++) {
      const x = active.map((s) => bytes(s, i));
      const mean = x.reduce((a, b) => a + b, 0) / x.length;
      const fair = mean > 0 && x.every((v) => Math.abs(v - mean) <= 0.1 * mean);
      if (!fair) converged = null;
      else if (converged === null) converged = (i + 1) * intervalNs - t;
    }
    out.push({
      t: Math.round(t),
      active: active.length,
      convergedNs: converged === null ? null : Math.round(converged),
    });
  }
  return out;
}
