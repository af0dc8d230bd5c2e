/**
 * Harmony's host state (host/transport.ts runs it): how a message ended (`Outcome`), the host's
 * report section, a sending message and its grants (`OutMsg`, `SendGrant`), a receiving message and
 * its grants (`InMsg`, `RecvGrant`), and the names and key space they share.
 */
import { type FlowSpec, type SenderStats, segmentCount, type Timer } from '../../../sdk/node.js';
import { FailureWhy, type Hop } from '../wire.js';

/** How a message ended, in the host's section (`outcomes`). */
export const Outcome = { Complete: 1, Rejected: 2, Failed: 3, BestEffort: 4 } as const;

/** `scheme` section of a host report, read by schemes/harmony/definition/summary.ts. */
export interface HarmonyHostSection {
  submitted: number;
  completed: number;
  /** messages whose last Harmony attempt was rejected (then sent best effort or given up) */
  rejected: number;
  failed: number;
  /** asks beyond a message's first */
  retried: number;
  /** messages handed to the best-effort transport */
  bestEffort: number;
  rsvpSent: number;
  rejectedAtHost: number;
  /** rsvps this sender turned down: no free slot, or nothing left for them */
  rejectedBySender: number;
  /** extra grants of multi-slot allocation */
  extraGrants: number;
  /** extra grants this host took back for a new message: as sender (a base rsvp) and as receiver (a request) */
  revoked: number;
  /**
   * [physical time, flow, FailureWhy, physical time the first missing arrival was due (-1: not a
   * data stream's silence)] of every failure this host inferred
   */
  failures: Array<[number, number, number, number]>;
  /**
   * sender side: [flow, Outcome, Harmony attempts, physical time of the outcome, switches on its path,
   * RejectWhy of the reject that ended it (0: none), the switch that refused it (-1: none)]
   */
  outcomes: Array<[number, number, number, number, number, number, number]>;
  /** receiver side: the worst network queueing (ns) any data frame of a message met, [flow, ns] */
  queueing: Array<[number, number]>;
  /** sender side: [flow, physical time its first data frame left] (the wait for a reservation, Fig. 6c) */
  firstSent: Array<[number, number]>;
  /** messages still in progress at the end: [flow, attempts] */
  open: Array<[number, number]>;
}

export class OutMsg implements SenderStats {
  readonly nSeg: number;
  /** Harmony attempts so far (the request of attempt a carries a) */
  attempt = 0;
  /** next segment any grant sends */
  next = 0;
  readonly grants = new Set<SendGrant>();
  ended = false;
  /** waits for a send slot before asking again */
  waiting = false;
  answer: Timer | null = null;
  /** rejectAfter window: node-clock time its admission window closes (-1: no window) */
  deadline = -1;
  /** its window closes while it waits for a send slot */
  slotTimer: Timer | null = null;
  /** the last reject's RejectWhy (0: none since its last failure) and the switch that sent it */
  why = 0;
  whySwitch = -1;
  /** switches on the path of its last grant (-1: none yet) */
  switches = -1;
  framesSent = 0;
  retransmits = 0;
  timeouts = 0;

  constructor(readonly spec: FlowSpec) {
    this.nSeg = segmentCount(spec.size);
  }
}

export class SendGrant {
  pace: Timer | null = null;
  back: Timer | null = null;
  closed = false;
  completed = false;

  constructor(
    readonly key: number,
    readonly msg: OutMsg,
    readonly hops: Hop[],
    /** bytes it may still carry (Infinity: the rest of the message) */
    public budget: number,
  ) {}

  /** the data path, sender to receiver: every switch's data egress, first switch first */
  route(): number[] {
    return this.hops.map((h) => h[1]).reverse();
  }
}

export class InMsg {
  readonly nSeg: number;
  readonly got: Uint8Array;
  count = 0;
  delivered = false;
  attempt = 0;
  readonly grants = new Set<RecvGrant>();
  /** a complete of the current attempt arrived: a grant closing later with bytes missing is a loss */
  sawComplete = false;
  /** the sender had nothing for an extra grant: give it no more */
  noExtra = false;
  /** an extra grant of it was refused: none before this node-clock time */
  extraAfter = 0;
  /** ns left of its sender's admission window when its request was sent (-1: none) */
  window = -1;
  maxQueueingNs = 0;
  readonly via: number[] = [];
  /** physical time a segment not seen before last arrived */
  lastNew = -1;

  constructor(
    readonly id: number,
    readonly src: number,
    readonly size: number,
  ) {
    this.nSeg = segmentCount(size);
    this.got = new Uint8Array(this.nSeg);
  }
}

export class RecvGrant {
  watchdog: Timer | null = null;
  closed = false;
  /** asked back from its sender for a waiting request: the slot frees when the sender's reject comes */
  revoking = false;
  /** physical time the next data frame was due (-1: before the first) */
  due = -1;
  constructor(
    readonly key: number,
    readonly msg: InMsg,
    /** an extra slot of multi-slot allocation */
    readonly extra: boolean,
  ) {}
}

export interface Pending {
  msg: InMsg;
  timer: Timer;
}

export const FAILURE_NAMES: Record<number, string> = {
  [FailureWhy.Silent]: 'silent',
  [FailureWhy.Incomplete]: 'incomplete',
  [FailureWhy.NoAnswer]: 'no-answer',
  [FailureWhy.NoComplete]: 'no-complete',
};

/** Grant keys are unique in the fabric: the receiver's id in the high part. */
export const KEY_SPACE = 1 << 24;
