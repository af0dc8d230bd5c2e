/**
 * The egress port model (docs/architecture.md: frames, ports and links). A port owns one direction of a link: a byte buffer shared by its
 * queue discipline's classes, drop-tail admission with an ECN marking threshold (DCTCP-style marking
 * on the instantaneous queue at enqueue), serialization at the link rate and propagation delay.
 *
 * A frame that starts transmission at `txStart` arrives at the peer at `txStart + size*8/rate + prop`;
 * the datagram leaves when the departure is committed, so the peer holds it before it is due and
 * handles it at its stamped arrival time. Departures are committed up to `commitAheadNs` before they
 * start (a transmit pipeline of that depth, as in real NICs and switch ASICs): a later, higher-priority
 * frame cannot overtake a committed one, and in exchange every hop gains that much lookahead.
 */

import type { Discipline } from './discipline.js';
import { StrictPriority } from './discipline.js';
import { type Streams, WireFilter, WireVerdict } from './fault-filter.js';
import { Ecn, type Frame } from './frame.js';
import type { Impairment } from './impair.js';
import { InOrderLateness } from './lateness.js';
import type { Scheduler, Timer } from './scheduler.js';

/** Ethernet's minimum frame on the wire, bytes: shorter frames are charged this much. */
export const MIN_FRAME = 64;

export interface PortParams {
  /** link rate, bit/s (virtual) */
  rateBps: number;
  /** propagation delay, virtual ns */
  propNs: number;
  /** buffer limit in bytes shared by all classes of this port */
  bufferBytes: number;
  /** mark ECN-capable frames CE when the queue holds at least this many bytes; 0 disables */
  ecnBytes: number;
  /** how long before its start a departure is committed (transmit pipeline depth), virtual ns */
  commitAheadNs: number;
  /** this direction's own impairments (netem's set: core/impair.ts); absent: a clean link */
  impair?: Impairment;
}

export interface PortStats {
  txFrames: number;
  txBytes: number;
  dropsCongestion: number;
  ecnMarks: number;
  maxBytes: number;
}

/** Where committed frames go: the endpoint, which batches them into datagrams to the peer. */
export type FrameSink = (port: number, frame: Frame) => void;

/** Told of every frame at the moment its departure is committed, with its transmission start. */
export type DepartureHook = (port: number, frame: Frame, txStart: number) => void;

/**
 * Told of every frame at its transmission start after the wire filter has judged it (`WireVerdict`; a
 * corrupted frame passes with its frame check failed): packet capture (core/capture.ts).
 */
export type CaptureHook = (port: number, frame: Frame, txStart: number, verdict: number) => void;

/** Tests that never draw (no loss, no corruption) need no generator; one that draws without a seed is a bug. */
function unseeded(): number {
  throw new Error('EgressPort: wire loss/corruption needs a seeded random source');
}

export class EgressPort {
  readonly wire: WireFilter;
  /**
   * Every frame this port transmits, before the wire filter decides its fate: time stamping at
   * departure (PTP hardware stamps, transparent clocks) and loss accounting; null when unused.
   */
  onDepart: DepartureHook | null = null;
  /** packet capture of this port's egress (`run.capture`); null when not captured */
  capture: CaptureHook | null = null;
  readonly stats: PortStats = { txFrames: 0, txBytes: 0, dropsCongestion: 0, ecnMarks: 0, maxBytes: 0 };
  /** bytes waiting in the discipline (not yet committed) */
  private queuedBytes = 0;
  /** committed frames whose transmission has not started yet: parallel rings of start times and sizes */
  private pendStart: number[] = [];
  private pendSize: number[] = [];
  private pendBytes = 0;
  /** time the link becomes free after the last committed frame */
  private busyUntil = 0;
  /** latest time a frame was offered: a frame offered earlier than this arrived too late */
  private lastOffer = 0;
  private wake: Timer | null = null;
  /** host stack lateness (jitter models): when a frame handed over reaches the queue, in order */
  private lateness: InOrderLateness | null = null;
  private readonly sendLaterFn = (now: number, frame: Frame): void => {
    this.send(frame, now);
  };

