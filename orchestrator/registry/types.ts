/**
 * The orchestrator's side of a scheme (docs/conventions.md §2): what its `scheme:` section accepts and resolves to,
 * which arbiters it attaches to the topology, what each node's config carries for it, and the summary
 * section and report lines it makes from the run. The orchestrator's run loop, planner and collector
 * only go through this interface. A built-in scheme is a folder `schemes/<kind>/` whose index.ts is its
 * definition, plus a line in ./index.ts (the registry); a scheme of the user's own is a module a scenario
 * names.
 */
import type { NodeEvent, NodeReport, SchemeNodeConfig } from '../../core/messages.js';
import type { LinkParams, Topology, TopoNode } from '../../topology/types.js';
import type { FiredFault } from '../engine/fired.js';
import type { ScenarioSource } from '../scenario/source.js';
import type { ArbiterSpec } from '../topology/arbiter.js';

/** A resolved `scheme:` section: plain data, written into the resolved scenario. */
export interface SchemeSettings {
  kind: string;
  [setting: string]: unknown;
}

/** What a run left that a scheme's summary reads (times in virtual ns since traffic start). */
export interface RunRecord {
  /** physical time traffic started: report times minus this are virtual ns since traffic start */
  trafficStart: number;
  reports: NodeReport[];
  events: NodeEvent[];
  faults: FiredFault[];
  /** the scenario as resolved: its topology includes the arbiters */
  scenario: { topology: Topology };
}

/** What a summary section is made from, besides the run itself. */
export interface SummaryTotals {
  /** UDP data frames, end to end, when the transport counts them */
  frames: { sent: number; received: number } | undefined;
  congestionDrops: number;
  /** p99 FCT of completed flows by size bucket (summary.flows.bySize), ns */
  fctP99BySizeNs: Record<string, number>;
}

/** What `dcemu experiment <name>` hands a scheme's experiment. */
export interface ExperimentOptions {
  /** the scenario file */
  file: string;
  /** the results folder */
  out: string;
  /** runs seeds `seed`, `seed + 1`, ..., `seed + seeds - 1` (an experiment may use only the first) */
  seeds: number;
  seed: number;
  /** `--set` overrides for every run */
  set?: string[];
  /** `--quick`: the experiment's smaller variant, one seed (npm test runs it) */
  quick?: boolean;
  /**
   * `--variants`: only these of the experiment's variants (and those they are measured against), for
   * an experiment that lists its variants in `SchemeExperiment.variants`
   */
  variants?: string[];
  signal?: AbortSignal;
  /** a progress line */
  say(line: string): void;
}

/**
 * A paper's evaluation as one command, `dcemu experiment <name>`: it runs the scenario as the paper's
 * figure needs (variants, seeds), writes tables and plots into the results folder and returns the
 * table it prints. Its code is named by module, not imported: it drives whole runs through the API,
 * a layer above the scenario resolution that reads the scheme, so only the command loads it.
 */
export interface SchemeExperiment {
  name: string;
  description: string;
  /** the scenario it runs when none is given */
  scenario: string;
  /** seeds when `--seeds` is not given (`--quick`: one) */
  seeds: number;
  /** the module (a file URL or a package specifier) that exports the experiment's function */
  module: string;
  /** the name of that export: `(opts: ExperimentOptions) => Promise<string>` */
  run: string;
  /** the variants `--variants` may choose from (absent: the experiment runs all of its own, always) */
  variants?: readonly string[];
}

/**
 * `S`: its resolved `scheme:` section; `Sec`: its summary section (what `summarize` returns, what
 * `invariants`, `sweepFigures` and `reportRows` read).
 */
/** The parts of a run's summary a timing figure may read beside the scheme's own section. */
export interface TimingRun {
  queues: { p99Bytes: number; busiest: { p99Bytes: number; maxBytes: number } | null };
  flows: { planned: number; completed: number; deadlines?: { missed: number; flows: number } };
  throughput: { gbps: number };
}

