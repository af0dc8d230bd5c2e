/**
 * ExpressPass's packets and configs (Cho et al., SIGCOMM'17, as the TOP paper §2 describes it), shared
 * by the switch module (schemes/expresspass/switch/) and the host transport (schemes/expresspass/host/).
 * Credits are `FrameType.Control` frames in their own class, which every switch port rate-limits to
 * the share of its link that makes the data they return fill the rest; requests are control frames in
 * the top class; data frames answer one credit each and carry its sequence number and send time.
 */

export const EXPRESSPASS_KIND = 'expresspass';
/** TOP (Token-Oriented in-network Prioritization, TPDS'20): ExpressPass with prioritized tokens */
export const TOP_KIND = 'top';

/** Control packet kinds (`x.xp`). */
export const XpCtl = {
  /** sender → receiver: a flow of `b` bytes wants credits */
  Request: 1,
  /** receiver → sender: one full data frame may go */
  Credit: 2,
  /** TOP §4.4, receiver → sender: segment `m` is lost (later ones arrived); a signal packet */
  Loss: 3,
} as const;

/**
 * Classes: requests (TOP's signal packets) highest, credits (rate-limited) next, data lowest. TOP's
 * tokens use classes 1..6 (`TopClasses`), 6 the most urgent.
 */
export const XpClass = { Request: 7, Credit: 6, Data: 0 } as const;
export const TopClasses = { lo: 1, hi: 6 } as const;
/**
 * TOP with low-priority unscheduled packets (§4.4, optional): they take Q0, whose queue holds one
 * full-length packet (so they are sent opportunistically and never queue), scheduled data moves to Q1
 * and the tokens to Q2..Q6.
 */
export const TopUnscheduled = { unscheduled: 0, data: 1, lo: 2 } as const;

/** ExpressPass's credit on the wire: 84 bytes (a minimum Ethernet frame with preamble and gap). */
export const CREDIT_BYTES = 84;

export interface XpControl {
  xp: number;
  /** request: flow size, bytes */
  b?: number;
  /** request (TOP): packets the sender sent unscheduled right behind it */
  u?: number;
  /** request (TOP, deadline objective): ns left until the flow's deadline when the request left */
  dl?: number;
  /** loss signal (TOP): the segment the receiver misses */
  m?: number;
  /** credit: its sequence number in the flow's credit stream */
  c?: number;
  /** credit: the receiver's clock when it was sent */
  ts?: number;
  /** credit: the lowest segment the receiver still misses (the sender retransmits from there) */
  ack?: number;
  /** measurement only, never read by protocol code: the physical time the credit was sent */
  pt?: number;
  /** credit: the flow's path epoch, which the switches hash with the flow (a restarted stream takes another path) */
  e?: number;
  /**
   * credit (TOP with `classes: ideal`): its flow's packets left when it was sent, the rank by which the
   * ports order tokens (the fewest first)
   */
  k?: number;
}

export interface XpData {
  /** the credit this frame answers (0: an unscheduled packet, which answers none) */
  c: number;
  /** that credit's send time, receiver's clock: the receiver's RTT sample */
  ts: number;
  /** that credit's path epoch: the data goes back the way the credit came */
  e?: number;
}

/** A switch's ExpressPass config. */
export interface XpSwitchConfig {
  /** share of each port's rate credits may use: credit / (credit + full data frame) */
  creditShare: number;
  /** credits a port's credit queue holds; more are dropped (the sender then gets fewer credits) */
  queueCredits: number;
  /** credits the limiter may send back to back after idling */
  burstCredits: number;
  /** TOP: the token classes sharing the limiter (ExpressPass: the one credit class) */
  tokenClasses?: [number, number];
  /** TOP's hypothetical switch (R2): tokens waiting longer than this are dropped (0: never) */
  maxSojournNs?: number;
  /** TOP's unscheduled packets: their class, whose queue holds one full-length packet (switch ports only) */
  unscheduledClass?: number;
  /**
   * TOP with `classes: ideal` (§3.2's ideal switch, "an infinite number of priorities"): the one token
   * class holds this many tokens ordered by their rank `k`, the fewest packets left first, and a full
   * queue drops its least urgent token (0 or absent: FIFO classes)
   */
  rankedTokens?: number;
}

/** TOP's receiver and sender rules (§3.1, §4.3). */
export interface TopHostConfig {
  /** `classes: ideal`: every token in the top class, carrying its flow's packets left as its rank (`k`) */
  ranked?: boolean;
  /**
   * the K−1 class boundaries, packets left, ascending: a flow with x packets left gets the class
   * (number of boundaries ≤ x) below the top, so K classes from TopClasses.hi down
   */
  thresholds: number[];
  /**
   * §4.3 remedy: a sender drops a token older than this by its own clock against the token's stamp
   * (0: off): the longest path's threshold, for a receiver `expiryByPeerNs` does not name
   */
  expiryNs: number;
  /** §5.4: each receiver's own threshold T = d + |P|·t_h over the path its tokens take, by node id */
  expiryByPeerNs?: Record<number, number>;
  /** TOP's fixed target token loss (ExpressPass scales it with the rate) */
  targetLoss: number;
  /** §4.4: a flow of at most this many packets sends them all unscheduled at its start (0: off) */
  unscheduled: number;
  /**
   * what the tokens serve: `fct` (SRPT: fewest packets left first, `thresholds`) or `deadline` (EDF:
   * earliest deadline first among flows that can still meet theirs, `deadlineThresholdsNs`)
   */
  objective: 'fct' | 'deadline';
  /** deadline objective: the K−1 class boundaries on time left to the deadline, ns, ascending */
  deadlineThresholdsNs: number[];
}

/** A host's ExpressPass config: the receiver's credit feedback control (ExpressPass Algorithm 1). */
export interface XpHostConfig {
  /** the NIC limits credits as a switch port does: the last hop's data is bounded by them */
  nic: XpSwitchConfig;
  /** the highest credit rate, credits/s: the host link's rate times `creditShare`, in credits */
  maxCreditsPerS: number;
  /** initial credit rate as a fraction of the highest */
  alpha: number;
  /** initial aggressiveness w, its floor and ceiling */
  wInit: number;
  wMin: number;
  wMax: number;
  /** target credit loss = (1 − rate/max) × this */
  targetLossScaling: number;
  /** credit pacing jitter: each gap times (1 + uniform(−jitter, jitter)) */
  jitter: number;
  /** a request no credit answered for this long is sent again; credits no data answered for this long stop */
  timeoutNs: number;
  /** TOP: token priorities and expiry */
  top?: TopHostConfig;
}
