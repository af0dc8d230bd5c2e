/**
 * The commands that run many fabrics (orchestrator/cli/commands.ts adds them): `dcemu sweep` over a
 * grid of values, `dcemu chaos` under drawn faults, and `dcemu experiment`, a paper's evaluation or a
 * study across the schemes.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { RuntimeError } from '../engine/errors.js';
import type { ExperimentOptions, SchemeExperiment } from '../registry/types.js';
import { NodePool } from '../runtime/pool.js';
import { loadScenarioFile } from '../scenario/load.js';
import { resolveScenario } from '../scenario/resolve.js';
import type { Reproduction } from '../studies/reproduction.js';
import { parseAxis, runSweep } from '../studies/sweep.js';
import { chaosSuites, experimentSuites, writeJunit } from './junit.js';
import { integer, positive } from './options.js';
import { interruptible, SET_OPTION, writeIndex } from './shared.js';

/** `dcemu sweep`: a scenario over a grid of values. */
export function addSweepCommand(program: Command): void {
  program
    .command('sweep')
    .description(
      'run a scenario over a grid of values (--set key=v1,v2,...; repeatable), collect the summaries into sweep.csv and sweep.md and plot each figure against the swept values',
    )
    .argument('<scenario>', 'scenario YAML file')
    .option(
      '--set <key=values>',
      'a swept field and its comma-separated values (repeatable)',
      (v: string, acc: string[] = []) => [...acc, v],
    )
    .option(
      '--fix <key=value>',
      'a field changed for every point (repeatable)',
      (v: string, acc: string[] = []) => [...acc, v],
    )
    .option('--out <dir>', 'results folder (default results/<name>-sweep-<time>)')
    .option('--parallel <n>', 'runs at a time (each is a whole fabric of processes)', positive, 1)
    .option('--runtime <kind>', 'process (default) or docker')
    .option(
      '--no-plots',
      "draw no plots: neither the sweep's nor its runs' (--fix run.plots=false leaves out only the runs')",
    )
    .action(
      async (
        file: string,
        opts: {
          set?: string[];
          fix?: string[];
          out?: string;
          parallel: number;
          runtime?: string;
          plots: boolean;
        },
      ) => {
        const axes = (opts.set ?? []).map(parseAxis);
        if (axes.length === 0) throw new RuntimeError('sweep: give at least one --set key=value1,value2,...');
        if (opts.runtime !== undefined && opts.runtime !== 'process' && opts.runtime !== 'docker')
          throw new RuntimeError(`sweep: --runtime must be process or docker, got '${opts.runtime}'`);
        const name = resolveScenario(loadScenarioFile(file, opts.fix ?? [])).name;
        const out = resolve(
          opts.out ?? `results/${name}-sweep-${new Date().toISOString().replace(/[:.]/g, '-')}`,
        );
        const abort = interruptible();
        const rows = await runSweep(file, axes, {
          signal: abort.signal,
          base: [...(opts.fix ?? []), ...(opts.plots ? [] : ['run.plots=false'])],
          plots: opts.plots,
          out,
          runtime: opts.runtime as 'process' | 'docker' | undefined,
          parallel: opts.parallel,
          log: (line) => process.stderr.write(`dcemu: ${line}\n`),
        });
        await writeIndex(out);
        process.stdout.write(
          `${readFileSync(join(out, 'sweep.md'), 'utf8')}\n${rows.length} runs; tables in ${out}/sweep.csv and sweep.md, the runs in ${out}/index.html\n`,
        );
        if (abort.signal.aborted) process.exitCode = 130;
      },
    );
}

