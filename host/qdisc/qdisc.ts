/**
 * A host's queueing discipline (Linux's qdisc) on its NIC: the base keeps the books every qdisc
 * shares (frames held, what it dropped or marked since the port last asked, the transmit ledger that
 * TCP small queues read), the variants decide order and admission (STYLE: the port keeps the buffer,
 * the discipline only decides order). The port still enforces the NIC's byte buffer (`ports.hostBuffer`)
 * before a qdisc sees a frame; a qdisc's own limits are Linux's, in packets.
 */
import type { Discipline } from '../../core/discipline.js';
import { Ecn, type Frame, FrameType } from '../../core/frame.js';
import { MIN_FRAME } from '../../core/port.js';

/**
 * Told of a frame's life in the qdisc and NIC: it entered, its transmission was committed to end at
 * `end` (physical ns), or the qdisc dropped it. TCP small queues count a flow's bytes between the first
 * and the other two (host/qdisc/ledger.ts).
 */
export interface TxAccounting {
  entered(frame: Frame): void;
  committed(frame: Frame, end: number): void;
  dropped(frame: Frame): void;
}

export abstract class HostQdisc implements Discipline {
  length = 0;
  /** the host's transmit ledger, when its transport runs TCP small queues */
  accounting: TxAccounting | null = null;
  /** totals over the run: frames refused or dropped, frames marked CE */
  readonly totals = { drops: 0, marks: 0 };
  private dropsSince = 0;
  private marksSince = 0;
  private discardedBytes = 0;
  private readonly nsPerByte: number;

  /** `rateBps`: the NIC's line rate (a committed frame's transmission end) */
  constructor(rateBps: number) {
    this.nsPerByte = 8e9 / rateBps;
  }

  /** whether the qdisc takes `frame` at all (its limits at the arrival); a refused frame is a drop */
  protected abstract admit(frame: Frame): boolean;
  /** queues an admitted frame; may drop frames it holds (`drop`), the arrival among them */
  protected abstract push(frame: Frame, now: number): void;
  /** the next frame to transmit at `start`, or null; may drop (`drop`) or mark (`mark`) on the way */
  protected abstract pop(start: number): Frame | null;

  enqueue(frame: Frame, now = 0): boolean {
    if (!this.admit(frame)) {
      this.dropsSince++;
      this.totals.drops++;
      return false;
    }
    this.length++;
    this.accounting?.entered(frame);
    this.push(frame, now);
    return true;
  }

  dequeue(start: number): Frame | null {
    const f = this.pop(start);
    if (f === null) return null;
    this.length--;
    this.accounting?.committed(f, start + Math.max(f.z, MIN_FRAME) * this.nsPerByte);
    return f;
  }

  nextEligible(start: number): number {
    return start;
  }

  /** a frame the qdisc held is dropped (overflow, AQM) */
  protected drop(frame: Frame): void {
    this.length--;
    this.discardedBytes += frame.z;
    this.dropsSince++;
    this.totals.drops++;
    this.accounting?.dropped(frame);
  }

  /** marks an ECN-capable frame CE instead of dropping it; false when it is not ECN-capable */
  protected mark(frame: Frame): boolean {
    if (frame.e !== Ecn.Ect && frame.e !== Ecn.Ce) return false;
    if (frame.e === Ecn.Ect) {
      frame.e = Ecn.Ce;
      this.marksSince++;
      this.totals.marks++;
    }
    return true;
  }

  discarded(): number {
    const b = this.discardedBytes;
    this.discardedBytes = 0;
    return b;
  }

  drops(): number {
    const n = this.dropsSince;
    this.dropsSince = 0;
    return n;
  }

  marks(): number {
    const n = this.marksSince;
    this.marksSince = 0;
    return n;
  }
}

/** A FIFO of frames with the time each entered (CoDel's sojourn time), on growable parallel rings. */
export class TimedFifo {
  private frames: Array<Frame | undefined> = new Array(16);
  private times: number[] = new Array(16).fill(0);
  private head = 0;
  length = 0;
  /** bytes held */
  bytes = 0;

  push(f: Frame, t: number): void {
    if (this.length === this.frames.length) this.grow();
    const i = (this.head + this.length) % this.frames.length;
    this.frames[i] = f;
    this.times[i] = t;
    this.length++;
    this.bytes += f.z;
  }

  /** the oldest frame's entry time (call only when not empty) */
  headTime(): number {
    return this.times[this.head];
  }

  shift(): Frame | null {
    if (this.length === 0) return null;
    const f = this.frames[this.head]!;
    this.frames[this.head] = undefined;
    this.head = (this.head + 1) % this.frames.length;
    this.length--;
    this.bytes -= f.z;
    return f;
  }

  private grow(): void {
    const n = this.frames.length * 2;
    const frames = new Array<Frame | undefined>(n);
    const times = new Array<number>(n).fill(0);
    for (let i = 0; i < this.length; i++) {
      const j = (this.head + i) % this.frames.length;
      frames[i] = this.frames[j];
      times[i] = this.times[j];
    }
    this.frames = frames;
    this.times = times;
    this.head = 0;
  }
}

/** A member of a `FlowList`: the next on its list, and whether it is on one. */
export interface Listed<T> {
  next: T | null;
  attached: boolean;
}

/**
 * An intrusive FIFO of flow queues: the new_flows and old_flows lists of Linux's fq and fq_codel, which
 * link their flows through the flows themselves (a flow is on at most one list).
 */
export class FlowList<T extends Listed<T>> {
  head: T | null = null;
  private tail: T | null = null;

  push(f: T): void {
    f.attached = true;
    f.next = null;
    if (this.tail === null) this.head = f;
    else this.tail.next = f;
    this.tail = f;
  }

  shift(): T {
    const f = this.head!;
    this.head = f.next;
    if (this.head === null) this.tail = null;
    f.next = null;
    f.attached = false;
    return f;
  }
}

/**
 * The flow a frame belongs to, as Linux's qdiscs key it (the socket, or the 5-tuple's hash): a data or
 * ACK frame by its flow id (a host is one end of a flow, so its data and its ACKs never share a host's
 * NIC), anything else by its type and destination.
 */
export function flowKey(f: Frame): number {
  return f.t === FrameType.Data || f.t === FrameType.Ack ? f.f : -1 - (f.d * 8 + f.t);
}
