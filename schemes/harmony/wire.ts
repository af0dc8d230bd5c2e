/**
 * Harmony's packets and configs (NSDI'24 §3.1–§3.2), shared by the switch module (schemes/harmony/switch/) and
 * the host transport (schemes/harmony/host/). Control packets are `FrameType.Control` frames whose
 * `x` is a `HarmonyControl`; message data are `FrameType.Data` frames in the highest class whose `x` is
 * a `HarmonyData`, source-routed along the path the rsvp reserved.
 */

export const HARMONY_KIND = 'harmony';

/** Control packet kinds (`x.h`). */
export const Ctl = {
  /** sender → receiver on message arrival (table-routed, second class) */
  Request: 1,
  /** receiver → sender, one per host slot; every switch on the way reserves a virtual link */
  Rsvp: 2,
  /** frees what it names: from a switch without a free VL, a sender without a free slot, a receiver at δadmission */
  Reject: 3,
  /** sender → receiver along the reserved path after a grant's last byte: frees the VLs and the slot */
  Complete: 4,
  /** receiver → sender: the grant is closed (`done`: every byte of the message arrived) */
  CompleteBack: 5,
  /** receiver → sender: data it expected did not come, or came incomplete (§3.2 fast failure reaction) */
  Failure: 6,
  /** receiver → sender: give back the extra grant it names (a new message waits for its slot) */
  Revoke: 7,
} as const;

/** §3.2 priorities: data, rsvp, complete highest; request, reject, failure second; best effort third. */
export const HarmonyClass = { Data: 7, Second: 6, BestEffort: 0 } as const;

/**
 * One switch's reservation on an rsvp's path, in rsvp order (receiver side first):
 * [switch id, data egress port (the port the rsvp came in on), port the VL is on (the rsvp's egress), VL id].
 */
export type Hop = [number, number, number, number];

/** Why a reject was sent (`x.w`). */
export const RejectWhy = {
  /** a switch had no free virtual link toward the sender */
  Network: 1,
  /** the receiver could not admit the request within δadmission */
  Admission: 2,
  /** the sender had no free slot */
  SenderBusy: 3,
  /** the sender had nothing left for this grant (the message finished, failed or moved on) */
  Stale: 4,
  /** the sender gave the grant up after a failure of its message */
  Aborted: 5,
  /** an extra grant of multi-slot allocation taken back for a new message (sender, switch or receiver) */
  Revoked: 6,
} as const;

/** Why a failure was inferred (`x.w` of a Failure packet, and the host's record). */
export const FailureWhy = {
  /** the receiver's data for a grant stopped coming within the bound */
  Silent: 1,
  /** every grant of the message closed with bytes missing */
  Incomplete: 2,
  /** the sender heard no rsvp, reject or complete for a request within the bound */
  NoAnswer: 3,
  /** the sender heard no complete for a grant it completed within the bound */
  NoComplete: 4,
} as const;

export interface HarmonyControl {
  /** kind, `Ctl` */
  h: number;
  /** grant key (receiver-unique); 0 on a request */
  g: number;
  /** attempt of the message this concerns (a retried message asks again with the next attempt) */
  a: number;
  /** request: message size, bytes; rsvp: the grant's byte budget (-1: the rest of the message) */
  b?: number;
  /** rsvp and what follows its path: the reservations so far */
  hops?: Hop[];
  /** reject / failure: why */
  w?: number;
  /** a network reject: the switch that had no free virtual link */
  n?: number;
  /** request: ns left of the message's admission window (rejectAfter window): the receiver waits no longer */
  r?: number;
  /** complete-back: every byte of the message arrived */
  done?: 1;
}

export interface HarmonyData {
  /** grant key the frame is sent on: switches refresh the reservation's soft state with it */
  g: number;
  /** network queueing met so far, ns, added by every switch at departure */
  qd: number;
}

/** A switch's Harmony config (node config `scheme.config`). */
export interface HarmonySwitchConfig {
  /** virtual links per physical link */
  K: number;
  /** a reservation nothing refreshed for this long (switch clock) is reclaimed when a VL is needed */
  holdNs: number;
  /** Theorem 3.1 bound on data-class bytes queued at any switch port */
  queueBoundBytes: number;
  /** share of every port's link reserved for second-class control (§3.2; switch/discipline.ts) */
  controlShare: number;
}

/** A host's Harmony config. */
export interface HarmonyHostConfig {
  K: number;
  deltaAdmissionNs: number;
  multiSlot: boolean;
  /** pacing rate of one slot, bit/s: B (1 - controlShare) / K */
  slotRateBps: number;
  /** extra slots of multi-slot allocation carry this many bytes (one BDP) */
  bdpBytes: number;
  /** bound on one frame's network delay between any two hosts (propagation, serialization, Theorem 3.1 queueing) */
  oneWayNs: number;
  /**
   * bound on how much two frames of one slot can differ in network delay: Theorem 3.1 queueing, one
   * best-effort frame per switch, the other K-1 slots' frames in the sender's NIC
   */
  jitterNs: number;
  /** a rejected or failed message, once its retries are spent: sent best effort, or reported and dropped */
  onReject: 'best-effort' | 'give-up';
  /**
   * window: a message is rejected only when it has not started within δadmission of its arrival, and
   * asks again after every reject inside that window (§3.1–§3.2, §5); retries: after `retries` asks
   */
  rejectAfter: 'window' | 'retries';
  /** asks of a failed message (and with rejectAfter retries, of a rejected one) beyond the first */
  retries: number;
}
