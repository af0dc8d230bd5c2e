/**
 * Message mode's queueing stamp (Harmony NSDI'24 Fig. 6c: where a message's delay goes): every switch
 * adds to a message packet's `qd` the time it waited on its egress port, from its routing to the start
 * of its transmission, exactly as Harmony's switches stamp theirs (schemes/harmony/switch/module.ts),
 * so both schemes' in-network queueing is measured the same way. Forwarding stays the source routes'.
 * Only message-mode runs load it: the paper's Fastpass runs no switch module.
 */
import type { Frame, SwitchScheme } from '../../../sdk/node.js';
import { isMessageData } from '../wire.js';

export class QueueingStamp implements SwitchScheme {
  /** message packets routed and not yet sent on: when they were routed */
  private readonly arrived = new Map<Frame, number>();

  constructor(private readonly now: () => number) {}

  forwarded(frame: Frame): void {
    if (isMessageData(frame.x)) this.arrived.set(frame, this.now());
  }

  dropped(frame: Frame): void {
    this.arrived.delete(frame);
  }

  departed(_port: number, frame: Frame, txStart: number): void {
    const t0 = this.arrived.get(frame);
    if (t0 === undefined) return;
    this.arrived.delete(frame);
    (frame.x as { qd: number }).qd += txStart - t0;
  }
}
