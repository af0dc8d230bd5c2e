/**
 * A fabric run, with its lifecycle in the types (docs/conventions.md §8): `Engine.start()` launches
 * every node, waits for them to connect and bind, hands out peer addresses and returns a
 * `StartedEngine` (orchestrator/engine/started-engine.ts); `StartedEngine.run()` starts traffic, fires
 * the timeline and watches progress until the workload is done or the drain deadline passes; `stop()`
 * (idempotent, also `await using`) collects every node's report and tears the runtime down, leaving no
 * process behind.
 */
import { mkdirSync } from 'node:fs';
import { totalmem } from 'node:os';
import { datagramTag, newSecret, nodeKey } from '../../core/auth.js';
import { ControlServer } from '../../core/control.js';
import { nodeEnv } from '../../core/paths.js';
import { monotonicEpoch, PhysClock } from '../../core/time.js';
import { userSchemeDir } from '../registry/index.js';
import { releasedOnCrash } from '../runtime/crash-removal.js';
import { pods, racks } from '../runtime/placement.js';
import type { Runtime } from '../runtime/types.js';
import { NODE_PRIVATE_MB, nodesMemoryMb, type Scenario } from '../scenario/resolve.js';
import { CONTAINER_ACTIONS } from '../scenario/schema.js';
import { CaptureFiles } from './capture.js';
import { RuntimeError } from './errors.js';
import { planRun } from './plan.js';
import { StartedEngine } from './started-engine.js';
import { orphanStart, TIME_MODES } from './time-modes.js';

export type { FabricResult } from './fabric-result.js';
export { concerns, type FiredFault, REPAIRS } from './fired.js';
export { type Progress, type StallView, stallDiagnosis } from './progress.js';
export { StartedEngine } from './started-engine.js';

export interface EngineOptions {
  runtime: Runtime;
  /** results folder; logs go to <out>/logs */
  out: string;
  /** how long nodes get to connect and bind, real ms (default `startTimeoutMs`) */
  startTimeoutMs?: number;
  /** labels every process of the run; default a fresh `dcemu-<pid>-<random>` */
  runId?: string;
  /** start even when the nodes need more memory than this machine has */
  force?: boolean;
}

/**
 * Why this machine cannot hold the scenario's node processes (~NODE_PRIVATE_MB each beside the pages
 * they share, against 90% of its memory), or null when it can: checked before anything starts, and by
 * `dcemu validate`.
 */
export function memoryProblem(scenario: Scenario): string | null {
  const nodes = scenario.topology.nodes.length;
  const needMb = nodesMemoryMb(nodes);
  const haveMb = totalmem() / 2 ** 20;
  if (needMb <= 0.9 * haveMb) return null;
  return `${nodes} nodes need ~${(needMb / 1024).toFixed(1)} GB of memory (~${NODE_PRIVATE_MB} MB per process); this machine has ${(haveMb / 1024).toFixed(1)} GB`;
}

/**
 * Why the scenario cannot start on this runtime (one line naming the file, and the timeline line where
 * there is one), or null: checked before anything starts or is written, by `Engine.start` and by the
 * command line before it announces the run.
 */
export function startRefusal(scenario: Scenario, runtime: Runtime, force = false): string | null {
  // every node is a process of ~NODE_PRIVATE_MB of its own: a fabric the machine cannot hold is refused up front
  const tooBig = !runtime.remoteNodes && !force ? memoryProblem(scenario) : null;
  if (tooBig) return `${scenario.file}: ${tooBig}: use --force to start anyway`;
  // container faults need containers, naming the timeline line
  const needs = scenario.timeline.find((e) => CONTAINER_ACTIONS.has(e.action));
  if (needs && !runtime.containerFaults)
    return `${scenario.file}:${needs.line}: action ${needs.action} needs a container runtime, --runtime docker or swarm (the ${runtime.kind} runtime has no containers)`;
  // a scheme of the user's own: its parts are a file of this machine, which nodes must see
  if (userSchemeDir(scenario.scheme.kind) !== undefined && !runtime.hostFiles)
    return `${scenario.file}: scheme ${scenario.scheme.kind} comes from a module of yours (scheme.module): it runs on the process and docker runtimes; the ${runtime.kind} runtime's containers hold only dcemu's own schemes`;
  const orphan = orphanStart(scenario, scenario.timeline);
  if (orphan)
    return `${scenario.file}:${orphan.line}: start of ${orphan.node} at ${orphan.at} ns: the node was not stopped before (a stop must come first)`;
  return null;
}

