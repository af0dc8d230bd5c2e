/**
 * Clock results: from every host's measured series (true error = node clock − physical time, sampled
 * in physical time) the run's time-synchronization figures — who locked and when, the error after
 * lock, how much software time stamps were delayed by the event loop, and how long re-locking took
 * after a grandmaster failed — plus clocks.csv (plots/clock-error draws it).
 */
import { writeFileSync } from 'node:fs';
import { Histogram } from '../../core/histogram.js';
import type { NodeEvent } from '../../core/messages.js';
import type { FabricResult } from './engine.js';

export interface ClockNodeSummary {
  node: string;
  /** first lock, virtual ns since traffic start (negative: during the PTP warm-up); null if never */
  lockedAt: number | null;
  errP50Ns: number;
  errP99Ns: number;
  errMaxNs: number;
  /** signed mean error after lock: the bias (e.g. half a path asymmetry) */
  meanErrNs: number;
  /** at the end of the run: the clock it followed (its link peer, through boundary clocks) and how many boundary clocks lie between it and the grandmaster, itself included (IEEE 1588 stepsRemoved + 1); null when it followed none */
  master?: string | null;
  stepsRemoved?: number | null;
}

export interface ClockSummary {
  timestamping: string;
  /** what the switches were to PTP: transparent, boundary or none (null: no PTP) */
  switchClocks: string | null;
  /** switchClocks is transparent (the older field) */
  transparentClocks: boolean;
  delayMechanism: string | null;
  slaves: number;
  lockedNodes: number;
  /** time until the last slave locked, virtual ns since traffic start */
  timeToLockNs: number | null;
  /**
   * the grandmaster at the end of the run (the clock announcing itself as master then), else the
   * first the BMCA chose (null: none, or no PTP); with boundary clocks a worse candidate may claim the
   * domain for a while before the best one's Announces have crossed the switches
   */
  grandmaster: string | null;
  /** |true error| of slaves after their first lock, from traffic start */
  errP50Ns: number;
  errP99Ns: number;
  errMaxNs: number;
  meanErrNs: number;
  /**
   * |true error| over every slave and every sample, locked or not (a slave that never locked
   * included), from traffic start (after ptp.warmup, if any): what an application on these clocks sees
   */
  allSamples: { errP50Ns: number; errP99Ns: number; errMaxNs: number; samples: number };
  /** software stamps: delay of the stamp after the hardware instant (event-loop jitter); null for hardware */
  stampNoiseP50Ns: number | null;
  stampNoiseP99Ns: number | null;
  failovers: Array<{ killed: string; t: number; grandmaster: string | null; relockNs: number | null }>;
  nodes: ClockNodeSummary[];
}

/**
 * With PTP: slaves only, each from its first lock on, grandmaster periods left out, and beside it
 * every slave's every sample (`allSamples`). Without PTP (free-running oscillators): every host, every
 * sample, `timestamping: 'none'`.
 */
