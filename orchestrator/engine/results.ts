/**
 * The shapes of a run's results: a flow's row (flows.csv), the summary (summary.json) and its
 * sections. Collection (collect.ts) computes them; plots, reports and studies read them.
 */

import type { ImpairCounts } from '../../core/fault-filter.js';
import type { FlowRecord } from '../../core/messages.js';
import type { SchemeSections } from '../registry/sections.js';
import type { BusiestQueue } from '../registry/stats.js';
import type { CodeVersion } from './build-info.js';
import type { CaptureFileSummary } from './capture.js';
import type { ClockSummary } from './clocks.js';
import type { Outcome } from './outcomes.js';

export interface FlowRow extends FlowRecord {
  /** distinct data frames the receiver got (UDP transport; 0 when none arrived) */
  framesReceived?: number;
  /** unfinished flows: when the receiver last got data it had not seen, virtual ns since traffic start */
  lastProgress?: number;
  /** completed, failed (a fault explains it), unexplained, running or stopped (see orchestrator/engine/outcomes.ts) */
  outcome: Outcome;
  fct: number;
  ideal: number;
  slowdown: number;
  /** ns after its start by which it should have completed (`workload.deadlines`) */
  deadline?: number;
  /** a `workload.background` flow (flows.csv `best_effort`) */
  bestEffort?: true;
}

export interface FaultSummary {
  t: number;
  at: number;
  action: string;
  node?: string;
  link?: [string, string];
  /** first detection of this failure by a neighbour (port-down-detected), virtual ns since traffic start */
  detectedAt: number | null;
  detectionNs: number | null;
  /** for a killed or paused switch: flows whose path turned at it and were in flight when it failed */
  flowsInFlight?: number;
  /** of those, completed after the failure was detected */
  flowsRecovered?: number;
}

export type { SchemeSections };

