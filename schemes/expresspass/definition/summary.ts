/**
 * `summary.expresspass`: credits sent, dropped at switches, wasted at senders; data sent, received and
 * lost (zero without faults is the promise, checked by chaos runs); the largest port queue; FCT by
 * size bucket and slowdown.
 */
import {
  idealFct,
  idealFctAfterHandshake,
  mean,
  quantile,
  type RunRecord,
  sectionsOf,
  sum,
  WireSize,
} from '../../../sdk/index.js';
import type { XpHostSection } from '../host/flow-state.js';
import type { XpSwitchSection } from '../switch/module.js';

import type { XpSettings } from './settings.js';

declare module '../../../sdk/index.js' {
  /** `summary.expresspass` */
  interface SchemeSections {
    expresspass: XpSummary;
  }
}

export interface XpSummary {
  /** expresspass or top */
  scheme: string;
  credits: { sent: number; forwarded: number; droppedAtSwitches: number; received: number; wasted: number };
  /**
   * data frames: sent by senders, received (duplicates included), dropped by a full switch buffer
   * (the promise: none), and retransmitted (after fault losses, or a segment slower than 4 round trips)
   */
  data: { sent: number; received: number; droppedCongestion: number; retransmits: number };
  /** credit loss over each flow's life, as its receiver counted it: mean and max */
  creditLoss: { mean: number; max: number };
  maxCreditQueue: number;
  /** largest occupancy (bytes, every class) of any switch port */
  maxQueueBytes: number;
  /**
   * that port (`node>peer`), and the bound on any port's queue: the fastest rate × `delayBoundNs` plus
   * the limiter's burst of data
   */
  maxQueuePort: string;
  queueBoundBytes: number;
  delayBoundNs: number;
  stalledStreams: number;
  rateUpdates: number;
  /** TOP: token expiry at senders (§4.3) or switches (R2), and how the clocks judged */
  tokens?: {
    expiredAtSenders: number;
    expiredAtSwitches: number;
    expiryChecks: number;
    /** valid in truth, dropped because of clock error */
    expiredValid: number;
    /** sender expiry: the shortest and the longest path's threshold T = d + |P|·t_h, ns */
    expiryThresholdNs?: { min: number; max: number };
    /** stale in truth, used because of clock error */
    staleUsed: number;
    maxClockErrNs: number;
    /** the token classes' boundaries, bytes left (the fewest left in the top class) and their rule */
    priorities: { rule: string; thresholdsBytes: number[] };
    /** what the tokens serve: fct (SRPT) or deadline (EDF, with the boundaries on time left) */
    objective: string;
    deadlineThresholdsNs?: number[];
    /** §4.4 loss recovery: signal packets receivers sent for missing segments, and the segments resent */
    lossSignals: { sent: number; resent: number };
  };
  /** TOP §4.4: packets short flows sent unscheduled, and those their one-packet queues dropped */
  unscheduled?: { sent: number; dropped: number };
  fct: {
    avgNs: number;
    p99Ns: number;
    small: { count: number; avgNs: number; p99Ns: number };
    large: { count: number; avgNs: number; p99Ns: number };
  };
  /** FCT over idealFct (the data alone in an empty network, the longest host path) */
  slowdown: { avg: number; p99: number };
  /**
   * TOP §3.3 footnote 1's reading: FCT over idealFct plus the handshake (`handshakeNs`, the unloaded
   * round trip of the credit request and the first credit), the optimal FCT of a flow that must ask first
   */
  slowdownHandshake: { avg: number; p99: number };
  /** that handshake, ns */
  handshakeNs: number;
}

function stats(xs: number[]): { count: number; avgNs: number; p99Ns: number } {
  const sorted = [...xs].sort((a, b) => a - b);
  return { count: sorted.length, avgNs: Math.round(mean(sorted)), p99Ns: Math.round(quantile(sorted, 0.99)) };
}

/** mean and p99 of ascending `sorted` slowdowns, to 3 digits */
function spread(sorted: number[]): { avg: number; p99: number } {
  return {
    avg: Math.round(mean(sorted) * 1000) / 1000,
    p99: Math.round(quantile(sorted, 0.99) * 1000) / 1000,
  };
}

