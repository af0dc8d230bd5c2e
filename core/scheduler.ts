/**
 * The per-process event scheduler in physical time (docs/architecture.md: time, and conservative and dilated time). Events sit in a binary heap ordered
 * by (time, key): the key is a fixed tie rule, never the order datagrams happened to arrive in — lane 0
 * for the orchestrator's timeline (applied first), lane 1 for the node's own events in the order they
 * were created, then one lane per ingress port in the order the peer sent the frames. Two drivers:
 * dilated (a real timer wakes the process for the earliest event, below) and conservative (no timer:
 * `runBefore(safe)` is called by core/sync.ts with the time no input can still undercut). An event runs with its own
 * stamped time as `now`, so emulated state (queues, links) evolves in physical time even when the
 * event loop is late; the fidelity monitor records by how much it was late. Causality misses are
 * counted where state would be corrupted by a late frame (an egress port that already accepted a
 * later frame, a host that already handled a later one), not here: frames for unrelated state may
 * arrive in any real order without harm.
 */
import { Histogram } from './histogram.js';
import type { PhysClock } from './time.js';

/** An event handler; `a` and `b` carry arguments so hot paths need no per-event closure. */
// biome-ignore lint/suspicious/noExplicitAny: event arguments are typed by the handler that receives them
export type EventFn = (now: number, a: any, b: any) => void;

interface Entry {
  t: number;
  /** tie key at equal t: lane * LANE + sequence within the lane */
  k: number;
  fn: EventFn | null; // null once cancelled
  a: unknown;
  b: unknown;
  /** the node's own code (a role's timer), which waits while the node computes; else hardware */
  cpu: boolean;
}

/**
 * How a node's computation costs fabric time (docs/compute.md): `none`, handlers are
 * instantaneous; `cost`, a scheme charges the modelled cost of its heavy operations
 * (`Scheduler.charge`); `measured`, each handler costs its own CPU time × `scale` (not reproducible).
 */
export type ComputeModel = 'none' | 'cost' | 'measured';

export interface ComputeSettings {
  model: ComputeModel;
  /** multiplies every cost: charged or measured (a slower or faster core than the reference) */
  scale: number;
}

export interface ComputeSnapshot {
  model: ComputeModel;
  /** fabric time the node's core spent computing */
  busyNs: number;
  /** handlers that cost time */
  charged: number;
  /** events that waited for the core, and the longest wait */
  waited: number;
  maxWaitNs: number;
  /** a scheme's worker cores (Scheduler.setCores): how many, and the work charged to them */
  pools?: Record<string, { cores: number; busyNs: number }>;
}

export interface Timer {
  readonly t: number;
}

export interface FidelitySnapshot {
  lateness: ReturnType<Histogram['snapshot']>;
  arrivalLateness: ReturnType<Histogram['snapshot']>;
  causalityMisses: number;
  framesHandled: number;
  eventsHandled: number;
}

/** Lateness histogram and causality-miss counter; one per process. */
export class FidelityMonitor {
  readonly lateness = new Histogram();
  /** how long after its stamped arrival time a frame's datagram was received (0 when early) */
  readonly arrivalLateness = new Histogram();
  causalityMisses = 0;
  framesHandled = 0;
  eventsHandled = 0;

  snapshot(): FidelitySnapshot {
    return {
      lateness: this.lateness.snapshot(),
      arrivalLateness: this.arrivalLateness.snapshot(),
      causalityMisses: this.causalityMisses,
      framesHandled: this.framesHandled,
      eventsHandled: this.eventsHandled,
    };
  }
}

/** Anything that can tell physical time: the real clock, or a test's manual clock. */
export interface TimeSource {
  now(): number;
  realMs(virtualNs: number): number;
}

/**
 * Real time's worth of backlog a late process handles before it yields to I/O again (see
 * `Scheduler.onWake`), ms: 0.5 ms is 50 ns of event time at tdf 10000, 250 ns at tdf 2000, and at tdf 1
 * (benchmarks: always "late") half a millisecond of backlog per pass, so throughput is unaffected.
 */
export const CATCHUP_SLICE_MS = 0.5;

/** Keys of one lane: 2^40 events per lane, 8191 lanes below 2^53. */
export const LANE = 2 ** 40;
/** Lane of timeline actions (faults, halts) delivered by the orchestrator. */
export const CONTROL_LANE = 0;
/** Lane of the node's own events. */
const LOCAL_KEY = LANE;
/** Lane of frames that came in on ingress port `port`. */
export function portLane(port: number): number {
  return (port + 2) * LANE;
}

