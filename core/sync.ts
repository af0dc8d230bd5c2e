/**
 * Conservative synchronization of one node process (DESIGN §1b), the default time mode. No wall clock
 * is in the loop: the node handles an event at time t only when none of its inputs can still bring
 * anything earlier, and between such steps it runs as fast as the CPU allows.
 *
 * Inputs and their clocks:
 * - every link: the peer's promise, carried by each datagram's header (Endpoint.inClock);
 * - the orchestrator: its grant, "run up to here" (timeline actions reach the node ahead of their
 *   times, so the grant only paces the run and lets the orchestrator stop it at an exact time).
 *
 * A step handles every event before `safe = min(grant, halt, promises of all links)`, then promises
 * each peer the earliest arrival of any frame not yet committed on that link (EgressPort.promise: the
 * next event or the end of the committed departures, plus the shortest frame's serialization and the
 * propagation delay, which is > 0 on every link, so the fabric cannot deadlock). Promises ride on the
 * step's data datagrams or travel alone as null messages (measured against on-demand requests and
 * rounds: docs/architecture.md). Steps are coalesced: every datagram that arrived in one turn of the
 * event loop is read before the next step runs.
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

  constructor(
    private readonly sched: Scheduler,
    private readonly ports: readonly EgressPort[],
    private readonly endpoint: Endpoint,
    private readonly listener: SyncListener,
  ) {}

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

  /** The input each step waits on: the link (port index) or -1 for the orchestrator's grant, and its clock. */
  waitingOn(): { port: number; clock: number } {
    const inClock = this.endpoint.inClock;
    let port = -1;
    let clock = this.grant;
    for (let p = 0; p < inClock.length; p++) {
      if (inClock[p] < clock) {
        clock = inClock[p];
        port = p;
      }
    }
    return { port, clock };
  }

  /** the safe time: nothing can still arrive before it */
  safeTime(): number {
    const inClock = this.endpoint.inClock;
    let safe = Math.min(this.grant, this.haltAt);
    for (let p = 0; p < inClock.length; p++) if (inClock[p] < safe) safe = inClock[p];
    return safe;
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
    const sched = this.sched;
    const safe = this.safeTime();
    sched.runBefore(safe);
    if (safe >= this.haltAt) {
      this.halt();
      return;
    }
    // the next time anything can happen here: the earliest event, or the earliest input
    const next = sched.nextTime();
    const tNext = sched.settle(Math.min(next, safe));
    const promises = this.endpoint.promises;
    for (let p = 0; p < this.ports.length; p++) promises[p] = this.ports[p].promise(tNext);
    this.endpoint.flush();
    if (!this.pauseReported && safe >= this.pauseAt) {
      // the orchestrator stops the process on this report: the promises over the pause must be out first
      this.pauseReported = true;
      const at = this.pauseAt;
      void this.endpoint.sent(true).then(() => this.listener.paused(at));
    }
    if (safe >= this.grant && this.grant > this.reportedGrant) {
      this.reportedGrant = this.grant;
      this.listener.reached(this.grant);
    }
  };

  /**
   * The node stops at its halt time: every link promises "never" (or nothing before its next process
   * starts) once its last frames are out.
   */
  private halt(): void {
    this.halted = true;
    this.endpoint.promises.fill(this.haltUntil);
    this.endpoint.flush();
    void this.endpoint.sent().then(() => this.listener.halted(this.haltAt));
  }
}
