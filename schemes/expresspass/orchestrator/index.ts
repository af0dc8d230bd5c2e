/**
 * ExpressPass (Cho et al., SIGCOMM'17) as the orchestrator sees it: settings (the feedback constants
 * of the public ns-2 code), each switch's credit limiter and each host's feedback control, and
 * `summary.expresspass`: credits sent, dropped at switches, wasted at senders; data sent, received and
 * lost (zero without faults is the promise, checked by chaos runs); the largest port queue; FCT by
 * size bucket and slowdown.
 */
import { WireSize } from '../../../core/frame.js';
import type { SchemeNodeConfig } from '../../../core/messages.js';
import { formatNs, parseBytes, parseDurationNs } from '../../../core/time.js';
import { SizeCdf } from '../../../node/cdf.js';
import type { ScenarioSource } from '../../../orchestrator/scenario/source.js';
import { bytes, duration } from '../../../orchestrator/scenario/units.js';
import { idealFct, mean, quantile, sum } from '../../../orchestrator/schemes/stats.js';
import { defineScheme, type RunRecord } from '../../../orchestrator/schemes/types.js';
import { dataPlane } from '../../../orchestrator/topology/arbiter.js';
import { alongHostPaths, pathFigures } from '../../../orchestrator/topology/diameter.js';
import type { Topology, TopoNode } from '../../../topology/types.js';
import type { XpHostSection } from '../host/transport.js';
import type { XpSwitchSection } from '../switch/module.js';
import { VARIANTS } from '../variants.js';
import {
  CREDIT_BYTES,
  EXPRESSPASS_KIND,
  TOP_KIND,
  TopClasses,
  TopUnscheduled,
  type XpHostConfig,
  type XpSwitchConfig,
} from '../wire.js';

const fraction = { type: 'number', exclusiveMinimum: 0, maximum: 1 };

export const expressPassProperties = {
  creditShare: {
    ...fraction,
    description:
      "share of each port's rate the credit limiter lets credits use, switches and NICs alike (default 84/1584 ≈ 0.053: one 84 B credit per 1500 B data frame)",
  },
  queueCredits: {
    type: 'integer',
    minimum: 1,
    description: "credits a port's credit queue holds; more are dropped (default 8)",
  },
  burstCredits: {
    type: 'integer',
    minimum: 1,
    description: 'credits the limiter may send back to back after idling (default 2)',
  },
  alpha: {
    ...fraction,
    description: "a flow's initial credit rate, as a fraction of the highest (default 1/16; top: 1)",
  },
  wInit: {
    ...fraction,
    description: 'initial aggressiveness w of the credit feedback control (default 1/16)',
  },
  wMin: { ...fraction, description: 'floor of w, at most wMax (default 0.01)' },
  wMax: { ...fraction, description: 'ceiling of w (default 0.5)' },
  targetLossScaling: {
    ...fraction,
    description:
      'expresspass: the target credit loss is (1 - rate/max) x this (default 1/8); top ignores it and targets a fixed 10%',
  },
  jitter: {
    type: 'number',
    minimum: 0,
    exclusiveMaximum: 1,
    description: 'credit pacing jitter: each gap is multiplied by 1 + uniform(-jitter, jitter) (default 0.1)',
  },
  timeout: {
    ...duration,
    description:
      'a request no credit answered for this long is sent again, and a receiver whose data stopped this long stops crediting (duration, ns if a number; default 200us)',
  },
  // top only
  tokenExpiry: {
    enum: ['sender', 'switch', 'none'],
    description:
      'top only: how token age is bounded. sender (default): a sender drops a token older than T = d + |P|·t_h by its node clock (§4.3, §5.4: the path from its receiver, its base one-way delay and queueCredits token times a hop); switch: switches drop a token that waited more than queueCredits pacing times (§3.1 R2); none',
  },
  classes: {
    type: 'integer',
    minimum: 1,
    maximum: 6,
    description: 'top only: token classes K (default 6, or 5 with unscheduled packets: the most there are)',
  },
  priorities: {
    enum: ['workload', 'log'],
    description:
      'top only: the class boundaries on packets left. workload: the byte quantiles i/K of workload.sizes, which must name a distribution; log: p^(i/K), p the largest flow (maxFlowSize). Default: workload when workload.sizes names a distribution, else log',
  },
  maxFlowSize: {
    ...bytes,
    description: 'top, priorities log: the largest flow p (size, bytes if a number; default 30MB)',
  },
  unscheduled: {
    type: 'integer',
    minimum: 0,
    description:
      'top only: a flow of at most this many packets sends them all unscheduled at its start, in the lowest class (default 0: off)',
  },
  objective: {
    enum: ['fct', 'deadline'],
    description:
      'top only: what the tokens serve. fct (default): fewest packets left first (SRPT); deadline: earliest deadline first among flows that can still meet theirs (EDF), which needs workload.deadlines',
  },
};

