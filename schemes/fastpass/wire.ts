/**
 * Fastpass's wire: the configs the orchestrator hands the arbiter and the hosts, and the Fastpass
 * Control Protocol (SIGCOMM'14 §5.3) messages they exchange as control frames over the fabric.
 * Counts are cumulative per destination, so a repeated or lost message is made good by the next one;
 * every message of a session carries the arbiter's nonce, and a RESET (with the arbiter's term, raised
 * at every takeover, §5.1) starts a new session.
 */

export const FASTPASS_KIND = 'fastpass';

/**
 * The fabric as the arbiter routes it: racks (ToRs) under a tier of `planes` switches each (the spines
 * of a leaf-spine; in a FatTree, every pod's aggregation switch i is plane i), and in a FatTree the
 * cores above, `pods.coresPerAgg` to each aggregation switch (§4: "paths can be assigned
 * hierarchically").
 */
export interface FastpassFabric {
  /** per host: its rack and the ToR port that reaches it */
  hosts: Array<{ rack: number; port: number }>;
  /** per rack: the ToR port to each plane (spine, or the pod's aggregation switch) */
  leafUp: number[][];
  /** two tiers: per spine, the port to each rack (empty in a FatTree) */
  spineDown: number[][];
  /** timeslots a fabric link carries per host timeslot (fabric rate / host rate, at least 1) */
  spineFactor: number;
  /** three tiers (a FatTree) */
  pods?: {
    /** per rack: its pod, and its index among the pod's racks */
    podOf: number[];
    rackIndex: number[];
    /** [pod][plane][rack index]: the aggregation switch's port down to that rack */
    aggDown: number[][][];
    /** [pod][plane][c]: the aggregation switch's port up to core plane · coresPerAgg + c */
    aggUp: number[][][];
    /** [core][pod]: the core's port down to that pod's aggregation switch */
    coreDown: number[][];
    coresPerAgg: number;
  };
  /** per arbiter (by rank): its rack and the ToR port that reaches it */
  arbiters: Array<{ id: number; rack: number; port: number }>;
}

export interface FastpassTiming {
  /** one MTU at the host link rate (§2) */
  slotNs: number;
  /** how far ahead of its start a timeslot is allocated (§5.1: 65 µs) */
  horizonNs: number;
}

/** Batches of timeslots the arbiter allocates before it tells the sources (one message per source). */
export function notifyBatches(t: FastpassTiming): number {
  // the last batch told must still reach its source with half the horizon to spare
  return Math.max(1, Math.min(4, Math.floor(t.horizonNs / 2 / (8 * t.slotNs))));
}

/**
 * Message-level scheduling (Harmony NSDI'24 footnote 3's extension of Fastpass): each flow is one
 * message whose timeslots the arbiter allocates consecutively, and a message not allocated within
 * `admissionNs` of its request is rejected (0: it waits for ever).
 */
export interface FastpassMessageMode {
  admissionNs: number;
}

export interface FastpassArbiterConfig extends FastpassTiming {
  rank: number;
  /**
   * message-level scheduling (absent: per-packet timeslots, the paper's Fastpass); `lagSlots`: how
   * many timeslots later a cross-rack packet reaches its destination's ToR port than an in-rack one
   */
  messages?: FastpassMessageMode & { lagSlots: number };
  policy: 'max-min' | 'min-fct';
  /** share of each endpoint's timeslots left free for FCP's own frames on its link */
  fcpShare: number;
  fabric: FastpassFabric;
  /** primary's watchdog period and the silence after which a secondary takes over (§5.1: 100 µs, 1 ms) */
  watchdogNs: number;
  takeoverNs: number;
  /** fault isolation (§5.2): loss reports naming one spine from this many endpoints within the window */
  isolation: { reporters: number; windowNs: number; holdNs: number };
  /** batches allocated per notification */
  notifyBatches: number;
  /** the arbiter's worker cores on the compute model (§6.2): alloc-cores and pathsel-cores */
  cores: { alloc: number; pathsel: number };
}

export interface FastpassHostConfig extends FastpassTiming {
  /** per arbiter (by rank): its node id and source routes to it, one per spine (one inside a rack) */
  arbiters: Array<{ id: number; routes: number[][] }>;
  /** demands are gathered this long into one request (§2: "a few microseconds") */
  aggregateNs: number;
  /** FCP's retransmission timeout: a request not acknowledged, or demand not served, is asked again */
  timeoutNs: number;
  /** a timeslot reached later than this is not used; its packets are asked for again (§6.3) */
  lateNs: number;
  /** bytes the qdisc holds at most; beyond, packets are dropped (counted) */
  limitBytes: number;
  /** message-level scheduling: the host sends every flow itself as one message (absent: a qdisc only) */
  messages?: FastpassMessageMode;
}

/** FCP message kinds, in `x.fp` of a control frame. */
export const Fcp = {
  /** host → arbiters: cumulative timeslots requested per destination, and losses seen per spine */
  Request: 1,
  /** arbiter → host: timeslots allocated, with their routes, and the counts */
  Alloc: 2,
  /** arbiter → host: the counts, at once on a request */
  Ack: 3,
  /** arbiter → host: a new session (nonce) at this term; the host asks again from zero */
  Reset: 4,
  /** arbiter → arbiters: the primary is alive (§5.1) */
  Watchdog: 5,
  /** arbiter → host, message mode: these messages waited out the admission delay unallocated */
  Reject: 6,
} as const;

/** message mode: [flow (the message), destination, timeslots] a request asks for */
export type MessageAsk = [number, number, number];