/**
 * How long nodes get to connect and bind, real ms. Containers of a compose file come up one after
 * another (a chain of depends_on, ~0.2-0.9 s each here), a swarm's as its agents start them: they get
 * longer than processes, and a second a node.
 */
export function startTimeoutMs(scenario: Scenario, runtime: Runtime): number {
  return runtime.remoteNodes ? 120_000 + 1_000 * scenario.topology.nodes.length : 30_000;
}

/** A fresh run id: `dcemu-<orchestrator pid>-<6 random letters>`. */
export function newRunId(): string {
  return `dcemu-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
}

export class Engine {
  constructor(
    readonly scenario: Scenario,
    private readonly opts: EngineOptions,
  ) {}

  /**
   * Starts every node and waits until all are ready. An abort of `signal` ends the wait early: the
   * started fabric then holds what had started, for `stop()` to collect (no traffic ran).
   */
  async start(signal?: AbortSignal): Promise<StartedEngine> {
    const runtime = this.opts.runtime;
    const refused = startRefusal(this.scenario, runtime, this.opts.force);
    if (refused) throw new RuntimeError(refused);
    const logDir = `${this.opts.out}/logs`;
    mkdirSync(logDir, { recursive: true });
    const epoch = monotonicEpoch();
    const runId = this.opts.runId ?? newRunId();
    const schemeDir = userSchemeDir(this.scenario.scheme.kind);
    // what the site made (a container runtime's network, relay and containers) is removed should the
    // orchestrator crash before its teardown
    const site = releasedOnCrash(
      await runtime.prepare(
        this.scenario.topology.nodes.map((n) => n.name),
        runId,
        racks(this.scenario.topology),
        pods(this.scenario.topology),
      ),
    );
    // the run's secret (core/auth.ts): only its nodes get keys derived from it; an attached runtime's
    // nodes are started by someone else, who shares the site's secret with them
    const secret = site.secret ?? newSecret();
    const planned = new Set(this.scenario.topology.nodes.map((n) => n.name));
    const server = new ControlServer((name) => (planned.has(name) ? nodeKey(secret, name) : undefined));
    let capture: CaptureFiles | null = null;
    let controlPort: number;
    let plan: ReturnType<typeof planRun>;
    try {
      plan = planRun(this.scenario, { epoch, bindHost: site.bindHost, logDir });
      if (site.nodePort !== undefined) for (const c of plan.nodes) c.bindPort = site.nodePort;
      controlPort = await server.listen(site.controlHost, site.controlPort);
      if (this.scenario.run.capture.length > 0)
        capture = new CaptureFiles(
          `${this.opts.out}/capture`,
          this.scenario.topology,
          plan.nodes,
          (message) => started.captureFailed(message),
          `dcemu scenario ${this.scenario.name}: fabric time, virtual ns since traffic start`,
        );
    } catch (err) {
      await server.close();
      await site.release();
      throw err;
    }
    const started: StartedEngine = new StartedEngine(
      this.scenario,
      plan,
      new PhysClock(epoch, this.scenario.tdf),
      server,
      runId,
      site,
      capture,
      datagramTag(secret),
    );
    try {
      const running = await runtime.start(
        plan.nodes.map((n) => ({
          name: n.name,
          runId,
          role: n.kind,
          logDir,
          secret,
          env: nodeEnv(site.controlAddress ?? `${site.controlHost}:${controlPort}`, n.name),
          cpuBound: TIME_MODES[this.scenario.sync].cpuBound,
          ...(schemeDir !== undefined && { schemeDir }),
        })),
        signal,
      );
      await started.attach(
        running,
        this.opts.startTimeoutMs ?? startTimeoutMs(this.scenario, runtime),
        signal,
      );
    } catch (err) {
      await started.stop();
      throw err;
    }
    return started;
  }
}