export interface XpSettings {
  kind: 'expresspass' | 'top';
  switch: XpSwitchConfig;
  host: Omit<XpHostConfig, 'maxCreditsPerS' | 'nic'>;
  /** top: how token age is bounded (§3.1 R2 at the switches, §4.3 at the senders by PTP clocks) */
  tokenExpiry?: 'sender' | 'switch' | 'none';
  /** top: where the class boundaries came from, and the boundaries in bytes left */
  priorities?: { rule: 'workload' | 'log'; thresholdsBytes: number[] };
  /** top, deadline objective: the boundaries in time left to a flow's deadline */
  deadlines?: { thresholdsNs: number[] };
  /** top, sender expiry: the shortest and longest path's threshold T = d + |P|·t_h */
  expiry?: { minNs: number; maxNs: number };
  /** for slowdowns: host link rate, longest propagation, links on the longest host path */
  hostRateBps: number;
  propNs: number;
  links: number;
  /**
   * the data queue bound (§2, "zero data loss can be ensured by allocating an amount of packet buffer
   * corresponding to the bounded delay"): how much later data may come back than the tokens that asked
   * for it left, ns; a port of rate R then holds at most R × this plus the limiter's burst
   */
  delayBoundNs: number;
  /** the fastest link's rate: the bound in bytes at it holds at every port */
  maxRateBps: number;
  [setting: string]: unknown;
}

/**
 * Defaults and why: a credit is 84 B and answers a 1500 B frame, so credits get 84/1584 of a link
 * and the data they return fills the rest; 8 credits per queue and a 2-credit burst, initial rate
 * 1/16 of the maximum, w from 1/16 in [0.01, 0.5], target loss scaling 1/8 and ±10% pacing jitter as
 * the ns-2 code; a 200 µs silence (tens of RTTs here) restarts a credit stream.
 */
export const XP_DEFAULTS = {
  creditShare: CREDIT_BYTES / (CREDIT_BYTES + WireSize.Mtu),
  queueCredits: 8,
  burstCredits: 2,
  alpha: 1 / 16,
  wInit: 1 / 16,
  wMin: 0.01,
  wMax: 0.5,
  targetLossScaling: 0.125,
  jitter: 0.1,
  timeoutNs: 200_000,
};

