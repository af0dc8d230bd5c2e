/**
 * `summary.f10`: what F10 (or the controller-only baseline) did about each failure of the timeline
 * (F10 §7): when it was detected, when the first frame went around it, when pushback finished and
 * when the controller rebalanced; the data frames lost to it before and after detection; how many
 * frames each recovery mechanism moved, and how many hops the downward detours added.
 *
 * Loss accounting, per failure, at the switches that detected it. `lostBeforeDetection`: data frames
 * they sent toward the failed element after they last heard from it (an upper bound: the last of
 * them may have arrived before it died), including frames already queued on the port when it was
 * declared down. `lostAfterDetection`: data frames they routed onto a port they knew was down (the
 * baseline does so until the controller reacts; F10 never). Frames a switch had no route for count
 * after detection too (`lost.noRoute`). `lost.total`: end to end, data frames sent minus received
 * minus congestion drops (UDP flows).
 */
import {
  concerns,
  type FiredFault,
  Histogram,
  type NodeEvent,
  nearestRank,
  type RunRecord,
  type SummaryTotals,
} from '../../../sdk/index.js';
import { F10_CONTROLLERS } from '../config.js';
import type { F10SwitchSection } from '../switch/module.js';
import type { F10Settings } from './settings.js';

export interface F10FailureSummary {
  action: string;
  target: string;
  /** the timeline action that made this link fault, when one did: `partition [leaf1] | [spine0, spine1]`, `link-flap` */
  by?: string;
  /** virtual ns since traffic start */
  t: number;
  detectedAt: number | null;
  detectionNs: number | null;
  /** the first frame a detecting switch sent around the failure */
  firstRerouteAt: number | null;
  /** the last pushback block this failure caused was installed */
  pushbackCompleteAt: number | null;
  pushbackInstalls: number;
  /** the controller's first rebalance (f10) or route installation (portland) after detection */
  rebalanceAt: number | null;
  lostBeforeDetection: number;
  lostAfterDetection: number;
}

declare module '../../../sdk/index.js' {
  /** `summary.f10` */
  interface SchemeSections {
    f10: F10Summary;
  }
}

export interface F10Summary {
  scheme: 'f10' | 'portland';
  /**
   * the control-plane times the run had, virtual ns, and the one factor their defaults were scaled by
   * from the paper's (a time the scenario set is its own); congestion window null when off
   */
  timing: {
    timeScale: number;
    epochNs: number;
    reportNs: number;
    stableNs: number;
    reactionDelayNs: number;
    congestionWindowNs: number | null;
  };
  failures: F10FailureSummary[];
  /**
   * Links declared down that no fault of the timeline had hit (by then): a process stalled past its
   * lookahead and its neighbours took the silence for a failure. Non-zero means the run's recovery
   * figures include recoveries from failures that were artefacts of the machine, not of the scenario.
   */
  spuriousDetections: number;
  reroutes: { up: number; scheme1: number; scheme2: number; noRoute: number };
  /** downward detours delivered, by hops added (F10 §7.5: 2 in an AB FatTree, 4 in a standard one) */
  detours: {
    delivered: number;
    plus2: number;
    plus4: number;
    other: number;
    plus2Fraction: number | null;
    hopsAddedP50: number;
    hopsAddedMax: number;
  };
  pushback: { messages: number; installs: number };
  /**
   * Congestion pushback (F10 §6.2): links found hot (LBdelta above the threshold), messages sent,
   * weight cuts installed (one per hot up link at its own switch, one per switch that routes around a
   * hot down link), and cuts removed at the controller's epochs
   */
  congestionPushback: { hot: number; messages: number; installs: number; removed: number };
  /**
   * Per interval of `intervalNs` from traffic start, summed over the switches: data frames dropped on
   * full buffers toward switches (`congestionDrops`) and toward hosts (`edgeDrops`: a receiver's own
   * link, which no routing relieves), handed to the fabric by hosts, dropped without a route, routed
   * into a port known dead
   */
  intervals: {
    intervalNs: number;
    congestionDrops: number[];
    edgeDrops: number[];
    offered: number[];
    noRoute: number[];
    intoDeadPort: number[];
  };
  /**
   * F10 §7.4's figure 8: the congestion loss rate in the fabric (drops toward switches / frames
   * offered) of every interval with traffic, as quantiles, and their mean; `total` drops
   */
  congestionLoss: {
    intervals: number;
    p50: number | null;
    p75: number | null;
    p90: number | null;
    max: number | null;
    mean: number | null;
    total: number;
  };
  lost: { total: number | null; beforeDetection: number; afterDetection: number; noRoute: number };
  /**
   * epochs that rebalanced (f10) or route installations (portland); links the controller reinstalled
   * and the switches' acknowledgements of them (F10 §5.3: scheduled flows use a link only after both)
   */
  controller: { rebalances: number; routeInstalls: number; reinstalled: number; acknowledged: number };
  /** with a backup controller (`scheme.controller.backup`, F10 §8), which one acted when; else null */
  backup: F10BackupSummary | null;
}

