/**
 * Harmony's `scheme:` settings and the bounds the topology gives them (NSDI'24 §3.3): Theorem 3.1's
 * queue bound #H·(K−1)·p and queueing-delay bound #H(#H+1)(K−1)/2 · p/B, where #H is the number of
 * switches on the longest host-to-host shortest path, B the slowest link and p the MTU. δadmission
 * defaults to 5× the delay bound, as in the paper's evaluation (§5), and to at least one unloaded
 * round trip (at K = 1 the bound is 0). Hosts derive their failure timers
 * from a one-way bound: propagation and serialization of an MTU on every link of the longest path,
 * the Theorem 3.1 queueing, and one best-effort frame in transmission at every switch (switches do not
 * preempt, §3.2).
 */
import {
  duration,
  parseDurationNs,
  pathFigures,
  type ScenarioSource,
  type Topology,
  WireSize,
} from '../../../sdk/index.js';

/** The `scheme:` properties Harmony reads (besides kind). */
export const harmonyProperties = {
  K: {
    type: 'integer',
    minimum: 1,
    maximum: 64,
    description: 'virtual links per link and send and receive slots per host, each of B/K (default 8)',
  },
  deltaAdmission: {
    ...duration,
    description:
      "δadmission: how long a request waits at its receiver for a receive slot before it is rejected (duration, ns if a number; default 5x the topology's Theorem 3.1 queueing-delay bound, at least one unloaded round trip on its longest path)",
  },
  multiSlot: {
    type: 'boolean',
    description:
      'a receiver with a free slot and no request waiting gives the active message with the most bytes to come one more slot, for one BDP (default true)',
  },
  controlShare: {
    type: 'number',
    minimum: 0,
    exclusiveMaximum: 0.5,
    description:
      "share of each host's bandwidth kept from the slots for second-class control, and of each switch port's link reserved for it: a slot paces at B(1 - controlShare)/K (default 0.02)",
  },
  onReject: {
    enum: ['best-effort', 'give-up'],
    description:
      'what becomes of a message rejected or failed on all its asks: best-effort (default) sends it with the baseline transport in the lowest class; give-up drops it, reported rejected or failed',
  },
  rejectAfter: {
    enum: ['window', 'retries'],
    description:
      "when a reject is final: window (default; reading A of the paper, §3.2's sender retransmitting 'using a new request'): a message not started within δadmission of its arrival is rejected, and inside that window every reject (no sender slot, no virtual link, receiver slots) is asked again at once with a new request; retries: after `retries` asks (with retries 0, reading B: the first reject final, §3.1 and §5)",
  },
  retries: {
    type: 'integer',
    minimum: 0,
    description:
      'asks of a failed message (one whose data had started) beyond the first, and with rejectAfter: retries of a rejected one, before onReject (default 3)',
  },
};

export interface HarmonyBounds {
  /** switches on the longest host-to-host shortest path (#H) */
  switchesOnPath: number;
  /** slowest link, bit/s (B) */
  minRateBps: number;
  /** host link rate, bit/s: slots are B/K of it */
  hostRateBps: number;
  /** longest link propagation delay, ns */
  maxPropNs: number;
  /** Theorem 3.1: data-class bytes queued at any switch port */
  queueBoundBytes: number;
  /** Theorem 3.1: total network queueing of any packet, ns */
  delayBoundNs: number;
  /** one frame's network delay between any two hosts, at most, ns */
  oneWayNs: number;
  /** unloaded round trip on the longest path, ns, and the bytes a host link carries in it */
  baseRttNs: number;
  bdpBytes: number;
}

export interface HarmonySettings {
  kind: 'harmony';
  K: number;
  deltaAdmissionNs: number;
  multiSlot: boolean;
  controlShare: number;
  onReject: 'best-effort' | 'give-up';
  rejectAfter: 'window' | 'retries';
  retries: number;
  bounds: HarmonyBounds;
  [setting: string]: unknown;
}

/**
 * Defaults and why: K = 8 and multi-slot as the paper's evaluation; 2% of every host's bandwidth kept
 * from the slots so second-class control is never starved (§3.2 "reserves a small amount of
 * bandwidth"); a message asked again after every reject inside its admission window (reading A of the paper, §3.2),
 * a failed one up to 3 times, then sent best effort.
 */
export const HARMONY_DEFAULTS = {
  K: 8,
  multiSlot: true,
  controlShare: 0.02,
  onReject: 'best-effort',
  rejectAfter: 'window',
  retries: 3,
} as const;

export function resolveHarmony(src: ScenarioSource, topo: Topology): HarmonySettings {
  const sc = src.data.scheme ?? {};
  const K: number = sc.K ?? HARMONY_DEFAULTS.K;
  const bounds = harmonyBounds(topo, K);
  if (bounds.switchesOnPath === 0)
    throw src.error(
      ['scheme', 'kind'],
      'harmony needs hosts joined through switches (no host pair has a switch between)',
    );
  // 5x the delay bound, as the paper's evaluation; at K = 1 the bound is 0: one unloaded round trip
  let deltaAdmissionNs = Math.max(5 * bounds.delayBoundNs, bounds.baseRttNs);
  if (sc.deltaAdmission !== undefined) {
    deltaAdmissionNs = parseDurationNs(sc.deltaAdmission);
    if (!(deltaAdmissionNs > 0))
      throw src.error(['scheme', 'deltaAdmission'], `must be > 0, got ${sc.deltaAdmission}`);
  }
  return {
    kind: 'harmony',
    K,
    deltaAdmissionNs,
    multiSlot: sc.multiSlot ?? HARMONY_DEFAULTS.multiSlot,
    controlShare: sc.controlShare ?? HARMONY_DEFAULTS.controlShare,
    onReject: sc.onReject ?? HARMONY_DEFAULTS.onReject,
    rejectAfter: sc.rejectAfter ?? HARMONY_DEFAULTS.rejectAfter,
    retries: sc.retries ?? HARMONY_DEFAULTS.retries,
    bounds,
  };
}

/** Theorem 3.1's figures and the hosts' timer bounds for a topology at K virtual links per link. */
export function harmonyBounds(topo: Topology, K: number): HarmonyBounds {
  const { diameter, minRateBps, hostRateBps, maxPropNs } = pathFigures(topo);
  const switchesOnPath = diameter - 1;
  const p = WireSize.Mtu;
  const mtuNs = (8e9 * p) / minRateBps;
  const H = Math.max(0, switchesOnPath);
  const delayBoundNs = ((H * (H + 1) * (K - 1)) / 2) * mtuNs;
  const linksOnPath = H + 1;
  const oneWayNs = linksOnPath * (maxPropNs + mtuNs) + delayBoundNs + H * mtuNs;
  const baseRttNs = 2 * linksOnPath * maxPropNs + linksOnPath * (mtuNs + (8e9 * WireSize.Small) / minRateBps);
  return {
    switchesOnPath: H,
    minRateBps,
    hostRateBps,
    maxPropNs,
    queueBoundBytes: H * (K - 1) * p,
    delayBoundNs,
    oneWayNs,
    baseRttNs,
    bdpBytes: Math.ceil((hostRateBps * baseRttNs) / 8e9),
  };
}
