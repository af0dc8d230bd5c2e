/**
 * What travels on the control channel: the node's configuration, commands from the orchestrator and
 * the node's reports. Plain data only (msgpack), shared by every runtime.
 */

import type { CaptureConfig } from './capture.js';
import type { PeerAddress } from './endpoint.js';
import type { WireState } from './fault-filter.js';
import type { HistogramSnapshot } from './histogram.js';
import type { MetricsSnapshot } from './metrics.js';
import type { PortParams } from './port.js';
import type { Dist } from './random.js';
import type { ComputeSettings, ComputeSnapshot, FidelitySnapshot } from './scheduler.js';
import type { ServoConfig } from './servo.js';
import type { Epoch } from './time.js';

/** A node process's role: hosts and switches make the fabric; arbiters are a scheme's central control. */
export type NodeKind = 'host' | 'switch' | 'arbiter';

/** A port as its node sees it: link parameters, the peer, and where it points in the up/down order. */
export type PortDir = 'up' | 'down' | 'control';

export interface PortConfig extends PortParams {
  index: number;
  peer: string;
  peerId: number;
  peerPort: number;
  /**
   * 'up' toward the core, 'down' toward hosts; hosts' NICs are 'up'. 'control': a link between a switch
   * and an arbiter, which carries the scheme's control frames and is never routed through.
   */
  dir: PortDir;
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
  /** every host of the fabric (the destinations a route update speaks of) */
  hosts?: number[];
  /** the ports whose peer is a switch: where route updates go */
  neighbours?: number[];
}

/** Route withdrawal between switches as a BGP-run Clos does it (`routing:`; switch/route-updates.ts). */
export interface RouteUpdateConfig {
  /** a switch's time to process a route update and install it, per hop, virtual ns */
  updateDelayNs: number;
}

/**
 * A scheme's part of a node's configuration. `core/` never reads `config`: the node's scheme registry
 * (core/scheme-parts.ts, `loadSchemeParts`) hands it to the module of `kind`, for the node's role.
 */
export interface SchemeNodeConfig {
  kind: string;
  config: unknown;
  /** the module exporting the scheme's node-process parts (set by the plan from the scheme's definition) */
  parts?: string;
}

/** The host transport, by kind (host/transport/): one per run, the same on every host. */
export type TransportConfig = BaselineTransportConfig | UdpTransportConfig;

export interface BaselineTransportConfig {
  kind: 'baseline';
  /** congestion control: DCTCP (ECN marks cut the window by alpha/2), or Reno (loss only, ECN off) */
  cc: 'dctcp' | 'reno';
  /** the receive window, bytes: the sender keeps at most this much unacknowledged (absent: no limit) */
  rwndBytes?: number;
  /** initial congestion window, frames */
  initCwnd: number;
  /** DCTCP gain g for the marked-fraction estimate alpha */
  g: number;
  minRtoNs: number;
  maxRtoNs: number;
  /** duplicate ACKs that trigger fast retransmit */
  dupAcks: number;
}

/** A host's NIC queueing discipline (host/qdisc/): Linux's fq_codel, fq or pfifo_fast, or dcemu's 8 strict-priority FIFOs. */
export type QdiscKind = 'fq_codel' | 'fq' | 'pfifo_fast' | 'prio';

/**
 * The host stack under the transport (`host:` in a scenario, docs/scenarios.md#host): what bounds what
 * a flow may hand its NIC, and the NIC's qdisc.
 */
export interface HostStackConfig {
  /** the preset the fields came from: `linux` (Linux's defaults) or `unbounded` (no limits, dcemu before) */
  stack: 'linux' | 'unbounded';
  qdisc: QdiscKind;
  /** a flow's socket send buffer: at most this many payload bytes sent and not acknowledged (0: no limit) */
  sendBufferBytes: number;
  /** TCP small queues' cap on a flow's bytes in the qdisc and NIC (tcp_limit_output_bytes; 0: no TSQ) */
  smallQueueBytes: number;
  /** the congestion window grows only while it limits what the flow sends (Linux's tcp_is_cwnd_limited) */
  cwndValidation: boolean;
  /**
   * the kernel and NIC path each frame crosses on each side, ns: a frame handed down reaches the NIC's
   * queue this much later, an arrived frame reaches the transport this much later (absent: none)
   */
  stackDelayNs?: number;
}