/** `dcemu chaos`: a scenario again and again under drawn faults, its invariants checked after each run. */
export function addChaosCommand(program: Command): void {
  program
    .command('chaos')
    .description(
      'run a scenario again and again under faults drawn from its chaos: failure model (one seed per run) and check the invariants after each run; a run that breaks one leaves a reproducer scenario',
    )
    .argument('<scenario>', 'scenario YAML file with a chaos: section')
    .option('--runs <n>', 'how many runs', positive, 10)
    .option('--seed <s>', 'seed of the first run; run i draws its faults with seed + i', integer, 1)
    .option('--out <dir>', 'results folder (default results/<name>-chaos-<time>)')
    .option('--parallel <n>', 'runs at a time (each is a whole fabric of processes)', positive, 1)
    .option(
      '--minimize <runs>',
      "extra runs allowed to reduce a failing run's faults to the fewest that still break the invariant (0: keep them all)",
      integer,
      8,
    )
    .option(...SET_OPTION)
    .option('--runtime <kind>', 'process (default) or docker')
    .option(
      '--junit <file>',
      'write JUnit XML: a case per run, failing with the invariants it broke and its reproducer',
    )
    .action(
      async (
        file: string,
        opts: {
          runs: number;
          seed: number;
          out?: string;
          parallel: number;
          minimize: number;
          set?: string[];
          runtime?: string;
          junit?: string;
        },
      ) => {
        if (opts.runtime !== undefined && opts.runtime !== 'process' && opts.runtime !== 'docker')
          throw new RuntimeError(`chaos: --runtime must be process or docker, got '${opts.runtime}'`);
        if (!Number.isInteger(opts.runs))
          throw new RuntimeError(`chaos: --runs must be a whole number, got ${opts.runs}`);
        const { prepareChaos, runChaos } = await import('../chaos/index.js');
        prepareChaos(file, opts.set ?? []);
        const name = resolveScenario(loadScenarioFile(file, opts.set ?? [])).name;
        const out = resolve(
          opts.out ?? `results/${name}-chaos-${new Date().toISOString().replace(/[:.]/g, '-')}`,
        );
        const abort = interruptible();
        const report = await runChaos(file, {
          signal: abort.signal,
          runs: opts.runs,
          seed: opts.seed,
          out,
          set: opts.set,
          runtime: opts.runtime as 'process' | 'docker' | undefined,
          parallel: opts.parallel,
          minimize: Math.max(0, opts.minimize),
          log: (line) => process.stderr.write(`dcemu: ${line}\n`),
        });
        if (opts.junit) writeJunit(resolve(opts.junit), chaosSuites(report));
        await writeIndex(out);
        process.stdout.write(`${readFileSync(join(out, 'chaos.md'), 'utf8')}\nresults in ${out}\n`);
        process.exitCode = abort.signal.aborted ? 130 : report.failingSeeds.length > 0 ? 1 : 0;
      },
    );
}

/** Experiments across the schemes, beside each scheme's own. */
const STUDIES: SchemeExperiment[] = [
  {
    name: 'clock-jitter',
    description:
      "what each scheme's guarantee that lives on time loses as the clocks get worse: ideal, PTP (hardware, P2P, no transparent clocks, send jitter, slow syncs, software stamps), NTP-class; tables and plots against the clock error",
    scenario: '',
    seeds: 3,
    module: new URL('../studies/clock-jitter.js', import.meta.url).href,
    run: 'runClockJitter',
  },
  {
    name: 'clock-pdv',
    description:
      "PTP's clock error under the fabric's delay variation: an asymmetric link (against half the asymmetry), delay that varies on every link, the queues of traffic at swept loads; without and with transparent clocks, peer to peer",
    scenario: 'examples/clock-pdv.yaml',
    seeds: 3,
    module: new URL('../studies/clock-pdv.js', import.meta.url).href,
    run: 'runClockPdv',
  },
  {
    name: 'ns3-crosscheck',
    description:
      "dcemu's baseline (DCTCP, NewReno) against ns-3 3.37 running the same fabric, flows and TCP settings: per-flow FCT ratios, FCT per size range, the bottleneck's queue, marks and drops (needs libns3-dev and g++; docs/ns3.md)",
    scenario: '',
    seeds: 3,
    module: new URL('../ns3/crosscheck.js', import.meta.url).href,
    run: 'runNs3Crosscheck',
  },
];

/** The experiment's function from the module its scheme names. */
async function loadExperiment(e: SchemeExperiment): Promise<(opts: ExperimentOptions) => Promise<string>> {
  const mod = (await import(e.module)) as Record<string, unknown>;
  const run = mod[e.run];
  if (typeof run !== 'function')
    throw new RuntimeError(`experiment ${e.name}: ${e.module} exports no function '${e.run}'`);
  return run as (opts: ExperimentOptions) => Promise<string>;
}