function resolveXp(src: ScenarioSource, topo: Topology, kind: string): XpSettings {
  const sc = src.data.scheme ?? {};
  if (kind !== 'top')
    for (const key of ['tokenExpiry', 'classes', 'priorities', 'maxFlowSize', 'unscheduled', 'objective'])
      if (key in sc) throw src.error(['scheme', key], `a top setting; scheme expresspass has none`);
  const d = XP_DEFAULTS;
  const timeoutNs = sc.timeout === undefined ? d.timeoutNs : parseDurationNs(sc.timeout);
  if (!(timeoutNs > 0)) throw src.error(['scheme', 'timeout'], `must be > 0, got ${sc.timeout}`);
  const wMin = sc.wMin ?? d.wMin;
  const wMax = sc.wMax ?? d.wMax;
  if (wMin > wMax) throw src.error(['scheme', 'wMin'], `must not exceed wMax (${wMax})`);
  const creditShare: number = sc.creditShare ?? d.creditShare;
  const paths = pathFigures(topo);
  const links = paths.diameter;
  // one token's pacing time at the full credit rate of the slowest link
  const pacingNs = (8e9 * CREDIT_BYTES) / (creditShare * paths.minRateBps);
  const tokenExpiry: 'sender' | 'switch' | 'none' = sc.tokenExpiry ?? 'sender';
  let top: XpHostConfig['top'];
  let priorities: XpSettings['priorities'];
  let deadlines: XpSettings['deadlines'];
  const unscheduled: number = kind === 'top' ? (sc.unscheduled ?? 0) : 0;
  // unscheduled packets take Q0 and move scheduled data to Q1: one token class fewer
  const tokenLo = unscheduled > 0 ? TopUnscheduled.lo : TopClasses.lo;
  if (kind === 'top') {
    const k = sc.classes ?? TopClasses.hi - tokenLo + 1;
    if (k > TopClasses.hi - tokenLo + 1)
      throw src.error(
        ['scheme', 'classes'],
        `at most ${TopClasses.hi - tokenLo + 1} with unscheduled packets, got ${k}`,
      );
    // K classes, K−1 boundaries at the quantiles i/K of what they split
    const levels = Array.from({ length: k - 1 }, (_, i) => (i + 1) / k);
    priorities = classBoundaries(src, levels);
    const objective: 'fct' | 'deadline' = sc.objective ?? 'fct';
    if (objective === 'deadline') deadlines = deadlineBoundaries(src, levels);
    top = {
      objective,
      deadlineThresholdsNs: deadlines?.thresholdsNs ?? [],
      unscheduled,
      thresholds: priorities.thresholdsBytes.map((b) => Math.ceil(b / WireSize.Mss)),
      // §5.4: T = d + |P|·t_h, the base one-way delay and the hops' token queueing (8 credits a
      // hop, as ExpressPass's queues allow); each receiver's own in nodeScheme, the longest path's here
      expiryNs: 0,
      targetLoss: 0.1,
    };
  }
  const queueCredits: number = sc.queueCredits ?? d.queueCredits;
  let expiry: XpSettings['expiry'];
  if (top !== undefined && tokenExpiry === 'sender') {
    // a loop, not Math.min(...): a large FatTree has a million host pairs
    expiry = { minNs: Number.POSITIVE_INFINITY, maxNs: 0 };
    for (const h of topo.nodes)
      if (h.role === 'host')
        for (const t of Object.values(tokenThresholds(topo, h, creditShare, queueCredits))) {
          if (t < expiry.minNs) expiry.minNs = t;
          if (t > expiry.maxNs) expiry.maxNs = t;
        }
    top.expiryNs = expiry.maxNs;
  }
  return {
    kind: kind === 'top' ? 'top' : 'expresspass',
    ...(kind === 'top' && { tokenExpiry, priorities }),
    ...(expiry && { expiry }),
    ...(deadlines && { deadlines }),
    switch: {
      creditShare,
      queueCredits,
      burstCredits: sc.burstCredits ?? d.burstCredits,
      ...(kind === 'top' && {
        tokenClasses: [tokenLo, TopClasses.hi] as [number, number],
        maxSojournNs: tokenExpiry === 'switch' ? Math.round(queueCredits * pacingNs) : 0,
        ...(unscheduled > 0 && { unscheduledClass: TopUnscheduled.unscheduled }),
      }),
    },
    host: {
      alpha: sc.alpha ?? (kind === 'top' ? TOP_ALPHA : d.alpha),
      wInit: sc.wInit ?? d.wInit,
      wMin,
      wMax,
      targetLossScaling: sc.targetLossScaling ?? d.targetLossScaling,
      jitter: sc.jitter ?? d.jitter,
      timeoutNs,
      ...(top && { top }),
    },
    hostRateBps: paths.hostRateBps,
    propNs: paths.maxPropNs,
    links,
    maxRateBps: paths.maxRateBps,
    // tokens wait at most 8 pacing times a hop (the 8-token queues; TOP: the expiry that enforces it),
    // and paths differ by up to diameter − 2 links of propagation and one frame time each
    delayBoundNs: Math.round(
      links * (sc.queueCredits ?? d.queueCredits) * pacingNs +
        Math.max(0, links - 2) * (paths.maxPropNs + (8e9 * WireSize.Mtu) / paths.minRateBps),
    ),
  };
}