/** The switch port with the largest queue, and the bound the paper's argument gives at the fastest port. */
function largestQueue(
  s: XpSettings,
  r: RunRecord,
): Pick<XpSummary, 'maxQueueBytes' | 'maxQueuePort' | 'queueBoundBytes' | 'delayBoundNs'> {
  let maxQueueBytes = 0;
  let maxQueuePort = '';
  for (const { report: rep } of sectionsOf<XpSwitchSection>(r, 'switch')) {
    for (const p of rep.ports)
      if (p.maxBytes > maxQueueBytes) {
        maxQueueBytes = p.maxBytes;
        maxQueuePort = `${rep.name}>${p.peer}`;
      }
  }
  return {
    maxQueueBytes,
    maxQueuePort,
    queueBoundBytes: Math.round((s.maxRateBps / 8e9) * s.delayBoundNs + s.switch.burstCredits * WireSize.Mtu),
    delayBoundNs: s.delayBoundNs,
  };
}

export function summarizeXp(s: XpSettings, r: RunRecord): XpSummary {
  const hosts = sectionsOf<XpHostSection>(r, 'host').map((x) => x.section);
  const switches = sectionsOf<XpSwitchSection>(r, 'switch').map((x) => x.section);
  const start = new Map<number, { start: number; size: number }>();
  const fcts: Array<{ size: number; fct: number }> = [];
  for (const rep of r.reports) for (const f of rep.flows) start.set(f.id, { start: f.start, size: f.size });
  for (const rep of r.reports)
    for (const [id, t] of rep.received) {
      const st = start.get(id);
      if (st) fcts.push({ size: st.size, fct: t - st.start });
    }
  const ideal = (size: number) => idealFct(size, s.links, s.hostRateBps, s.propNs);
  const slow = fcts.map((f) => f.fct / ideal(f.size)).sort((a, b) => a - b);
  const slowHs = fcts
    .map((f) => f.fct / idealFctAfterHandshake(ideal(f.size), s.handshakeNs))
    .sort((a, b) => a - b);
  const losses = hosts.flatMap((h) => h.creditLoss.map((c) => c[1]));
  const sent = sum(hosts, (h) => h.dataSent);
  const received = sum(hosts, (h) => h.dataReceived);
  return {
    scheme: s.kind,
    credits: {
      sent: sum(hosts, (h) => h.creditsSent),
      forwarded: sum(switches, (x) => x.creditsForwarded),
      droppedAtSwitches: sum(switches, (x) => x.creditsDropped),
      received: sum(hosts, (h) => h.creditsReceived),
      wasted: sum(hosts, (h) => h.creditsWasted),
    },
    data: {
      sent,
      received,
      droppedCongestion: sum(switches, (x) => x.dataDropped),
      retransmits: sum(hosts, (h) => h.retransmits),
    },
    creditLoss: {
      mean: mean(losses),
      max: Math.max(0, ...losses),
    },
    maxCreditQueue: Math.max(0, ...switches.map((x) => x.maxCreditQueue)),
    ...largestQueue(s, r),
    stalledStreams: sum(hosts, (h) => h.stalled),
    rateUpdates: sum(hosts, (h) => h.rateUpdates),
    ...(s.kind === 'top' && {
      tokens: {
        expiredAtSenders: sum(hosts, (h) => h.tokensExpired),
        expiredAtSwitches: sum(switches, (x) => x.tokensExpired),
        expiryChecks: sum(hosts, (h) => h.expiryChecks),
        expiredValid: sum(hosts, (h) => h.expiredValid),
        ...(s.expiry && { expiryThresholdNs: { min: s.expiry.minNs, max: s.expiry.maxNs } }),
        staleUsed: sum(hosts, (h) => h.staleUsed),
        maxClockErrNs: Math.max(0, ...hosts.map((h) => h.maxTokenClockErrNs)),
        priorities: s.priorities!,
        objective: s.host.top!.objective,
        ...(s.deadlines && { deadlineThresholdsNs: s.deadlines.thresholdsNs }),
        lossSignals: { sent: sum(hosts, (h) => h.lossSignals), resent: sum(hosts, (h) => h.signalResends) },
      },
    }),
    ...((s.host.top?.unscheduled ?? 0) > 0 && {
      unscheduled: {
        sent: sum(hosts, (h) => h.unscheduledSent),
        dropped: sum(switches, (x) => x.unscheduledDropped),
      },
    }),
    fct: {
      ...(({ avgNs, p99Ns }) => ({ avgNs, p99Ns }))(stats(fcts.map((f) => f.fct))),
      small: stats(fcts.filter((f) => f.size < 100_000).map((f) => f.fct)),
      large: stats(fcts.filter((f) => f.size > 10_000_000).map((f) => f.fct)),
    },
    slowdown: spread(slow),
    slowdownHandshake: spread(slowHs),
    handshakeNs: s.handshakeNs,
  };
}
