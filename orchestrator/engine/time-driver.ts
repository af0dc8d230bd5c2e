/**
 * How a run's time moves: the one interface the engine drives, with two implementations chosen once
 * at start by the scenario's `sync` (docs/architecture.md: conservative and dilated time):
 *
 * - conservative.ts: traffic starts at physical time 0; the orchestrator grants the nodes time in
 *   steps and moves on at barriers, so a run is the same bytes every time;
 * - dilated.ts: every node runs on its own clock, the wall clock slowed by `tdf`; the timeline fires
 *   on timers.
 *
 * A driver sees the run through `DriverHost`: the nodes, the runtime, and the records it keeps.
 */
import type { PeerAddress } from '../../core/endpoint.js';
import type { NodeEvent, NodeMessage } from '../../core/messages.js';
import type { PhysClock } from '../../core/time.js';
import type { StartedRuntime } from '../runtime/types.js';
import type { Scenario, TimelineEvent } from '../scenario/resolve.js';
import type { FiredFault } from './fired.js';
import type { NodeState } from './node-life.js';
import type { Plan } from './plan.js';
import type { Progress } from './progress.js';

/** The run as a time driver sees it. */
export interface DriverHost {
  readonly scenario: Scenario;
  readonly plan: Plan;
  readonly clock: PhysClock;
  readonly nodes: ReadonlyMap<string, NodeState>;
  /** where the run ends, virtual ns since traffic start: the workload's duration and the drain */
  endNs(): number;
  runtime(): StartedRuntime | null;
  /** physical ns of the traffic start: the timeline and the workload count from it */
  trafficStart(): number;
  /** why the run failed, if it did */
  failure(): string | null;
  /** the run cannot give right results any more: it ends, and says why */
  fail(message: string): void;
  /** the run is being torn down */
  stopping(): boolean;
  /** nodes with a process to talk to */
  live(): Iterable<NodeState>;
  peersOf(n: NodeState): Array<PeerAddress | null>;
  progress(): Progress;
  record(e: NodeEvent): void;
  /** a timeline action took effect: into the fault list and the event log */
  recordFired(fired: FiredFault): void;
}

export interface TimeDriver {
  /** Physical ns traffic starts at, after PTP's warm-up of `warmupNs`. */
  trafficStartAt(warmupNs: number): number;
  /** Virtual ns since traffic start the fabric has reached (conservative: its last barrier). */
  relNow(): number;
  /** The fabric's virtual time from the latest snapshots, and the node holding it back, if known. */
  position(): { virtualNs: number; holder?: string };
  /** Timeline actions on their way (at the traffic start, and each `inject`). */
  schedule(events: TimelineEvent[]): void;
  /**
   * Runs to `target` (virtual ns since traffic start), or until the workload is done (`untilDone`)
   * or `signal` aborts; `onProgress` about twice a second.
   */
  advance(
    target: number,
    untilDone: boolean,
    onProgress: (p: Progress) => void,
    signal?: AbortSignal,
  ): Promise<void>;
  /** Physical ns a node started again by the timeline starts its protocols at. */
  restartAt(n: NodeState): number;
  /** A restarted node's new process is ready (`moved`: at a new address): it joins the run. */
  rejoined(n: NodeState, moved: boolean): void;
  /** A node crashed: the run goes on without it. Returns when, virtual ns since traffic start. */
  crashed(n: NodeState): number;
  /** A message of this mode's own protocol (grants reached, halts, relinks, pauses). */
  message(n: NodeState, m: NodeMessage): void;
  /** The report a node sent at its halt (a kill or stop) came. */
  haltReported(n: NodeState): void;
  /** Holds the fabric at the first barrier at or after `atNs`, or nowhere (null). */
  hold(atNs: number | null): void;
  /** Where a hold keeps the fabric, or null while it runs. */
  held(): number | null;
  /** Something a waiting advance must look at happened (the run failed). */
  wake(): void;
  /** The run ends: timers stop. */
  close(): void;
}

/** What a time mode needs before its driver exists. */
export interface TimeMode {
  /** its nodes keep their cores busy between events (they run as fast as grants allow) */
  cpuBound: boolean;
  /** every container `start` must follow a `stop`: the fabric waits at a start for the new process */
  startsNeedStops: boolean;
  driver(host: DriverHost): TimeDriver;
}