export class Scheduler {
  readonly fidelity = new FidelityMonitor();
  /** Latest event time handled so far. */
  horizon = 0;
  /** Time of the event being handled (its stamp), for clocks that read "now" inside handlers. */
  current = 0;
  private heap: Entry[] = [];
  /**
   * conservative mode: the quiet events (`atQuiet`), which only observe, apart, so that what this
   * node can send next is read from `heap` alone (`nextLoudTime`); both share one key sequence and
   * run merged in (time, key) order, as if they were one heap
   */
  private quiet: Entry[] = [];
  private seq = LOCAL_KEY;
  /** conservative mode: no wall clock in the loop; `now()` is the time of the event being handled */
  readonly conservative: boolean;
  /** pause window [from, until): events due in it are handled at `until` (docs/architecture.md: conservative and dilated time) */
  private freezeFrom = Number.POSITIVE_INFINITY;
  private freezeUntil = Number.NEGATIVE_INFINITY;
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Number.POSITIVE_INFINITY;
  private immediate: NodeJS.Immediate | null = null;
  private running = false;
  private stopped = false;
  /** event time handled per catch-up pass (CATCHUP_SLICE_MS of real time) */
  private readonly slice: number;
  /** the compute model (conservative mode only): none leaves every path below as it was */
  private computeModel: ComputeModel = 'none';
  private computeScale = 1;
  /** the node's core is busy until then: its own code waits, hardware (ports, links, clocks) goes on */
  busyUntil = Number.NEGATIVE_INFINITY;
  /** the node's own code is running: the events it creates are its own, its sends wait for its work */
  private inCpu = false;
  /** sends of the code running now, released when its work ends */
  private readonly held: Array<{ fn: EventFn; a: unknown }> = [];
  /** when the work the code running now charged so far ends (it started at the code's time) */
  private chainEnd = 0;
  /** a scheme's worker cores: when each is free, and their work */
  private readonly pools = new Map<string, { free: number[]; busyNs: number }>();
  private readonly compute = { busyNs: 0, charged: 0, waited: 0, maxWaitNs: 0 };

  /**
   * @param clock the real clock of dilated mode (or a test's manual clock); null: conservative mode,
   *   where time is only what the events say (driven by `runBefore`)
   */
  constructor(
    readonly clock: TimeSource | PhysClock | null,
    private readonly manual = false,
  ) {
    this.conservative = clock === null;
    this.horizon = clock ? clock.now() : 0;
    this.current = this.horizon;
    // real ms -> event ns: realMs is linear, so one sample gives the ratio
    this.slice = clock ? CATCHUP_SLICE_MS / (clock.realMs(1) || 1) : 0;
  }

  now(): number {
    return this.clock ? this.clock.now() : this.current;
  }

  /** Sets the compute model; dilated mode ignores it (its handlers already take real time). */
  setCompute(c: ComputeSettings): void {
    if (!this.conservative || c.model === 'none') return;
    if (!(c.scale > 0)) throw new RangeError(`compute scale must be > 0, got ${c.scale}`);
    this.computeModel = c.model;
    this.computeScale = c.scale;
  }

  /** whether the node's code costs time here */
  get computes(): boolean {
    return this.computeModel !== 'none';
  }

  /**
   * A scheme's worker cores beside the node's main one (Fastpass's alloc- and pathsel-cores, say):
   * work charged to `pool` runs on its earliest free core while the main core goes on handling frames
   * and timers.
   */
  setCores(pool: string, n: number): void {
    if (!(Number.isInteger(n) && n >= 1))
      throw new RangeError(`${pool}: cores must be an integer >= 1, got ${n}`);
    this.pools.set(pool, { free: new Array<number>(n).fill(Number.NEGATIVE_INFINITY), busyNs: 0 });
  }

  /**
   * The code running now did `ns` of work (model `cost`; the other models ignore it), after the work
   * it charged before. On the main core (no `pool`) the node's later code waits for it; on a pool's core
   * only this code's sends do. Either way what this code sends leaves when its last work ends.
   */
  charge(ns: number, pool?: string): void {
    // outside the node's own code there is no work to charge
    if (this.computeModel !== 'cost' || !this.inCpu || !(ns > 0)) return;
    const cost = ns * this.computeScale;
    if (pool === undefined) {
      this.busy(cost);
      return;
    }
    const p = this.poolOf(pool);
    const c = earliest(p.free);
    p.free[c] = this.chainEnd = Math.max(this.chainEnd, p.free[c]) + cost;
    p.busyNs += cost;
    this.compute.charged++;
  }

