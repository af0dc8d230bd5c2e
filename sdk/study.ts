/**
 * The SDK's studies (`dcemu/scheme/study`): what a scheme's experiments use to reproduce a paper's
 * figures — runs over seeds and variants with their tables beside the paper's values, scenario files
 * loaded and resolved, chaos timelines, the run summary, plots. Used by a scheme's experiments.ts (or
 * experiments/), never by its definition or its parts: a study drives whole runs, which sit above the
 * layers a definition plugs into (.dependency-cruiser.cjs).
 */
// chaos: fault timelines drawn from a scenario's chaos model
export {
  type Prepared as PreparedChaos,
  prepareChaos,
  timelineScenario,
} from '../orchestrator/chaos/index.js';
export { type DrawnEntry, drawFaults } from '../orchestrator/chaos/model.js';
// a run's summary (summary.json) as a study reads it
export type { Fairness, Summary } from '../orchestrator/engine/collect.js';
export { RuntimeError, ScenarioError } from '../orchestrator/engine/errors.js';
// plots: Vega-Lite specs in the house style, thinned CDFs, written as SVG and PNG
export { type Plot, writePlots } from '../orchestrator/plots/render.js';
export { frame } from '../orchestrator/plots/style.js';
export { cdf } from '../orchestrator/plots/thin.js';
// scenarios: files loaded with their overrides, resolved against a topology
export { loadScenarioFile } from '../orchestrator/scenario/load.js';
export { resolveScenario, type Scenario } from '../orchestrator/scenario/resolve.js';
// runs: one for its summary, variants of one scenario
export { overridesOf, runForSummary, runVariants } from '../orchestrator/studies/experiments.js';
// reproductions: variants over seeds, each figure's mean ± interval beside the paper's value
export {
  type FigureResult,
  type FigureSpec,
  fmt,
  meanCi,
  meanPm,
  type Reproduction,
  type ReproductionSpec,
  reproduce,
  reproduceVariants,
  reproductionTable,
  scaleOf,
  seedOptions,
  type VariantsSpec,
  withQuick,
  writeTable,
} from '../orchestrator/studies/reproduction.js';
