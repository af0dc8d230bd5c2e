/**
 * The dcemu command line: every command and its options (commander), each wired to what does the work:
 * `dcemu run <scenario>` in run.ts, the option parsers in options.ts, the studies in ../studies/.
 * User mistakes print one line and exit 2; Ctrl-C stops the runs, tears everything down and still
 * writes what was collected.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { BUILT_IN_SCHEMES } from '../../schemes/built-in.js';
import { resolveChaos, resolveInvariants } from '../chaos/model.js';
import { memoryProblem } from '../engine/engine.js';
import { isUserError, RuntimeError } from '../engine/errors.js';
import { onInterrupt } from '../engine/interrupts.js';
import { registerSchemes } from '../registry/index.js';
import type { ExperimentOptions, SchemeExperiment } from '../registry/types.js';
import { lendFolder } from '../runtime/hardening.js';
import { ensureImage } from '../runtime/image.js';
import { NodePool } from '../runtime/pool.js';
import { loadScenarioFile } from '../scenario/load.js';
import { resolveScenario } from '../scenario/resolve.js';
import { scenarioSchemaDocument } from '../scenario/schema.js';
import { composeFile } from '../studies/compose.js';
import type { Reproduction } from '../studies/reproduction.js';
import { parseAxis, runSweep } from '../studies/sweep.js';
import { toDot, toJson, validateTopology } from '../topology/index.js';
import { loadTopologyFile } from '../topology/load.js';
import { chaosSuites, experimentSuites, writeJunit } from './junit.js';
import { duration, integer, placements, positive, subnets } from './options.js';
import { run } from './run.js';

/**
 * Ctrl-C (or SIGTERM) for commands that run many fabrics (sweep, chaos): the running ones stop and
 * are collected, no other starts, and the command writes what it has.
 */
function interruptible(): AbortController {
  const abort = new AbortController();
  onInterrupt((signal) => {
    if (abort.signal.aborted) return;
    process.stderr.write(`\ndcemu: interrupted (${signal}), stopping the current run ...\n`);
    abort.abort(signal);
  });
  return abort;
}

// the command line knows dcemu's own schemes; a scenario names others by module
registerSchemes(BUILT_IN_SCHEMES);

/** index.html of a folder of runs (loaded when asked for) */
async function writeIndex(dir: string, title?: string): Promise<string | null> {
  const { writeIndexPage } = await import('./index-page.js');
  return writeIndexPage(dir, title);
}

/** `--set key.path=value`, repeatable: the same scenario with one field changed (studies, sweeps) */
const SET_OPTION = [
  '--set <key=value>',
  'override a scenario field, e.g. --set ptp.timestamping=software (repeatable)',
  (v: string, acc: string[] = []) => [...acc, v],
] as const;

const program = new Command()
  .name('dcemu')
  .description('datacenter-fabric emulator made of real processes')
  .showHelpAfterError()
  .configureOutput({ outputError: (s, write) => write(s) });

program
  .command('run')
  .description(
    'run a scenario: start every node as its own process or container, run traffic and the fault timeline, collect results',
  )
  .argument('<scenario>', 'scenario YAML file')
  .option(
    '--sync <mode>',
    'conservative (default: exact, reproducible, as fast as the CPU allows) or dilated (real time, tdf times slower)',
  )
  .option(
    '--tdf <n>',
    'dilated mode: time dilation factor (real time runs n times slower than virtual time); implies --sync dilated',
    positive,
  )
  .option(
    '--allow-unfaithful',
    'exit 0 even when the run was not faithful (causality misses above the threshold)',
  )
  .option('--out <dir>', 'results folder (default results/<name>-<time>)')
  .option('--force', 'start even when the nodes need more memory than this machine has (~30 MB each)')
  .option('-q, --quiet', 'no progress line')
  .option(
    '--progress-every <s>',
    'seconds of wall time between progress lines when stderr is not a terminal (a log; default 5)',
    positive,
  )
  .option('--no-plots', 'draw no plots (plots/ is left out; same as --set run.plots=false)')
  .option('--junit <file>', "write JUnit XML: the run's invariants and every planned flow as test cases")
  .option(
    '--ui',
    'serve a live view on 127.0.0.1 (its address is printed): progress and events; pause, resume and step virtual time (conservative mode); inject faults',
  )
  .option('--ui-port <port>', 'the live view on this port (default: any free one)', integer)
  .option(
    '--pause-at <time>',
    'with --ui: hold the fabric at this virtual time (e.g. 1ms) until the view resumes it',
    duration,
  )
  .option(...SET_OPTION)
  .option(
    '--runtime <kind>',
    'process (default): a child process per node; docker: a container per node (docs/containers.md); swarm: a service per node on a Docker Swarm, over its machines (dcemu swarm init); attached: nodes started by others connect (dcemu compose)',
  )
  .option('--subnet <cidr>', 'attached runtime: the fabric subnet of the compose file')
  .option(
    '--secret-file <path>',
    "attached runtime: where to write the run's secret for the nodes to read (the compose file passes it)",
  )
  .option(
    '--image <ref>',
    "docker and swarm runtimes: the image to run (default: this build's, built when missing; carried to the swarm's other machines whose daemons dcemu knows, docs/containers.md)",
  )
  .option(
    '--place <node=machine,...>',
    'swarm runtime: put these nodes (each with its rack) on these swarm machines (hostnames); the rest are placed by rack and load',
    placements,
  )
  .option(
    '--scenario-env <var>',
    'read the scenario text from this environment variable; <scenario> only names it',
  )
  .action(async (file: string, opts) => {
    process.exitCode = await run(file, opts);
  });

