/**
 * Conservative synchronization of one node process (docs/architecture.md: conservative and dilated time), the default time mode. No wall clock
 * is in the loop: the node handles an event at time t only when none of its inputs can still bring
 * anything earlier, and between such steps it runs as fast as the CPU allows.
 *
 * Inputs and their clocks:
 * - every link: the peer's promise, carried by each datagram's header (Endpoint.inClock);
 * - the orchestrator: its grant, "run up to here" (timeline actions reach the node ahead of their
 *   times, so the grant only paces the run and lets the orchestrator stop it at an exact time).
 *
 * A step handles every event before `safe = min(grant, halt, bounds of all links)`, then promises
 * each peer the earliest arrival of any frame not yet committed on that link (EgressPort.promise: the
 * next event or the end of the committed departures, plus the shortest frame's serialization and the
 * propagation delay, which is > 0 on every link, so the fabric cannot deadlock). Promises ride on the
 * step's data datagrams or travel alone as null messages (measured against on-demand requests and
 * rounds: docs/architecture.md). Steps are coalesced: every datagram that arrived in one turn of the
 * event loop is read before the next step runs.
 *
 * Two promises per link, so that a node and its neighbour do not crawl forward one lookahead at a
 * time echoing each other's promises:
 * - the promise P: nothing arrives before it;
 * - the conditional promise Q, computed without the receiver's own link: nothing arrives before it
 *   either, except answers to the receiver's frames that the sender had not received when it computed
 *   Q (they come at the earliest one lookahead after such a frame arrives there), and answers to frames
 *   the receiver has yet to send (at the earliest one round trip after its next event).
 * A link's bound is `max(P, min(Q, earliest unacknowledged arrival + lookahead, earliest future
 * event + round trip))`, taken at its fixed point (the earliest future event is the next event or the
 * earliest arrival on any link, which the bounds themselves raise), and never falls (each value was
 * true when computed, so stays true). A single-link node (a host) also tells its peer what it waits
 * for, its need; promises that cannot take it past its need are not sent, so an idle host costs
 * nothing between its own events.
 *
 * Events that cannot send do not count as "next events" here (`Scheduler.atQuiet`): samplers, and a
 * keepalive that arrives while its link is certainly up (core/liveness.ts `staysUp`; its sender, told
 * so with the peer's address, leaves it out of its unacknowledged arrivals too). They run when the
 * safe time passes them, exactly where they always ran; nothing waits for them.
 */
import type { Endpoint } from './endpoint.js';
import type { EgressPort } from './port.js';
import type { Scheduler } from './scheduler.js';

export interface SyncListener {
  /** every event before the grant `at` has been handled */
  reached(at: number): void;
  /** the node stopped at its halt time (a `kill`): its links are silent from there */
  halted(at: number): void;
  /** the node reached the start of its pause (a `pause`): the process may be stopped for real now */
  paused(at: number): void;
}

export class ConservativeSync {
  /** the orchestrator's promise: run no event at or after this */
  private grant = 0;
  private reportedGrant = -1;
  private haltAt = Number.POSITIVE_INFINITY;
  /** what a halted node's links promise: when its next process starts (a `stop` then `start`), or never */
  private haltUntil = Number.POSITIVE_INFINITY;
  private halted = false;
  private pauseAt = Number.POSITIVE_INFINITY;
  private pauseReported = false;
  private queued = false;
  private stopped = false;
  /** steps taken and null-only flushes, for the bench and the summary */
  steps = 0;
  /** wall µs spent in steps */
  busyUs = 0;
  /**
   * wall µs between steps, by the input that held the node at the end of the step before (what its
   * safe time waited on; inputs tied at that bound share it): one entry per link, the last for the
   * orchestrator's grant (or its halt). Datagrams read in between count as held. Who holds whom:
   * `orchestrator/engine/holds.ts`.
   */
  readonly heldUs: Float64Array;
  /** wall time (performance.now, ms) the last step ended */
  private lastEnd = 0;
  /** each link's bound: nothing arrives on it before this (never falls) */
  private readonly bounds: Float64Array;
  /** scratch: per link, the earliest the peer sends unless answering this node's frames */
  private readonly answers: Float64Array;
  /** a single-link node tells its peer its need */
  private readonly single: boolean;

  constructor(
    private readonly sched: Scheduler,
    private readonly ports: readonly EgressPort[],
    private readonly endpoint: Endpoint,
    private readonly listener: SyncListener,
  ) {
    this.bounds = new Float64Array(ports.length);
    this.answers = new Float64Array(ports.length);
    this.heldUs = new Float64Array(ports.length + 1);
    endpoint.hop = (port, t) => ports[port].earliestArrival(t);
    this.single = ports.length === 1;
  }

