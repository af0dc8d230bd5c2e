/**
 * The host transport interface: what the host hands a transport (a NIC to send on, a node clock, the
 * host id, a place to record finished flows) and what it asks of it (start a flow, take a frame).
 * Schemes plug in here: Fastpass gates sends to allocated timeslots and sets source routes, Flowtune
 * paces flows at allocated rates, TOP/ExpressPass sends on receiver tokens, Harmony reserves
 * virtual links first. The baseline window transport is the first implementation.
 */
import type { NodeClock } from '../../core/clock.js';
import type { Frame } from '../../core/frame.js';
import type { FlowSpec, TransportConfig } from '../../core/messages.js';
import type { Metrics } from '../../core/metrics.js';

export interface Nic {
  /** queues a frame on the host's egress port now; false when the NIC buffer dropped it */
  send(frame: Frame): boolean;
}

export interface TransportComponents {
  readonly hostId: number;
  readonly clock: NodeClock;
  readonly nic: Nic;
  readonly metrics: Metrics;
  /** the receiving side saw the last byte of flow `id` at `now` */
  delivered(id: number, now: number, via: number[]): void;
  /** the sending side has every byte of flow `id` acknowledged */
  acked(id: number, now: number): void;
}

export interface SenderStats {
  retransmits: number;
  timeouts: number;
}

export interface Transport {
  startFlow(flow: FlowSpec, now: number): void;
  /** a data/ack/control frame addressed to this host */
  onFrame(frame: Frame, now: number): void;
  senderStats(id: number): SenderStats | undefined;
  stop(): void;
}

export type TransportFactory = (config: TransportConfig, components: TransportComponents) => Transport;