export interface Summary extends Partial<SchemeSections> {
  runId: string;
  scenario: string;
  runtime: string;
  /** the code that made the run: its build's commit, and whether its sources differed */
  code: CodeVersion;
  /** how the processes agreed on time: conservative (exact) or dilated (tdf) */
  sync: string;
  /** the fabric design that ran (`ecmp`, `f10`, `portland`, ...) */
  scheme: string;
  /** dilated mode's time dilation factor (null in conservative mode) */
  tdf: number | null;
  virtualNs: number;
  wallMs: number;
  /** the nodes that ran a compute model (`compute:`), absent without one */
  compute?: {
    /** false when a node's costs were its measured CPU time */
    reproducible: boolean;
    /** nodes under a model; `nodes` lists those whose code cost time or waited */
    modelledNodes: number;
    nodes: Array<{
      node: string;
      model: string;
      /** fabric time the node's core computed, and its share of the run */
      busyNs: number;
      busyFraction: number;
      /** handlers that cost time */
      charged: number;
      /** events that waited for the core, and the longest wait */
      waited: number;
      maxWaitNs: number;
      /** a scheme's worker cores beside the main one: their work and their share of the run */
      pools?: Record<string, { cores: number; busyNs: number; busyFraction: number }>;
    }>;
  };
  fidelity: {
    lateP50Ns: number;
    lateP99Ns: number;
    /** how late datagrams arrived against their frames' stamped arrival (late ones are not all misses) */
    arrivalLateP99Ns: number;
    arrivalLateP999Ns: number;
    causalityMisses: number;
    framesHandled: number;
    missRate: number;
    threshold: number;
    ok: boolean;
  };
  flows: {
    planned: number;
    started: number;
    completed: number;
    /** started but not finished when the run ended */
    unfinished: number;
    /** planned flows that did not complete for a reason the faults give (outcomes.csv) */
    failed: number;
    /** planned flows that did not complete and that no fault explains (outcomes.csv) */
    unexplained: number;
    /** flows the workload stopped before they completed (a list flow's `stop`), when there are any */
    stopped?: number;
    fctP50Ns: number;
    fctP99Ns: number;
    /** FCT percentiles over every started flow, an unfinished one counting as running until the end (censored) */
    fctP50CensoredNs: number;
    fctP99CensoredNs: number;
    slowdownP50: number;
    slowdownP99: number;
    retransmits: number;
    timeouts: number;
    /**
     * FCT by flow size in full frames (Flowtune §6.5's buckets: 1 packet, up to 10, up to 100, more),
     * over completed flows; the slowdown is the FCT over an empty network's
     */
    bySize: Record<
      string,
      { flows: number; completed: number; p50Ns: number; p99Ns: number; p99Slowdown: number }
    >;
    /** flows with a deadline (`workload.deadlines`): met = completed within it; an unfinished one missed */
    deadlines?: { flows: number; met: number; missed: number; missRatio: number };
  };
  queues: {
    p50Bytes: number;
    p99Bytes: number;
    p999Bytes: number;
    maxBytes: number;
    /** the switch port with the largest mean occupancy, over its samples (a bottleneck's queue) */
    busiest: BusiestQueue | null;
  };
  /** data bytes hosts received while the workload ran (its duration from the traffic start) */
  throughput: { windowNs: number; bytes: number; gbps: number };
  /** how evenly concurrent senders share (Fastpass §7.2), null with never two senders at once */
  fairness: Fairness | null;
  drops: { congestion: number; fault: number; malformed: number; noRoute: number };
  /** what the links' impairments did (scenarios.md#impairments), in all and per direction; absent on clean links */
  impairments?: ImpairmentsSummary;
  /**
   * Who tried to take part in the run without being of it (docs/security.md): control connections
   * turned away (the first 100 listed: peer address, the node named, why, wall ms since the start),
   * datagrams of another run (a wrong tag), and datagrams from a socket that is not the link's peer or
   * with frames stamped against the link's physics. None of them changes the run's results.
   */
  security: {
    refusedControl: number;
    refused: Array<{ peer: string; name?: string; reason: string; wallMs: number }>;
    foreignDatagrams: number;
    forgedDatagrams: number;
  };
  /** data frames of UDP flows (present when the transport counts them); lost = sent − received */
  frames?: { sent: number; received: number; lost: number };
  faults: FaultSummary[];
  /** time synchronization, when the scenario runs PTP */
  clocks?: ClockSummary;
  /** packet captures (`run.capture`): one pcapng file per captured egress port */
  capture?: CaptureFileSummary[];
  /** the run was cut short (Ctrl-C, SIGTERM): by what, and the virtual time it had reached */
  interrupted?: { by: string; atNs: number; during: 'start-up' | 'traffic' };
  /**
   * node processes that ended unplanned (a crash, an OOM kill, a signal from outside): the run went on
   * without them from where their peers' view of them ended, so it is not reproducible
   */
  crashes?: Array<{ node: string; t: number; reason: string }>;
  reproducible?: false;
  processes: {
    started: number;
    leftRunning: number;
    /** in a command of many runs: how many nodes ran in processes an earlier run started */
    reused?: number;
    /** what the runtime could not remove (a network the Docker daemon keeps), and how to clear it */
    kept?: string[];
    /** a runtime over several machines (swarm): the machine (hostname) each node ran on */
    machines?: Record<string, string>;
    missingReports: Array<{ node: string; reason: string }>;
  };
  /**
   * The scheme's own section, under its name (`f10`: failures, reroutes, detours, pushback, losses),
   * made by its summary code in orchestrator/registry/.
   */
  [scheme: string]: unknown;
}

export interface Fairness {
  intervalNs: number;
  /** intervals with at least two senders active throughout */
  intervals: number;
  /** per interval, the standard deviation of the active senders' throughputs, Mbit/s */
  stddevMbps: { p50: number; p90: number; max: number };
  /** the median standard deviation, by how many senders were active */
  byActive: Record<string, { intervals: number; p50Mbps: number }>;
  /**
   * After each change of the active senders (a flow's start or finish, two or more active after):
   * virtual ns until the end of the first interval from which every active sender's throughput stays
   * within 10% of their mean until the next change (null: it never did); the first 1,000 changes.
   * Flowtune §6.3 reads convergence so, on throughput per 100 µs.
   */
  convergence: Array<{ t: number; active: number; convergedNs: number | null }>;
}

/** one direction's impairment counts (core/fault-filter.ts ImpairCounts), from node `from` toward `to` */
export type ImpairedLink = ImpairCounts & { from: string; to: string };

export type ImpairmentsSummary = ImpairCounts & { links: ImpairedLink[] };
