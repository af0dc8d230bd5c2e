/**
 * What must hold after any run, whatever the faults (a chaos run checks every one): every flow
 * completed or failed for a reason the faults give; no process outlived the run and none crashed; no
 * frame was lost outside the injected faults (congestion drops are counted losses, not unexplained
 * ones, unless the fabric promises to be lossless); the run was faithful; the scheme's own
 * invariants (each scheme driver's `invariants`); and the scenario's own `assert` lines.
 */
import type { FlowNotDone, Summary } from '../engine/collect.js';
import { type FiredFault, LINK_DROPS, OUTAGES } from '../engine/fired.js';
import { schemeDefinition } from '../registry/index.js';
import type { Assertion } from './model.js';

export interface Violation {
  invariant: string;
  detail: string;
}

export interface RunFacts {
  summary: Summary;
  outcomes: FlowNotDone[];
  faults: FiredFault[];
  /** the fabric's own failure (a stall, a crashed node), when the run did not end normally */
  error: string | null;
  /** node processes of the run found alive after it stopped (a check beyond the run's own count) */
  survivors: number;
}

/** At most this many detail lines per invariant; the rest are counted. */
const MAX_DETAILS = 10;

export function checkInvariants(
  run: RunFacts,
  opts: { lossless: boolean; asserts: Assertion[] },
): Violation[] {
  const s = run.summary;
  const v: Violation[] = [];
  const add = (invariant: string, details: string[]) => {
    for (const d of details.slice(0, MAX_DETAILS)) v.push({ invariant, detail: d });
    if (details.length > MAX_DETAILS)
      v.push({ invariant, detail: `... and ${details.length - MAX_DETAILS} more` });
  };

  if (run.error) add('run-ends', [`the run failed: ${run.error}`]);

  add(
    'flows-accounted',
    run.outcomes.filter((o) => o.outcome === 'unexplained').map((o) => `flow ${o.id}: ${o.reason}`),
  );

  const processes: string[] = [];
  if (s.processes.leftRunning > 0)
    processes.push(`${s.processes.leftRunning} node processes survived the run's teardown`);
  if (run.survivors > 0)
    processes.push(`${run.survivors} node processes of the run still alive after it stopped`);
  for (const m of s.processes.missingReports)
    if (m.reason !== 'killed by the timeline') processes.push(`${m.node}: ${m.reason}`);
  add('processes', processes);

  const loss: string[] = [];
  const linkFaults = run.faults.some((f) => LINK_DROPS.has(f.action));
  const topologyFaults = run.faults.some((f) => LINK_DROPS.has(f.action) || OUTAGES.has(f.action));
  if (s.drops.malformed > 0) loss.push(`${s.drops.malformed} malformed datagrams inside the fabric`);
  if (s.drops.fault > 0 && !linkFaults)
    loss.push(`${s.drops.fault} frames dropped by the fault layer, yet no link fault fired`);
  if (s.drops.noRoute > 0 && !topologyFaults)
    loss.push(`${s.drops.noRoute} frames found no route, yet no node or link failed`);
  if (opts.lossless && s.drops.congestion > 0)
    loss.push(`${s.drops.congestion} frames dropped by full buffers in a fabric that must not drop`);
  add('no-loss-outside-faults', loss);

  if (!s.fidelity.ok)
    add('faithful', [
      `causality misses ${s.fidelity.causalityMisses} of ${s.fidelity.framesHandled} frames handled exceed the threshold`,
    ]);

  const driver = schemeDefinition(s.scheme);
  if (driver.invariants && driver.summaryKey)
    for (const x of driver.invariants(s[driver.summaryKey], s)) add(x.invariant, [x.detail]);

  const asserts: string[] = [];
  for (const a of opts.asserts) {
    const got = a.path.reduce<unknown>(
      (o, k) => (o !== null && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined),
      s,
    );
    if (typeof got !== 'number') {
      asserts.push(
        `'${a.text}': summary.${a.path.join('.')} is ${got === undefined ? 'not in the summary' : JSON.stringify(got)}`,
      );
      continue;
    }
    if (!compare(got, a.op, a.value)) asserts.push(`'${a.text}': ${a.path.join('.')} is ${got}`);
  }
  add('assert', asserts);
  return v;
}

function compare(x: number, op: Assertion['op'], y: number): boolean {
  switch (op) {
    case '<':
      return x < y;
    case '<=':
      return x <= y;
    case '==':
      return x === y;
    case '!=':
      return x !== y;
    case '>=':
      return x >= y;
    case '>':
      return x > y;
  }
}
