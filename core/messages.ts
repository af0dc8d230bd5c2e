/**
 * What travels on the control channel: the node's configuration, commands from the orchestrator and
 * the node's reports. Plain data only (msgpack), shared by every runtime.
 */

import type { PeerAddress } from './endpoint.js';
import type { HistogramSnapshot } from './histogram.js';
import type { MetricsSnapshot } from './metrics.js';
import type { PortParams } from './port.js';
import type { FidelitySnapshot } from './scheduler.js';
import type { Epoch } from './time.js';
import type { WireState } from './wire.js';

export type NodeKind = 'host' | 'switch';

/** A port as its node sees it: link parameters, the peer, and where it points in the up/down order. */
export interface PortConfig extends PortParams {
  index: number;
  peer: string;
  peerId: number;
  peerPort: number;
  /** 'up' toward the core, 'down' toward hosts; hosts' NICs are 'up' */
  dir: 'up' | 'down';
}

export interface LivenessConfig {
  /** keepalive interval when a port is idle, virtual ns */
  intervalNs: number;
  /** a port is declared down after this many intervals without any frame */
  multiplier: number;
}

/** Up/down routing table of one switch: destination host id -> candidate down ports; else the up ports. */
export interface RoutingTable {
  down: Record<number, number[]>;
  up: number[];
}

export interface TransportConfig {
  kind: 'baseline';
  /** initial congestion window, frames */
  initCwnd: number;
  /** DCTCP gain g for the marked-fraction estimate alpha */
  g: number;
  minRtoNs: number;
  maxRtoNs: number;
  /** duplicate ACKs that trigger fast retransmit */
  dupAcks: number;
}

export interface FlowSpec {
  id: number;
  src: number;
  dst: number;
  size: number;
  /** start, virtual ns after traffic start */
  start: number;
}

export interface NodeConfig {
  name: string;
  id: number;
  kind: NodeKind;
  tier: number;
  tdf: number;
  epoch: Epoch;
  seed: number;
  /** address the node's UDP socket binds to */
  bindHost: string;
  logFile: string | null;
  logLevel: string;
  ports: PortConfig[];
  liveness: LivenessConfig;
  /** switches only */
  routing?: RoutingTable;
  /** queue-occupancy sampling period, virtual ns (switches) */
  sampleNs: number;
  /** hosts only */
  transport?: TransportConfig;
  flows?: FlowSpec[];
}

export type FaultCommand =
  | { kind: 'wire'; port: number; state: Partial<WireState> }
  | { kind: 'wire-reset'; port: number };

export type ControlMessage =
  | { type: 'config'; config: NodeConfig }
  | { type: 'peers'; peers: Array<PeerAddress | null> }
  /** start traffic: `at` is the physical time flows are relative to */
  | { type: 'start'; at: number }
  | { type: 'fault'; fault: FaultCommand }
  | { type: 'snapshot' }
  | { type: 'stop' };

export interface FlowRecord {
  id: number;
  src: number;
  dst: number;
  size: number;
  start: number;
  /** physical time the receiver got the last byte, or -1 */
  finish: number;
  retransmits: number;
  timeouts: number;
  /** switch ids where the flow's frames turned downward (path accounting) */
  via: number[];
}

export interface QueueSeries {
  port: number;
  peer: string;
  t: number[];
  v: number[];
}

export interface NodeReport {
  name: string;
  fidelity: FidelitySnapshot;
  metrics: MetricsSnapshot;
  ports: Array<{
    index: number;
    peer: string;
    txFrames: number;
    txBytes: number;
    drops: number;
    ecnMarks: number;
    maxBytes: number;
  }>;
  queues: QueueSeries[];
  queueHist: HistogramSnapshot | null;
  flows: FlowRecord[];
  /** flows as seen by the receiving side: id -> [finish, via...] */
  received: Array<[number, number, number[]]>;
}

export interface ProgressStats {
  now: number;
  flowsDone: number;
  flowsStarted: number;
  fidelity: { late99: number; misses: number; frames: number };
}

export type NodeMessage =
  | { type: 'hello'; name: string; pid: number }
  | { type: 'ready'; udpPort: number }
  | { type: 'event'; event: NodeEvent }
  | { type: 'stats'; stats: ProgressStats }
  | { type: 'report'; report: NodeReport }
  | { type: 'error'; message: string };

export interface NodeEvent {
  /** physical time, virtual ns */
  t: number;
  kind: string;
  node: string;
  [key: string]: unknown;
}
