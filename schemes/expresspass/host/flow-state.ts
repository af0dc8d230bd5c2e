/**
 * ExpressPass's per-flow state on a host (host/transport.ts runs it): a sending flow's (`XpSend`), a
 * receiving flow's with its credit rate and feedback state (`XpRecv`), and the host's report section.
 */
import { type FlowSpec, type SenderStats, segmentCount, type Timer } from '../../../sdk/node.js';
import type { XpHostConfig } from '../wire.js';

/** `scheme` section of a host report, read by schemes/expresspass/definition/summary.ts. */
export interface XpHostSection {
  requestsSent: number;
  creditsSent: number;
  /** credits that reached this sender */
  creditsReceived: number;
  /** credits that found nothing to send */
  creditsWasted: number;
  dataSent: number;
  /** data frames that reached this receiver, duplicates included */
  dataReceived: number;
  retransmits: number;
  /** credit streams stopped because no data answered them */
  stalled: number;
  rateUpdates: number;
  /** receiver side: [flow, credits lost / credits sent over the flow] */
  creditLoss: Array<[number, number]>;
  /** TOP §4.3, sender side: tokens judged by their age (own clock minus the receiver's stamp) */
  expiryChecks: number;
  tokensExpired: number;
  /** expired by the clocks but younger than the threshold in truth (clock error made them invalid) */
  expiredValid: number;
  /** used though older than the threshold in truth */
  staleUsed: number;
  /** the largest |judged age − true age| seen at an expiry check, ns */
  maxTokenClockErrNs: number;
  /** TOP §4.4: data frames sent unscheduled at a short flow's start */
  unscheduledSent: number;
  /** TOP §4.4, receiver side: loss signal packets sent (a segment missing while later ones arrived) */
  lossSignals: number;
  /** TOP, sender side: segments sent again on the next token because a loss signal named them */
  signalResends: number;
}

export class XpSend implements SenderStats {
  readonly nSeg: number;
  next = 0;
  /** retransmission pointer, once every segment went once */
  retx = 0;
  /** node clock each segment last went at */
  readonly sentAt: Float64Array;
  askedAt = 0;
  /** TOP: node clock its segments went unscheduled at (-1: they did not) */
  unscheduledAt = -1;
  /** TOP: node clock of the flow's deadline (-1: none, or the objective ignores deadlines) */
  deadlineAt = -1;
  /** TOP: segments loss signals named, to go on the next tokens before any new one */
  readonly resend: number[] = [];
  /** requests sent so far */
  asks = 0;
  /** request to first credit, node clock (-1: none yet) */
  rtt = -1;
  done = false;
  request: Timer | null = null;
  framesSent = 0;
  retransmits = 0;
  readonly timeouts = 0;
  constructor(readonly spec: FlowSpec) {
    this.nSeg = segmentCount(spec.size);
    this.sentAt = new Float64Array(this.nSeg);
  }
}

export class XpRecv {
  readonly nSeg: number;
  readonly got: Uint8Array;
  count = 0;
  /** lowest segment not yet received */
  low = 0;
  delivered = false;
  readonly via: number[] = [];
  lastNew = -1;
  /** path epoch: bumped when a silent stream restarts */
  epoch = 0;
  /** credits/s */
  rate: number;
  w: number;
  canIncrease = false;
  nextCredit = 1;
  expected = 1;
  total = 0;
  dropped = 0;
  allTotal = 0;
  allDropped = 0;
  lastUpdate: number;
  rtt = -1;
  /** node clock of the last data frame (or of the request) */
  lastData: number;
  pace: Timer | null = null;
  /** TOP: node clock before which the flow's own rate allows no token */
  nextAt = 0;
  /** TOP: [credit number, node clock] of tokens sent and not yet answered, oldest first */
  readonly outstanding: Array<[number, number]> = [];
  /** TOP: unscheduled packets announced and not yet here, and until when they count as on their way */
  unscheduled = 0;
  unscheduledUntil = 0;
  /** TOP, deadline objective: node clock of the flow's deadline (+∞: none) */
  deadlineAt = Number.POSITIVE_INFINITY;
  /** TOP: node clock each missing segment was last signalled at (allocated at the first loss) */
  signalledAt: Float64Array | null = null;

  constructor(
    readonly id: number,
    readonly src: number,
    size: number,
    cfg: XpHostConfig,
    now: number,
  ) {
    this.nSeg = segmentCount(size);
    this.got = new Uint8Array(this.nSeg);
    this.rate = cfg.alpha * cfg.maxCreditsPerS;
    this.w = cfg.wInit;
    this.lastUpdate = now;
    this.lastData = now;
  }
}