program
  .command('compose')
  .description(
    'print a docker-compose file that runs the scenario: one service per node plus an orchestrator',
  )
  .argument('<scenario>', 'scenario YAML file')
  .option('--tdf <n>', 'time dilation factor', positive)
  .option(...SET_OPTION)
  .option('--image <tag>', "dcemu image to run (default: build the current app's image if needed)")
  .option('--results <dir>', 'host folder for the results, mounted into the services', './dcemu-results')
  .option('--project <id>', 'label of every container and the network (default dcemu-<name>-<hash>)')
  .option('--subnet <cidr>', 'fabric subnet inside 198.18.0.0/15 (default: a block of 198.19.0.0/16)')
  .action(
    async (
      file: string,
      opts: {
        tdf?: number;
        set?: string[];
        image?: string;
        results: string;
        project?: string;
        subnet?: string;
      },
    ) => {
      const say = (s: string) => process.stderr.write(`dcemu: ${s}\n`);
      const image = opts.image ?? (await ensureImage({ log: say }));
      // compose resolves relative paths against the file's folder: make the mount absolute now, and
      // create it so it belongs to the user, not to the daemon
      const results = resolve(opts.results);
      mkdirSync(results, { recursive: true });
      // run as root, the services run as an unprivileged user (runtime/hardening.ts): theirs to write
      lendFolder(results);
      const c = composeFile({
        scenarioFile: file,
        overrides: opts.set,
        tdf: opts.tdf,
        image,
        results,
        project: opts.project,
        subnet: opts.subnet,
      });
      for (const d of c.dropped)
        say(
          `timeline ${d.action} ${d.node} at ${d.at} left out: compose nodes are not the orchestrator's to ${d.action}`,
        );
      process.stdout.write(c.text);
    },
  );

const image = program.command('image').description('the dcemu container image (docs/containers.md)');
image
  .command('build')
  .description('build the image of the current build (FROM scratch, offline) unless it exists; print its tag')
  .option('--force', 'build even if an image of this build exists')
  .action(async (opts: { force?: boolean }) => {
    const tag = await ensureImage({ force: opts.force, log: (s) => process.stderr.write(`dcemu: ${s}\n`) });
    process.stdout.write(`${tag}\n`);
  });

program
  .command('clean')
  .description(
    "remove every container and network of dcemu docker runs (label 'dcemu'), also of crashed runs",
  )
  .option('--run <id>', 'only this run (its id is in the start line and in summary.json)')
  .action(async (opts: { run?: string }) => {
    const { keptMessage, removeAllRuns, removeRun } = await import('../runtime/docker-client.js');
    // a swarm manager's services first: their tasks' containers go with them
    const { removeServices } = await import('../runtime/swarm-removal.js');
    const services = await removeServices(opts.run ?? null);
    const removed = opts.run === undefined ? await removeAllRuns() : await removeRun(opts.run);
    process.stdout.write(
      `removed ${services > 0 ? `${services} services, ` : ''}${removed.containers} containers and ${removed.networks} networks\n`,
    );
    if (removed.kept.length > 0) {
      process.stderr.write(`dcemu: error: ${keptMessage(removed.kept)}\n`);
      process.exitCode = 1;
    }
  });

