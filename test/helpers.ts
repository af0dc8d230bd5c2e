/**
 * Helpers for integration tests: run the built CLI as a real process, or a scenario through the
 * library API; find a run's node processes.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execa } from 'execa';
import { parse as parseJunit, type TestSuite, type TestSuites } from 'junit2json';
import { expect } from 'vitest';
import { NodePool } from '../orchestrator/runtime/pool.js';

export const ROOT = join(import.meta.dirname, '..');
export const CLI = join(ROOT, 'dist/orchestrator/cli.js');

/** the folders `tempOut` made in this test file: test/temp-cleanup.ts removes them after a passing file */
export const tempDirs: string[] = [];

export function tempOut(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `dcemu-${prefix}-`));
  tempDirs.push(dir);
  return dir;
}

/**
 * Keepalives every 1 ms instead of a scenario's 10 µs, for runs where nothing fails: there they only
 * cost datagrams (a fifth of the suite's; docs/testing.md). On ideal clocks a run's figures are the same
 * bytes at both intervals; on PTP clocks the keepalives no longer wait in the ports beside the PTP
 * frames, so such a test's figures are this interval's. Not for runs whose links fail: detection
 * follows the interval.
 */
export const KEEPALIVE_SETTING = { key: 'liveness.interval', value: '1ms' } as const;
/** the same as `--set` arguments */
export const KEEPALIVE_1MS = ['--set', `${KEEPALIVE_SETTING.key}=${KEEPALIVE_SETTING.value}`];

/** the quickstart's leaves and spines with 2 hosts each, its seed and spine kill: 108 flows of 100 KB */
export const QUICKSTART_SHORT = [
  '--set',
  'topology.hostsPerLeaf=2',
  '--set',
  'workload={pattern: all-to-all, fixedSize: 100KB, load: 0.4, duration: 3ms}',
  '--set',
  'timeline.0.at=1500us',
  '--set',
  'run.drain=2ms',
  '--set',
  'run.plots=false',
];

/**
 * The built CLI, as a user runs it. A `run`, and each run of an `experiment` or `chaos`, draws no
 * per-run plots unless `plots` is set: they cost ~0.6 s a run, and only the tests that read them ask
 * for them (an experiment's own figures are drawn either way).
 */
export function dcemu(
  args: string[],
  opts: { timeout?: number; plots?: boolean; env?: Record<string, string> } = {},
) {
  const noPlots = !opts.plots && !args.includes('--no-plots') && !args.includes('run.plots=false');
  const extra = !noPlots
    ? []
    : args[0] === 'run'
      ? ['--no-plots']
      : (args[0] === 'experiment' && args.length > 1) || args[0] === 'chaos'
        ? ['--set', 'run.plots=false']
        : [];
  return execa(process.execPath, [CLI, ...args, ...extra], {
    cwd: ROOT,
    reject: false,
    timeout: opts.timeout ?? 180_000,
    env: { FORCE_COLOR: '0', ...opts.env },
  });
}

/**
 * `dcemu run <scenario> --out <out> -q` started in the background, for a test that signals or kills
 * it (`detached`: in its own process group, as a shell would start it).
 */
export function startRun(
  scenario: string,
  out: string,
  opts: { detached?: boolean; args?: string[]; progress?: boolean } = {},
) {
  // `progress`: the progress line on stderr (each 5 s when not a terminal unless --progress-every says
  // otherwise, the first at once)
  const { args = [], progress = false, ...options } = opts;
  return execa(process.execPath, [CLI, 'run', scenario, '--out', out, ...(progress ? [] : ['-q']), ...args], {
    cwd: ROOT,
    reject: false,
    ...options,
  });
}

// biome-ignore lint/suspicious/noExplicitAny: summary.json is read as plain JSON
export function readJson(file: string): any {
  return JSON.parse(readFileSync(file, 'utf8'));
}

/**
 * Runs a scenario into a fresh results folder through the library API, as `dcemu run --no-plots`
 * would (`extra`: its `--set key=value` pairs): a crash, an unfaithful run or a node left running fails
 * the test. A file's runs share a node pool (orchestrator/runtime/pool.ts), whose processes end after
 * the file (test/node-pool.ts): the CLI itself is tested by the files that run it.
 */
export async function runScenario(
  name: string,
  scenario: string,
  extra: string[] = [],
  // biome-ignore lint/suspicious/noExplicitAny: summary.json as written
): Promise<{ out: string; s: any }> {
  const out = tempOut(name);
  const set: Record<string, string> = {};
  for (let i = 0; i < extra.length; i += 2) {
    if (extra[i] !== '--set') throw new Error(`runScenario takes --set pairs, got ${extra[i]}`);
    const eq = extra[i + 1].indexOf('=');
    set[extra[i + 1].slice(0, eq)] = extra[i + 1].slice(eq + 1);
  }
  set['run.plots'] = 'false';
  filePool ??= NodePool.open();
  // the library on demand: every test file's setup imports this module (test/node-pool.ts)
  const { Fabric } = await import('../orchestrator/api.js');
  const fabric = await Fabric.fromScenario(resolve(ROOT, scenario), { set }).withOutput(out).start();
  try {
    await fabric.run();
  } finally {
    await fabric.stop();
  }
  const s = readJson(join(out, 'summary.json'));
  expect(s.crashes ?? [], 'crashed nodes').toEqual([]);
  expect(s.fidelity.ok, 'a faithful run').toBe(true);
  expect(s.processes.leftRunning, 'node processes left running').toBe(0);
  return { out, s };
}