  /**
   * Pieces of work that do not depend on each other (path selection of several timeslots), charged to
   * `pool` at once: each starts when the work charged before ends, on the earliest free core, and this
   * code's sends leave when the last piece ends.
   */
  chargeEach(pool: string, costs: readonly number[]): void {
    if (this.computeModel !== 'cost' || !this.inCpu || costs.length === 0) return;
    const p = this.poolOf(pool);
    const from = this.chainEnd;
    let end = from;
    for (const ns of costs) {
      if (!(ns > 0)) continue;
      const cost = ns * this.computeScale;
      const c = earliest(p.free);
      p.free[c] = Math.max(from, p.free[c]) + cost;
      p.busyNs += cost;
      if (p.free[c] > end) end = p.free[c];
    }
    this.chainEnd = end;
    this.compute.charged++;
  }

  private poolOf(pool: string): { free: number[]; busyNs: number } {
    const p = this.pools.get(pool);
    if (p === undefined) throw new Error(`no cores named '${pool}' (Scheduler.setCores)`);
    return p;
  }

  /** work on the main core, after what this code charged before */
  private busy(ns: number): void {
    this.busyUntil = this.chainEnd = Math.max(this.busyUntil, this.chainEnd) + ns;
    this.compute.busyNs += ns;
    this.compute.charged++;
  }

  computeSnapshot(): ComputeSnapshot {
    const snap: ComputeSnapshot = { model: this.computeModel, ...this.compute };
    if (this.pools.size > 0)
      snap.pools = Object.fromEntries(
        [...this.pools].map(([name, p]) => [name, { cores: p.free.length, busyNs: p.busyNs }]),
      );
    return snap;
  }

  /** a send of the node's own code waits for its work to end (EgressPort.send): true if held */
  hold(fn: EventFn, a: unknown): boolean {
    if (!this.inCpu) return false;
    this.held.push({ fn, a });
    return true;
  }

  /**
   * Runs the node's own code (a frame or a call for its role) at `now` under the compute model: it
   * waits while the core is busy, the events it creates are its own, and its sends leave when its work
   * ends. Without a model it simply runs.
   */
  runCode(now: number, fn: EventFn, a?: unknown, b?: unknown): void {
    if (this.computeModel === 'none' || this.inCpu) {
      fn(now, a, b);
      return;
    }
    if (this.busyUntil > now) {
      this.waited(this.busyUntil - now);
      this.push({ t: this.busyUntil, k: this.seq++, fn, a, b, cpu: true });
      return;
    }
    this.code(now, fn, a, b);
  }

  private waited(ns: number): void {
    this.compute.waited++;
    if (ns > this.compute.maxWaitNs) this.compute.maxWaitNs = ns;
  }

  private code(now: number, fn: EventFn, a: unknown, b: unknown): void {
    this.inCpu = true;
    this.chainEnd = now;
    const t0 = this.computeModel === 'measured' ? process.hrtime.bigint() : 0n;
    try {
      fn(now, a, b);
    } finally {
      this.inCpu = false;
      if (this.computeModel === 'measured')
        this.busy(Number(process.hrtime.bigint() - t0) * this.computeScale);
      const held = this.held;
      if (held.length > 0) {
        const end = this.chainEnd;
        if (end > now) {
          // hardware events at the end of the work, in the order the code sent
          for (const h of held) this.push({ t: end, k: this.seq++, fn: h.fn, a: h.a, b: null, cpu: false });
        } else {
          for (const h of held) h.fn(now, h.a, null);
        }
        held.length = 0;
      }
    }
  }

  /** Runs `fn` at physical time `t` (or as soon as possible if `t` has passed). */
  at(t: number, fn: EventFn, a?: unknown, b?: unknown): Timer {
    return this.atAs(this.inCpu, t, fn, a, b);
  }

  /** `at` for hardware (ports, links): never waits for the node's core, whoever schedules it. */
  atHardware(t: number, fn: EventFn, a?: unknown, b?: unknown): Timer {
    return this.atAs(false, t, fn, a, b);
  }