/** `dcemu experiment [name] [scenario]`: a paper's evaluation as one command; without a name, the list. */
export function addExperimentCommand(program: Command): void {
  program
    .command('experiment')
    .description(
      "run a paper's evaluation as one command (tables and plots in the results folder); without a name, list them",
    )
    .argument('[name]', 'the experiment')
    .argument('[scenario]', "scenario YAML file (default: the experiment's own example)")
    .option('--seeds <n>', "how many seeds (default: the experiment's)", positive)
    .option('--seed <s>', "the first seed (default: the scenario's own)", integer)
    .option(
      '--quick',
      "the experiment's smaller variant with one seed: direction and order of magnitude, not the paper's scale",
    )
    .option('--out <dir>', 'results folder (default results/<name>-<time>)')
    .option(
      '--junit <file>',
      'write JUnit XML: a case per figure, ours beside the paper, failing where it leaves a bound the experiment states',
    )
    .option(
      '--variants <names>',
      'only these variants, comma-separated (and those they are measured against), where the experiment lists its variants',
    )
    .option(...SET_OPTION)
    .action(runExperiment);
}

/** `dcemu experiment`'s work: the experiment by name (or the list), run with its seeds, its index and JUnit. */
async function runExperiment(
  name: string | undefined,
  file: string | undefined,
  opts: {
    seeds?: number;
    seed?: number;
    out?: string;
    set?: string[];
    quick?: boolean;
    variants?: string;
    junit?: string;
  },
): Promise<void> {
  const { experiments } = await import('../registry/index.js');
  const all = new Map([...experiments(), ...STUDIES.map((x) => [x.name, x] as const)]);
  const e = name === undefined ? undefined : all.get(name);
  if (e === undefined) {
    const list = [...all.values()].map((x) => `  ${x.name}  ${x.description}`).join('\n');
    if (name !== undefined)
      throw new RuntimeError(`experiment: no experiment '${name}'; there are:\n${list}`);
    process.stdout.write(`${list}\n`);
    return;
  }
  // a study across the schemes runs each one's own scenario ('': none of the user's)
  if (e.scenario === '' && file !== undefined)
    throw new RuntimeError(`experiment ${e.name}: runs every scheme's own scenario; it takes none`);
  const scenario = file ?? e.scenario;
  const variants = opts.variants?.split(',').map((v) => v.trim());
  if (variants !== undefined) {
    if (e.variants === undefined)
      throw new RuntimeError(`experiment ${e.name}: runs all of its variants; it takes no --variants`);
    const unknown = variants.filter((v) => !e.variants!.includes(v));
    if (unknown.length > 0 || variants.length === 0)
      throw new RuntimeError(
        `experiment ${e.name}: --variants: no variant '${unknown[0] ?? ''}'; there are ${e.variants.join(', ')}`,
      );
  }
  const seeds = opts.seeds ?? (opts.quick ? 1 : e.seeds);
  if (!Number.isInteger(seeds))
    throw new RuntimeError(`experiment: --seeds must be a whole number, got ${seeds}`);
  const sc = scenario === '' ? null : resolveScenario(loadScenarioFile(scenario, opts.set ?? []));
  const out = resolve(opts.out ?? `results/${e.name}-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  const abort = interruptible();
  const run = await loadExperiment(e);
  // the runs' node processes run one run after another (runtime/pool.ts)
  const pool = NodePool.open();
  const table = await run({
    file: scenario,
    out,
    seeds,
    seed: opts.seed ?? sc?.seed ?? 1,
    set: opts.set,
    quick: opts.quick === true,
    ...(variants && { variants }),
    signal: abort.signal,
    say: (line) => process.stderr.write(`dcemu: ${line}\n`),
  }).finally(() => pool.close());
  if (!abort.signal.aborted) await writeIndex(out, e.name);
  process.stdout.write(`${table}\nresults in ${out}\n`);
  process.exitCode = abort.signal.aborted ? 130 : 0;
  if (opts.junit && !abort.signal.aborted) {
    const rep = join(out, 'reproduction.json');
    if (!existsSync(rep))
      throw new RuntimeError(
        `experiment ${e.name}: writes no reproduction.json, so no JUnit figures for --junit`,
      );
    const suites = experimentSuites(JSON.parse(readFileSync(rep, 'utf8')) as Reproduction);
    writeJunit(resolve(opts.junit), suites);
    if (suites.some((x) => x.cases.some((c) => c.failure))) process.exitCode = 1;
  }
}
