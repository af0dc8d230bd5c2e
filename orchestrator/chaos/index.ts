/**
 * `dcemu chaos <scenario> --runs N --seed S`: N runs of a scenario, each under faults drawn from its
 * `chaos:` failure model with its own seed (S, S+1, ...), every run checked against the invariants
 * (invariants.ts). A run is executed from a scenario file holding its faults as a plain timeline
 * (`<out>/seed-<s>/scenario.yaml`), so the file that ran is the reproducer: in conservative mode
 * `dcemu run` on it gives the same run, frame for frame. A run that breaks an invariant is reduced
 * (faults are dropped while the same invariant still breaks, a bounded number of extra runs) and its
 * smallest failing scenario is written to `<out>/repro-seed-<s>.yaml`. `chaos.json` and `chaos.md`
 * hold the runs, the faults drawn and the violations.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { execa } from 'execa';
import { type Document, isMap, isSeq, parseDocument, visit, type YAMLMap } from 'yaml';
import { parseDurationNs } from '../../core/time.js';
import { Fabric, type Summary } from '../api.js';
import { isUserError } from '../engine/errors.js';
import { eachPooled, NodePool } from '../runtime/pool.js';
import { applyOverrides, loadScenarioFile } from '../scenario/load.js';
import { resolveScenario } from '../scenario/resolve.js';
import { describeFaults, smallerFaults } from './faults.js';
import { checkInvariants, type Violation } from './invariants.js';
import { type ChaosModel, type DrawnEntry, drawFaults, REPAIR_ACTIONS, resolveChaos } from './model.js';

export type { Violation } from './invariants.js';

export interface ChaosOptions {
  runs: number;
  /** the first run's seed; run i draws with seed + i */
  seed: number;
  out: string;
  /** `key.path=value` changes for every run (and its reproducer) */
  set?: string[];
  runtime?: 'process' | 'docker';
  /** runs at a time */
  parallel?: number;
  /** extra runs allowed to reduce a failing run's faults (0: write the run's own faults) */
  minimize?: number;
  /** Ctrl-C: the current run stops and is collected, no other starts; the tables cover the runs done */
  signal?: AbortSignal;
  log?: (line: string) => void;
}

export interface ChaosRun {
  seed: number;
  dir: string;
  /** faults drawn (a fault and its repair count once) */
  faults: number;
  byKind: Record<string, number>;
  /** the faults drawn, each its kind, what it strikes and when (model.ts describeFault) */
  drawn: string[];
  flows: { planned: number; completed: number; failed: number; unexplained: number };
  violations: Violation[];
  /** the reduced reproducer, when the run broke an invariant */
  repro?: { file: string; faults: number; runs: number; drawn: string[] };
}

export interface ChaosReport {
  scenario: string;
  runs: ChaosRun[];
  /** broken invariants: how many runs broke each */
  violations: Record<string, number>;
  failingSeeds: number[];
}

export interface Prepared {
  text: string;
  /** nodes the scenario's own timeline kills, and when */
  killed: Map<string, number>;
  model: ChaosModel;
  endNs: number;
  file: string;
}

/** Checks the scenario and its failure model; a mistake is a file:line:field error before anything runs. */
export function prepareChaos(file: string, set: string[] = []): Prepared {
  const src = loadScenarioFile(file, set);
  const sc = resolveScenario(src);
  const model = resolveChaos(src, sc.topology, sc.workload.durationNs);
  return {
    text: readFileSync(file, 'utf8'),
    killed: new Map(sc.timeline.filter((e) => e.action === 'kill').map((e) => [e.node!, e.at])),
    model,
    endNs: sc.workload.durationNs + sc.run.drainNs,
    file,
  };
}