  /** `at` for an event that is the node's own code or not, as `cpu` says (a clock's re-armed timer). */
  atAs(cpu: boolean, t: number, fn: EventFn, a?: unknown, b?: unknown): Timer {
    const e: Entry = { t, k: this.seq++, fn, a, b, cpu };
    this.push(e);
    if (!this.manual && !this.running && this.heap[0] === e) this.arm();
    return e;
  }

  /**
   * `at` for an event that only observes: it reads state (a queue, a clock, a counter) and schedules
   * nothing but itself again, and never sends a frame. It runs exactly where `at` would run it, but
   * conservative synchronization does not wait for it or promise around it: what a node can send next
   * is its next loud event (`nextLoudTime`), so a sampler every 5 µs costs no datagrams.
   */
  atQuiet(t: number, fn: EventFn, a?: unknown, b?: unknown): Timer {
    if (!this.conservative) return this.at(t, fn, a, b);
    const e: Entry = { t, k: this.seq++, fn, a, b, cpu: this.inCpu };
    this.pushTo(this.quiet, e);
    return e;
  }

  /** whether the code running now is the node's own (its timers are) */
  get inCode(): boolean {
    return this.inCpu;
  }

  /** Runs `fn` at `t` with an explicit tie key (a frame: its port lane and link sequence; a timeline action). */
  atKeyed(t: number, k: number, fn: EventFn, a?: unknown, b?: unknown): Timer {
    const e: Entry = { t, k, fn, a, b, cpu: false };
    this.push(e);
    if (!this.manual && !this.running && this.heap[0] === e) this.arm();
    return e;
  }

  /** `atKeyed` for a frame whose arrival only observes (`atQuiet`): a keepalive on a link that stays up. */
  atKeyedQuiet(t: number, k: number, fn: EventFn, a?: unknown, b?: unknown): Timer {
    if (!this.conservative) return this.atKeyed(t, k, fn, a, b);
    const e: Entry = { t, k, fn, a, b, cpu: false };
    this.pushTo(this.quiet, e);
    return e;
  }

  /** Pause (conservative mode): events due in [from, until) are handled at `until`, in their order. */
  freeze(from: number, until: number): void {
    this.freezeFrom = from;
    this.freezeUntil = until;
  }

  /** `t`, or the end of the pause when `t` falls in it: nothing is handled before then. */
  settle(t: number): number {
    return t >= this.freezeFrom && t < this.freezeUntil ? this.freezeUntil : t;
  }

  /** Time of the earliest pending event (a pause moves it to the pause's end), or +Infinity. */
  nextTime(): number {
    const q = this.quiet;
    while (q.length > 0 && q[0].fn === null) this.popFrom(q);
    const loud = this.nextLoudTime();
    return q.length === 0 ? loud : Math.min(loud, this.settle(q[0].t));
  }

  /** Time of the earliest pending event that may send (every event but the quiet ones), or +Infinity. */
  nextLoudTime(): number {
    const h = this.heap;
    while (h.length > 0 && h[0].fn === null) this.pop();
    return h.length === 0 ? Number.POSITIVE_INFINITY : this.settle(h[0].t);
  }

  /**
   * Conservative mode: handles every event strictly before `limit` (an input may still bring one at
   * `limit` itself, which would have to be ordered among the others by its key).
   */
  runBefore(limit: number): void {
    if (this.stopped) return;
    this.running = true;
    const heap = this.heap;
    const quiet = this.quiet;
    try {
      for (;;) {
        // the earlier of the two heads, in the one (time, key) order
        const h =
          quiet.length > 0 && (heap.length === 0 || less(quiet[0], heap[0]))
            ? quiet
            : heap.length > 0
              ? heap
              : null;
        if (h === null || h[0].t >= limit) break;
        const e = this.popFrom(h);
        const fn = e.fn;
        if (fn === null) continue;
        if (e.t >= this.freezeFrom && e.t < this.freezeUntil) {
          e.t = this.freezeUntil;
          this.pushTo(h, e);
          continue;
        }
        // the node's own code waits for its core (in creation order at the end of the work)
        if (e.cpu && e.t < this.busyUntil) {
          this.waited(this.busyUntil - e.t);
          e.t = this.busyUntil;
          e.k = this.seq++;
          this.pushTo(h, e);
          continue;
        }
        this.handle(e, fn);
        if (this.stopped) break;
      }
    } finally {
      this.running = false;
    }
  }

