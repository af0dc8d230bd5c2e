/**
 * Fastpass on a host: the run's own transport (the baseline window protocol, or UDP) unchanged, over
 * the Fastpass qdisc instead of the bare NIC (SIGCOMM'14 §6.1: "The current implementation does not
 * modify TCP"). FCP frames go to the qdisc, everything else to the transport.
 */

import { type Frame, FrameType } from '../../../core/frame.js';
import type { SenderStats, Transport, TransportComponents } from '../../../node/transport/types.js';
import type { FastpassHostConfig } from '../wire.js';
import { FastpassQdisc } from './qdisc.js';

export class FastpassTransport implements Transport {
  private readonly qdisc: FastpassQdisc;
  private readonly inner: Transport;
  readonly receivedFrames?: () => Array<[number, number]>;

  constructor(
    cfg: FastpassHostConfig,
    c: TransportComponents,
    makeInner: (components: TransportComponents) => Transport,
  ) {
    this.qdisc = new FastpassQdisc(cfg, c.hostId, c.clock, c.nic, c.physNow);
    const inner = makeInner({ ...c, nic: this.qdisc.nic });
    this.inner = inner;
    if (inner.receivedFrames) this.receivedFrames = () => inner.receivedFrames!();
  }

  startFlow(...args: Parameters<Transport['startFlow']>): void {
    this.inner.startFlow(...args);
  }

  onFrame(frame: Frame, now: number): void {
    if (frame.t === FrameType.Control && this.qdisc.onControl(frame, now)) return;
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
    return this.qdisc.report();
  }

  stop(): void {
    this.qdisc.stop();
    this.inner.stop();
  }
}
