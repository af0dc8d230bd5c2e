/**
 * dcemu's scheme SDK (`import { defineScheme, defineSchemeParts } from 'dcemu/scheme'`;
 * docs/schemes.md walks through one). A scheme is two modules:
 * - its definition, read by the orchestrator: `export default defineScheme({ kinds, properties,
 *   resolve, arbiters, nodeScheme, parts, summaryKey, summarize, reportRows, invariants,
 *   sweepFigures, experiments })`, named by a scenario as `scheme: { kind, module }`;
 * - its node-process parts, loaded by every node process whose config carries the scheme:
 *   `export default defineSchemeParts({ switch, host, arbiter })`, named by the definition's `parts`.
 * Everything a scheme needs from dcemu comes from here, from its node side (./node.ts, all of it
 * re-exported here) and, for reproductions of a paper's figures, from ./study.ts. The built-in schemes
 * use these modules and nothing else of dcemu (.dependency-cruiser.cjs checks it).
 */

// the clock presets of docs/clocks.md (free-running oscillators, send jitter), for variants of a scheme
export { OSCILLATORS, SEND_JITTER } from '../orchestrator/engine/clock-presets.js';
// the faults a run fired, to tell a failed flow from an unexplained one
export { concerns, type FiredFault, OUTAGES } from '../orchestrator/engine/fired.js';
export {
  type CountedSpread,
  countedSpread,
  type FlowRow,
  flowRows,
  spreadOf,
} from '../orchestrator/registry/flows.js';
// queueing delay along a run's host-to-host paths, from its sampled switch queues
export {
  type PathQueueDelay,
  type PathQueueOptions,
  pathQueueDelays,
} from '../orchestrator/registry/path-queues.js';
// a run's reports by their node's role, and the scheme sections in them
export { reportsOf, sectionsOf } from '../orchestrator/registry/reports.js';
/**
 * A scheme's section of summary.json, declared by the scheme:
 * `declare module 'dcemu/scheme' { interface SchemeSections { mine: MySummary } }`.
 */
export type { SchemeSections } from '../orchestrator/registry/sections.js';
// statistics over a run's reports and flows
export {
  type BusiestQueue,
  busiestQueue,
  changePct,
  type DelaySpread,
  idealFct,
  idealFctAfterHandshake,
  type MessageDelays,
  mean,
  messageDelays,
  nearestRank,
  percent,
  quantile,
  sum,
} from '../orchestrator/registry/stats.js';
// the definition (orchestrator side)
export type {
  ExperimentOptions,
  RunRecord,
  SchemeDefinition,
  SchemeExperiment,
  SchemeSettings,
  SummaryTotals,
} from '../orchestrator/registry/types.js';
export { defineScheme } from '../orchestrator/registry/types.js';
export type { ScenarioSource } from '../orchestrator/scenario/source.js';
// schema fragments for a scheme's settings: a duration ("2us"), a rate ("10Gbps"), a size ("64KB")
export { bytes, duration, rate } from '../orchestrator/scenario/units.js';
// the topology as the orchestrator sees it: arbiters, paths, ports
export { type ArbiterSpec, dataPlane } from '../orchestrator/topology/arbiter.js';
export { portToward } from '../orchestrator/topology/build.js';
export {
  alongHostPaths,
  baseRttNs,
  type PathFigures,
  pathFigures,
} from '../orchestrator/topology/diameter.js';
export * from './node.js';
// and their values read with the scenario's errors
export { positive, setting, type Unit } from './settings.js';