  /** the orchestrator lets the node run up to (not including) `until` */
  setGrant(until: number): void {
    if (until > this.grant) {
      this.grant = until;
      this.kick();
    }
  }

  /**
   * a `kill` (or `stop`) at `t`: the node handles nothing from t on and its links fall silent; they
   * promise `until`, when a new process takes the node's place (never, for a kill)
   */
  haltAtTime(t: number, until = Number.POSITIVE_INFINITY): void {
    if (t < this.haltAt) {
      this.haltAt = t;
      this.haltUntil = until;
    }
    this.kick();
  }

  /** a `pause` over [from, until): nothing is handled in it; frames wait for its end */
  pause(from: number, until: number): void {
    this.sched.freeze(from, until);
    this.pauseAt = from;
    this.pauseReported = false;
    this.kick();
  }

  stop(): void {
    this.stopped = true;
  }

  /** The input each step waits on: the link (port index) or -1 for the orchestrator's grant, and its bound. */
  waitingOn(): { port: number; clock: number } {
    this.updateBounds(this.sched.nextLoudTime());
    const bounds = this.bounds;
    let port = -1;
    let clock = this.grant;
    for (let p = 0; p < bounds.length; p++) {
      if (bounds[p] < clock) {
        clock = bounds[p];
        port = p;
      }
    }
    return { port, clock };
  }

  /** the safe time: nothing can still arrive before it */
  safeTime(): number {
    this.updateBounds(this.sched.nextLoudTime());
    const bounds = this.bounds;
    let safe = Math.min(this.grant, this.haltAt);
    for (let p = 0; p < bounds.length; p++) if (bounds[p] < safe) safe = bounds[p];
    return safe;
  }

  /**
   * Each link's bound from its peer's promises, given this node's next event at `next`. Answers to this
   * node's future frames come a round trip after its earliest future event, which is its next event
   * or the earliest arrival on any link, whichever comes first. Each link's bound raises that earliest
   * arrival, which raises the bounds in turn, a round trip at a time, until each link's stops at what
   * its peer sends unless answering (`answers`): that fixed point, taken at once, is the earliest of the
   * next event and the links' caps (the higher of a link's bound and its `answers`).
   */
  private updateBounds(next: number): void {
    const ep = this.endpoint;
    const { inClock, inCond } = ep;
    const { bounds, answers, ports } = this;
    let from = next;
    for (let p = 0; p < bounds.length; p++) {
      // what the peer sends unless answering this node's frames: those sent, and those to come
      answers[p] = Math.min(inCond[p], ports[p].earliestArrival(ep.unackedArrival(p)));
      if (inClock[p] > bounds[p]) bounds[p] = inClock[p];
      const cap = Math.max(bounds[p], answers[p]);
      if (cap < from) from = cap;
    }
    for (let p = 0; p < bounds.length; p++) {
      const b = this.answered(p, from);
      if (b > bounds[p]) bounds[p] = b;
    }
  }

  /**
   * What link `p`'s peer can send at the earliest if this node's earliest future event is at `from`:
   * what it sends unless answering, or an answer a round trip after `from`
   */
  private answered(p: number, from: number): number {
    const link = this.ports[p];
    return Math.min(this.answers[p], link.earliestArrival(link.earliestArrival(from)));
  }

  /**
   * The conditional promise of each link: what the port could send next if nothing new came from that
   * link's peer, so the earliest of the next event, the grant (later timeline actions are due after it)
   * and the bounds of every other link, as that peer's silence leaves them: without its frames, this
   * node's earliest future event is its next event or the earliest cap of the other links
   * (`updateBounds`). What the peer's own new frames set off reaches it a round trip after it sends
   * them at the earliest, which its bound on this node allows for.
   */
  private setConds(next: number): void {
    const { bounds, answers, ports } = this;
    const ep = this.endpoint;
    // the links' caps, the earliest two: without any link's peer but the earliest cap's, the earliest
    // future event is what `updateBounds` took, and the bounds are as they are
    let c1 = Number.POSITIVE_INFINITY;
    let c2 = Number.POSITIVE_INFINITY;
    let c1Port = -1;
    let b1 = Number.POSITIVE_INFINITY;
    let b2 = Number.POSITIVE_INFINITY;
    let b1Port = -1;
    for (let p = 0; p < bounds.length; p++) {
      const cap = Math.max(bounds[p], answers[p]);
      if (cap < c1) {
        c2 = c1;
        c1 = cap;
        c1Port = p;
      } else if (cap < c2) {
        c2 = cap;
      }
      if (bounds[p] < b1) {
        b2 = b1;
        b1 = bounds[p];
        b1Port = p;
      } else if (bounds[p] < b2) {
        b2 = bounds[p];
      }
    }
    // without the earliest cap's peer, the others' bounds rise to their fixed point from a later start
    let othersOfFirst = Number.POSITIVE_INFINITY;
    if (c1Port >= 0) {
      const from = Math.min(next, c2);
      for (let q = 0; q < bounds.length; q++) {
        if (q === c1Port) continue;
        const b = Math.max(bounds[q], this.answered(q, from));
        if (b < othersOfFirst) othersOfFirst = b;
      }
    }
    const own = Math.min(next, this.grant);
    const conds = ep.conds;
    for (let p = 0; p < bounds.length; p++) {
      const others = p === c1Port ? othersOfFirst : p === b1Port ? b2 : b1;
      conds[p] = ports[p].promise(this.sched.settle(Math.min(own, others)));
    }
    ep.setConds();
  }

