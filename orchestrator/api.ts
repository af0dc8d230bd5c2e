/**
 * dcemu as a library, for integration tests and scripts (testcontainers-style, docs/conventions.md §8): a `Fabric`
 * only records configuration; `start()` brings every node up and gives a `StartedFabric`, which runs
 * virtual time forward (`runFor`, `run`), takes faults while it runs (`inject`) and `stop()`s into a
 * `StoppedFabric` holding the results (also written to a results folder, as `dcemu run` does).
 * `stop()` is idempotent and `await using` stops the fabric when a test leaves its scope, passed or
 * failed; node processes also end by themselves when the process that started them exits.
 *
 *   await using fabric = await Fabric.fromScenario('examples/quickstart.yaml', { set: { seed: 3 } }).start();
 *   await fabric.runFor('2ms');
 *   fabric.inject({ action: 'kill', node: 'spine0' });
 *   const done = await fabric.stop();
 *   done.summary().flows.completed;
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { NodeEvent, SyncMode } from '../core/messages.js';
import { parseDurationNs } from '../core/time.js';
import { BUILT_IN_SCHEMES } from '../schemes/built-in.js';
import { type FlowNotDone, type FlowRow, finishRun, type Summary } from './engine/collect.js';
import { Engine, type Progress, type StartedEngine } from './engine/engine.js';
import { RuntimeError, ScenarioError } from './engine/errors.js';
import type { FiredFault } from './engine/fired.js';
import { registerSchemes } from './registry/index.js';
import { createRuntime } from './runtime/index.js';
import { NodePool } from './runtime/pool.js';
import { loadScenarioFile, parseScenario } from './scenario/load.js';
import { resolveInjected, resolveScenario, type Scenario } from './scenario/resolve.js';
import type { TIMELINE_ACTIONS } from './scenario/schema.js';
import type { ScenarioSource } from './scenario/source.js';

// the built-in schemes' summary sections (each declares its key in SchemeSections)
export type { XpSummary as ExpressPassSummary } from '../schemes/expresspass/definition/summary.js';
export type { F10Summary } from '../schemes/f10/definition/summary.js';
export type { FastpassSummary } from '../schemes/fastpass/definition/summary.js';
export type { FlowtuneSummary } from '../schemes/flowtune/definition/summary.js';
export type { HarmonySummary } from '../schemes/harmony/definition/summary.js';
export { RuntimeError, ScenarioError } from './engine/errors.js';
export type { SchemeSections } from './engine/results.js';
export type { FiredFault, FlowNotDone, FlowRow, NodeEvent, Progress, Scenario, Summary };

// the library knows dcemu's own schemes, as the command line does; a scenario names others by module
registerSchemes(BUILT_IN_SCHEMES);

/** `--set`-style overrides: `{ 'workload.load': 0.3, seed: 5 }` (values as YAML would give them). */
export type Overrides = Record<string, string | number | boolean>;

export interface FabricInit {
  /** fields of the scenario to change, by dotted path */
  set?: Overrides;
}

/** A timeline entry as the scenario's `timeline:` takes it; `at` (virtual, from traffic start) defaults to now. */
/** What a timeline entry or an injected fault does: `kill`, `pause`, `link-down`, `clock-step`, ... */
export type FaultAction = (typeof TIMELINE_ACTIONS)[number];

export interface FaultSpec {
  action: FaultAction;
  at?: string | number;
  node?: string;
  link?: [string, string];
  direction?: 'both' | 'forward' | 'reverse';
  loss?: number;
  corrupt?: number;
  delay?: string | number;
  step?: string | number;
  freq?: number;
}

/** A duration with a unit (`'5ms'`, `'20us'`) or a number of virtual nanoseconds. */
export type Duration = string | number;

/** What a fabric will be; nothing runs until `start()`. */
export class Fabric {
  private runtimeKind: 'process' | 'docker' | 'swarm' = 'process';
  private sync: SyncMode | undefined;
  private tdf: number | undefined;
  private out: string | undefined;
  private log: ((line: string) => void) | undefined;