  private readonly enterFn = (now: number, frame: Frame): void => {
    this.enter(frame, now);
  };
  private readonly nsPerByte: number;
  private readonly pumpFn = (now: number): void => {
    this.wake = null;
    this.pump(now);
  };

  constructor(
    readonly index: number,
    readonly params: PortParams,
    private readonly sched: Scheduler,
    private readonly sink: FrameSink,
    readonly discipline: Discipline = new StrictPriority(),
    /** the wire filter's loss and corruption draws: a seeded generator, so runs repeat */
    random: () => number = unseeded,
    /** the impairments' draws, a seeded stream per model */
    streams?: Streams,
  ) {
    if (!(params.rateBps > 0))
      throw new RangeError(`port ${index}: rate must be > 0 bit/s, got ${params.rateBps}`);
    this.nsPerByte = 8e9 / params.rateBps;
    this.wire = new WireFilter(random, streams, params.impair);
  }

  /** Serialization time of `bytes` on this port, virtual ns. */
  serializationNs(bytes: number): number {
    return bytes * this.nsPerByte;
  }

  /**
   * Conservative synchronization: no frame this port has not committed yet can arrive at the peer
   * before this, if no event before `tNext` is left to run here. A new departure starts no earlier than
   * the next event and than the end of what is committed; the shortest frame then takes its
   * serialization and the propagation delay (faults only add delay).
   */
  promise(tNext: number): number {
    return this.earliestArrival(Math.max(tNext, this.busyUntil));
  }

  /**
   * The earliest arrival of a frame that starts at `t` on this link, either way (a link's two
   * directions share its rate and delay: orchestrator/engine/plan.ts): the shortest frame's serialization,
   * then the propagation delay, summed in the order `pump` stamps frames, so that a bound derived from
   * it never lies one ulp after a frame's stamp.
   */
  earliestArrival(t: number): number {
    return t + MIN_FRAME * this.nsPerByte + this.params.propNs;
  }

  /** `occupancy(now)` read without settling the committed frames' books: for a snapshot between events. */
  peekOccupancy(now: number): number {
    let pend = 0;
    for (let i = 0; i < this.pendStart.length; i++) if (this.pendStart[i] > now) pend += this.pendSize[i];
    return this.queuedBytes + pend;
  }

  /** Bytes in the buffer at `now`: waiting frames plus committed ones that have not started. */
  occupancy(now: number): number {
    while (this.pendStart.length > 0 && this.pendStart[0] <= now) {
      this.pendStart.shift();
      this.pendBytes -= this.pendSize.shift()!;
    }
    return this.queuedBytes + this.pendBytes;
  }

  /**
   * Offers a frame for transmission at `now`; returns false if the buffer dropped it. A frame offered
   * at a time before a frame this port already accepted (dilated mode: its event ran out of order, which
   * the scheduler counts as a causality miss) joins the queue at that later time, the order the port saw.
   */
  send(frame: Frame, now: number): boolean {
    // the node's own code sent it while computing: it leaves when the work ends (compute model)
    if (this.sched.hold(this.sendLaterFn, frame)) return true;
    if (this.lateness !== null) {
      const t = this.lateness.next(now);
      if (t > now) {
        this.sched.atHardware(t, this.enterFn, frame);
        return true;
      }
    }
    return this.enter(frame, now);
  }

  /**
   * A host's send jitter (`jitter.send`): every frame handed to this port reaches its queue a drawn
   * delay later, as if the sending code had run late, in the order the frames were handed over. The
   * buffer then decides at that later time.
   */
  setLateness(draw: () => number): void {
    this.lateness = new InOrderLateness(draw);
  }

