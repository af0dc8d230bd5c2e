/**
 * Linux's pfifo_fast (net/sched/sch_generic.c), the kernel's default qdisc: three FIFO bands served in
 * strict order, a packet's band chosen from its priority by the priomap, and a limit of the device's
 * transmit queue length in packets (DEFAULT_TX_QUEUE_LEN, 1000, include/net/pkt_sched.h). A frame's
 * class (0–7) is read as its socket priority: ACKs (class 6, TC_PRIO_INTERACTIVE) and control frames
 * (7, TC_PRIO_CONTROL) go to band 0, best effort (0) to band 1. The limit is counted over all bands,
 * as sch_generic.c did before its bands became per-band rings.
 */
import { FrameFifo } from '../../core/discipline.js';
import type { Frame } from '../../core/frame.js';
import { HostQdisc } from './qdisc.js';

/** sch_generic.c's prio2band, indexed by priority 0–15 */
const PRIO2BAND = [1, 2, 2, 2, 1, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1];

export const PFIFO_FAST_LIMIT = 1000;

export class PfifoFast extends HostQdisc {
  private readonly bands = [new FrameFifo(), new FrameFifo(), new FrameFifo()];

  constructor(
    rateBps: number,
    private readonly limit = PFIFO_FAST_LIMIT,
  ) {
    super(rateBps);
  }

  protected admit(): boolean {
    return this.length < this.limit;
  }

  protected push(frame: Frame): void {
    this.bands[PRIO2BAND[frame.p & 15]].push(frame);
  }

  protected pop(): Frame | null {
    for (const band of this.bands) {
      const f = band.shift();
      if (f !== undefined) return f;
    }
    return null;
  }
}