  private constructor(private readonly source: ScenarioSource) {}

  /** A scenario file, with fields changed by `set`. Errors name the file, line and field. */
  static fromScenario(file: string, init: FabricInit = {}): Fabric {
    return new Fabric(loadScenarioFile(file, overrides(init.set)));
  }

  /** A scenario given as YAML text; `name` stands for its file in error messages. */
  static fromYaml(text: string, init: FabricInit & { name?: string } = {}): Fabric {
    return new Fabric(parseScenario(text, init.name ?? 'scenario.yaml', overrides(init.set)));
  }

  /**
   * `process` (default: every node a child process), `docker` (a container per node) or `swarm` (a
   * service per node on the Docker Swarm this machine manages, spread over its machines).
   */
  withRuntime(kind: 'process' | 'docker' | 'swarm'): this {
    if (kind !== 'process' && kind !== 'docker' && kind !== 'swarm')
      throw new RuntimeError(`withRuntime: expected 'process', 'docker' or 'swarm', got '${kind}'`);
    this.runtimeKind = kind;
    return this;
  }

  /** `conservative` (exact, the default) or `dilated` at a time dilation factor. */
  withSync(mode: SyncMode, tdf?: number): this {
    if (mode !== 'conservative' && mode !== 'dilated')
      throw new RuntimeError(`withSync: expected 'conservative' or 'dilated', got '${mode}'`);
    if (tdf !== undefined && mode !== 'dilated')
      throw new RuntimeError('withSync: a tdf applies to dilated mode only');
    this.sync = mode;
    this.tdf = tdf;
    return this;
  }

  /** The results folder (summary.json, flows.csv, logs/, ...); default a fresh temporary folder. */
  withOutput(dir: string): this {
    this.out = resolve(dir);
    return this;
  }

  /** Progress lines of the runtime (image builds, containers started). */
  withLog(log: (line: string) => void): this {
    this.log = log;
    return this;
  }

  /** Resolves the scenario and starts every node; traffic starts with the first `runFor` or `run`. */
  async start(): Promise<StartedFabric> {
    const scenario = resolveScenario(this.source, { tdf: this.tdf, sync: this.sync });
    const out = this.out ?? mkdtempSync(join(tmpdir(), `dcemu-${scenario.name}-`));
    mkdirSync(out, { recursive: true });
    const runtime = await createRuntime(this.runtimeKind, { log: this.log });
    const started = await new Engine(scenario, { runtime, out }).start();
    return new StartedFabric(started, this.source, out, runtime.kind);
  }
}

/** A fabric whose nodes are up. */
export class StartedFabric implements AsyncDisposable {
  private stopped: Promise<StoppedFabric> | null = null;
  private readonly views: Array<{ close(): Promise<void> }> = [];

  /** @internal built by `Fabric.start()` */
  constructor(
    private readonly fabric: StartedEngine,
    private readonly source: ScenarioSource,
    /** the results folder */
    readonly out: string,
    private readonly runtime: string,
  ) {}

  get scenario(): Scenario {
    return this.fabric.scenario;
  }

  /** Virtual time reached, ns since traffic start. */
  now(): number {
    return this.fabric.now();
  }

  /**
   * Runs `duration` of virtual time further (starting traffic the first time), whether or not the
   * workload is done. Conservative mode stops at exactly that time.
   */
  async runFor(duration: Duration, onProgress?: (p: Progress) => void): Promise<void> {
    let ns: number;
    try {
      ns = parseDurationNs(duration);
    } catch (err) {
      throw new ScenarioError('runFor()', -1, 'duration', (err as Error).message);
    }
    if (!(ns >= 0))
      throw new ScenarioError(
        'runFor()',
        -1,
        'duration',
        `must be a duration >= 0, got ${JSON.stringify(duration)}`,
      );
    await this.fabric.runFor(ns, onProgress);
  }

