/**
 * dcemu's own NIC discipline before the host stack was modelled: 8 strict-priority FIFOs by the
 * frame's class, no limit but the NIC's byte buffer (`host.qdisc: prio`, the `unbounded` stack's).
 */
import { FrameFifo } from '../../core/discipline.js';
import { type Frame, PRIORITIES } from '../../core/frame.js';
import { HostQdisc } from './qdisc.js';

export class Prio extends HostQdisc {
  private readonly queues: FrameFifo[] = Array.from({ length: PRIORITIES }, () => new FrameFifo());

  protected admit(): boolean {
    return true;
  }

  protected push(frame: Frame): void {
    this.queues[frame.p].push(frame);
  }

  protected pop(): Frame | null {
    for (let p = PRIORITIES - 1; p >= 0; p--) {
      const f = this.queues[p].shift();
      if (f !== undefined) return f;
    }
    return null;
  }
}
