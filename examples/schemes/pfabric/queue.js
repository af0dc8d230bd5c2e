/**
 * pFabric's port (§4.1 of the paper): a small buffer that holds packets in arrival order and
 * - dequeues by priority: the packet with the highest priority (the smallest remaining flow size);
 *   against starvation, the earliest packet of that packet's flow leaves, so a flow's packets stay in
 *   order;
 * - drops by priority: an arriving packet that finds the buffer full is dropped if its priority is no
 *   better than that of the lowest-priority packet held; otherwise packets of the lowest priority are
 *   pushed out to make room.
 * Frames without a pFabric priority (acknowledgements, probes' acks, keepalives, clock and control
 * frames) go first, in arrival order: they are small, and the paper's hosts send ACKs at the highest
 * priority.
 */
import { FrameType } from 'dcemu/scheme/node';

/**
 * the priority number a frame carries (its flow's remaining size, bytes, in `x: [remaining, size]`;
 * smaller is more urgent), or -1
 */
export function rank(frame) {
  return frame.t === FrameType.Data && Array.isArray(frame.x) ? frame.x[0] : -1;
}

const sameFlow = (a, b) => a.f === b.f && a.s === b.s && a.d === b.d;

export class PFabricQueue {
  constructor(stats) {
    /** frames held, in arrival order */
    this.held = [];
    this.length = 0;
    /** shared counters of the node: frames and bytes pushed out */
    this.stats = stats ?? { pushedOut: 0, pushedOutBytes: 0 };
  }

  enqueue(frame) {
    this.held.push(frame);
    this.length++;
    return true;
  }

  dequeue(_start) {
    const held = this.held;
    if (held.length === 0) return null;
    // frames without a priority first, in arrival order
    let best = -1;
    for (let i = 0; i < held.length; i++) {
      const r = rank(held[i]);
      if (r < 0) {
        best = i;
        break;
      }
      if (best < 0 || r < rank(held[best])) best = i;
    }
    // the earliest frame of the most urgent frame's flow (arrival order: the first match)
    let i = best;
    if (rank(held[best]) >= 0) {
      const flow = held[best];
      i = held.findIndex((f) => rank(f) >= 0 && sameFlow(f, flow));
    }
    const [f] = held.splice(i, 1);
    this.length--;
    return f;
  }

  nextEligible(start) {
    return start;
  }

  /**
   * The buffer is `needBytes` short for `frame`: push out the lowest-priority packets, all of them
   * less urgent than `frame`, if that frees enough; else push out nothing (the arrival is dropped).
   */
  pushOut(frame, needBytes) {
    const r = rank(frame);
    // an unranked arrival (an ack) outranks every data packet
    const arriving = r < 0 ? -1 : r;
    const victims = [];
    let freed = 0;
    const order = this.held
      .map((f, i) => ({ f, i, r: rank(f) }))
      .filter((x) => x.r >= 0 && (arriving < 0 || x.r > arriving))
      // lowest priority first; of equal priority, the latest arrival
      .sort((a, b) => b.r - a.r || b.i - a.i);
    for (const x of order) {
      if (freed >= needBytes) break;
      victims.push(x.i);
      freed += x.f.z;
    }
    if (freed < needBytes) return { frames: 0, bytes: 0 };
    const drop = new Set(victims);
    this.held = this.held.filter((_, i) => !drop.has(i));
    this.length = this.held.length;
    this.stats.pushedOut += victims.length;
    this.stats.pushedOutBytes += freed;
    return { frames: victims.length, bytes: freed };
  }
}