  /**
   * Runs until the workload is done or the scenario's end (workload duration + drain), or until
   * `signal` aborts (the fabric stays up: `stop()` collects what ran).
   */
  async run(onProgress?: (p: Progress) => void, signal?: AbortSignal): Promise<void> {
    await this.fabric.run(onProgress, signal);
  }

  /**
   * Faults while the fabric runs, as timeline entries: `{ action: 'link-down', link: ['leaf0',
   * 'spine1'] }` now, or `at` a later virtual time. A pause needs its resume in the same call.
   */
  inject(faults: FaultSpec | FaultSpec[]): void {
    const list = (Array.isArray(faults) ? faults : [faults]) as unknown as Array<Record<string, unknown>>;
    const events = resolveInjected(this.source, this.fabric.scenario.topology, list, this.fabric.now());
    this.fabric.inject(events);
  }

  /**
   * The live view of `dcemu run --ui` on this fabric: a page on 127.0.0.1 (`url`) that shows its
   * progress and events while `run`/`runFor` go, pauses, resumes and steps it (conservative mode) and
   * injects faults. `close()` it when done; `stop()` closes it too.
   */
  async liveView(port = 0): Promise<{ url: string; close(): Promise<void> }> {
    const { liveTargetOf, startLiveView } = await import('./page/live.js');
    const view = await startLiveView(liveTargetOf(this.fabric, this.source), port);
    this.views.push(view);
    return view;
  }

  /** Stops every node, collects their reports and writes the results folder. Idempotent. */
  stop(): Promise<StoppedFabric> {
    this.stopped ??= (async () => {
      for (const v of this.views.splice(0)) await v.close();
      const { result, summary, flows, outcomes, problems } = await finishRun(
        this.fabric,
        this.out,
        this.runtime,
      );
      for (const p of problems) process.stderr.write(`dcemu: warning: ${p}\n`);
      return new StoppedFabric(this.out, summary, flows, result.events, outcomes, result.faults);
    })();
    return this.stopped;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }
}

/** What a stopped fabric leaves: the same figures as the results folder. */
export class StoppedFabric {
  /** @internal built by `StartedFabric.stop()` */
  constructor(
    /** the results folder */
    readonly out: string,
    private readonly s: Summary,
    private readonly f: FlowRow[],
    private readonly e: NodeEvent[],
    private readonly o: FlowNotDone[],
    private readonly fired: FiredFault[],
  ) {}

  /** outcomes.csv: every planned flow that did not complete, failed (with the fault that explains it) or unexplained */
  outcomes(): FlowNotDone[] {
    return this.o;
  }

  /** the timeline actions that fired, in order (virtual ns since traffic start) */
  faults(): FiredFault[] {
    return this.fired;
  }

  /** summary.json */
  summary(): Summary {
    return this.s;
  }

  /** flows.csv as rows: size, start, finish (−1 if unfinished), FCT, slowdown, path, ... */
  flows(): FlowRow[] {
    return this.f;
  }

  /** events.jsonl: detections, faults, scheme events, in time order (virtual ns since traffic start) */
  events(): NodeEvent[] {
    return this.e;
  }
}

/**
 * Runs `fn` with a node pool (runtime/pool.ts): the fabrics it starts on the process runtime, one
 * after another or side by side, run their nodes in the processes of the runs before them, which
 * skips Node's start-up and V8's warm-up (a short run's CPU falls by about half). Every pooled process
 * ends when `fn` settles. The same figures: a node of dcemu's schemes leaves nothing behind in its
 * process (a scheme of your own keeps processes of its own).
 */
export async function withNodePool<T>(fn: () => Promise<T>): Promise<T> {
  const pool = NodePool.open();
  try {
    return await fn();
  } finally {
    await pool.close();
  }
}

function overrides(set: Overrides | undefined): string[] {
  return Object.entries(set ?? {}).map(([k, v]) => `${k}=${v}`);
}