/** The scenario with `entries` added to its timeline and no `chaos:`: what a chaos run executes. */
export function timelineScenario(
  p: Pick<Prepared, 'text' | 'file'>,
  set: string[],
  entries: DrawnEntry[],
  header: string,
): string {
  const doc: Document = parseDocument(p.text);
  applyOverrides(doc, set, p.file);
  // a scheme module named by a relative path: from the source's folder, wherever this file is written
  const module = doc.getIn(['scheme', 'module']);
  if (typeof module === 'string' && module.startsWith('.'))
    doc.setIn(['scheme', 'module'], resolve(dirname(p.file), module));
  // what the chaos runs checked goes with the run: `dcemu run` on this file checks it again
  // (the chaos section's, else the scenario's own, else an empty section: the built-in ones alone)
  const invariants = doc.getIn(['chaos', 'invariants']);
  const own = doc.get('invariants');
  doc.delete('chaos');
  doc.set('invariants', isMap(invariants) ? invariants : isMap(own) ? own : doc.createNode({}));
  // the source's comments described the source (its timings, its chaos section): this file has its own
  visit(doc, {
    Node(_, node) {
      node.comment = undefined;
      node.commentBefore = undefined;
    },
  });
  doc.comment = null;
  const base = doc.get('timeline');
  const existing: Array<Record<string, unknown>> = isSeq(base)
    ? (base.toJSON() as Array<Record<string, unknown>>)
    : [];
  const atNs = (v: unknown) => parseDurationNs(v as string | number);
  const drawn = entries.map(({ fault: _fault, failure: _failure, at, ...e }) => ({ at: `${at}ns`, ...e }));
  const merged = [...existing, ...drawn].sort((a, b) => atNs(a.at) - atNs(b.at));
  if (merged.length > 0) {
    const seq = doc.createNode(merged, { aliasDuplicateObjects: false });
    for (const item of seq.items) if (isMap(item)) (item as YAMLMap).flow = true;
    doc.set('timeline', seq);
  } else doc.delete('timeline');
  doc.commentBefore = header;
  return doc.toString({ lineWidth: 0 });
}

interface Attempt {
  summary: Summary | null;
  violations: Violation[];
}

/** Runs one scenario file into `dir` and checks it; a run that cannot start is itself a violation. */
async function attempt(
  scenarioFile: string,
  dir: string,
  model: ChaosModel,
  runtime: 'process' | 'docker',
  signal?: AbortSignal,
): Promise<Attempt> {
  let error: string | null = null;
  let fabric: Awaited<ReturnType<ReturnType<typeof Fabric.fromScenario>['start']>>;
  try {
    fabric = await Fabric.fromScenario(scenarioFile).withRuntime(runtime).withOutput(dir).start();
  } catch (err) {
    if (!isUserError(err)) throw err;
    return {
      summary: null,
      violations: [{ invariant: 'run-ends', detail: `the run did not start: ${(err as Error).message}` }],
    };
  }
  try {
    if (!signal?.aborted) await fabric.run(undefined, signal);
  } catch (err) {
    if (!isUserError(err)) throw err;
    error = (err as Error).message;
  }
  const done = await fabric.stop();
  const summary = done.summary();
  if (signal?.aborted) return { summary, violations: [] };
  const survivors = runtime === 'process' ? await alive(summary.runId) : 0;
  const violations = checkInvariants(
    { summary, outcomes: done.outcomes(), faults: done.faults(), error, survivors },
    { lossless: model.lossless, asserts: model.asserts },
  );
  writeFileSync(join(dir, 'invariants.json'), `${JSON.stringify(violations, null, 2)}\n`);
  return { summary, violations };
}

/**
 * The run's node processes still alive after it stopped: those of its own (their command line names
 * the run), and pooled ones still running one of its nodes (theirs names the pool, not the run).
 */
async function alive(runId: string): Promise<number> {
  const r = await execa('pgrep', ['-f', runId], { reject: false });
  const own = r.stdout.split('\n').filter((l) => l && Number(l) !== process.pid).length;
  return own + (NodePool.active()?.runningFor(runId) ?? 0);
}

const header = (file: string, seed: number, what: string): string =>
  [
    ` dcemu chaos: run of seed ${seed} of ${file}: ${what}`,
    ' the faults drawn from its chaos: section are the timeline below (times in virtual ns from traffic start).',
    ' In conservative mode `dcemu run <this file>` reproduces the run exactly, and checks its invariants: it',
    ' exits 1, naming what broke, for as long as they break.',
  ].join('\n');