/**
 * TOP §5.4: a sender drops a token older than T = d + |P|·t_h, d the base one-way delay of the path the
 * token takes from its receiver and t_h a hop's largest token queueing (its queue of `queueCredits`
 * tokens at the link's credit rate). Per receiver host of `host`, by node id, over a shortest path (every
 * shortest path of a leaf-spine or FatTree crosses the same kinds of links); d counts each link's
 * propagation and a token's serialization.
 */
function tokenThresholds(
  topo: Topology,
  host: TopoNode,
  creditShare: number,
  queueCredits: number,
): Record<number, number> {
  const out: Record<number, number> = {};
  const paths = alongHostPaths(dataPlane(topo), host, (t, link) => {
    const tokenNs = (8e9 * CREDIT_BYTES) / link.rateBps;
    return t + link.propNs + tokenNs + (queueCredits * tokenNs) / creditShare;
  });
  for (const [n, t] of paths) out[n.id] = Math.round(t);
  return out;
}

/** TOP's p: the largest flow of the web-search and data-mining traces is about 30 MB */
const TOP_MAX_FLOW_BYTES = 30_000_000;

/**
 * TOP's receiver paces tokens at its link's full rate, choosing a flow per slot (§4.4), so a flow's own
 * feedback rate starts at the maximum and comes down on token loss: a token too many costs a dropped
 * token, never data, and the priorities decide whose tokens those are.
 */
const TOP_ALPHA = 1;

/**
 * TOP §3.2: K−1 boundaries so that the K classes carry equal shares of the bytes. With a named size
 * distribution (`priorities: workload`, the default) they are its byte quantiles i/K; otherwise (or
 * `priorities: log`) the paper's heavy-tailed approximation p^(i/K), p the largest flow (`maxFlowSize`).
 */
function classBoundaries(src: ScenarioSource, levels: number[]): NonNullable<XpSettings['priorities']> {
  const sc = src.data.scheme ?? {};
  const sizes = src.data.workload?.sizes;
  const rule: 'workload' | 'log' = sc.priorities ?? (typeof sizes === 'string' ? 'workload' : 'log');
  if (rule === 'workload') {
    if (typeof sizes !== 'string')
      throw src.error(
        ['scheme', 'priorities'],
        'workload boundaries need workload.sizes (a distribution name)',
      );
    const cdf = SizeCdf.load(sizes);
    return { rule, thresholdsBytes: levels.map((q) => cdf.byteQuantile(q)) };
  }
  const maxFlow = sc.maxFlowSize === undefined ? TOP_MAX_FLOW_BYTES : parseBytes(sc.maxFlowSize);
  if (!(maxFlow > 0)) throw src.error(['scheme', 'maxFlowSize'], `must be > 0 B, got ${sc.maxFlowSize}`);
  const p = Math.max(2, Math.ceil(maxFlow / WireSize.Mss));
  return { rule, thresholdsBytes: levels.map((q) => Math.ceil(p ** q) * WireSize.Mss) };
}

/**
 * TOP's deadline objective: "priority thresholds are chosen in similar ways as that of the FCT-oriented
 * objective" (§3.2), so the K classes split the deadlines evenly: the quantiles i/K of the exponential
 * deadline distribution, −mean·ln(1 − i/K), on a flow's time left.
 */
