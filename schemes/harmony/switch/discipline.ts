/**
 * A Harmony switch port (NSDI'24 §3.2): strict priority (data, rsvp and complete in class 7; request,
 * reject and failure in class 6; best effort in 0), with `controlShare` of the link reserved for the
 * second class so that data cannot starve it. The reserve is a rate guaranteed while the class
 * waits: it earns credit at that share of the link rate for as long as a second-class frame waits
 * (from the head frame's arrival), and once the credit covers the head frame, that frame goes before
 * waiting data. Nothing is banked while the class is idle, so the order is strict priority unless the
 * second class has been held back longer than its share allows (a 64-byte frame: 2.56 µs at 2% of
 * 10 Gbit/s).
 */
import { type Frame, StrictPriority } from '../../../sdk/node.js';
import { HarmonyClass } from '../wire.js';

export class ControlReserve extends StrictPriority {
  /** credit of the waiting second class, bytes, as of `at` */
  private credit = 0;
  private at = 0;
  private readonly bytesPerNs: number;
  /** second-class frames sent ahead of waiting data on the reserve */
  lent = 0;

  constructor(rateBps: number, share: number) {
    super();
    this.bytesPerNs = (rateBps * share) / 8e9;
  }

  override dequeue(start: number): Frame | null {
    const second = this.queues[HarmonyClass.Second];
    const head = second.peek();
    if (head === undefined) this.credit = 0;
    else {
      // earned while the head waited here (it arrived at `head.a`)
      const from = Math.max(this.at, head.a);
      if (start > from) this.credit += (start - from) * this.bytesPerNs;
    }
    if (start > this.at) this.at = start;
    if (head !== undefined && this.credit >= head.z && this.depth(HarmonyClass.Data) > 0) {
      this.credit -= head.z;
      this.lent++;
      this.length--;
      return second.shift()!;
    }
    const f = super.dequeue(start);
    if (f !== null && f.p === HarmonyClass.Second) this.credit = Math.max(0, this.credit - f.z);
    return f;
  }
}
