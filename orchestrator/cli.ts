#!/usr/bin/env node
/**
 * The dcemu command line: `dcemu run <scenario>` runs a scenario on a runtime and leaves a results
 * folder; `dcemu topo <scenario>` prints its topology. User mistakes print one line and exit 2;
 * Ctrl-C stops the run, tears everything down and still writes what was collected.
 */
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { collect, writeResults } from './collect.js';
import { isUserError } from './errors.js';
import { Fabric } from './fabric.js';
import { progressLine, summaryTable } from './report.js';
import { ProcessRuntime } from './runtime/process.js';
import { loadScenarioFile } from './scenario/load.js';
import { resolveScenario } from './scenario/resolve.js';
import { toDot, toJson } from './topology/index.js';

function positive(v: string): number {
  const n = Number(v);
  if (!(n > 0)) throw new InvalidArgumentError(`expected a positive number, got '${v}'`);
  return n;
}

async function run(
  file: string,
  opts: { tdf?: number; out?: string; quiet?: boolean; set?: string[] },
): Promise<number> {
  const scenario = resolveScenario(loadScenarioFile(file, opts.set ?? []), { tdf: opts.tdf });
  const out = resolve(
    opts.out ?? `results/${scenario.name}-${new Date().toISOString().replace(/[:.]/g, '-')}`,
  );
  mkdirSync(out, { recursive: true });
  const tty = process.stderr.isTTY && !opts.quiet;
  const say = (s: string) => process.stderr.write(`${s}\n`);
  say(
    `dcemu: starting ${scenario.topology.nodes.length} node processes for '${scenario.name}' (tdf ${scenario.tdf})`,
  );
  const abort = new AbortController();
  let interrupted = 0;
  const onSignal = () => {
    interrupted++;
    if (interrupted > 1) return; // teardown is on its way; children die with us anyway (execa cleanup)
    say('\ndcemu: interrupted, stopping every node ...');
    abort.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const fabric = await new Fabric(scenario, { runtime: new ProcessRuntime(), out }).start();
  let lastPrint = 0;
  try {
    if (!abort.signal.aborted) {
      say(
        `dcemu: ${scenario.topology.nodes.length} nodes ready; traffic starts (${fabric.plan.flows.length} flows planned)`,
      );
      await fabric.run((p) => {
        if (opts.quiet) return;
        if (tty) process.stderr.write(`\r\x1b[2K${progressLine(p)}`);
        else if (Date.now() - lastPrint >= 5000) {
          lastPrint = Date.now();
          say(progressLine(p));
        }
      }, abort.signal);
      if (tty) process.stderr.write('\n');
    }
  } finally {
    const result = await fabric.stop();
    const { summary, flows } = collect(result, 'process');
    writeResults(out, result, summary, flows);
    process.stdout.write(`${summaryTable(summary, out)}\n`);
    if (!summary.fidelity.ok) {
      say(
        `dcemu: warning: causality misses ${(100 * summary.fidelity.missRate).toFixed(3)}% exceed ${100 * summary.fidelity.threshold}%: queue figures are not trustworthy at tdf ${scenario.tdf}; rerun with a larger --tdf`,
      );
    }
    if (summary.processes.leftRunning > 0)
      say(`dcemu: error: ${summary.processes.leftRunning} node processes survived teardown`);
  }
  return abort.signal.aborted ? 130 : 0;
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
    'run a scenario: start every node as its own process, run traffic and the fault timeline, collect results',
  )
  .argument('<scenario>', 'scenario YAML file')
  .option('--tdf <n>', 'time dilation factor (real time runs n times slower than virtual time)', positive)
  .option('--out <dir>', 'results folder (default results/<name>-<time>)')
  .option('-q, --quiet', 'no progress line')
  .option(...SET_OPTION)
  .action(async (file: string, opts) => {
    process.exitCode = await run(file, opts);
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
  .command('validate')
  .description('check a scenario file and exit')
  .argument('<scenario>', 'scenario YAML file')
  .option(...SET_OPTION)
  .action((file: string, opts: { set?: string[] }) => {
    const sc = resolveScenario(loadScenarioFile(file, opts.set ?? []));
    process.stdout.write(
      `${file}: ok (${sc.topology.nodes.length} nodes, ${sc.timeline.length} timeline events)\n`,
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