/** Unreliable, uncontrolled traffic (no acks, no retransmissions), paced at a fixed rate. */
export interface UdpTransportConfig {
  kind: 'udp';
  /** the host's send rate cap, bit/s; 0: the NIC's line rate */
  rateBps: number;
  /** each flow's own constant bit rate, bit/s (a paced stream); 0 or absent: as fast as the host sends */
  flowRateBps?: number;
}

export interface FlowSpec {
  id: number;
  src: number;
  dst: number;
  size: number;
  /** start, virtual ns after traffic start */
  start: number;
  /** background traffic: sent best effort beside a scheme's own transport */
  bestEffort?: true;
  /** ns after its start by which the flow should be complete (`workload.deadlines`) */
  deadline?: number;
  /**
   * virtual ns after traffic start when the application stops sending (a list flow's `stop`): nothing
   * new goes out after it, frames already handed down still leave, and the flow ends `stopped`
   */
  stop?: number;
  /** an ON period of an ON/OFF source (`workload.pattern: on-off`): its packets' sizes and gaps */
  gaps?: FlowGaps;
}

/**
 * How the UDP transport spaces an ON period's packets (host/onoff.ts): gap after gap drawn from `dist`
 * by an Rng seeded with `seed`, the same draws the generator counted the packets with.
 */
export interface FlowGaps {
  seed: number;
  /** gaps between packet starts, ns */
  dist: Dist;
  /** every packet's size on the wire, bytes */
  packet: number;
}

/** The node's oscillator (docs/architecture.md: time); absent: an ideal clock (node time = physical time). */
export interface ClockConfig {
  offsetNs: number;
  freqPpm: number;
  wanderPpmPerSqrtS: number;
  granularityNs: number;
  seed: number;
}

export type Timestamping = 'hardware' | 'software';

/** A clock's dataset as the BMCA compares it (IEEE 1588-2019 7.6.2), lower is better in every field. */
export interface PtpDataset {
  priority1: number;
  clockClass: number;
  clockAccuracy: number;
  offsetScaledLogVariance: number;
  priority2: number;
}

/**
 * What the switches are to PTP: transparent clocks (they add each event message's residence time to its
 * correction field), boundary clocks (each switch disciplines its own clock from one port and is the
 * master of its other ports: every exchange is link-local), or nothing (they forward PTP frames as any
 * other).
 */
export type SwitchClocks = 'transparent' | 'boundary' | 'none';

/** PTP settings shared by every node of a run (hosts run PTP ports; switches as `switchClocks` says). */
export interface PtpConfig {
  timestamping: Timestamping;
  switchClocks: SwitchClocks;
  /** e2e: Delay_Req/Delay_Resp with the master; p2p: peer delay on every link (P2P transparent clocks, or boundary clocks' ports) */
  delayMechanism?: 'e2e' | 'p2p';
  syncIntervalNs: number;
  announceIntervalNs: number;
  /** a slave's mean Delay_Req interval (logMinDelayReqInterval); absent: the sync interval */
  delayReqIntervalNs?: number;
  /** announce intervals without an Announce before a master is given up (announceReceiptTimeout) */
  announceTimeout: number;
  /**
   * how far apart the master-capable hosts claim the domain at start, best first (absent: one announce
   * interval): long enough for the better one's Announces to reach the next, qualified at every boundary
   * clock on the way
   */
  claimStaggerNs?: number;
  /** how long PTP runs before traffic starts (ptp.warmup): ports start that much before the start */
  warmupNs?: number;
  /** host ids that may become grandmaster, best first (by the BMCA's dataset comparison) */
  candidates: number[];
  /**
   * every master-capable host's clock dataset, by host id (IEEE 1588-2019 8.2.1): what its Announce
   * messages carry, and what the BMCA compares; a host without one is slave-only
   */
  datasets: Record<number, PtpDataset>;
  /** a software-stamping host's Delay_Req and the others' draws (seeded), and the send stamp jitter */
  seed?: number;
  /** every host id in the domain */
  hosts: number[];
  /** moving-median length for the path delay (linuxptp delay_filter_length) */
  delayFilter: number;
  /** |offset| below which a locked servo counts as in lock */
  lockThresholdNs: number;
  /** how often every host records its true clock error */
  sampleNs: number;
  /** PI servo gains and thresholds (linuxptp pi.c parameters) */
  servo: ServoConfig;
}

/** How the node processes agree on time (docs/architecture.md: conservative and dilated time). */
export type SyncMode = 'conservative' | 'dilated';

