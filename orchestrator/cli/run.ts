/**
 * `dcemu run <scenario>`: loads and checks the scenario, refuses what cannot start before anything is
 * written, starts the nodes on the runtime, runs traffic with a progress line, and at the end (also on
 * Ctrl-C) stops, collects and writes the results folder, then says what went wrong and returns the
 * exit code.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { formatNs } from '../../core/time.js';
import { checkInvariants } from '../chaos/invariants.js';
import { type Invariants, resolveInvariants } from '../chaos/model.js';
import { finishRun } from '../engine/collect.js';
import { Engine, newRunId, type StartedEngine, startRefusal } from '../engine/engine.js';
import { isUserError, RuntimeError } from '../engine/errors.js';
import { onInterrupt } from '../engine/interrupts.js';
import { progressLine, summaryTable } from '../engine/report.js';
import { refuseNodeFaults } from '../runtime/attached.js';
import { createRuntime } from '../runtime/index.js';
import type { Runtime } from '../runtime/types.js';
import { loadScenarioFile, parseScenario } from '../scenario/load.js';
import { resolveScenario, type Scenario } from '../scenario/resolve.js';
import { runSuites, writeJunit } from './junit.js';
import { syncOption } from './options.js';

export interface RunOptions {
  tdf?: number;
  sync?: string;
  allowUnfaithful?: boolean;
  /** JUnit XML of the run's invariants and flows */
  junit?: string;
  /** the live view, its port, and where it holds the fabric first */
  ui?: boolean;
  uiPort?: number;
  /** ns */
  pauseAt?: number;
  out?: string;
  quiet?: boolean;
  /** wall seconds between progress lines when stderr is not a terminal */
  progressEvery?: number;
  set?: string[];
  runtime?: string;
  subnet?: string;
  secretFile?: string;
  image?: string;
  /** swarm: node -> machine hostname, its rack with it */
  place?: Record<string, string>;
  scenarioEnv?: string;
  force?: boolean;
  /** false with --no-plots */
  plots?: boolean;
}

/** The scenario text comes from the file, or (compose) from an environment variable; `file` names it. */
function loadScenario(file: string, opts: RunOptions) {
  // --no-plots is run.plots: false, after any --set
  const set = [...(opts.set ?? []), ...(opts.plots === false ? ['run.plots=false'] : [])];
  if (!opts.scenarioEnv) return loadScenarioFile(file, set);
  const text = process.env[opts.scenarioEnv];
  if (text === undefined) throw new RuntimeError(`--scenario-env ${opts.scenarioEnv}: variable not set`);
  return parseScenario(text, file, set);
}

function runtimeFor(opts: RunOptions): Promise<Runtime> {
  return createRuntime(opts.runtime ?? 'process', {
    log: opts.quiet ? undefined : (s) => process.stderr.write(`dcemu: ${s}\n`),
    subnet: opts.subnet,
    secretFile: opts.secretFile,
    image: opts.image,
    place: opts.place,
  });
}

export async function run(file: string, opts: RunOptions): Promise<number> {
  const say = (s: string) => process.stderr.write(`${s}\n`);
  // from here on a signal stops what started and collects it (before, nothing had started)
  const abort = new AbortController();
  let interrupted = 0;
  let fabric: StartedEngine | null = null;
  // set once the run reached its end: a signal after that (compose stops the orchestrator when the
  // first node container exits) only hurries a teardown that is already on its way
  let ranToEnd = false;
  // set once nodes may exist: before, an interrupt only keeps them from starting (one line, below)
  let starting = false;
  onInterrupt((signal) => {
    interrupted++;
    if (interrupted > 1 || ranToEnd) return; // teardown is on its way
    if (starting) say(`\ndcemu: interrupted (${signal}), stopping every node ...`);
    fabric?.interrupt(signal);
    abort.abort(signal);
  });
  const { source, scenario, invariants, runtime, out } = await prepareRun(file, opts);
  if (abort.signal.aborted) {
    say(`dcemu: interrupted (${String(abort.signal.reason)}) before any node started`);
    return 130;
  }
  starting = true;
  mkdirSync(out, { recursive: true });
  // the run id labels every process and container of the run (`pgrep -f`, `docker ps --filter label=dcemu=`)
  const runId = newRunId();
  say(announcement(scenario, runtime, runId));
  // a signal during start-up ends the wait for the nodes: what had started is stopped and collected
  fabric = await new Engine(scenario, { runtime, out, runId, force: opts.force }).start(abort.signal);
  if (abort.signal.aborted) fabric.interrupt(String(abort.signal.reason));
  const live = opts.ui ? await openLiveView(fabric, source, opts, say) : null;
  let failed: string | null = null;
  try {
    if (!abort.signal.aborted) {
      failed = await traffic(fabric, opts, abort.signal, say);
      ranToEnd = !abort.signal.aborted;
    }
  } finally {
    await live?.close();
    failed = await reportRun(fabric, out, runtime.kind, { opts, invariants, ranToEnd, failed }, say);
  }
  if (!ranToEnd) return 130;
  return failed ? 1 : 0;
}

