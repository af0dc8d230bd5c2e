/**
 * Queue disciplines decide the order in which an egress port transmits (STYLE: the port keeps the
 * books, the discipline only decides order). The default is 8 strict-priority FIFOs; schemes add their
 * own (e.g. a token class under a rate limiter) through the same interface.
 */
import { type Frame, PRIORITIES } from './frame.js';

export interface Discipline {
  /**
   * takes `frame`, offered at physical `now`; false when the discipline's own limit refuses it (a
   * credit queue's length cap)
   */
  enqueue(frame: Frame, now: number): boolean;
  /** Next frame to start transmitting at `start`, or null if none is eligible then. */
  dequeue(start: number): Frame | null;
  /** Earliest time a frame becomes eligible when `dequeue` returned null while frames wait. */
  nextEligible(start: number): number;
  /** bytes of frames it discarded itself since the last call (expired while waiting), for the port's books */
  discarded?(): number;
  /**
   * The buffer is `needBytes` short for `frame`: the discipline may push out frames it holds to make
   * room (pFabric drops its least urgent packets). It returns what it pushed out, which the port
   * counts as congestion drops; less than `needBytes` (it should then push out nothing) drops the
   * arrival, as drop-tail does. Absent: drop-tail.
   */
  pushOut?(frame: Frame, needBytes: number): { frames: number; bytes: number };
  /**
   * Frames it refused or dropped for want of room since the last call, which the port counts as
   * congestion drops (a host qdisc's limits and AQM); absent: its refusals are its scheme's to count.
   */
  drops?(): number;
  /** frames it marked CE itself since the last call (CoDel's marks), counted with the port's */
  marks?(): number;
  readonly length: number;
}

/** A FIFO on a growable ring buffer: no per-frame allocation after warm-up. */
export class FrameFifo {
  private buf: Array<Frame | undefined> = new Array(64);
  private head = 0;
  length = 0;

  push(f: Frame): void {
    if (this.length === this.buf.length) {
      const next = new Array<Frame | undefined>(this.buf.length * 2);
      for (let i = 0; i < this.length; i++) next[i] = this.buf[(this.head + i) % this.buf.length];
      this.buf = next;
      this.head = 0;
    }
    this.buf[(this.head + this.length) % this.buf.length] = f;
    this.length++;
  }

  peek(): Frame | undefined {
    return this.length === 0 ? undefined : this.buf[this.head];
  }

  shift(): Frame | undefined {
    if (this.length === 0) return undefined;
    const f = this.buf[this.head];
    this.buf[this.head] = undefined;
    this.head = (this.head + 1) % this.buf.length;
    this.length--;
    return f;
  }
}

export class StrictPriority implements Discipline {
  protected readonly queues: FrameFifo[] = Array.from({ length: PRIORITIES }, () => new FrameFifo());
  length = 0;

  enqueue(frame: Frame): boolean {
    this.queues[frame.p].push(frame);
    this.length++;
    return true;
  }

  dequeue(_start?: number): Frame | null {
    for (let p = PRIORITIES - 1; p >= 0; p--) {
      const q = this.queues[p];
      if (q.length > 0) {
        this.length--;
        return q.shift()!;
      }
    }
    return null;
  }

  nextEligible(start: number): number {
    return start;
  }

  /** Frames waiting in class `p`. */
  depth(p: number): number {
    return this.queues[p].length;
  }
}
