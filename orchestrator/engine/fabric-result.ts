/**
 * What a fabric run gives back when it stops (orchestrator/engine/started-engine.ts): every node's
 * report and event, the faults fired, what is missing and why, and how the run ended.
 */
import type { Refusal } from '../../core/control.js';
import type { NodeEvent, NodeReport } from '../../core/messages.js';
import type { StoppedRuntime } from '../runtime/types.js';
import type { Scenario } from '../scenario/resolve.js';
import type { CaptureFileSummary } from './capture.js';
import type { FiredFault } from './fired.js';
import type { Plan } from './plan.js';

export interface FabricResult {
  runId: string;
  scenario: Scenario;
  plan: Plan;
  trafficStart: number;
  endNs: number;
  wallMs: number;
  reports: NodeReport[];
  events: NodeEvent[];
  faults: FiredFault[];
  processes: StoppedRuntime;
  /** nodes whose report is missing, with why */
  missing: Array<{ node: string; reason: string }>;
  /** nodes whose process ended unplanned, with when (virtual ns since traffic start) and why */
  crashes: Array<{ node: string; t: number; reason: string }>;
  /** control connections turned away (a stranger, a wrong proof, a node already connected) */
  refusals: Array<Refusal & { wallMs: number }>;
  /** the run was cut short (Ctrl-C, SIGTERM, an aborted library run): by what, and where */
  interrupted?: { by: string; atNs: number; during: 'start-up' | 'traffic' };
  /** virtual time the run reached, ns since traffic start (conservative mode: its last barrier) */
  reachedNs: number;
  /** the pcapng files written (`run.capture`), if any */
  capture?: CaptureFileSummary[];
}