export interface F10BackupSummary {
  /** who commanded from when (virtual ns since traffic start): arb0 in term 0, then each takeover */
  acting: Array<{ controller: string; term: number; from: number }>;
  /** standbys that took over (`f10-takeover` events) */
  takeovers: number;
  /** controllers that stood down on hearing a higher term (`f10-step-down`: a deposed one came back) */
  stepDowns: number;
  /** commands switches ignored because they came from a controller a higher term had replaced */
  staleCommands: number;
  /** per controller: its epochs (f10) or route installations (portland) */
  rebalances: Record<string, number>;
}

export function summarizeF10(s: F10Settings, r: RunRecord, totals: SummaryTotals): F10Summary {
  const { frames, congestionDrops } = totals;
  const counters: Record<string, number> = {};
  const hist = new Histogram();
  for (const rep of r.reports) {
    for (const [k, v] of Object.entries(rep.metrics.counters)) counters[k] = (counters[k] ?? 0) + v;
    const section = rep.scheme as Partial<F10SwitchSection> | undefined;
    if (section?.inflation) hist.merge(section.inflation);
  }
  const c = (k: string): number => counters[k] ?? 0;
  const intervals = sumIntervals(r.reports, s.lossIntervalNs);
  const { stillDown, routedToDown } = downPortCounts(r);
  const events = r.events;
  const failures = r.faults
    .filter((f) => f.action === 'kill' || f.action === 'pause' || f.action === 'link-down')
    .map((f, i, all) =>
      failure(f, all[i + 1]?.t ?? Number.POSITIVE_INFINITY, events, stillDown, routedToDown),
    );
  const delivered = c('f10DetouredDelivered');
  const noRoute = c('f10NoRoute');
  const beforeDetection = failures.reduce((s, f) => s + f.lostBeforeDetection, 0);
  const afterDetection = failures.reduce((s, f) => s + f.lostAfterDetection, 0) + noRoute;
  return {
    scheme: s.kind,
    timing: {
      timeScale: s.timeScale,
      epochNs: s.epochNs,
      reportNs: s.reportNs,
      stableNs: s.stableNs,
      reactionDelayNs: s.reactionDelayNs,
      congestionWindowNs: s.congestion?.windowNs ?? null,
    },
    failures,
    // a paused node's own detector finds its links silent when it resumes: the pause's doing too
    spuriousDetections: events.filter(
      (e) =>
        e.kind === 'port-down-detected' &&
        !r.faults.some((f) => f.t <= e.t && (concerns(f, e) || f.node === e.node)),
    ).length,
    reroutes: { up: c('f10ReroutedUp'), scheme1: c('f10Scheme1'), scheme2: c('f10Scheme2'), noRoute },
    detours: {
      delivered,
      plus2: c('f10DetourPlus2'),
      plus4: c('f10DetourPlus4'),
      other: c('f10DetourOther'),
      plus2Fraction: delivered > 0 ? c('f10DetourPlus2') / delivered : null,
      hopsAddedP50: delivered > 0 ? hist.quantile(0.5) : 0,
      hopsAddedMax: delivered > 0 ? hist.quantile(1) : 0,
    },
    pushback: { messages: c('f10PushbackSent'), installs: c('f10PushbackInstalled') },
    congestionPushback: {
      hot: c('f10CongestionHot'),
      messages: c('f10CongestionMessages'),
      installs: c('f10CongestionInstalls'),
      removed: c('f10CongestionRemoved'),
    },
    intervals,
    congestionLoss: lossRates(intervals.congestionDrops, intervals.offered),
    lost: {
      total: frames ? frames.sent - frames.received - congestionDrops : null,
      beforeDetection,
      afterDetection,
      noRoute,
    },
    controller: {
      rebalances: events.filter((e) => e.kind === 'f10-rebalance').length,
      routeInstalls: events.filter((e) => e.kind === 'portland-routes').length,
      reinstalled: events.filter((e) => e.kind === 'f10-link-reinstalled').length,
      acknowledged: counters.f10ReinstallAcks ?? 0,
    },
    backup: s.backup ? backupOf(events, c('f10StaleCommands')) : null,
  };
}