/** the node pool of this file's `runScenario` runs, once one ran */
let filePool: NodePool | null = null;

/** Ends the processes of this file's node pool (test/node-pool.ts, after the file). */
export async function closeFilePool(): Promise<void> {
  const pool = filePool;
  filePool = null;
  await pool?.close();
}

/**
 * `dcemu experiment <name> --quick` into a fresh results folder (a non-zero exit fails the test): the
 * folder, what it printed, its reproduction.json, and `fig`: a figure's mean by id.
 */
export async function quickExperiment(name: string, extra: string[] = []) {
  const out = tempOut(name);
  const r = await dcemu(['experiment', name, '--quick', '--out', out, ...extra]);
  expect(r.exitCode, r.stderr).toBe(0);
  const rep = readJson(join(out, 'reproduction.json'));
  const fig = (id: string): number => rep.figures.find((f: { id: string }) => f.id === id).mean;
  return { out, stdout: r.stdout, rep, fig };
}

/** A JUnit XML file as a JUnit parser (junit2json) reads it: its suites (the file must hold a <testsuites>). */
export async function readJunit(file: string): Promise<TestSuites & { testsuite: TestSuite[] }> {
  const x = await parseJunit(readFileSync(file, 'utf8'));
  if (!x || !('testsuite' in x) || !Array.isArray(x.testsuite)) throw new Error(`${file}: no <testsuites>`);
  return x as TestSuites & { testsuite: TestSuite[] };
}

/** Pids of node processes whose command line names `marker` (a run id or results folder). */
export async function nodePids(marker: string): Promise<number[]> {
  const r = await execa('pgrep', ['-f', marker], { reject: false });
  return r.stdout
    .split('\n')
    .filter(Boolean)
    .map(Number)
    .filter((pid) => pid !== process.pid);
}

/**
 * Pids of node processes of every run whose results lie under `out` (each summary.json's run id, in
 * any folder below): a test's own leftovers, whatever else runs beside it.
 */
export async function runPids(out: string): Promise<number[]> {
  const ids = readdirSync(out, { recursive: true, encoding: 'utf8' })
    .filter((f) => f === 'summary.json' || f.endsWith('/summary.json'))
    .map((f) => readJson(join(out, f)).runId as string);
  expect(ids.length).toBeGreaterThan(0);
  return (await Promise.all(ids.map((id) => nodePids(id)))).flat();
}

/** the environment variable that tags every process a test file starts (test/own-processes.ts) */
export const TAG_VAR = 'DCEMU_TEST_FILE_TAG';

/**
 * The dcemu node processes this test file started, however it started them (its CLI runs, runs of
 * the library API in this worker), and only those: each inherited the file's tag, which /proc shows in
 * its environment. Also a run's nodes whose orchestrator was killed before it wrote anything.
 */
export async function ownNodePids(): Promise<number[]> {
  const own = process.env[TAG_VAR];
  if (own === undefined)
    throw new Error(`${TAG_VAR} unset: vitest.config.ts runs test/own-processes.ts first`);
  const tag = `${TAG_VAR}=${own}`;
  const pids = await nodePids(`${ROOT}/dist/(bundle/(host|switch|arbiter)|(host|switch|arbiter)/main)\\.js`);
  return pids.filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(tag);
    } catch {
      return false; // gone since pgrep saw it
    }
  });
}

/**
 * `dcemu run test/fixtures/long.yaml` (with `args`) whose orchestrator dies of a bug once traffic runs:
 * test/fixtures/bug-on-sigusr2.mjs, preloaded, makes SIGUSR2 throw in it, as a bug would. It must exit
 * 1 naming the error; returns what it printed on stderr.
 */
export async function runDyingOfABug(out: string, args: string[] = []): Promise<string> {
  const run = execa(
    process.execPath,
    [
      '--import',
      './test/fixtures/bug-on-sigusr2.mjs',
      CLI,
      'run',
      'test/fixtures/long.yaml',
      '--out',
      out,
      '-q',
      ...args,
    ],
    { cwd: ROOT, reject: false },
  );
  await waitForStderr(run, 'traffic starts');
  run.kill('SIGUSR2');
  const r = await run;
  expect(r.exitCode).toBe(1);
  expect(r.stderr).toContain('dcemu: internal error: Error: a planted bug');
  return r.stderr;
}

/** Resolves once the process has printed `text` on stderr; rejects if it ends first. */
export function waitForStderr(proc: ReturnType<typeof execa>, text: string | RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    let buf = '';
    proc.stderr?.on('data', (d: Buffer) => {
      buf += d.toString();
      if (typeof text === 'string' ? buf.includes(text) : text.test(buf)) resolve();
    });
    proc.then(() => reject(new Error(`process ended before printing '${text}': ${buf}`)));
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

let linkSeq = 0;
/** A link header for hand-built datagrams: each call takes the next sequence number, so none is a duplicate. */
export function hdr(port: number, promise = 0): { port: number; seq: number; ack: number; promise: number } {
  return { port, seq: ++linkSeq, ack: 0, promise };
}