/**
 * A scheme's guarantee that lives or dies by time (Fastpass's timeslots, TOP's token ages, Harmony's
 * pacing), as the clock-jitter study measures it: the scenario it runs on every clock discipline,
 * what `--quick` changes, and the figures that say what the guarantee loses.
 */
export interface TimingStudy<Sec> {
  /** the scenario, from the package root (`examples/fastpass.yaml`) */
  scenario: string;
  /** `--set` overrides for the study's `--quick` runs */
  quick: readonly string[];
  /** what the guarantee is, in words */
  guarantee: string;
  figures: ReadonlyArray<{
    id: string;
    label: string;
    unit: string;
    digits?: number;
    value(section: Sec, run: TimingRun): number;
  }>;
}

export interface SchemeDefinition<S extends SchemeSettings = SchemeSettings, Sec = unknown> {
  /** the `scheme.kind` values it answers to */
  readonly kinds: readonly string[];
  /**
   * The module whose default export holds its node-process parts (`defineSchemeParts`: switch
   * module, host transport or qdisc, arbiter, disciplines, detectors), as a node process imports
   * it: a file URL (`new URL('./parts.js', import.meta.url).href`) or a package specifier. Absent:
   * the scheme runs nothing in the nodes (ECMP).
   */
  readonly parts?: string;
  /** JSON-schema properties of the `scheme:` section it reads, besides `kind` */
  readonly properties: Record<string, object>;
  /** checks and resolves the section; errors name the file, line and field */
  resolve(src: ScenarioSource, topo: Topology, kind: string, links: { fabric: LinkParams }): S;
  /**
   * Whether its hosts end a flow when the workload stops it (a list flow's `stop`: the application
   * closes early), on the run's transport. Absent: they cannot, and such a workload is refused.
   */
  stopsFlows?(s: S): boolean;
  /** the arbiter processes it attaches to the topology, with their links */
  arbiters?(s: S, topo: Topology): ArbiterSpec[];
  /** the scheme's part of one node's config; `topo` includes the arbiters */
  nodeScheme?(s: S, topo: Topology, node: TopoNode): SchemeNodeConfig | undefined;
  /**
   * Flows the scheme itself ended undelivered, with its reason (flows.csv, outcomes.csv and the chaos
   * invariants then count them failed, not unexplained)
   */
  failedFlows?(s: S, r: RunRecord): Map<number, string>;
  /** where its summary section goes (`summary.f10`) */
  readonly summaryKey?: string;
  /** the run's summary section */
  summarize?(s: S, r: RunRecord, totals: SummaryTotals): Sec;
  /** extra files for the results folder, by name (a scheme's own series) */
  files?(s: S, r: RunRecord): Record<string, string>;
  /**
   * What the scheme promises under any faults, checked after every chaos run from its summary section
   * (`summary` is the whole summary): one entry per broken promise.
   */
  invariants?(section: Sec, summary: Record<string, unknown>): Array<{ invariant: string; detail: string }>;
  /**
   * its columns in a sweep's table (and plots), from its own section: `<scheme>_<figure>`, ending in
   * `_ns` or `_bytes` when it is a time or a size (sweep.md then shows it in µs/ms, KB/MB)
   */
  sweepFigures?(section: Sec): Record<string, number | string | null>;
  /** the paper's evaluations it runs as commands (`dcemu experiment <name>`) */
  readonly experiments?: readonly SchemeExperiment[];
  /** its guarantee that lives on time, for the clock-jitter study (`dcemu experiment clock-jitter`) */
  readonly timing?: TimingStudy<Sec>;
  /** lines for the printed summary table, from its own section */
  reportRows?(section: Sec, summary: Record<string, unknown>): Array<[string, string]>;
}

/**
 * A scheme, as one object (docs/schemes.md): `export default defineScheme({ kinds, properties,
 * resolve, parts, ... })` in the module a scenario names (`scheme: { kind, module }`), or in a
 * built-in scheme's folder.
 */
export function defineScheme<S extends SchemeSettings, Sec = unknown>(
  definition: SchemeDefinition<S, Sec>,
): SchemeDefinition {
  return definition as unknown as SchemeDefinition;
}
