/**
 * The port: the fabric's 8 strict-priority classes, marking on dequeue. A frame leaving the queue is
 * marked CE (when ECN-capable) if the bytes still queued behind it in this port are at least K, the
 * DCTCP threshold; the port's own marking on arrival is meant to be off (`ports.ecnThreshold: 0`).
 * Marking on dequeue tells the sender about the queue it leaves behind now, not the one it found a
 * queueing delay ago.
 */
import { Ecn, StrictPriority } from 'dcemu/scheme/node';

/** @typedef {import('dcemu/scheme/node').Discipline} Discipline */
/** @typedef {import('dcemu/scheme/node').Frame} Frame */

/** @implements {Discipline} */
export class DequeueMarkingQueue {
  /**
   * @param {number} k the marking threshold, bytes queued behind the departing frame
   * @param {{ marked: number, markedBytes: number, ectDequeued: number }} counts the node's counters
   */
  constructor(k, counts) {
    this.k = k;
    this.counts = counts;
    this.inner = new StrictPriority();
    /** bytes of the frames this discipline holds */
    this.bytes = 0;
  }

  get length() {
    return this.inner.length;
  }

  /** @param {Frame} frame */
  enqueue(frame) {
    const taken = this.inner.enqueue(frame);
    if (taken) this.bytes += frame.z;
    return taken;
  }

  /** @param {number} start */
  dequeue(start) {
    const frame = this.inner.dequeue(start);
    if (frame === null) return null;
    this.bytes -= frame.z;
    if (frame.e === Ecn.Ect) {
      this.counts.ectDequeued++;
      if (this.bytes >= this.k) {
        frame.e = Ecn.Ce;
        this.counts.marked++;
        this.counts.markedBytes += frame.z;
      }
    }
    return frame;
  }

  /** @param {number} start */
  nextEligible(start) {
    return this.inner.nextEligible(start);
  }
}
