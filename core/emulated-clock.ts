/**
 * A node's system clock (docs/architecture.md: time): its oscillator plus the servo's corrections, like a Linux clock
 * disciplined through adjtimex (a frequency adjustment that replaces the previous one, and phase
 * steps). Since the last adjustment point the clock reads
 *   node(t) = N0 + (osc(t) - osc(t0)) * (1 + adjPpb * 1e-9)
 * for physical time t, with (t0, N0) re-anchored at every adjustment so that the clock stays
 * continuous. Protocol code reads and schedules on this clock only: timers are given in node time,
 * converted to physical time with the rate of the moment, and re-checked when they fire, because the
 * rate (servo, wander, faults) may have changed in between; handlers always receive node time.
 */
import type { NodeClock } from './clock.js';
import type { Oscillator } from './oscillator.js';
import { RingSlots } from './ring.js';
import type { EventFn, Scheduler, Timer } from './scheduler.js';

/**
 * A pending node-clock timer: it outlives the scheduler entries it hops through (re-schedules), so
 * cancelling it always works. Pending timers form an intrusive list so that steps and frequency
 * changes can pull timers earlier that would otherwise fire late.
 */
class ClockTimer implements Timer {
  /** current scheduler entry, null while not queued */
  inner: Timer | null = null;
  prev: ClockTimer | null = null;
  next: ClockTimer | null = null;

  constructor(
    /** requested node time */
    readonly t: number,
    /** raw node time to wait for: `t` rounded up to the read granularity */
    readonly r: number,
    public fn: EventFn | null,
    public a: unknown,
    public b: unknown,
    /** set by the node's own code (it waits for the node's core: compute model), else hardware */
    readonly cpu: boolean,
  ) {}
}

/** How many adjustment points stay kept for reads in the past. */
const ANCHORS = 32;

/** How far (ns) below its target a timer may find the node clock and still fire: float rounding. */
const TOLERANCE_NS = 1;

export class EmulatedClock implements NodeClock {
  readonly granularityNs: number;
  // Anchor ring, newest at `last`: physical time of the adjustment, oscillator reading and node time
  // there, and 1 + adjPpb * 1e-9 from there on. Older anchors keep reads of the recent past (late
  // timestamps, metrics) as they were before a step or frequency change.
  private readonly aT = new Float64Array(ANCHORS);
  private readonly aO = new Float64Array(ANCHORS);
  private readonly aN = new Float64Array(ANCHORS);
  private readonly aK = new Float64Array(ANCHORS);
  private readonly ring = new RingSlots(ANCHORS);
  private adjPpb = 0;
  /** pending timers (intrusive doubly-linked list) */
  private head: ClockTimer | null = null;
  /**
   * The node time a timer handed its handler, and the physical time it fired at: a timer fires when
   * the clock reads its target to within float rounding, so there the clock may read one granule
   * less; now() reads this instead, or a handler waiting for its time would find it not come and wait
   * again, at the same physical time, forever.
   */
  private heldPhys = Number.NEGATIVE_INFINITY;
  private heldNode = Number.NEGATIVE_INFINITY;

  /** The clock starts reading what the oscillator reads; `granularityNs` defaults to the oscillator's. */
  constructor(
    private readonly sched: Scheduler,
    readonly osc: Oscillator,
    granularityNs = osc.granularityNs,
  ) {
    if (!(granularityNs >= 0)) throw new RangeError(`EmulatedClock: granularityNs must be >= 0`);
    this.granularityNs = granularityNs;
    const o = osc.read(sched.current);
    this.push(sched.current, o, o, 1);
  }

  /** Node time at physical time `phys`, floored to the granularity. */
  read(phys: number): number {
    const g = this.granularityNs;
    const raw = this.raw(phys);
    return g > 0 ? Math.floor(raw / g) * g : raw;
  }

  /** Node time now: at the stamp of the event being handled. */
  now(): number {
    const cur = this.sched.current;
    const v = this.read(cur);
    return v < this.heldNode && cur - this.heldPhys <= TOLERANCE_NS ? this.heldNode : v;
  }

  /** Runs `fn(nodeNow, a, b)` when the node clock reads `t` (at the first granule at or after `t`). */
  at(t: number, fn: EventFn, a?: unknown, b?: unknown): Timer {
    const g = this.granularityNs;
    const h = new ClockTimer(t, g > 0 ? Math.ceil(t / g) * g : t, fn, a, b, this.sched.inCode);
    const cur = this.sched.current;
    // a node time already passed (now() floors to the granularity, so after(0) can be) fires now,
    // never in the physical past: that would be a causality miss
    h.inner = this.sched.atAs(h.cpu, Math.max(this.physFor(cur, h.r), cur), this.onFire, h);
    this.link(h);
    return h;
  }

  /** Runs `fn` after `dt` ns of node time. */
  after(dt: number, fn: EventFn, a?: unknown, b?: unknown): Timer {
    return this.at(this.now() + dt, fn, a, b);
  }

  cancel(timer: Timer | null | undefined): void {
    if (!timer) return;
    if (!(timer instanceof ClockTimer)) {
      // a raw scheduler entry handed in by mistake still cancels
      this.sched.cancel(timer);
      return;
    }
    if (timer.fn === null) return;
    timer.fn = null;
    timer.a = timer.b = null;
    this.sched.cancel(timer.inner);
    timer.inner = null;
    this.unlink(timer);
  }