export async function runChaos(file: string, opts: ChaosOptions): Promise<ChaosReport> {
  const set = opts.set ?? [];
  const prepared = prepareChaos(file, set);
  const runtime = opts.runtime ?? 'process';
  const say = opts.log ?? (() => {});
  mkdirSync(opts.out, { recursive: true });
  const runs: ChaosRun[] = new Array(opts.runs);
  // the runs' node processes run one run after another (runtime/pool.ts)
  const oneRun = async (i: number): Promise<void> => {
    const seed = opts.seed + i;
    const dir = join(opts.out, `seed-${seed}`);
    mkdirSync(dir, { recursive: true });
    const entries = drawFaults(prepared.model, seed, prepared.endNs, prepared.killed);
    const scenarioFile = join(dir, 'scenario.yaml');
    const faultCount = new Set(entries.map((e) => e.fault)).size;
    writeFileSync(
      scenarioFile,
      timelineScenario(prepared, set, entries, header(file, seed, `${faultCount} faults`)),
    );
    say(`chaos run ${i + 1}/${opts.runs}: seed ${seed}, ${faultCount} faults`);
    const a = await attempt(scenarioFile, dir, prepared.model, runtime, opts.signal);
    if (opts.signal?.aborted) return;
    const byKind: Record<string, number> = {};
    for (const e of entries)
      if (!REPAIR_ACTIONS.has(e.action)) byKind[e.action] = (byKind[e.action] ?? 0) + 1;
    const s = a.summary;
    const run: ChaosRun = {
      seed,
      dir,
      faults: faultCount,
      byKind,
      drawn: describeFaults(entries),
      flows: {
        planned: s?.flows.planned ?? 0,
        completed: s?.flows.completed ?? 0,
        failed: s?.flows.failed ?? 0,
        unexplained: s?.flows.unexplained ?? 0,
      },
      violations: a.violations,
    };
    if (a.violations.length > 0 && !opts.signal?.aborted) {
      say(`chaos: seed ${seed} broke ${[...new Set(a.violations.map((v) => v.invariant))].join(', ')}`);
      for (const v of a.violations) say(`  ${v.invariant}: ${v.detail}`);
      run.repro = await reduce(
        prepared,
        set,
        file,
        seed,
        entries,
        a.violations,
        dir,
        runtime,
        opts.minimize ?? 8,
        say,
      );
      say(`chaos: seed ${seed}: reproduce with dcemu run ${relative(process.cwd(), run.repro.file)}`);
    }
    runs[i] = run;
  };
  await eachPooled(opts.runs, opts.parallel ?? 1, oneRun, opts.signal);
  const done = runs.filter((r) => r !== undefined);
  const report: ChaosReport = {
    scenario: file,
    runs: done,
    violations: {},
    failingSeeds: done.filter((r) => r.violations.length > 0).map((r) => r.seed),
  };
  for (const r of done)
    for (const inv of new Set(r.violations.map((v) => v.invariant)))
      report.violations[inv] = (report.violations[inv] ?? 0) + 1;
  writeFileSync(join(opts.out, 'chaos.json'), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(opts.out, 'chaos.md'), chaosTable(report, opts.out));
  return report;
}

/**
 * The smallest set of the run's faults (a fault and its repair go together) that still breaks one of
 * the invariants it broke, by delta debugging (drop a chunk, keep the drop if it still breaks; halve
 * the chunks when nothing can go), then each fault kept made smaller while it still breaks (a
 * partition cuts fewer nodes off, a flap ends sooner: model.ts smallerFaults), within `budget` extra
 * runs. Writes the reproducer and returns it.
 */