function deadlineBoundaries(src: ScenarioSource, levels: number[]): NonNullable<XpSettings['deadlines']> {
  const d = src.data.workload?.deadlines;
  if (d?.mean === undefined)
    throw src.error(['scheme', 'objective'], 'the deadline objective needs workload.deadlines (their mean)');
  const meanNs = parseDurationNs(d.mean);
  return { thresholdsNs: levels.map((q) => Math.round(-meanNs * Math.log(1 - q))) };
}

declare module '../../../orchestrator/results.js' {
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
  slowdown: { avg: number; p99: number };
}

const isHost = (x: unknown): x is XpHostSection => typeof x === 'object' && x !== null && 'creditsSent' in x;
const isSwitch = (x: unknown): x is XpSwitchSection =>
  typeof x === 'object' && x !== null && 'creditsForwarded' in x;

function stats(xs: number[]): { count: number; avgNs: number; p99Ns: number } {
  const sorted = [...xs].sort((a, b) => a - b);
  return { count: sorted.length, avgNs: Math.round(mean(sorted)), p99Ns: Math.round(quantile(sorted, 0.99)) };
}

/** The switch port with the largest queue, and the bound the paper's argument gives at the fastest port. */
function largestQueue(
  s: XpSettings,
  r: RunRecord,
): Pick<XpSummary, 'maxQueueBytes' | 'maxQueuePort' | 'queueBoundBytes' | 'delayBoundNs'> {
  let maxQueueBytes = 0;
  let maxQueuePort = '';
  for (const rep of r.reports) {
    if (!isSwitch(rep.scheme)) continue;
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
  const hosts = r.reports.map((rep) => rep.scheme).filter(isHost);
  const switches = r.reports.map((rep) => rep.scheme).filter(isSwitch);
  const start = new Map<number, { start: number; size: number }>();
  const fcts: Array<{ size: number; fct: number }> = [];
  for (const rep of r.reports) for (const f of rep.flows) start.set(f.id, { start: f.start, size: f.size });
  for (const rep of r.reports)
    for (const [id, t] of rep.received) {
      const st = start.get(id);
      if (st) fcts.push({ size: st.size, fct: t - st.start });
    }
  const slow = fcts
    .map((f) => f.fct / idealFct(f.size, s.links, s.hostRateBps, s.propNs))
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
    slowdown: {
      avg: Math.round(mean(slow) * 1000) / 1000,
      p99: Math.round(quantile(slow, 0.99) * 1000) / 1000,
    },
  };
}

