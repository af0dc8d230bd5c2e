/**
 * The run log: with `DCEMU_RUN_LOG=<file>`, every run whose results are written appends one JSON line
 * to it: what it was (run id, scenario, runtime, time mode, results folder, `DCEMU_RUN_LABEL` if set)
 * and what it cost in figures the machine's speed hardly moves: node processes, datagrams (null
 * messages among them, the one figure that moves a little with how the processes' steps interleave)
 * and frames handled, beside its virtual and wall time. A batch of runs (a test suite, a study, a CI
 * job) then says which runs its time went to; the test suite's slowest-files report reads it. Lines
 * are appended whole, so processes may share the file. A log that cannot be written is a warning: the
 * run's results are written all the same.
 */
import { appendFileSync } from 'node:fs';
import type { NodeReport } from '../../core/messages.js';
import type { Summary } from './results.js';

export interface RunLogLine {
  runId: string;
  scenario: string;
  runtime: string;
  sync: string;
  out: string;
  label?: string;
  nodes: number;
  datagrams: number;
  nullMessages: number;
  framesHandled: number;
  virtualNs: number;
  wallMs: number;
}

/** Appends the run's line when DCEMU_RUN_LOG names a file; returns a problem to warn of, or null. */
export function appendRunLog(out: string, summary: Summary, reports: readonly NodeReport[]): string | null {
  const file = process.env.DCEMU_RUN_LOG;
  if (!file) return null;
  let datagrams = 0;
  let nullMessages = 0;
  for (const rep of reports) {
    datagrams += rep.metrics.counters.datagramsOut ?? 0;
    nullMessages += rep.metrics.counters.nullMessages ?? 0;
  }
  const line: RunLogLine = {
    runId: summary.runId,
    scenario: summary.scenario,
    runtime: summary.runtime,
    sync: summary.sync,
    out,
    ...(process.env.DCEMU_RUN_LABEL && { label: process.env.DCEMU_RUN_LABEL }),
    nodes: reports.length,
    datagrams,
    nullMessages,
    framesHandled: summary.fidelity.framesHandled,
    virtualNs: summary.virtualNs,
    wallMs: summary.wallMs,
  };
  try {
    appendFileSync(file, `${JSON.stringify(line)}\n`);
    return null;
  } catch (err) {
    return `DCEMU_RUN_LOG: cannot append to ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`;
  }
}