async function reduce(
  p: Prepared,
  set: string[],
  file: string,
  seed: number,
  entries: DrawnEntry[],
  broke: Violation[],
  dir: string,
  runtime: 'process' | 'docker',
  budget: number,
  say: (line: string) => void,
  signal?: AbortSignal,
): Promise<{ file: string; faults: number; runs: number; drawn: string[] }> {
  const wanted = new Set(broke.map((v) => v.invariant));
  let keep = [...new Set(entries.map((e) => e.fault))];
  let best = { entries, violations: broke };
  let runs = 0;
  /** the violations of the wanted invariants a candidate breaks (none: it does not break them) */
  const attemptWith = async (tryEntries: DrawnEntry[], what: string): Promise<Violation[]> => {
    const tryDir = join(dir, 'reduce', String(runs));
    mkdirSync(tryDir, { recursive: true });
    const tryFile = join(tryDir, 'scenario.yaml');
    writeFileSync(tryFile, timelineScenario(p, set, tryEntries, header(file, seed, 'reducing')));
    runs++;
    const a = await attempt(tryFile, tryDir, p.model, runtime, signal);
    const same = a.violations.filter((v) => wanted.has(v.invariant));
    if (!signal?.aborted)
      say(`chaos: seed ${seed}: ${what} ${same.length > 0 ? 'still break it' : 'do not'}`);
    rmSync(tryDir, { recursive: true, force: true });
    return signal?.aborted ? [] : same;
  };
  let chunks = 2;
  while (runs < budget && keep.length > 0 && !signal?.aborted) {
    const size = Math.ceil(keep.length / chunks);
    let dropped = false;
    for (let c = 0; c < keep.length && runs < budget; c += size) {
      const candidate = keep.filter((_, i) => i < c || i >= c + size);
      const tryEntries = entries.filter((e) => candidate.includes(e.fault));
      const same = await attemptWith(tryEntries, `${candidate.length} of ${keep.length} faults`);
      if (signal?.aborted) break;
      if (same.length > 0) {
        keep = candidate;
        best = { entries: tryEntries, violations: same };
        chunks = Math.max(2, chunks - 1);
        dropped = true;
        break;
      }
    }
    if (!dropped) {
      if (size <= 1) break;
      chunks = Math.min(keep.length, chunks * 2);
    }
  }
  // each fault kept, smaller while it still breaks
  for (let shrunk = true; shrunk && runs < budget && !signal?.aborted; ) {
    shrunk = false;
    for (const f of keep) {
      const mine = best.entries.filter((e) => e.fault === f);
      for (const smaller of smallerFaults(mine, p.model)) {
        if (runs >= budget || signal?.aborted) break;
        const tryEntries = [...best.entries.filter((e) => e.fault !== f), ...smaller].sort(
          (a, b) => a.at - b.at || a.fault - b.fault,
        );
        const same = await attemptWith(tryEntries, describeFaults(smaller).join(', '));
        if (same.length > 0) {
          best = { entries: tryEntries, violations: same };
          shrunk = true;
          break;
        }
      }
    }
  }
  rmSync(join(dir, 'reduce'), { recursive: true, force: true });
  const out = resolve(dir, '..', `repro-seed-${seed}.yaml`);
  const faults = new Set(best.entries.map((e) => e.fault)).size;
  const what = [
    `breaks ${[...new Set(best.violations.map((v) => v.invariant))].join(', ')} with ${faults} of the run's ${new Set(entries.map((e) => e.fault)).size} faults`,
    ...describeFaults(best.entries).map((d) => `   fault: ${d}`),
    ...best.violations.slice(0, 5).map((v) => `   ${v.invariant}: ${v.detail}`),
  ].join('\n');
  writeFileSync(out, timelineScenario(p, set, best.entries, header(file, seed, what)));
  return { file: out, faults, runs, drawn: describeFaults(best.entries) };
}

function chaosTable(r: ChaosReport, out: string): string {
  const lines = [
    `# dcemu chaos: ${r.scenario}`,
    '',
    `${r.runs.length} runs, ${r.runs.reduce((s, x) => s + x.faults, 0)} faults, ${r.failingSeeds.length} runs breaking an invariant${r.failingSeeds.length ? ` (seeds ${r.failingSeeds.join(', ')})` : ''}.`,
    '',
    '| seed | faults | flows completed / failed / unexplained of planned | violations | reproducer |',
    '| --- | --- | --- | --- | --- |',
    ...r.runs.map(
      (x) =>
        `| ${x.seed} | ${x.faults}${
          x.faults
            ? ` (${Object.entries(x.byKind)
                .map(([k, n]) => `${n} ${k}`)
                .join(', ')})`
            : ''
        } | ${x.flows.completed} / ${x.flows.failed} / ${x.flows.unexplained} of ${x.flows.planned} | ${[...new Set(x.violations.map((v) => v.invariant))].join(', ') || '-'} | ${x.repro ? `${relative(out, x.repro.file)} (${x.repro.faults} faults)` : '-'} |`,
    ),
  ];
  if (r.runs.some((x) => x.drawn.length > 0)) {
    lines.push('', 'Faults drawn:', '');
    for (const x of r.runs) if (x.drawn.length > 0) lines.push(`- seed ${x.seed}: ${x.drawn.join('; ')}`);
  }
  if (Object.keys(r.violations).length > 0) {
    lines.push('', '| invariant | runs breaking it |', '| --- | --- |');
    for (const [k, n] of Object.entries(r.violations)) lines.push(`| ${k} | ${n} |`);
  }
  return `${lines.join('\n')}\n`;
}