/**
 * `dcemu run` up to its start: the scenario loaded and resolved, its options and invariants checked,
 * the runtime made and the run refused if it cannot start there, before anything is announced or
 * written.
 */
async function prepareRun(file: string, opts: RunOptions) {
  const source = loadScenario(file, opts);
  const scenario = resolveScenario(source, { tdf: opts.tdf, sync: syncOption(opts) });
  if (opts.pauseAt !== undefined && !opts.ui)
    throw new RuntimeError(
      'run: --pause-at holds the fabric for the live view: add --ui (nothing else could resume it)',
    );
  if (opts.pauseAt !== undefined && scenario.sync !== 'conservative')
    throw new RuntimeError('run: --pause-at needs conservative time (dilated time runs on the wall clock)');
  // the scenario's own invariants (a chaos reproducer's): checked after the run, parsed before it
  const invariants =
    source.data.invariants === undefined
      ? null
      : resolveInvariants(source, source.data.invariants, ['invariants']);
  const runtime = await runtimeFor(opts);
  if (runtime.kind === 'attached') refuseNodeFaults(scenario);
  const refused = startRefusal(scenario, runtime, opts.force);
  if (refused) throw new RuntimeError(refused);
  const out = resolve(
    opts.out ?? `results/${scenario.name}-${new Date().toISOString().replace(/[:.]/g, '-')}`,
  );
  return { source, scenario, invariants, runtime, out };
}

/** The line that says what starts: how many nodes, as what, in which time mode, and the run id. */
function announcement(scenario: Scenario, runtime: Runtime, runId: string): string {
  const mode = scenario.sync === 'dilated' ? `dilated, tdf ${scenario.tdf}` : 'conservative';
  const n = scenario.topology.nodes.length;
  if (runtime.kind === 'attached')
    return `dcemu: waiting for ${n} nodes of '${scenario.name}' to attach (${mode}; run ${runId})`;
  const what = runtime.kind === 'docker' ? 'containers' : runtime.kind === 'swarm' ? 'services' : 'processes';
  return `dcemu: starting ${n} node ${what} for '${scenario.name}' (${mode}; run ${runId})`;
}

/** Traffic to the end, a progress line on the way; the run's own failure (a stall), if it had one. */
async function traffic(
  fabric: StartedEngine,
  opts: RunOptions,
  signal: AbortSignal,
  say: (line: string) => void,
): Promise<string | null> {
  say(
    `dcemu: ${fabric.scenario.topology.nodes.length} nodes ready; traffic starts (${fabric.plan.flows.length} flows planned)`,
  );
  const tty = process.stderr.isTTY && !opts.quiet;
  const t0 = Date.now();
  let lastPrint = 0;
  let failed: string | null = null;
  try {
    await fabric.run((p) => {
      if (opts.quiet) return;
      const line = progressLine(p, (Date.now() - t0) / 1000);
      if (tty) process.stderr.write(`\r\x1b[2K${line}`);
      else if (Date.now() - lastPrint >= 1000 * (opts.progressEvery ?? 5)) {
        lastPrint = Date.now();
        say(line);
      }
    }, signal);
  } catch (err) {
    if (!isUserError(err)) throw err;
    failed = (err as Error).message;
  }
  if (tty) process.stderr.write('\n');
  return failed;
}