export interface NodeConfig {
  name: string;
  id: number;
  kind: NodeKind;
  tier: number;
  sync: SyncMode;
  /** dilated mode only */
  tdf: number;
  epoch: Epoch;
  seed: number;
  /**
   * address the node's UDP socket binds to, or a subnet (`a.b.c.d/n`): its interface address in it
   * (a swarm task learns its address only once scheduled)
   */
  bindHost: string;
  /** UDP port to bind (containers: a fixed port, so a restarted node keeps it); default any free port */
  bindPort?: number;
  logFile: string | null;
  logLevel: string;
  ports: PortConfig[];
  liveness: LivenessConfig;
  /** switches only */
  routing?: RoutingTable;
  /** switches only: withdraw and restore routes with their neighbours (absent: never) */
  routeUpdates?: RouteUpdateConfig;
  /** the scheme's part (F10 switches, hosts and controller, ...); absent on the ECMP baseline */
  scheme?: SchemeNodeConfig;
  /** sampling period, virtual ns: queue occupancy (switches), data bytes received (hosts) */
  sampleNs: number;
  /** hosts: data bytes received are also counted per source in intervals this long (fairness) */
  intervalNs?: number;
  clock?: ClockConfig;
  ptp?: PtpConfig;
  /** hosts only: jitter models (ns), drawn per event from the node's seed */
  jitter?: { stamp?: Dist; send?: Dist };
  /** hosts only */
  transport?: TransportConfig;
  /** hosts only: the stack under the transport (absent: unbounded, dcemu's NIC before the stack was modelled) */
  host?: HostStackConfig;
  flows?: FlowSpec[];
  /** packet capture of some of the node's egress ports (`run.capture`) */
  capture?: CaptureConfig;
  /** what the node's computation costs in fabric time (`compute:`); absent: nothing */
  compute?: ComputeSettings;
}

export type FaultCommand =
  | { kind: 'wire'; port: number; state: Partial<WireState> }
  | { kind: 'wire-reset'; port: number }
  /** oscillator faults: a phase step, a new frequency error */
  | { kind: 'clock'; stepNs?: number; freqPpm?: number };

export type ControlMessage =
  /** the orchestrator's opening: the node answers with a hello proving its key over `nonce` */
  | { type: 'challenge'; nonce: Uint8Array }
  /** the node is admitted; `proof` answers the node's own challenge (the orchestrator holds the secret) */
  | { type: 'welcome'; proof: Uint8Array }
  /** the connection is turned away (then closed) */
  | { type: 'refused'; reason: string }
  /** `tag`: the run's datagram tag (core/auth.ts), kept out of the config so no result carries it */
  | { type: 'config'; config: NodeConfig; tag: number }
  | { type: 'peers'; peers: Array<PeerAddress | null> }
  /** start traffic: `at` is the physical time flows are relative to */
  | { type: 'start'; at: number }
  /** `at`: conservative mode applies it at that physical time; dilated mode on arrival */
  | { type: 'fault'; fault: FaultCommand; at?: number }
  | { type: 'snapshot' }
  /** conservative mode: run every event before `until` */
  | { type: 'grant'; until: number }
  /**
   * conservative mode (`kill`, `stop`): handle nothing from `at` on; links fall silent, promising
   * nothing before `until` (a `start` brings a new process then; absent: never)
   */
  | { type: 'halt'; at: number; until?: number }
  /**
   * conservative mode: the peer on `port` is a new process (a container started again): the link
   * starts a new session (sequence numbers, window), what was held for the old one is lost
   */
  | { type: 'relink'; port: number }
  /** conservative mode (`pause`/`resume`): handle nothing in [from, until) */
  | { type: 'pause'; from: number; until: number }
  /**
   * conservative mode: the peer on `port` died unplanned (a crash, an OOM kill): the link is silent
   * from the last promise it sent, and whatever still comes from it is dropped
   */
  | { type: 'peer-gone'; port: number }
  /** dilated mode (`kill`): stop now and report what was carried; the process is killed next */
  | { type: 'kill' }
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
  /** data frames the sender handed its NIC, retransmissions included (when the transport counts them) */
  framesSent?: number;
  /** physical time the application stopped the flow before it was acknowledged (`FlowSpec.stop`) */
  stopped?: number;
}

export interface QueueSeries {
  port: number;
  peer: string;
  t: number[];
  v: number[];
}