/**
 * Per (node, peer), `<node>><peer>`: data frames sent on ports still down when the run ended, and
 * frames routed onto a port known to be down.
 */
function downPortCounts(r: RunRecord): {
  stillDown: Map<string, number>;
  routedToDown: Map<string, number>;
} {
  const stillDown = new Map<string, number>();
  const routedToDown = new Map<string, number>();
  for (const rep of r.reports) {
    for (const [k, v] of Object.entries(rep.metrics.counters)) {
      if (k.startsWith('sentWhileDown:')) stillDown.set(`${rep.name}>${k.slice(14)}`, v);
      if (k.startsWith('routedToDown:')) routedToDown.set(`${rep.name}>${k.slice(13)}`, v);
    }
  }
  return { stillDown, routedToDown };
}

function backupOf(events: NodeEvent[], staleCommands: number): F10BackupSummary {
  const acting: F10BackupSummary['acting'] = [{ controller: F10_CONTROLLERS[0], term: 0, from: 0 }];
  const rebalances: Record<string, number> = {};
  let stepDowns = 0;
  for (const e of events) {
    if (e.kind === 'f10-takeover')
      acting.push({ controller: e.node, term: e.term as number, from: Math.round(e.t) });
    else if (e.kind === 'f10-step-down') stepDowns++;
    else if (e.kind === 'f10-rebalance' || e.kind === 'portland-routes')
      rebalances[e.node] = (rebalances[e.node] ?? 0) + 1;
  }
  return { acting, takeovers: acting.length - 1, stepDowns, staleCommands, rebalances };
}

function failure(
  f: FiredFault,
  until: number,
  events: NodeEvent[],
  stillDown: Map<string, number>,
  routedToDown: Map<string, number>,
): F10FailureSummary {
  const inWindow = (e: NodeEvent) => e.t >= f.t && e.t < until;
  const detections = events.filter((e) => e.kind === 'port-down-detected' && inWindow(e) && concerns(f, e));
  const detectors = new Set(detections.map((e) => `${e.node}>${e.peer}`));
  const first = detections[0];
  const reroute = events.find(
    (e) => e.kind === 'f10-first-reroute' && inWindow(e) && detectors.has(`${e.node}>${e.peer}`),
  );
  const installs = events.filter(
    (e) => e.kind === 'f10-pushback-installed' && inWindow(e) && causedBy(e.origin as string, detectors),
  );
  const rebalance = first
    ? events.find((e) => (e.kind === 'f10-rebalance' || e.kind === 'portland-routes') && e.t >= first.t)
    : undefined;
  // frames that left the detecting ports while they were down; those routed there knowingly are
  // after detection, the rest were queued before it
  let leftWhileDown = 0;
  for (const e of events) {
    if (e.kind === 'port-up-detected' && e.t >= f.t && detectors.has(`${e.node}>${e.peer}`))
      leftWhileDown += (e.sentWhileDown as number) ?? 0;
  }
  let after = 0;
  for (const d of detectors) {
    leftWhileDown += stillDown.get(d) ?? 0;
    after += routedToDown.get(d) ?? 0;
  }
  const unconfirmed = detections.reduce((s, e) => s + ((e.unconfirmed as number) ?? 0), 0);
  const by = f.detail?.by as string | undefined;
  const groups = f.detail?.groups as string[][] | undefined;
  return {
    action: f.action,
    target: f.node ?? (f.link ?? []).join('--'),
    ...(by && { by: groups ? `${by} ${groups.map((g) => `[${g.join(', ')}]`).join(' | ')}` : by }),
    t: f.t,
    detectedAt: first ? first.t : null,
    detectionNs: first ? first.t - f.t : null,
    firstRerouteAt: reroute ? reroute.t : null,
    pushbackCompleteAt: installs.length > 0 ? Math.max(...installs.map((e) => e.t)) : null,
    pushbackInstalls: installs.length,
    rebalanceAt: rebalance ? rebalance.t : null,
    lostBeforeDetection: unconfirmed + Math.max(0, leftWhileDown - after),
    lostAfterDetection: after,
  };
}

