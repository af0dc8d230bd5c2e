/**
 * A vitest reporter beside the default one: after the run it prints the slowest test files (tests and
 * hooks, wall time) and the CPU each took with its fabrics (test/cpu-probe.ts, where /proc says), so a
 * suite that creeps past its budget shows where (docs/testing.md: a fresh clone's `.ci/run` on a 2-core
 * machine within 10 minutes). Wall time moves with the machine and with a neighbour's load; CPU seconds much less; the
 * datagrams the file's fabrics exchanged (the run log, orchestrator/engine/run-log.ts, each run labelled
 * with its test by test/cpu-probe.ts) hardly at all: a shorter scenario shows there on any machine.
 * With `DCEMU_SUITE_RECORD=<file.md>` it also writes the suite's figures between that file's
 * `<!-- suite: figures -->` markers (docs/testing.md's budget), so the one place that says what the
 * suite takes is written by the suite.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/** how many files, and how many tests, are listed */
const SHOWN = 10;

/** the CPU a file took up to its last test (test/cpu-probe.ts), if it was measured */
function fileCpuS(m: TestModule): number | undefined {
  let cpu: number | undefined;
  for (const t of m.children.allTests()) {
    const c = t.meta().fileCpuS;
    if (c !== undefined) cpu = Math.max(cpu ?? 0, c);
  }
  return cpu;
}

/** what the runs labelled with one file, or one test, cost */
interface RunCost {
  runs: number;
  nodes: number;
  datagrams: number;
}

/** the run log's lines by label: `file` for a whole file, `file\ttest` for one test */
function runCosts(log: string): Map<string, RunCost> {
  const costs = new Map<string, RunCost>();
  const add = (key: string, nodes: number, datagrams: number) => {
    const c = costs.get(key) ?? { runs: 0, nodes: 0, datagrams: 0 };
    c.runs++;
    c.nodes += nodes;
    c.datagrams += datagrams;
    costs.set(key, c);
  };
  if (!existsSync(log)) return costs;
  for (const text of readFileSync(log, 'utf8').split('\n')) {
    let line: { label?: string; nodes: number; datagrams: number };
    try {
      line = JSON.parse(text);
    } catch {
      // an empty line, or one cut short by a killed process
      continue;
    }
    if (typeof line.label !== 'string') continue;
    const [file, test] = line.label.split('\t');
    add(file, line.nodes, line.datagrams);
    if (test) add(line.label, line.nodes, line.datagrams);
  }
  return costs;
}

/** thousands, grouped */
const kilo = (n: number) => Math.round(n / 1000).toLocaleString('en-US');

/** a row's datagrams column (empty when none of its runs were logged) */
const kDatagrams = (r: Partial<RunCost>) =>
  r.datagrams === undefined ? '' : `  ${kilo(r.datagrams).padStart(6)}k datagrams`;

export default class SlowestFiles implements Reporter {
  /** the run log this suite's runs append to: its own, unless DCEMU_RUN_LOG names one */
  private readonly log: string;
  private readonly ownLog: boolean;

  /** when the run began, for the record's wall time */
  private readonly startedAt = Date.now();

