/**
 * What a role (host, switch, arbiter) is to the node process that runs it (core/node-runtime.ts):
 * what it builds itself from (`NodeContext`), what it answers (`Role`), and what a scheme chooses
 * for it once the node's config has arrived (`RoleSetup`).
 */
import type { NodeClock } from './clock.js';
import type { Discipline } from './discipline.js';
import type { Frame } from './frame.js';
import type { DetectorFactory, LinkDetector } from './liveness.js';
import type { Logger } from './log.js';
import type { NodeConfig, NodeReport } from './messages.js';
import type { Metrics } from './metrics.js';
import type { Oscillator } from './oscillator.js';
import type { EgressPort } from './port.js';
import type { Scheduler } from './scheduler.js';

/** What a role gets to build itself from. */
export interface NodeContext {
  readonly config: NodeConfig;
  readonly sched: Scheduler;
  readonly clock: NodeClock;
  /** the oscillator under an emulated clock (faults reach it), or null for an ideal clock */
  readonly oscillator: Oscillator | null;
  readonly ports: EgressPort[];
  readonly liveness: LinkDetector;
  readonly metrics: Metrics;
  readonly log: Logger;
  /** reports an event to the orchestrator's event log */
  emit(kind: string, t: number, fields?: Record<string, unknown>): void;
}

export interface Role {
  /** a frame for the role arrived on `port` (keepalives are consumed below) */
  onFrame(now: number, port: number, frame: Frame): void;
  /** traffic starts; `at` is the physical time workload offsets count from */
  start(at: number): void;
  portDown(port: number, now: number): void;
  /**
   * a frame sent by this node starts transmission on `port` at physical `txStart`: PTP frames when
   * the run has PTP (departure stamps), every frame when `watchesDepartures` is set
   */
  departed?(port: number, frame: Frame, txStart: number): void;
  /** `departed` wants every frame (a scheme's queue accounting), not only PTP ones */
  readonly watchesDepartures?: boolean;
  portUp(port: number, now: number): void;
  progress(): { flowsDone: number; flowsStarted: number };
  /** a switch: each egress port's queue now, bytes (for the live view's snapshots only) */
  queues?(): number[];
  report(): Pick<
    NodeReport,
    'flows' | 'received' | 'queues' | 'queueHist' | 'clock' | 'scheme' | 'rxFrames' | 'delivered' | 'bySource'
  >;
  stop(): void;
}

export type RoleFactory = (ctx: NodeContext) => Role;

/** A scheme's queue discipline for one egress port of a node (null: strict priority). */
export type DisciplineFactory = (config: NodeConfig, port: number) => Discipline | null;

/**
 * What a node process runs, chosen once its config has arrived: its role, and from its scheme a link
 * failure detector (else the BFD-like one) and its ports' queue disciplines (else strict priority).
 */
export interface RoleSetup {
  role: RoleFactory;
  detector?: DetectorFactory;
  discipline?: DisciplineFactory;
}