  /** Something changed (a promise, a grant, an action): step once the current I/O is read. */
  readonly kick = (): void => {
    if (this.queued || this.stopped || this.halted) return;
    this.queued = true;
    setImmediate(this.step);
  };

  private readonly step = (): void => {
    this.queued = false;
    if (this.stopped || this.halted) return;
    this.steps++;
    const t0 = performance.now();
    if (this.lastEnd > 0) this.attribute((t0 - this.lastEnd) * 1000);
    this.runStep();
    this.lastEnd = performance.now();
    this.busyUs += (this.lastEnd - t0) * 1000;
  };

  /** Adds `us` of waiting to what held the node: the inputs at its safe time (the bounds since its last step). */
  private attribute(us: number): void {
    const { bounds, heldUs } = this;
    const own = Math.min(this.grant, this.haltAt);
    // the safe time and how many inputs are at it, in one pass
    let safe = own;
    let tied = 1;
    for (let p = 0; p < bounds.length; p++) {
      if (bounds[p] < safe) {
        safe = bounds[p];
        tied = 1;
      } else if (bounds[p] === safe) tied++;
    }
    const share = us / tied;
    if (own === safe) heldUs[bounds.length] += share;
    for (let p = 0; p < bounds.length; p++) if (bounds[p] === safe) heldUs[p] += share;
  }

  private runStep(): void {
    const sched = this.sched;
    let safe = this.safeTime();
    sched.runBefore(safe);
    // handling events moves this node's next event, and with it the bounds that answers to its own
    // frames set: run on while they rise
    while (safe < this.haltAt) {
      const further = this.safeTime();
      if (further <= safe) break;
      safe = further;
      sched.runBefore(safe);
    }
    if (safe >= this.haltAt) {
      this.halt();
      return;
    }
    // the next time this node can send: its earliest event that may (quiet ones only observe: they
    // run when the safe time passes them, and nothing waits for them), or the earliest input
    const next = sched.nextLoudTime();
    const tNext = sched.settle(Math.min(next, safe));
    const promises = this.endpoint.promises;
    for (let p = 0; p < this.ports.length; p++) promises[p] = this.ports[p].promise(tNext);
    this.setConds(next);
    // what a host waits for: its next event, its grant, its halt or its pause
    this.endpoint.need = this.single
      ? Math.min(next, this.grant, this.haltAt, this.pauseReported ? Number.POSITIVE_INFINITY : this.pauseAt)
      : -1;
    const pausing = !this.pauseReported && safe >= this.pauseAt;
    // the orchestrator stops the process on the pause report: every promise over the pause goes first
    this.endpoint.flush(pausing);
    if (pausing) {
      this.pauseReported = true;
      const at = this.pauseAt;
      void this.endpoint.sent(true).then(() => this.listener.paused(at));
    }
    if (safe >= this.grant && this.grant > this.reportedGrant) {
      this.reportedGrant = this.grant;
      this.listener.reached(this.grant);
    }
  }

  /**
   * The node stops at its halt time: every link promises "never" (or nothing before its next process
   * starts) once its last frames are out.
   */
  private halt(): void {
    this.halted = true;
    // nothing is sent from here to the next process, whatever arrives: both promises say so
    this.endpoint.promises.fill(this.haltUntil);
    this.endpoint.conds.fill(this.haltUntil);
    this.endpoint.setConds();
    this.endpoint.flush(true);
    void this.endpoint.sent().then(() => this.listener.halted(this.haltAt));
  }
}