  constructor() {
    this.ownLog = !process.env.DCEMU_RUN_LOG;
    // set before the workers start: they, and every process they start, inherit it
    process.env.DCEMU_RUN_LOG ??= join(mkdtempSync(join(tmpdir(), 'dcemu-runlog-')), 'runs.jsonl');
    this.log = process.env.DCEMU_RUN_LOG;
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const costs = runCosts(this.log);
    if (this.ownLog) rmSync(dirname(this.log), { recursive: true, force: true });
    const rows = modules
      .map((m) => ({
        file: m.relativeModuleId,
        ms: m.diagnostic().duration,
        cpuS: fileCpuS(m),
        ...costs.get(m.relativeModuleId),
      }))
      .sort((a, b) => b.ms - a.ms);
    const total = rows.reduce((s, r) => s + r.ms, 0);
    const measured = rows.filter((r) => r.cpuS !== undefined);
    const cpu = measured.reduce((s, r) => s + (r.cpuS ?? 0), 0);
    const cpuNote = measured.length > 0 ? `, ${cpu.toFixed(0)} CPU-s` : '';
    let runs = 0;
    let nodes = 0;
    let datagrams = 0;
    for (const r of rows) {
      runs += r.runs ?? 0;
      nodes += r.nodes ?? 0;
      datagrams += r.datagrams ?? 0;
    }
    const runNote =
      runs > 0
        ? `, ${runs} run${runs === 1 ? '' : 's'} of ${nodes.toLocaleString('en-US')} node processes exchanging ${kilo(datagrams)}k datagrams`
        : '';
    const lines = rows
      .slice(0, SHOWN)
      .map(
        (r) =>
          `  ${(r.ms / 1000).toFixed(1).padStart(7)} s  ${((100 * r.ms) / total).toFixed(0).padStart(3)}%` +
          `${r.cpuS === undefined ? '' : `  ${r.cpuS.toFixed(1).padStart(6)} CPU-s`}` +
          `${kDatagrams(r)}  ${r.file}`,
      );
    process.stdout.write(
      `\nslowest test files (of ${rows.length}, ${(total / 1000).toFixed(0)} s in all${cpuNote}${runNote}):\n${lines.join('\n')}\n`,
    );
    // the tests that took the most CPU (with their fabrics): what a shorter scenario would save
    const all = modules
      .flatMap((m) =>
        [...m.children.allTests()].map((t) => ({
          file: m.relativeModuleId,
          name: t.name,
          ms: t.diagnostic()?.duration,
          cpuS: t.meta().testCpuS,
          ...costs.get(`${m.relativeModuleId}\t${t.name}`),
        })),
      )
      .filter(
        (t): t is { file: string; name: string; ms: number | undefined; cpuS: number } & Partial<RunCost> =>
          t.cpuS !== undefined,
      )
      .sort((a, b) => b.cpuS - a.cpuS);
    const tests = all.slice(0, SHOWN);
    // every file and test, for a closer look: DCEMU_TEST_PROFILE=<file.json> npm test
    const profile = process.env.DCEMU_TEST_PROFILE;
    if (profile) writeFileSync(profile, `${JSON.stringify({ files: rows, tests: all }, null, 1)}\n`);
    const record = process.env.DCEMU_SUITE_RECORD;
    if (record) {
      const failed = modules.some((m) => m.state() === 'failed');
      if (failed) process.stdout.write(`\nsuite figures not recorded in ${record}: a test failed\n`);
      else
        recordSuite(record, {
          files: rows.length,
          tests: modules.reduce((n, m) => n + [...m.children.allTests()].length, 0),
          wallS: (Date.now() - this.startedAt) / 1000,
          cpuS: cpu,
          runs,
          nodes,
          datagrams,
        });
    }
    if (tests.length > 0)
      process.stdout.write(
        `\nthe tests that took the most CPU:\n${tests
          .map(
            (t) =>
              `  ${t.cpuS.toFixed(1).padStart(6)} CPU-s${kDatagrams(t)}  ${t.file}: ${t.name.slice(0, 90)}`,
          )
          .join('\n')}\n`,
      );
  }
}

/**
 * The suite's figures written between `<!-- suite: figures -->` and `<!-- /suite: figures -->` in
 * `file`: when, on what machine, and what it took.
 */
function recordSuite(
  file: string,
  f: {
    files: number;
    tests: number;
    wallS: number;
    cpuS: number;
    runs: number;
    nodes: number;
    datagrams: number;
  },
): void {
  const text = readFileSync(file, 'utf8');
  const block = /(<!-- suite: figures -->\n)[\s\S]*?(<!-- \/suite: figures -->)/;
  if (!block.test(text)) {
    process.stdout.write(`\nsuite figures not recorded: ${file} has no <!-- suite: figures --> markers\n`);
    return;
  }
  const cores = cpus();
  const machine = `${cores.length} × ${cores[0]?.model.trim() ?? 'unknown CPU'}, ${Math.round(totalmem() / 2 ** 30)} GB`;
  const minS = (s: number) => `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
  const line =
    `Recorded by the suite (\`DCEMU_SUITE_RECORD=docs/testing.md npm test\`) on ${new Date().toISOString().slice(0, 10)}, ` +
    `${machine}${process.env.CI === 'true' ? ', CI=true' : ''}: ${f.files} test files, ${f.tests.toLocaleString('en-US')} tests, ` +
    `vitest ${minS(f.wallS)} of wall and ${Math.round(f.cpuS)} CPU-s of tests, ${f.runs} runs of ` +
    `${f.nodes.toLocaleString('en-US')} node processes exchanging ${kilo(f.datagrams)}k datagrams.`;
  writeFileSync(file, text.replace(block, `$1${line}\n$2`));
  process.stdout.write(`\nsuite figures recorded in ${file}\n`);
}
