/**
 * dcemu's scheme SDK (`import { defineScheme, defineSchemeParts } from 'dcemu/scheme'`;
 * docs/schemes.md walks through one). A scheme is two modules:
 * - its definition, read by the orchestrator: `export default defineScheme({ kinds, properties,
 *   resolve, arbiters, nodeScheme, parts, summaryKey, summarize, reportRows, invariants,
 *   sweepFigures, experiments })`, named by a scenario as `scheme: { kind, module }`;
 * - its node-process parts, loaded by every node process whose config carries the scheme:
 *   `export default defineSchemeParts({ switch, host, arbiter })`, named by the definition's `parts`.
 * Everything a scheme needs from dcemu comes from here; the built-in schemes use the same objects.
 */

export type { Discipline } from '../core/discipline.js';
export { FrameFifo, StrictPriority } from '../core/discipline.js';
export type { Frame } from '../core/frame.js';
export { Ecn, FrameType, makeFrame, PRIORITIES, Priority, WireSize } from '../core/frame.js';
export type { LinkDetector } from '../core/liveness.js';
export type { NodeConfig, NodeReport, PortConfig, SchemeNodeConfig } from '../core/messages.js';
export type { NodeContext, Role } from '../core/node-runtime.js';
export { Rng } from '../core/random.js';
export type { Scheduler, Timer } from '../core/scheduler.js';
export { formatNs, parseBytes, parseDurationNs, parseRateBps } from '../core/time.js';
export type {
  Nic,
  SenderStats,
  Transport,
  TransportComponents,
  WindowControl,
} from '../node/transport/types.js';
export { segmentBytes, segmentCount } from '../node/transport/types.js';
export type { ScenarioSource } from '../orchestrator/scenario/source.js';
export { busiestQueue, idealFct, mean, quantile, sum } from '../orchestrator/schemes/stats.js';
// the definition (orchestrator side)
export type {
  ExperimentOptions,
  RunRecord,
  SchemeDefinition,
  SchemeExperiment,
  SchemeSettings,
  SummaryTotals,
} from '../orchestrator/schemes/types.js';
export { defineScheme } from '../orchestrator/schemes/types.js';
export type { ArbiterSpec } from '../orchestrator/topology/arbiter.js';
export type { Routing } from '../switch/routing.js';
export type { SwitchScheme } from '../switch/scheme.js';
export type { LinkParams, TopoLink, Topology, TopoNode } from '../topology/types.js';
// the parts (node processes)
export type { ArbiterPart, HostPart, SchemeParts, SwitchPart } from './parts.js';
export { defineSchemeParts } from './parts.js';