export function summarizeClocks(r: FabricResult): ClockSummary | null {
  const ptp = r.scenario.ptp;
  if (!ptp && !r.scenario.clocks) return null;
  const all = new Histogram();
  const every = new Histogram();
  const noise = new Histogram();
  let sum = 0;
  const nodes: ClockNodeSummary[] = [];
  const nameOf = new Map(r.plan.nodes.map((n) => [n.id, n.name]));
  for (const rep of r.reports) {
    const c = rep.clock;
    if (!c) continue;
    if (c.stampNoise) noise.merge(c.stampNoise);
    if (ptp && !c.everSlave) continue;
    // from traffic start: a PTP warm-up's samples come before it
    const from = r.trafficStart;
    for (let i = 0; i < c.t.length; i++)
      if (c.state[i] !== 2 && c.t[i] >= from) every.record(Math.abs(c.err[i]));
    const first = ptp ? (c.lockedAt.length > 0 ? c.lockedAt[0] : null) : Number.NEGATIVE_INFINITY;
    const h = new Histogram();
    let nodeSum = 0;
    if (first !== null) {
      for (let i = 0; i < c.t.length; i++) {
        if (c.t[i] < first || c.t[i] < from || c.state[i] === 2) continue;
        const e = c.err[i];
        h.record(Math.abs(e));
        nodeSum += e;
      }
    }
    all.merge(h);
    sum += nodeSum;
    nodes.push({
      node: rep.name,
      lockedAt: ptp && first !== null ? first - r.trafficStart : null,
      errP50Ns: h.quantile(0.5),
      errP99Ns: h.quantile(0.99),
      errMaxNs: h.max,
      meanErrNs: h.n > 0 ? nodeSum / h.n : 0,
      ...(ptp && {
        master: c.master !== undefined && c.master >= 0 ? (nameOf.get(c.master) ?? null) : null,
        stepsRemoved: c.master !== undefined && c.master >= 0 ? (c.steps ?? null) : null,
      }),
    });
  }
  const locked = nodes.filter((x) => x.lockedAt !== null);
  return {
    timestamping: ptp ? ptp.timestamping : 'none',
    switchClocks: ptp?.switchClocks ?? null,
    transparentClocks: ptp?.switchClocks === 'transparent',
    delayMechanism: ptp?.delayMechanism ?? null,
    slaves: ptp ? nodes.length : 0,
    lockedNodes: locked.length,
    timeToLockNs: locked.length > 0 ? Math.max(...locked.map((x) => x.lockedAt!)) : null,
    errP50Ns: all.quantile(0.5),
    errP99Ns: all.quantile(0.99),
    errMaxNs: all.max,
    meanErrNs: all.n > 0 ? sum / all.n : 0,
    allSamples: {
      errP50Ns: every.quantile(0.5),
      errP99Ns: every.quantile(0.99),
      errMaxNs: every.max,
      samples: every.n,
    },
    grandmaster: ptp ? grandmasterAtEnd(r) : null,
    stampNoiseP50Ns: noise.n > 0 ? noise.quantile(0.5) : null,
    stampNoiseP99Ns: noise.n > 0 ? noise.quantile(0.99) : null,
    failovers: ptp ? failovers(r.events, r.faults, ptp.candidates, nodes.length) : [],
    nodes,
  };
}

function grandmasterAtEnd(r: FabricResult): string | null {
  for (const rep of r.reports) {
    const s = rep.clock?.state;
    if (s !== undefined && s.length > 0 && s[s.length - 1] === 2) return rep.name;
  }
  return r.events.find((e) => e.kind === 'ptp-grandmaster')?.node ?? null;
}

/** For each killed grandmaster candidate: who took over, and when every slave had locked again. */
function failovers(
  events: NodeEvent[],
  faults: FabricResult['faults'],
  candidates: string[],
  slaves: number,
): ClockSummary['failovers'] {
  const out: ClockSummary['failovers'] = [];
  for (const f of faults) {
    if (f.action !== 'kill' || !f.node || !candidates.includes(f.node)) continue;
    const after = events.filter((e) => e.t >= f.t);
    const gm = after.find((e) => e.kind === 'ptp-grandmaster');
    const relocked = new Map<string, number>();
    for (const e of after) if (e.kind === 'ptp-locked' && !relocked.has(e.node)) relocked.set(e.node, e.t);
    // every slave but the new grandmaster (and the dead one) must lock again
    const need = slaves - 1 - (gm ? 1 : 0);
    out.push({
      killed: f.node,
      t: f.t,
      grandmaster: gm?.node ?? null,
      relockNs: relocked.size >= need && need > 0 ? Math.max(...relocked.values()) - f.t : null,
    });
  }
  return out;
}

export function writeClockFiles(out: string, r: FabricResult): void {
  const rows = ['node,t_ns,err_ns,offset_ns,state'];
  for (const rep of r.reports) {
    const c = rep.clock;
    if (!c) continue;
    for (let i = 0; i < c.t.length; i++) {
      const t = c.t[i] - r.trafficStart;
      rows.push(
        `${rep.name},${t.toFixed(0)},${Math.round(c.err[i])},${Number.isNaN(c.offset[i]) ? '' : Math.round(c.offset[i])},${c.state[i]}`,
      );
    }
  }
  writeFileSync(`${out}/clocks.csv`, `${rows.join('\n')}\n`);
}