export default defineScheme<XpSettings, XpSummary>({
  kinds: [EXPRESSPASS_KIND, TOP_KIND],
  parts: 'dcemu/schemes/expresspass/parts',
  properties: expressPassProperties,
  resolve: (src, topo, kind) => resolveXp(src, topo, kind),

  nodeScheme(s: XpSettings, topo: Topology, node: TopoNode): SchemeNodeConfig | undefined {
    if (node.role === 'switch') return { kind: s.kind, config: s.switch };
    if (node.role !== 'host') return undefined;
    const link = topo.links[node.ports[0].link];
    const top = s.host.top;
    const config: XpHostConfig = {
      ...s.host,
      ...(top &&
        s.expiry && {
          top: {
            ...top,
            expiryByPeerNs: tokenThresholds(topo, node, s.switch.creditShare, s.switch.queueCredits),
          },
        }),
      // a NIC limits its credits as a switch port does; tokens are born there, nothing expires
      nic: { ...s.switch, maxSojournNs: 0, unscheduledClass: undefined },
      maxCreditsPerS: (link.rateBps * s.switch.creditShare) / (8 * CREDIT_BYTES),
    };
    return { kind: s.kind, config };
  },

  timing: {
    scenario: 'examples/top-dumbbell.yaml',
    quick: ['workload.sizes=imc10', 'workload.duration=2ms', 'workload.load=0.6', 'run.drain=2ms'],
    guarantee:
      "TOP's token expiry (§4.3): a sender drops a token older than the threshold by its own clock against the receiver's stamp, so clock error drops valid tokens and lets stale ones through",
    figures: [
      {
        id: 'expired_valid',
        label: 'valid tokens dropped as expired',
        unit: 'tokens',
        digits: 0,
        value: (x) => x.tokens?.expiredValid ?? 0,
      },
      {
        id: 'stale_used',
        label: 'stale tokens used',
        unit: 'tokens',
        digits: 0,
        value: (x) => x.tokens?.staleUsed ?? 0,
      },
    ],
  },

  summaryKey: 'expresspass',
  summarize: (s, r) => summarizeXp(s, r),

  experiments: [
    {
      name: 'top-ablation',
      description:
        "TOP §3.3: where TOP's gain over ExpressPass comes from: ExpressPass, ExpressPass at TOP's start rate, TOP with one token class, TOP, on the same trace (average FCT and slowdown against ExpressPass); then TOP against ExpressPass again on PTP-disciplined clocks with late sends",
      scenario: 'examples/top-dumbbell.yaml',
      seeds: 5,
      module: new URL('../experiments.js', import.meta.url).href,
      run: 'runAblation',
      variants: VARIANTS.map((v) => v.name),
    },
  ],

  /** ExpressPass's promise: no data frame dropped by a full buffer, whatever fails (credits are dropped instead) */
  invariants(x) {
    return x.data.droppedCongestion > 0
      ? [
          {
            invariant: 'expresspass-no-congestion-loss',
            detail: `${x.data.droppedCongestion} data frames dropped by a full buffer`,
          },
        ]
      : [];
  },

  reportRows(x): Array<[string, string]> {
    const t = x.tokens;
    return [
      ...(t
        ? ([
            [
              'top tokens',
              `${t.expiredAtSenders} expired at senders (${t.expiredValid} of them valid, ${t.staleUsed} stale ones used; clock error up to ${formatNs(t.maxClockErrNs)}), ${t.expiredAtSwitches} at switches; by ${t.objective === 'deadline' ? 'deadline' : 'packets left'}; ${t.lossSignals.sent} loss signals, ${t.lossSignals.resent} resent`,
            ],
          ] as Array<[string, string]>)
        : []),
      ...(x.unscheduled
        ? ([
            [
              'top unscheduled',
              `${x.unscheduled.sent} packets sent unscheduled, ${x.unscheduled.dropped} dropped`,
            ],
          ] as Array<[string, string]>)
        : []),
      [
        `${x.scheme} credits`,
        `${x.credits.sent} sent, ${x.credits.droppedAtSwitches} dropped at switches (queue max ${x.maxCreditQueue}), ${x.credits.wasted} wasted; loss per flow mean ${(100 * x.creditLoss.mean).toFixed(1)}%, ${x.rateUpdates} rate updates`,
      ],
      [
        `${x.scheme} data`,
        `${x.data.sent} sent, ${x.data.received} received, ${x.data.droppedCongestion} dropped by full buffers, ${x.data.retransmits} retransmitted; largest switch queue ${x.maxQueueBytes} B at ${x.maxQueuePort || '-'} (bound ${x.queueBoundBytes} B)`,
      ],
      [
        `${x.scheme} FCT`,
        `avg ${formatNs(x.fct.avgNs)} p99 ${formatNs(x.fct.p99Ns)}; < 100 KB avg ${formatNs(x.fct.small.avgNs)} (${x.fct.small.count}); slowdown avg ${x.slowdown.avg} p99 ${x.slowdown.p99}`,
      ],
    ];
  },

  sweepFigures(x) {
    return {
      expresspass_data_dropped: x.data.droppedCongestion,
      expresspass_credits_dropped: x.credits.droppedAtSwitches,
      expresspass_fct_avg_ns: x.fct.avgNs,
      expresspass_slowdown_avg: x.slowdown.avg,
    };
  },
});
