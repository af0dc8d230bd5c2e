/**
 * The dcemu command line: every command and its options (commander), each wired to what does the work:
 * `dcemu run <scenario>` in run.ts, the option parsers in options.ts, the studies in ../studies/;
 * `dcemu swarm` in swarm-commands.ts, `sweep`, `chaos` and `experiment` in study-commands.ts.
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
import { registerSchemes } from '../registry/index.js';
import { lendFolder } from '../runtime/hardening.js';
import { ensureImage } from '../runtime/image.js';
import { loadScenarioFile } from '../scenario/load.js';
import { resolveScenario } from '../scenario/resolve.js';
import { scenarioSchemaDocument } from '../scenario/schema.js';
import { composeFile } from '../studies/compose.js';
import { toDot, toJson, validateTopology } from '../topology/index.js';
import { loadTopologyFile } from '../topology/load.js';
import { duration, integer, placements, positive } from './options.js';
import { run } from './run.js';
import { SET_OPTION, writeIndex } from './shared.js';
import { addChaosCommand, addExperimentCommand, addSweepCommand } from './study-commands.js';
import { addSwarmCommands } from './swarm-commands.js';

// the command line knows dcemu's own schemes; a scenario names others by module
registerSchemes(BUILT_IN_SCHEMES);

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

addSwarmCommands(program);

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
  .command('ns3')
  .description(
    "run a best-effort run's fabric and flows in ns-3 (its twin, docs/ns3.md) and print how the two agree, as ns3-crosscheck does",
  )
  .argument('<results>', "a run's results folder (scheme ecmp, the baseline transport)")
  .option('--out <dir>', 'where the twin runs and ns3.md/ns3.json go (default <results>/ns3)')
  .action(async (dir: string, opts: { out?: string }) => {
    const { crossCheckResults } = await import('../ns3/results.js');
    const at = resolve(dir);
    const r = await crossCheckResults(at, resolve(opts.out ?? join(at, 'ns3')), (l) =>
      process.stderr.write(`dcemu: ${l}\n`),
    );
    for (const n of r.notes) process.stderr.write(`dcemu: note: ${n}\n`);
    process.stdout.write(`${r.table}\n\nresults in ${r.out}\n`);
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
addSweepCommand(program);
addChaosCommand(program);
addExperimentCommand(program);

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
