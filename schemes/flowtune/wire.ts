/**
 * Flowtune's wire (TR'16 §2, §6.2): the configs the orchestrator hands the allocator and the hosts,
 * and the control messages they exchange as control frames over the fabric. The allocator sits on
 * the spines (a fast link to each, §6.2); a host reaches it through its ToR and one spine.
 *
 * Host → allocator (`Notify`): flowlet starts (16 bytes each on the paper's wire: flow, destination,
 * size, the spine its path takes) and ends (4 bytes), numbered; every message carries every event not
 * yet acknowledged, so a lost one is made good by the next. It also acknowledges the allocator's
 * updates, and may ask for every rate again (`y`, after a lapse).
 * Allocator → host (`Update`): rates (6 bytes each), numbered when they carry any, the count of the
 * host's events received (cumulative), and the spines the allocator reaches.
 */

export const FLOWTUNE_KIND = 'flowtune';

export type Normalize = 'f-norm' | 'u-norm' | 'none';

/**
 * The fabric as the allocator models it: every link a flowlet can cross. Hosts hang off racks (ToRs);
 * racks reach each other through `spines` (none: one switch, a star, or one rack).
 */
export interface FlowtuneFabric {
  /** per host: its rack, and its link rate (bit/s) */
  hosts: Array<{ rack: number; rateBps: number }>;
  /** racks' up and down link rates to the spines (bit/s) */
  fabricRateBps: number;
  racks: number;
  spines: number;
  /** per rack: the ToR port to each spine (host → allocator source routes) */
  leafUp: number[][];
  /** per spine: the port to each rack */
  spineDown: number[][];
  /** per spine: its port to the allocator; with no spines, the one switch's */
  toAllocator: number[];
  /** per host: the ToR port that reaches it */
  hostPort: number[];
}

export interface FlowtuneTiming {
  /** rates lapse this long after the allocator was last heard (§2: "a temporary lifespan") */
  leaseNs: number;
  /** control retransmission timeout, first and last (§6.2: TCP with a 20 µs minRTO and 30 µs maxRTO) */
  minRtoNs: number;
  maxRtoNs: number;
  /** the priority class of control frames (notifications, updates): the data's, or strict priority */
  controlPriority: number;
}

export interface FlowtuneAllocatorConfig extends FlowtuneTiming {
  gamma: number;
  iterationNs: number;
  threshold: number;
  /** the share of every link's capacity left unallocated */
  headroom: number;
  normalize: Normalize;
  fabric: FlowtuneFabric;
  /** the allocator tells a host with flowlets it has heard nothing for this long that it is alive */
  heartbeatNs: number;
}

export interface FlowtuneHostConfig extends FlowtuneTiming {
  allocator: number;
  fabric: FlowtuneFabric;
  /** round trip of an empty fabric's longest path: the window a paced flow needs, and the fallback's */
  rttNs: number;
}

/**
 * Source route of a data frame from `src` to `dst` through `spine` (null inside a rack or with no
 * spines: table routing finds the one path).
 */
export function dataRoute(f: FlowtuneFabric, src: number, dst: number, spine: number): number[] | null {
  const rs = f.hosts[src].rack;
  const rd = f.hosts[dst]?.rack;
  if (rd === undefined || rs === rd || f.spines === 0) return null;
  return [f.leafUp[rs][spine], ...downRoute(f, dst, spine)];
}

/** Source route from `spine` (with no spines: the one switch) down to host `dst`. */
export function downRoute(f: FlowtuneFabric, dst: number, spine: number): number[] {
  if (f.spines === 0) return [f.hostPort[dst]];
  return [f.spineDown[spine][f.hosts[dst].rack], f.hostPort[dst]];
}

/** Source route from host `src` to the allocator through `spine` (with no spines: the one switch's port). */
export function allocatorRoute(f: FlowtuneFabric, src: number, spine: number): number[] {
  if (f.spines === 0) return [f.toAllocator[0]];
  return [f.leafUp[f.hosts[src].rack][spine], f.toAllocator[spine]];
}

/** Control message kinds (field `ft`). */
export const Ft = { Notify: 1, Update: 2 } as const;

