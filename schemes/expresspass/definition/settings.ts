/**
 * ExpressPass and TOP settings as a scenario gives them: the schema of `scheme:`, the defaults (the
 * feedback constants of the public ns-2 code) and their resolution against the topology: each
 * switch's credit limiter and each host's feedback control, TOP's classes and deadlines.
 */
import {
  alongHostPaths,
  baseRttNs,
  bytes,
  dataPlane,
  duration,
  parseBytes,
  parseDurationNs,
  pathFigures,
  type ScenarioSource,
  SizeCdf,
  type Topology,
  type TopoNode,
  WireSize,
} from '../../../sdk/index.js';
import { CREDIT_BYTES, TopClasses, TopUnscheduled, type XpHostConfig, type XpSwitchConfig } from '../wire.js';

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
    enum: [1, 2, 3, 4, 5, 6, 'ideal'],
    description:
      "top only: token classes K (default 6, or 5 with unscheduled packets: the most there are), or ideal: §3.2's ideal switch with 'an infinite number of priorities', every token ranked by its flow's packets left (fct objective only)",
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
  /**
   * top: where the class boundaries came from, and the boundaries in bytes left (ideal: none, every
   * token ranked by its flow's packets left)
   */
  priorities?: { rule: 'workload' | 'log' | 'ideal'; thresholdsBytes: number[] };
  /** top, deadline objective: the boundaries in time left to a flow's deadline */
  deadlines?: { thresholdsNs: number[] };
  /** top, sender expiry: the shortest and longest path's threshold T = d + |P|·t_h */
  expiry?: { minNs: number; maxNs: number };
  /** for slowdowns: host link rate, longest propagation, links on the longest host path */
  hostRateBps: number;
  propNs: number;
  links: number;
  /**
   * TOP §3.3 footnote 1's handshake, for the slowdowns that count it: the unloaded round trip of the
   * credit request and the first credit (84 B each: every link's propagation and serialization, both
   * ways) on the longest host path, ns
   */
  handshakeNs: number;
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

export function resolveXp(src: ScenarioSource, topo: Topology, kind: string): XpSettings {
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
  // the most token classes there are; an ideal switch's ranked buffer holds what they hold together
  const most = TopClasses.hi - tokenLo + 1;
  const ideal = kind === 'top' && sc.classes === 'ideal';
  if (kind === 'top') ({ top, priorities, deadlines } = topClasses(src, ideal, most, unscheduled));
  const queueCredits: number = sc.queueCredits ?? d.queueCredits;
  let expiry: XpSettings['expiry'];
  if (top !== undefined && tokenExpiry === 'sender') {
    expiry = senderExpiry(topo, creditShare, queueCredits);
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
        ...(ideal && { rankedTokens: most * queueCredits }),
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
    handshakeNs: Math.round(baseRttNs(topo, CREDIT_BYTES)),
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
 * TOP's token classes (resolveXp): `classes` of them (`ideal`: one, every token ranked instead; at most
 * `most`), their boundaries in bytes left or, with the deadline objective, in time to the deadline.
 */
function topClasses(
  src: ScenarioSource,
  ideal: boolean,
  most: number,
  unscheduled: number,
): {
  top: NonNullable<XpHostConfig['top']>;
  priorities: NonNullable<XpSettings['priorities']>;
  deadlines: XpSettings['deadlines'];
} {
  const sc = src.data.scheme ?? {};
  let deadlines: XpSettings['deadlines'];
  const k: number = ideal ? 1 : (sc.classes ?? most);
  if (k > most) throw src.error(['scheme', 'classes'], `at most ${most} with unscheduled packets, got ${k}`);
  // K classes, K−1 boundaries at the quantiles i/K of what they split
  const levels = Array.from({ length: k - 1 }, (_, i) => (i + 1) / k);
  const priorities: NonNullable<XpSettings['priorities']> = ideal
    ? { rule: 'ideal', thresholdsBytes: [] }
    : classBoundaries(src, levels);
  const objective: 'fct' | 'deadline' = sc.objective ?? 'fct';
  if (ideal && objective !== 'fct')
    throw src.error(
      ['scheme', 'classes'],
      "ideal ranks tokens by packets left: it needs objective fct, got 'deadline'",
    );
  if (objective === 'deadline') deadlines = deadlineBoundaries(src, levels);
  const top = {
    ...(ideal && { ranked: true }),
    objective,
    deadlineThresholdsNs: deadlines?.thresholdsNs ?? [],
    unscheduled,
    thresholds: priorities.thresholdsBytes.map((b) => Math.ceil(b / WireSize.Mss)),
    // §5.4: T = d + |P|·t_h, the base one-way delay and the hops' token queueing (8 credits a
    // hop, as ExpressPass's queues allow); each receiver's own in nodeScheme, the longest path's here
    expiryNs: 0,
    targetLoss: 0.1,
  };
  return { top, priorities, deadlines };
}

/** TOP's sender expiry: the least and the greatest threshold (tokenThresholds) over every host pair */
function senderExpiry(
  topo: Topology,
  creditShare: number,
  queueCredits: number,
): NonNullable<XpSettings['expiry']> {
  // a loop, not Math.min(...): a large FatTree has a million host pairs
  const expiry = { minNs: Number.POSITIVE_INFINITY, maxNs: 0 };
  for (const h of topo.nodes)
    if (h.role === 'host')
      for (const t of Object.values(tokenThresholds(topo, h, creditShare, queueCredits))) {
        if (t < expiry.minNs) expiry.minNs = t;
        if (t > expiry.maxNs) expiry.maxNs = t;
      }
  return expiry;
}

/**
 * TOP §5.4: a sender drops a token older than T = d + |P|·t_h, d the base one-way delay of the path the
 * token takes from its receiver and t_h a hop's largest token queueing (its queue of `queueCredits`
 * tokens at the link's credit rate). Per receiver host of `host`, by node id, over a shortest path (every
 * shortest path of a leaf-spine or FatTree crosses the same kinds of links); d counts each link's
 * propagation and a token's serialization.
 */
export function tokenThresholds(
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
