/**
 * Fastpass on a host: the run's own transport (the baseline window protocol, or UDP) unchanged, over
 * the Fastpass qdisc instead of the bare NIC (SIGCOMM'14 §6.1: "The current implementation does not
 * modify TCP"). FCP frames go to the qdisc, everything else to the transport. In message mode
 * (Harmony's footnote 3) the host sends every flow itself as one message (messages.ts); the run's
 * transport carries nothing.
 */

import {
  type Frame,
  FrameType,
  type SenderStats,
  type Transport,
  type TransportComponents,
} from '../../../sdk/node.js';
import type { FastpassHostConfig } from '../wire.js';
import { isMessageData } from '../wire.js';
import { MessageHost } from './messages.js';
import { FastpassQdisc } from './qdisc.js';

export class FastpassTransport implements Transport {
  private readonly qdisc: FastpassQdisc;
  private readonly inner: Transport;
  private readonly messages: MessageHost | null = null;
  readonly receivedFrames?: () => Array<[number, number]>;

  constructor(
    cfg: FastpassHostConfig,
    c: TransportComponents,
    makeInner: (components: TransportComponents) => Transport,
  ) {
    const qdisc = new FastpassQdisc(cfg, c.hostId, c.clock, c.nic, c.physNow);
    this.qdisc = qdisc;
    if (cfg.messages !== undefined) {
      this.messages = new MessageHost(
        c.hostId,
        c.clock,
        c.nic,
        cfg.slotNs,
        cfg.lateNs,
        c.physNow,
        () => qdisc.requestSoon(),
        c.delivered,
      );
      qdisc.carry(this.messages);
    }
    const inner = makeInner({ ...c, nic: this.qdisc.nic });
    this.inner = inner;
    if (inner.receivedFrames) this.receivedFrames = () => inner.receivedFrames!();
  }

  startFlow(...args: Parameters<Transport['startFlow']>): void {
    if (this.messages !== null) this.messages.submit(args[0]);
    else this.inner.startFlow(...args);
  }

  /** the run's transport stops the flow; what it already handed the qdisc still goes, in its timeslots */
  endFlow(id: number, now: number): boolean {
    return this.messages === null && this.inner.endFlow !== undefined && this.inner.endFlow(id, now);
  }

  onFrame(frame: Frame, now: number): void {
    if (frame.t === FrameType.Control && this.qdisc.onControl(frame, now)) return;
    if (this.messages !== null && frame.t === FrameType.Data && isMessageData(frame.x)) {
      this.messages.received(frame, frame.x);
      return;
    }
    if (frame.t === FrameType.Data) this.qdisc.received(frame);
    this.inner.onFrame(frame, now);
  }

  senderStats(id: number): SenderStats | undefined {
    return this.inner.senderStats(id);
  }

  partialPaths(): Array<[number, number[], number]> {
    return this.inner.partialPaths();
  }

  report(): unknown {
    const r = this.qdisc.report();
    return this.messages === null ? r : { ...r, messages: this.messages.report() };
  }

  stop(): void {
    this.messages?.stop();
    this.qdisc.stop();
    this.inner.stop();
  }
}