  private enter(frame: Frame, now: number): boolean {
    if (now < this.lastOffer) {
      now = this.lastOffer;
    } else {
      this.lastOffer = now;
    }
    let occ = this.occupancy(now);
    if (occ + frame.z > this.params.bufferBytes) {
      // a discipline may push out what it holds to make room (else drop-tail)
      const need = occ + frame.z - this.params.bufferBytes;
      const out = this.discipline.pushOut?.(frame, need);
      if (out !== undefined && out.bytes > 0) {
        this.queuedBytes -= out.bytes;
        this.stats.dropsCongestion += out.frames;
        occ -= out.bytes;
      }
      if (out === undefined || out.bytes < need) {
        this.stats.dropsCongestion++;
        return false;
      }
    }
    if (this.params.ecnBytes > 0 && frame.e === Ecn.Ect && occ >= this.params.ecnBytes) {
      frame.e = Ecn.Ce;
      this.stats.ecnMarks++;
    }
    // the discipline's own limit (not the buffer): a host qdisc's refusals are drops, a scheme's
    // discipline counts what it refused itself
    if (!this.discipline.enqueue(frame, now)) {
      this.settle(this.discipline);
      return false;
    }
    this.queuedBytes += frame.z;
    if (occ + frame.z > this.stats.maxBytes) this.stats.maxBytes = occ + frame.z;
    this.pump(now);
    return true;
  }

  /** Commits every departure that starts within the commit window; arms a wake-up for the rest. */
  private pump(now: number): void {
    const d = this.discipline;
    const ahead = this.params.commitAheadNs;
    while (d.length > 0) {
      let start = Math.max(this.busyUntil, now);
      if (start > now + ahead) {
        this.armWake(start - ahead);
        return;
      }
      let f = d.dequeue(start);
      this.settle(d);
      if (f === null) {
        if (d.length === 0) return;
        // nothing eligible at the earliest start (a rate-limited class): when something is within the
        // commit window, it is committed to start then, with the link idle until; else wake for it
        const eligible = d.nextEligible(start);
        if (eligible > now + ahead) {
          this.armWake(eligible - ahead);
          return;
        }
        start = eligible;
        f = d.dequeue(start);
        this.settle(d);
        if (f === null && d.length === 0) return;
        if (f === null)
          throw new Error(`port ${this.index}: the discipline promised a frame at ${start} and had none`);
      }
      this.queuedBytes -= f.z;
      // Ethernet's minimum frame: nothing is shorter on the wire, which is what bounds the lookahead
      // a degraded port serializes slower (an impairment's rate): arrivals only come later, so the
      // promises made at the link's rate still hold
      const nsPerByte = this.wire.impaired ? 8e9 / this.wire.rateBps(this.params.rateBps) : this.nsPerByte;
      const end = start + Math.max(f.z, MIN_FRAME) * nsPerByte;
      this.busyUntil = end;
      if (start > now) {
        this.pendStart.push(start);
        this.pendSize.push(f.z);
        this.pendBytes += f.z;
      }
      this.stats.txFrames++;
      this.stats.txBytes += f.z;
      f.a = end + this.params.propNs;
      if (this.onDepart !== null) this.onDepart(this.index, f, start);
      const verdict = this.wire.apply(f);
      if (this.capture !== null) this.capture(this.index, f, start, verdict);
      if (verdict === WireVerdict.Pass) {
        this.sink(this.index, f);
        const copy = this.wire.impaired ? this.wire.duplicateOf(f) : null;
        if (copy !== null) {
          if (this.capture !== null) this.capture(this.index, copy, start, verdict);
          this.sink(this.index, copy);
        }
      }
    }
  }

  /** what the discipline discarded, dropped or marked itself: the port's books */
  private settle(d: Discipline): void {
    if (d.discarded !== undefined) this.queuedBytes -= d.discarded();
    if (d.drops !== undefined) this.stats.dropsCongestion += d.drops();
    if (d.marks !== undefined) this.stats.ecnMarks += d.marks();
  }

  private armWake(t: number): void {
    if (this.wake !== null) {
      if (this.wake.t <= t) return;
      this.sched.cancel(this.wake);
    }
    this.wake = this.sched.atHardware(t, this.pumpFn);
  }

  /** Empties the port (used when its node is reset); counts nothing as dropped. */
  clear(): void {
    while (this.discipline.dequeue(Number.POSITIVE_INFINITY) !== null) {}
    this.queuedBytes = 0;
    this.pendStart.length = 0;
    this.pendSize.length = 0;
    this.pendBytes = 0;
    this.sched.cancel(this.wake);
    this.wake = null;
  }
}