/** a flowlet starts: [0, flow, dst, size, spine]; ends: [1, flow] */
export type FlowletEvent = [0, number, number, number, number] | [1, number];

export interface NotifyMessage {
  ft: 1;
  /** sequence number of the first event in `e` */
  b: number;
  e: FlowletEvent[];
  /** updates received: the highest update number (cumulative) */
  k: number;
  /** after a lapse: send every rate again */
  y?: 1;
}

export interface UpdateMessage {
  ft: 2;
  /** update number (0: carries no rate, not acknowledged) */
  n: number;
  /** [flow, rate in bit/s] */
  r: Array<[number, number]>;
  /** the host's events received so far (the next expected sequence number) */
  k: number;
  /** spines the allocator reaches, as a bit mask */
  u: number;
  /**
   * the allocator process's incarnation (its start time, ns): a host that sees a new one announces
   * its flowlets again, as a new process knows none of them
   */
  i: number;
}

export type FlowtuneMessage = NotifyMessage | UpdateMessage;

const isInt = (v: unknown, lo = 0, hi = 2 ** 31): v is number =>
  typeof v === 'number' && Number.isInteger(v) && v >= lo && v <= hi;

function isEvent(e: unknown): e is FlowletEvent {
  if (!Array.isArray(e)) return false;
  if (e[0] === 1) return e.length === 2 && isInt(e[1]);
  return (
    e[0] === 0 &&
    e.length === 5 &&
    isInt(e[1]) &&
    isInt(e[2]) &&
    typeof e[3] === 'number' &&
    e[3] > 0 &&
    Number.isFinite(e[3]) &&
    isInt(e[4], 0, 31)
  );
}

/** a well-formed Flowtune message (anything else on the wire is counted and dropped) */
export function isFlowtune(m: unknown): m is FlowtuneMessage {
  if (typeof m !== 'object' || m === null) return false;
  const x = m as Record<string, unknown>;
  if (x.ft === Ft.Notify)
    return isInt(x.b) && isInt(x.k) && Array.isArray(x.e) && x.e.length <= 4096 && x.e.every(isEvent);
  if (x.ft === Ft.Update)
    return (
      isInt(x.n) &&
      isInt(x.k) &&
      isInt(x.u, 0, 2 ** 32) &&
      Number.isSafeInteger(x.i) &&
      (x.i as number) >= 0 &&
      Array.isArray(x.r) &&
      x.r.length <= 4096 &&
      x.r.every(
        (r) => Array.isArray(r) && r.length === 2 && isInt(r[0]) && typeof r[1] === 'number' && r[1] >= 0,
      )
    );
  return false;
}

/** TCP/IP headers each control message pays (§6.2: "plus the standard TCP/IP overheads") */
export const CONTROL_HEADER = 40;
const MIN_FRAME = 64;

/** Wire bytes of a message: §6.2's 16 bytes a start, 4 an end, 6 a rate, over the headers. */
export function flowtuneBytes(m: FlowtuneMessage): number {
  let body = 0;
  if (m.ft === Ft.Notify) for (const e of m.e) body += e[0] === 0 ? 16 : 4;
  else body = 6 * m.r.length;
  return Math.max(MIN_FRAME, CONTROL_HEADER + body);
}

/** The spine of flow `flow` from `src` among the live ones of `mask` (-1: none), ECMP-like. */
export function pickSpine(flow: number, src: number, dst: number, spines: number, mask: number): number {
  if (spines === 0) return 0;
  const live: number[] = [];
  for (let s = 0; s < spines; s++) if (mask & (1 << s)) live.push(s);
  if (live.length === 0) return -1;
  let h =
    (Math.imul(flow + 1, 0x9e3779b1) ^ Math.imul(src + 3, 0x85ebca77) ^ Math.imul(dst + 7, 0xc2b2ae3d)) >>> 0;
  h = (h ^ (h >>> 15)) >>> 0;
  h = Math.imul(h, 0x2c1b3c6d) >>> 0;
  h = (h ^ (h >>> 12)) >>> 0;
  return live[h % live.length];
}

/** every spine of `n` (n ≤ 31) */
export const allSpines = (n: number): number => (n >= 31 ? 0x7fffffff : (1 << n) - 1);