  after(dt: number, fn: EventFn, a?: unknown, b?: unknown): Timer {
    return this.at(Math.max(this.horizon, this.now()) + dt, fn, a, b);
  }

  cancel(timer: Timer | null | undefined): void {
    if (timer) (timer as Entry).fn = null;
  }

  /** Stops the scheduler: no more events run, the real timer is released. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = null;
    this.immediate = null;
    this.heap.length = 0;
    this.quiet.length = 0;
  }

  get pending(): number {
    return this.heap.length + this.quiet.length;
  }

  /**
   * Runs every event due at `upTo` (default: now). Tests call it directly with a manual clock. A
   * process may also run ahead of physical time when it knows no earlier input can still come (see
   * `Endpoint` eager mode); lateness is always measured against the physical time now.
   */
  runDue(upTo = this.now()): void {
    if (this.stopped) return;
    this.running = true;
    const heap = this.heap;
    const fid = this.fidelity;
    const realNow = this.manual ? upTo : this.now();
    try {
      while (heap.length > 0 && heap[0].t <= upTo) {
        const e = this.pop();
        const fn = e.fn;
        if (fn === null) continue;
        fid.lateness.record(realNow > e.t ? realNow - e.t : 0);
        this.handle(e, fn);
      }
    } finally {
      this.running = false;
    }
    if (!this.manual) this.arm();
  }

  /** Runs one event at its own time; both drivers hand every event through here. */
  private handle(e: Entry, fn: EventFn): void {
    e.fn = null;
    const t = e.t;
    const fid = this.fidelity;
    fid.eventsHandled++;
    // an event older than one already handled: whatever it touches saw the later one first
    if (t < this.current) fid.causalityMisses++;
    if (t > this.horizon) this.horizon = t;
    this.current = t;
    if (e.cpu && this.computeModel !== 'none') this.code(t, fn, e.a, e.b);
    else fn(t, e.a, e.b);
    e.a = e.b = null;
  }

  /**
   * A process that fell behind (a stall, a busy core) catches up in slices of `CATCHUP_SLICE_MS` of
   * real time's worth of event time, yielding to I/O between slices: datagrams that arrived during the stall are read and
   * take their place in the queue before the events after them run, instead of after a whole backlog
   * of timers (a detector's window verdict, say) has run without them.
   */
  private readonly onWake = (): void => {
    this.timer = null;
    this.immediate = null;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = this.now();
    const head = this.heap.length > 0 ? this.heap[0].t : now;
    this.runDue(Math.min(now, head + this.slice));
  };

  /** Makes sure the real timer fires for the earliest pending event. */
  arm(): void {
    if (this.stopped || this.manual || this.clock === null) return;
    // drop cancelled heads so they do not wake us
    while (this.heap.length > 0 && this.heap[0].fn === null) this.pop();
    if (this.heap.length === 0) return;
    const t = this.heap[0].t;
    if (t >= this.timerAt && (this.timer || this.immediate)) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const ms = this.clock.realMs(t - this.now());
    this.timerAt = t;
    if (ms <= 0.05) {
      if (!this.immediate) this.immediate = setImmediate(this.onWake);
    } else {
      if (this.immediate) {
        clearImmediate(this.immediate);
        this.immediate = null;
      }
      this.timer = setTimeout(this.onWake, ms);
    }
  }

  private push(e: Entry): void {
    this.pushTo(this.heap, e);
  }

  private pop(): Entry {
    return this.popFrom(this.heap);
  }

  private pushTo(h: Entry[], e: Entry): void {
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (less(h[p], e)) break;
      h[i] = h[p];
      i = p;
    }
    h[i] = e;
  }

  private popFrom(h: Entry[]): Entry {
    const top = h[0];
    const last = h.pop()!;
    if (h.length > 0) {
      let i = 0;
      const n = h.length;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const c = r < n && less(h[r], h[l]) ? r : l;
        if (less(last, h[c])) break;
        h[i] = h[c];
        i = c;
      }
      h[i] = last;
    }
    return top;
  }
}

/** the index of the smallest entry */
function earliest(free: readonly number[]): number {
  let c = 0;
  for (let i = 1; i < free.length; i++) if (free[i] < free[c]) c = i;
  return c;
}

function less(a: Entry, b: Entry): boolean {
  return a.t < b.t || (a.t === b.t && a.k < b.k);
}
