/**
 * The node clock protocol code reads and schedules on (docs/architecture.md: time). Protocol logic never reads
 * physical time: it sends through interfaces (NIC, liveness ports) that stamp frames with the physical
 * time of the event being handled, and its timers and `now` are node-clock time. This file holds the interface and the ideal clock (node time = physical time); the
 * oscillator + servo clocks of the clocks work implement the same interface.
 */
import type { EventFn, Scheduler, Timer } from './scheduler.js';

export interface NodeClock {
  /** node-clock time now (at the physical time of the event being handled), ns */
  now(): number;
  /** what the node clock reads at physical time `phys`: the emulation layer's timestamping */
  read(phys: number): number;
  /** runs `fn` when the node clock reads `t` */
  at(t: number, fn: EventFn, a?: unknown, b?: unknown): Timer;
  /** runs `fn` after `dt` ns of node-clock time */
  after(dt: number, fn: EventFn, a?: unknown, b?: unknown): Timer;
  cancel(timer: Timer | null | undefined): void;
}

/** A perfect clock: reads the time of the event being handled, so protocol code sees no jitter. */
export class IdealClock implements NodeClock {
  constructor(private readonly sched: Scheduler) {}

  now(): number {
    return this.sched.current;
  }

  read(phys: number): number {
    return phys;
  }

  at(t: number, fn: EventFn, a?: unknown, b?: unknown): Timer {
    return this.sched.at(t, fn, a, b);
  }

  after(dt: number, fn: EventFn, a?: unknown, b?: unknown): Timer {
    return this.sched.at(this.sched.current + dt, fn, a, b);
  }

  cancel(timer: Timer | null | undefined): void {
    this.sched.cancel(timer);
  }
}