  /** Physical time at which the node clock will read `t`, at the rate of the current moment. */
  toPhys(t: number): number {
    return this.physFor(this.sched.current, t);
  }

  /** Sets the frequency adjustment (replacing the previous one), effective from the current event. */
  setFrequencyPpb(ppb: number): void {
    this.anchor(this.sched.current, 0, 1 + ppb * 1e-9);
    this.adjPpb = ppb;
    this.retime();
  }

  frequencyPpb(): number {
    return this.adjPpb;
  }

  /** Steps the clock by `deltaNs` at the current event. */
  step(deltaNs: number): void {
    this.anchor(this.sched.current, deltaNs, this.aK[this.ring.last]);
    this.retime();
  }

  /** The ground truth (docs/architecture.md: time): node time minus physical time at `phys`. */
  trueErrorNs(phys: number): number {
    return this.read(phys) - phys;
  }

  /**
   * Re-plans pending timers after the clock jumped or sped up, so that none fires late: a timer whose
   * node time has come fires at the current event, others move to their new physical time. Timers that
   * would now fire early need nothing: they re-check when they fire. `step` and `setFrequencyPpb` call
   * this; the fault layer calls it after changing the oscillator underneath.
   */
  retime(): void {
    // a step or a new rate (here or in the oscillator): what a timer handed out no longer holds
    this.heldNode = Number.NEGATIVE_INFINITY;
    const cur = this.sched.current;
    for (let h = this.head; h !== null; h = h.next) {
      const inner = h.inner;
      if (inner === null) continue;
      const p = this.physFor(cur, h.r);
      if (p < inner.t - TOLERANCE_NS) {
        this.sched.cancel(inner);
        h.inner = this.sched.atAs(h.cpu, Math.max(p, cur), this.onFire, h);
      }
    }
  }

  /** Unfloored node time at `phys`. */
  private raw(phys: number): number {
    let i = this.ring.last;
    if (phys < this.aT[i]) i = this.anchorAt(phys);
    return this.aN[i] + (this.osc.read(phys) - this.aO[i]) * this.aK[i];
  }

  /** Physical time at which the raw node clock reads `t`, extrapolating from `ref` at its rate. */
  private physFor(ref: number, t: number): number {
    let i = this.ring.last;
    if (ref < this.aT[i]) i = this.anchorAt(ref);
    const node = this.aN[i] + (this.osc.read(ref) - this.aO[i]) * this.aK[i];
    return ref + (t - node) / (this.osc.rateAt(ref) * this.aK[i]);
  }

  /** Index of the newest kept anchor at or before `phys`; the oldest one if all are later. */
  private anchorAt(phys: number): number {
    // adjustments are rare: a backward scan from the newest is short
    let i = this.ring.last;
    for (let n = this.ring.count - 1; n > 0 && this.aT[i] > phys; n--) i = this.ring.older(i);
    return i;
  }

  /**
   * New adjustment point at `phys`: the reading there moves by `deltaNs`, the rate factor becomes `k`.
   * An event handled out of order (stamped before the newest anchor, after a late frame) still has to
   * see its adjustment in now(): the newest line is extended back to `phys` and replaces the later
   * anchors, so earlier steps and the rate are kept and only ppm x the reordering span is lost.
   */
  private anchor(phys: number, deltaNs: number, k: number): void {
    const l = this.ring.last;
    const o = this.osc.read(phys);
    const n = this.aN[l] + (o - this.aO[l]) * this.aK[l] + deltaNs;
    while (this.ring.count > 0 && this.aT[this.ring.last] >= phys) this.ring.dropNewest();
    this.push(phys, o, n, k);
  }

  private push(phys: number, o: number, n: number, k: number): void {
    const i = this.ring.claim();
    this.aT[i] = phys;
    this.aO[i] = o;
    this.aN[i] = n;
    this.aK[i] = k;
  }

  /** The one trampoline for every timer: fires, or waits for the remainder if the clock is behind. */
  private readonly onFire = (now: number, h: ClockTimer): void => {
    h.inner = null;
    const fn = h.fn;
    if (fn === null) {
      // cleared by a plain Scheduler.cancel on the handle: just forget it
      this.unlink(h);
      return;
    }
    const raw = this.raw(now);
    if (raw < h.r - TOLERANCE_NS) {
      // the clock slowed or stepped back since scheduling: firing now would be early
      h.inner = this.sched.atAs(h.cpu, this.physFor(now, h.r), this.onFire, h);
      return;
    }
    const a = h.a;
    const b = h.b;
    h.fn = null;
    h.a = h.b = null;
    this.unlink(h);
    // within the rounding tolerance below the target, the handler is told the target itself
    const g = this.granularityNs;
    const node = raw < h.r ? h.r : g > 0 ? Math.floor(raw / g) * g : raw;
    this.heldPhys = now;
    this.heldNode = node;
    fn(node, a, b);
  };

  private link(h: ClockTimer): void {
    h.next = this.head;
    if (this.head !== null) this.head.prev = h;
    this.head = h;
  }

  private unlink(h: ClockTimer): void {
    if (h.prev !== null) h.prev.next = h.next;
    else this.head = h.next;
    if (h.next !== null) h.next.prev = h.prev;
    h.prev = h.next = null;
  }
}