/**
 * [spine, flow, segment, what]: `LossKind.Data`: the sender sent the segment again, its copy before
 * crossed `spine`; `LossKind.Ack`: the receiver got a segment it had, so the acknowledgement that
 * covered it (which crossed `spine`) was lost — the sender's report of that segment was no data loss
 */
export type LossReport = [number, number, number, number];
export const LossKind = { Data: 0, Ack: 1 } as const;
/** loss reports one request carries at most */
export const MAX_LOSS_REPORTS = 16;

/** [destination, requested (cumulative, as the arbiter has it), allocated (cumulative)] */
export type FcpCount = [number, number, number];

export type FcpMessage =
  | {
      fp: typeof Fcp.Request;
      /** the session's nonce (0: none yet) */
      n: number;
      /** [destination, cumulative timeslots requested] */
      d: Array<[number, number]>;
      /** the route index the request took: the arbiter answers along the same spine */
      ri: number;
      /** losses seen since the last request, for fault isolation (§5.2) */
      l: LossReport[];
      /** message mode: messages asked for (again until acknowledged) */
      m?: MessageAsk[];
    }
  | {
      fp: typeof Fcp.Alloc;
      n: number;
      /** [timeslot, destination, source route, spine (-1: inside the rack)] */
      a: Array<[number, number, number[], number]>;
      c: FcpCount[];
      /** message mode: the message (flow) of each entry of `a` */
      mf?: number[];
    }
  | {
      fp: typeof Fcp.Ack;
      n: number;
      c: FcpCount[];
      /** message mode: the messages the request asked for, heard */
      m?: number[];
    }
  | { fp: typeof Fcp.Reject; n: number; m: number[] }
  | { fp: typeof Fcp.Reset; n: number; t: number }
  | { fp: typeof Fcp.Watchdog; t: number; r: number };

const isInt = (v: unknown): v is number => Number.isInteger(v);
const isIntArray = (v: unknown): v is number[] => Array.isArray(v) && v.every(isInt);
const isTuples = (v: unknown, len: number): boolean =>
  Array.isArray(v) && v.every((e) => Array.isArray(e) && e.length === len && e.every(isInt));

/** A well-formed FCP message (fields of the right types; values are checked where they are used). */
export function isFcp(x: unknown): x is FcpMessage {
  if (typeof x !== 'object' || x === null) return false;
  const m = x as Record<string, unknown>;
  switch (m.fp) {
    case Fcp.Request:
      return (
        isInt(m.n) &&
        isInt(m.ri) &&
        isTuples(m.d, 2) &&
        isTuples(m.l, 4) &&
        (m.l as unknown[]).length <= MAX_LOSS_REPORTS &&
        (m.m === undefined || isTuples(m.m, 3))
      );
    case Fcp.Alloc:
      return (
        isInt(m.n) &&
        isTuples(m.c, 3) &&
        Array.isArray(m.a) &&
        m.a.every(
          (e) =>
            Array.isArray(e) &&
            e.length === 4 &&
            isInt(e[0]) &&
            isInt(e[1]) &&
            isIntArray(e[2]) &&
            isInt(e[3]),
        ) &&
        (m.mf === undefined || (isIntArray(m.mf) && m.mf.length === m.a.length))
      );
    case Fcp.Ack:
      return isInt(m.n) && isTuples(m.c, 3) && (m.m === undefined || isIntArray(m.m));
    case Fcp.Reject:
      return isInt(m.n) && isIntArray(m.m);
    case Fcp.Reset:
      return isInt(m.n) && isInt(m.t);
    case Fcp.Watchdog:
      return isInt(m.t) && isInt(m.r);
    default:
      return false;
  }
}

/** Wire size of an FCP frame: a small frame plus 8 bytes per entry (§7.3 counts FCP's own bytes). */
export function fcpBytes(m: FcpMessage): number {
  let entries = 0;
  if (m.fp === Fcp.Request) entries = m.d.length + m.l.length + (m.m?.length ?? 0);
  else if (m.fp === Fcp.Alloc) entries = m.a.length + m.c.length;
  else if (m.fp === Fcp.Ack) entries = m.c.length + (m.m?.length ?? 0);
  else if (m.fp === Fcp.Reject) entries = m.m.length;
  return 64 + 8 * entries;
}

/** Planes a rack reaches: spines, or aggregation switches of its pod. */
export function planes(f: FastpassFabric): number {
  return f.leafUp[0]?.length ?? 0;
}

/**
 * Source route from rack `from` to the ToR port `port` of rack `to`: through plane `plane` when they
 * differ, and in a FatTree between pods through that plane's core `core` (0 .. coresPerAgg - 1).
 */
export function routeVia(
  f: FastpassFabric,
  from: number,
  to: number,
  port: number,
  plane: number,
  core = 0,
): number[] {
  if (from === to) return [port];
  const up = f.leafUp[from][plane];
  const p = f.pods;
  if (p === undefined) return [up, f.spineDown[plane][to], port];
  const [pa, pb] = [p.podOf[from], p.podOf[to]];
  const down = p.aggDown[pb][plane][p.rackIndex[to]];
  if (pa === pb) return [up, down, port];
  return [up, p.aggUp[pa][plane][core], p.coreDown[plane * p.coresPerAgg + core][pb], down, port];
}

/**
 * A message-mode data frame's header (`x`): its size, and the queueing it met on the way (ns, added by
 * the switches: switch/stamp.ts). Here, as both the hosts and the switches read it.
 */
export interface MessageData {
  fm: number;
  qd: number;
}

export function isMessageData(x: unknown): x is MessageData {
  return typeof x === 'object' && x !== null && typeof (x as MessageData).fm === 'number';
}