/**
 * Whether a pushback origin traces back to one of the failure's detections: a link origin
 * `node>peer`, or a block a switch derived (`node/...`) while the failure was being handled.
 */
function causedBy(origin: string, detectors: Set<string>): boolean {
  return detectors.has(origin) || (origin.includes('/') && detectors.size > 0);
}

/** the switches' per-interval counts, summed; every series as long as the longest */
function sumIntervals(reports: RunRecord['reports'], intervalNs: number): F10Summary['intervals'] {
  const out: F10Summary['intervals'] = {
    intervalNs,
    congestionDrops: [],
    edgeDrops: [],
    offered: [],
    noRoute: [],
    intoDeadPort: [],
  };
  const add = (into: number[], from: unknown): void => {
    if (!Array.isArray(from)) return;
    for (const [i, v] of from.entries()) {
      if (typeof v !== 'number') continue;
      while (into.length <= i) into.push(0);
      into[i] += v;
    }
  };
  for (const rep of reports) {
    const iv = (rep.scheme as Partial<F10SwitchSection> | undefined)?.intervals;
    if (!iv) continue;
    add(out.congestionDrops, iv.drops);
    add(out.edgeDrops, iv.edgeDrops);
    add(out.offered, iv.offered);
    add(out.noRoute, iv.noRoute);
    add(out.intoDeadPort, iv.intoDead);
  }
  const all = [out.congestionDrops, out.edgeDrops, out.offered, out.noRoute, out.intoDeadPort];
  const n = Math.max(...all.map((series) => series.length));
  for (const series of all) while (series.length < n) series.push(0);
  return out;
}

/** per-interval congestion loss rates (intervals with offered traffic), as F10's figure 8 reads them */
export function intervalRates(drops: readonly number[], offered: readonly number[]): number[] {
  const out: number[] = [];
  for (let i = 0; i < offered.length; i++) if (offered[i] > 0) out.push((drops[i] ?? 0) / offered[i]);
  return out;
}

/**
 * What figure 8 reads of a set of per-interval loss rates: how many, how many lost nothing, quantiles
 * and the mean (null when there are none)
 */
export function rateStats(rates: readonly number[]) {
  const sorted = [...rates].sort((a, b) => a - b);
  return {
    intervals: sorted.length,
    zero: sorted.filter((r) => r === 0).length,
    p50: nearestRank(sorted, 0.5),
    p75: nearestRank(sorted, 0.75),
    p90: nearestRank(sorted, 0.9),
    p99: nearestRank(sorted, 0.99),
    max: nearestRank(sorted, 1),
    mean: sorted.length > 0 ? sorted.reduce((a, b) => a + b, 0) / sorted.length : null,
  };
}

function lossRates(drops: readonly number[], offered: readonly number[]): F10Summary['congestionLoss'] {
  const { intervals, p50, p75, p90, max, mean } = rateStats(intervalRates(drops, offered));
  return { intervals, p50, p75, p90, max, mean, total: drops.reduce((a, b) => a + b, 0) };
}
