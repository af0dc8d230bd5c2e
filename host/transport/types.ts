/**
 * The host transport interface: what the host hands a transport (a NIC to send on, a node clock, the
 * host id, a place to record finished flows) and what it asks of it (start a flow, take a frame).
 * Schemes plug in here: Fastpass gates sends to allocated timeslots and sets source routes, Flowtune
 * paces flows at allocated rates, TOP/ExpressPass sends on receiver tokens, Harmony reserves
 * virtual links first. The baseline window transport is the first implementation; UDP (unreliable,
 * paced) the second.
 */
import type { NodeClock } from '../../core/clock.js';
import { type Frame, WireSize } from '../../core/frame.js';
import type { DetectorFactory } from '../../core/liveness.js';
import type { FlowSpec, HostStackConfig, TransportConfig } from '../../core/messages.js';
import type { Metrics } from '../../core/metrics.js';
import type { DisciplineFactory } from '../../core/node-runtime.js';

export interface Nic {
  /** queues a frame on the host's egress port now; false when the NIC buffer dropped it */
  send(frame: Frame): boolean;
  /** line rate, bit/s (transports that pace themselves need it: UDP) */
  readonly rateBps?: number;
  /** bytes waiting in the NIC buffer now, not yet on the wire (UDP keeps it small) */
  backlog?(): number;
  /**
   * TCP small queues: bytes of flow `flow`'s data in the qdisc and NIC now (handed down, transmission
   * not ended: Linux's sk_wmem_alloc); absent when the host does not track them
   */
  flowBacklog?(flow: number): number;
  /** flow `flow` stopped over its small-queue limit: `wake` is called once some of its bytes have left */
  throttle?(flow: number, wake: (flow: number) => void): void;
}

export interface TransportComponents {
  readonly hostId: number;
  readonly clock: NodeClock;
  readonly nic: Nic;
  /** the host stack's limits (absent: none, as the `unbounded` stack) */
  readonly stack?: HostStackConfig;
  readonly metrics: Metrics;
  /** the receiving side saw the last byte of flow `id` at `now` */
  delivered(id: number, now: number, via: number[]): void;
  /** the sending side has every byte of flow `id` acknowledged */
  acked(id: number, now: number): void;
  /** physical time of the event being handled: for measurements in reports, never for protocol logic */
  physNow(): number;
  /** an event for events.jsonl, at the physical time of the event being handled */
  emit?(kind: string, fields: Record<string, unknown>): void;
}

/** A scheme transport's receiving side, as `partialPaths` reads it. */
export interface PartialReceiver {
  readonly id: number;
  readonly delivered: boolean;
  readonly count: number;
  readonly via: number[];
  readonly lastNew: number;
}

/**
 * `Transport.partialPaths` of a scheme transport over a best-effort one: its own flows with data but
 * not all of it, then the best-effort transport's.
 */
export function partialPathsOver(
  own: Iterable<PartialReceiver>,
  bestEffort: Transport,
): Array<[number, number[], number]> {
  const out: Array<[number, number[], number]> = [];
  for (const r of own) if (!r.delivered && r.count > 0) out.push([r.id, r.via, r.lastNew]);
  return [...out, ...bestEffort.partialPaths()];
}

/**
 * Data frames a flow of `size` bytes is cut into: full payloads of `mss` bytes, the last one shorter
 * (at least one).
 */
export function segmentCount(size: number, mss: number = WireSize.Mss): number {
  return Math.max(1, Math.ceil(size / mss));
}

/** Wire size of data frame `seq` of a flow of `size` bytes: its payload plus the headers. */
export function segmentBytes(size: number, seq: number, mss: number = WireSize.Mss): number {
  const payload = seq === segmentCount(size, mss) - 1 ? size - seq * mss : mss;
  return Math.max(1, payload) + WireSize.Header;
}

export interface SenderStats {
  retransmits: number;
  timeouts: number;
  /** data frames handed to the NIC, retransmissions included */
  framesSent: number;
}

/**
 * A transport whose flows' windows a rate allocator below it can set (Flowtune §6.2: "it opens the
 * flow's TCP window and paces packets on that flow according to the allocated rate").
 */
export interface WindowControl {
  /**
   * flow `id`'s window is `frames`, whatever its congestion control says, and it sends new data at
   * `rateBps` (wire bytes; 0: unpaced), until released
   */
  hold(id: number, frames: number, rateBps: number, now: number): void;
  /** flow `id`'s own congestion control takes over again, from a window of `frames` */
  release(id: number, frames: number, now: number): void;
}

export interface Transport {
  /** present when an allocator can hold its flows' windows */
  readonly windows?: WindowControl;
  startFlow(flow: FlowSpec, now: number): void;
  /**
   * The application closes flow `id` before all of it was sent (`FlowSpec.stop`): nothing new goes
   * out, nothing is sent again; frames already handed down still leave; it will never complete.
   * False when there was nothing left to hold back (it was all sent: it completes as it would have).
   * Transports without it cannot stop a flow (the orchestrator refuses such a workload).
   */
  endFlow?(id: number, now: number): boolean;
  /** a data/ack/control frame addressed to this host */
  onFrame(frame: Frame, now: number): void;
  senderStats(id: number): SenderStats | undefined;
  /** distinct data frames received per flow, [id, frames], for transports that count them (UDP) */
  receivedFrames?(): Array<[number, number]>;
  /**
   * flows with frames received but not every byte: [id, switch ids where their frames turned down,
   * physical time new data last arrived]
   */
  partialPaths(): Array<[number, number[], number]>;
  /** a scheme transport's own report section (`scheme` in the host report) */
  report?(): unknown;
  stop(): void;
}

export type TransportFactory = (config: TransportConfig, components: TransportComponents) => Transport;

/** What a scheme plugs into a host process: a transport over the run's, or a layer under it. */
export interface HostPart {
  detector?: DetectorFactory;
  /**
   * the NIC's queue discipline; a scheme with a transport of its own gets strict priority without one,
   * any other host the run's qdisc (`host.qdisc`)
   */
  discipline?: DisciplineFactory;
  /** its `under` layer is the host's qdisc (Fastpass's, which replaces Linux's): the NIC has no other */
  replacesQdisc?: boolean;
  /** its transport, over the run's transport (which it may use for best-effort delivery) */
  transport?(config: unknown, components: TransportComponents, bestEffort: Transport): Transport;
  /**
   * its layer under the run's transport: it makes the run's transport with the components it gives it.
   * The run's qdisc (`host.qdisc`) still runs beneath it on the NIC unless `replacesQdisc` says the
   * layer is the host's qdisc itself (Fastpass's).
   */
  under?(
    config: unknown,
    components: TransportComponents,
    makeRunTransport: (components: TransportComponents) => Transport,
  ): Transport;
}