/** A host's clock as measured: true error (node clock − physical time) and PTP's own estimate. */
export interface ClockSeries {
  t: number[];
  /** true error, ns */
  err: number[];
  /** PTP offset from master as the slave estimated it (NaN when none yet), ns */
  offset: number[];
  /** 0 unlocked/no master, 1 locked, 2 grandmaster */
  state: number[];
  /** physical times the node entered lock (servo locked and |offset| under the threshold) */
  lockedAt: number[];
  /** whether the node ever followed a master (a grandmaster that never did is not a slave) */
  everSlave: boolean;
  /** when it reported: the node id of the master it followed (-1: none) and its stepsRemoved + 1 */
  master?: number;
  steps?: number;
  /** software stamping only: how much later than the hardware instant each stamp was taken (event-loop jitter) */
  stampNoise: HistogramSnapshot | null;
}

export interface NodeReport {
  name: string;
  /** the node's time when it reported (conservative mode: its safe time), physical ns */
  now: number;
  /**
   * why it reported: the orchestrator's stop, a signal that reached the node itself, or its halt (a
   * `kill` or `stop` of the timeline: what it carried up to then, reported before its process ends)
   */
  end: 'stop' | 'SIGTERM' | 'halt';
  clock?: ClockSeries;
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
  /** the scheme's own report section, read only by the scheme's summary code */
  scheme?: unknown;
  /** the node's core under a compute model (absent without one) */
  compute?: ComputeSnapshot;
  flows: FlowRecord[];
  /** flows as seen by the receiving side: id -> [finish, via...] */
  received: Array<[number, number, number[]]>;
  /** flows the receiving side got some frames of, not all: [id, via] (the path they were using) */
  partial?: Array<[number, number[], number]>;
  /** distinct data frames received per flow, [id, frames], delivered or not (UDP transport) */
  rxFrames?: Array<[number, number]>;
  /** hosts: wire bytes of data frames received so far, sampled every `run.sample` (physical time) */
  delivered?: { t: number[]; v: number[] };
  /** hosts: data bytes received per source in each `run.interval` since the traffic start: [src, bytes[]] */
  bySource?: Array<[number, number[]]>;
}

export interface ProgressStats {
  /** physical time reached (conservative: the safe time) */
  now: number;
  flowsDone: number;
  flowsStarted: number;
  /** a switch, in a snapshot's stats (not a barrier's): each egress port's queue, bytes (the live view shows them) */
  queues?: number[];
  /** `events`: every event the node's scheduler handled so far (a node spinning in its own timers shows it) */
  fidelity: { late99: number; misses: number; frames: number; events: number };
  /** conservative mode: the input the node waits on (port index, -1: the orchestrator) and its clock */
  waitPort?: number;
  waitClock?: number;
}

export type NodeMessage =
  /** `proof`: HMAC of the orchestrator's challenge under the node's key; `nonce`: the node's challenge */
  | { type: 'hello'; name: string; pid: number; proof: Uint8Array; nonce: Uint8Array }
  /** bound: where its peers send (`udpHost` is an address, also when `bindHost` named a subnet) */
  /**
   * `quietDetectNs`: a keepalive arriving within this long of the frame before it on a link finds the
   * link up and sends nothing (a quiet arrival, core/liveness.ts `staysUp`); 0 or absent: every frame
   * may make this node send
   */
  | { type: 'ready'; udpHost: string; udpPort: number; quietDetectNs?: number }
  | { type: 'event'; event: NodeEvent }
  | { type: 'stats'; stats: ProgressStats }
  | { type: 'report'; report: NodeReport }
  /** conservative mode: every event before the grant `at` is handled */
  | { type: 'reached'; at: number; stats: ProgressStats }
  | { type: 'halted'; at: number }
  /** the `relink` is done: the peer may speak */
  | { type: 'relinked'; port: number }
  | { type: 'paused'; at: number }
  /** conservative mode: the link from the crashed peer on `port` ended at its last promise, `at` */
  | { type: 'peer-gone'; port: number; at: number }
  /**
   * captured frames (core/capture.ts records) since the last such message, and per captured port (in
   * the order of `NodeConfig.capture.ports`) the frames past the capture limit so far
   */
  | { type: 'capture'; records: Uint8Array; dropped: number[] }
  /** `fatal`: the run's results can no longer be trusted (datagrams lost between processes) */
  | { type: 'error'; message: string; fatal?: boolean };

export interface NodeEvent {
  /** physical time, virtual ns */
  t: number;
  kind: string;
  node: string;
  [key: string]: unknown;
}