program
  .command('holds')
  .description(
    'who held whom in a conservative run: busiest nodes, the most waited-on, chains of waits (from nodes.json)',
  )
  .argument('<results>', 'a results folder')
  .option('--top <n>', 'lines per list', positive, 8)
  .action(async (dir: string, opts: { top: number }) => {
    const { formatHolds, holds } = await import('../engine/holds.js');
    const file = join(dir, 'nodes.json');
    if (!existsSync(file)) throw new RuntimeError(`${file}: no such file (is ${dir} a results folder?)`);
    const summary = join(dir, 'summary.json');
    const machines = existsSync(summary)
      ? (JSON.parse(readFileSync(summary, 'utf8')) as { processes?: { machines?: Record<string, string> } })
          .processes?.machines
      : undefined;
    process.stdout.write(formatHolds(holds(JSON.parse(readFileSync(file, 'utf8')), machines), opts.top));
  });

const swarm = program
  .command('swarm')
  .description(
    'a Docker Swarm for --runtime swarm, its own networks inside 198.18.0.0/15 (docs/containers.md)',
  );
swarm
  .command('init')
  .description('make this machine a swarm manager; prints the command that joins another machine')
  .option(
    '--advertise-addr <ip>',
    "this machine's address on the network the machines share (default 127.0.0.1: a one-machine swarm)",
  )
  .option(
    '--avoid <subnets>',
    "subnets the swarm's networks must not take, comma-separated (the network the machines share, say)",
    subnets,
  )
  .action(async (opts: { advertiseAddr?: string; avoid?: string[] }) => {
    const { swarmInit, swarmSubnets } = await import('../runtime/swarm-setup.js');
    const { docker } = await import('../runtime/docker-client.js');
    const say = (s: string) => process.stderr.write(`dcemu: ${s}\n`);
    const token = await swarmInit({ advertiseAddr: opts.advertiseAddr, avoid: opts.avoid, say });
    if (token && opts.advertiseAddr) {
      // a joining machine's bridge keeps clear of this one's and of the swarm's own network
      const { gwbridge, pool } = await swarmSubnets(await docker());
      const avoid = [...(opts.avoid ?? []), gwbridge, pool].filter(Boolean).join(',');
      process.stdout.write(`dcemu swarm join ${opts.advertiseAddr} --token ${token} --avoid ${avoid}\n`);
    }
  });
swarm
  .command('join')
  .description('join this machine to a swarm as a worker')
  .argument('<manager>', "the manager's address (host or host:port)")
  .requiredOption('--token <token>', "the worker token 'dcemu swarm init' printed")
  .option('--advertise-addr <ip>', "this machine's address on the network the machines share")
  .option(
    '--avoid <subnets>',
    "subnets this machine's docker_gwbridge must not take: the swarm's and other machines' ('dcemu swarm init' prints them)",
    subnets,
  )
  .action(async (manager: string, opts: { token: string; advertiseAddr?: string; avoid?: string[] }) => {
    const { swarmJoin } = await import('../runtime/swarm-setup.js');
    await swarmJoin({ manager, ...opts, say: (s) => process.stderr.write(`dcemu: ${s}\n`) });
  });
swarm
  .command('leave')
  .description("remove dcemu's services, leave the swarm and remove the docker_gwbridge dcemu made")
  .action(async () => {
    const { swarmLeave } = await import('../runtime/swarm-setup.js');
    const { keptMessage } = await import('../runtime/docker-client.js');
    const kept = await swarmLeave((s) => process.stderr.write(`dcemu: ${s}\n`));
    if (kept.length > 0) {
      process.stderr.write(`dcemu: error: ${keptMessage(kept)}\n`);
      process.exitCode = 1;
    }
  });
const lab = swarm
  .command('lab')
  .description(
    'a swarm of several machines on this one: extra Docker daemons in network namespaces (root; docs/containers.md)',
  );
lab
  .command('up')
  .description(
    'start N lab machines, make this machine their swarm manager, join them and carry the image to them',
  )
  .option('--nodes <n>', 'lab machines besides this one', positive, 1)
  .action(async (opts: { nodes: number }) => {
    const { labUp } = await import('../runtime/swarm-lab.js');
    const say = (s: string) => process.stderr.write(`dcemu: ${s}\n`);
    // Ctrl-C: up stops at its next step and removes what it made
    const abort = new AbortController();
    const off = onInterrupt((signal) => {
      if (!abort.signal.aborted)
        say(`interrupted (${signal}): the lab stops at its next step and is removed`);
      abort.abort();
    });
    const state = await labUp({ nodes: opts.nodes, say, signal: abort.signal }).finally(off);
    for (const m of state.machines) process.stdout.write(`${m.name}=unix://${m.socket}\n`);
  });