/**
 * The run's end: stop, collect and write the results folder (`finishRun`), then say what went wrong
 * (crashes, broken invariants, an unfaithful run, processes left), write invariants.json and the
 * JUnit file; returns the run's failure, if any.
 */
async function reportRun(
  fabric: StartedEngine,
  out: string,
  runtimeKind: string,
  run: { opts: RunOptions; invariants: Invariants | null; ranToEnd: boolean; failed: string | null },
  say: (line: string) => void,
): Promise<string | null> {
  const { opts, invariants, ranToEnd } = run;
  let failed = run.failed;
  const scenario = fabric.scenario;
  const { result, summary, flows, outcomes, problems } = await finishRun(fabric, out, runtimeKind);
  for (const c of result.crashes)
    say(
      `dcemu: error: node ${c.node} crashed at ${formatNs(c.t)} (${c.reason}); the run went on without it and is not reproducible (see ${c.node}.stderr in ${out}/logs)`,
    );
  if (result.crashes.length > 0) failed ??= `${result.crashes.length} node(s) crashed`;
  for (const p of problems) say(`dcemu: warning: ${p}`);
  process.stdout.write(`${summaryTable(summary, out)}\n`);
  // the invariants, checked once: the scenario's own after a run that reached its end, and every
  // run's (with the scenario's asserts) for --junit; the run's own failure (a stall, a crash) is
  // theirs, before broken invariants add to it
  const checked = invariants ?? { lossless: false, asserts: [] };
  const broken =
    (invariants && ranToEnd) || opts.junit
      ? checkInvariants(
          {
            summary,
            outcomes,
            faults: result.faults,
            error: failed ?? (ranToEnd ? null : 'interrupted'),
            survivors: 0,
          },
          checked,
        )
      : [];
  if (invariants && ranToEnd) {
    writeFileSync(join(out, 'invariants.json'), `${JSON.stringify(broken, null, 2)}\n`);
    for (const v of broken) say(`dcemu: error: invariant ${v.invariant} broken: ${v.detail}`);
    if (broken.length > 0)
      failed ??= `${new Set(broken.map((v) => v.invariant)).size} of the scenario's invariants broken (invariants.json)`;
  }
  if (opts.junit) {
    // every run's invariants (the scenario's own asserts too), and a case per planned flow
    const names = scenario.topology.nodes;
    writeJunit(
      resolve(opts.junit),
      runSuites(
        scenario.name,
        summary,
        broken,
        checked.asserts.map((a) => a.text),
        flows,
        outcomes,
        (id) => names[id]?.name ?? String(id),
      ),
    );
  }
  if (failed) say(`dcemu: error: ${failed}`);
  if (!summary.fidelity.ok) {
    say(
      `dcemu: ${opts.allowUnfaithful ? 'warning' : 'error'}: causality misses ${(100 * summary.fidelity.missRate).toFixed(3)}% exceed ${100 * summary.fidelity.threshold}%: queue figures are not trustworthy${scenario.sync === 'dilated' ? ` at tdf ${scenario.tdf}; rerun with a larger --tdf or --sync conservative` : ''}`,
    );
    if (!opts.allowUnfaithful && ranToEnd && !failed) failed = 'unfaithful run';
  }
  if (summary.processes.leftRunning > 0)
    say(`dcemu: error: ${summary.processes.leftRunning} node processes survived teardown`);
  for (const k of summary.processes.kept ?? []) say(`dcemu: warning: ${k}`);
  return failed;
}

/** `--ui`: the live view of a started fabric, its address said; `--pause-at` holds it there first */
async function openLiveView(
  fabric: StartedEngine,
  source: ReturnType<typeof loadScenario>,
  opts: RunOptions,
  say: (line: string) => void,
) {
  const { liveTargetOf, startLiveView } = await import('../page/live.js');
  if (opts.pauseAt !== undefined) fabric.hold(opts.pauseAt);
  const view = await startLiveView(liveTargetOf(fabric, source), opts.uiPort ?? 0, (line) =>
    say(`dcemu: ${line}`),
  );
  say(`dcemu: live view: ${view.url} (127.0.0.1 only; the run goes on when the page closes)`);
  return view;
}