lab
  .command('down')
  .description("remove the lab: its machines leave, their daemons and namespaces go, and the swarm 'up' made")
  .action(async () => {
    const { labDown } = await import('../runtime/swarm-lab.js');
    await labDown((s) => process.stderr.write(`dcemu: ${s}\n`));
  });

program
  .command('report')
  .description(
    "write a run's results page again from its folder (report.html: topology, timeline, queues, flows, clocks)",
  )
  .argument('<results>', "a run's results folder")
  .action(async (dir: string) => {
    const at = resolve(dir);
    if (!existsSync(at)) throw new RuntimeError(`report: no folder ${at}`);
    if (!existsSync(join(at, 'summary.json'))) {
      // a sweep's, a chaos campaign's or an experiment's folder: its index of runs
      const index = await writeIndex(at);
      if (index === null)
        throw new RuntimeError(`report: ${at} holds no run (no summary.json in it or below it) and no table`);
      process.stdout.write(`${index}\n`);
      return;
    }
    const { writeRunPage } = await import('../page/run-page.js');
    const { file, problems } = await writeRunPage(at);
    for (const p of problems) process.stderr.write(`dcemu: ${p}\n`);
    if (file !== null) process.stdout.write(`${file}\n`);
  });

program
  .command('topo')
  .description('print the topology of a scenario without running it')
  .argument('<scenario>', 'scenario YAML file')
  .option('--format <fmt>', 'dot or json', 'dot')
  .option(...SET_OPTION)
  .action((file: string, opts: { format: string; set?: string[] }) => {
    if (opts.format !== 'dot' && opts.format !== 'json')
      throw new InvalidArgumentError(`--format must be dot or json, got '${opts.format}'`);
    const sc = resolveScenario(loadScenarioFile(file, opts.set ?? []));
    process.stdout.write(`${opts.format === 'dot' ? toDot(sc.topology) : toJson(sc.topology)}\n`);
  });

program
  .command('check-topology')
  .description(
    'check a hand-written topology (the JSON `topo --format json` prints): wiring, up/down routing and, for F10 trees, the F10 §8 address verification',
  )
  .argument('<topology>', 'topology JSON file')
  .action((file: string) => {
    const problems = validateTopology(loadTopologyFile(file));
    if (problems.length === 0) {
      process.stdout.write(`${file}: ok\n`);
      return;
    }
    for (const p of problems) process.stderr.write(`${file}: ${p}\n`);
    process.exitCode = 1;
  });

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
  .action(
    async (
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
    ) => {
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
    },
  );

program
  .command('schema')
  .description('print the scenario JSON Schema (editors validate YAML with it; docs/scenario.schema.json)')
  .action(() => {
    process.stdout.write(`${JSON.stringify(scenarioSchemaDocument(), null, 2)}\n`);
  });

program
  .command('validate')
  .description('check a scenario file and exit')
  .argument('<scenario>', 'scenario YAML file')
  .option(...SET_OPTION)
  .action((file: string, opts: { set?: string[] }) => {
    const src = loadScenarioFile(file, opts.set ?? []);
    const sc = resolveScenario(src);
    const chaos = src.data.chaos ? resolveChaos(src, sc.topology, sc.workload.durationNs) : null;
    if (src.data.invariants !== undefined) resolveInvariants(src, src.data.invariants, ['invariants']);
    // valid, but `dcemu run` here would refuse it: say so now, not after 'starting ... processes'
    const tooBig = memoryProblem(sc);
    if (tooBig)
      throw new RuntimeError(
        `${file}: valid, but ${tooBig}: 'dcemu run' refuses it here (--force runs it anyway)`,
      );
    process.stdout.write(
      `${file}: ok (${sc.topology.nodes.length} nodes, ${sc.timeline.length} timeline events${chaos ? `, a chaos model of ${chaos.failures.length} failure kinds over ${chaos.failures.reduce((n, f) => n + f.targets.length, 0)} components` : ''})\n`,
    );
  });

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (isUserError(err) || err instanceof InvalidArgumentError) {
    process.stderr.write(`dcemu: ${(err as Error).message}\n`);
    process.exit(2);
  }
  throw err;
}
