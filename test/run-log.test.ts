/**
 * The run log (orchestrator/engine/run-log.ts): a line per run when DCEMU_RUN_LOG names a file, appended to
 * what is there; nothing without it; a file that cannot be written is a problem to warn of, never a
 * throw (the results are written all the same). The line of a real run is checked against its
 * nodes.json in run.integration.test.ts.
 */
// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { NodeReport } from '../core/messages.js';
import type { Summary } from '../orchestrator/engine/results.js';
import { appendRunLog } from '../orchestrator/engine/run-log.js';
import { tempOut } from './helpers.js';

const summary = {
  runId: 'dcemu-1-abc',
  scenario: 'tiny',
  runtime: 'process',
  sync: 'conservative',
  virtualNs: 2_000_000,
  wallMs: 1234,
  fidelity: { framesHandled: 70 },
} as unknown as Summary;
const report = (datagramsOut: number, nullMessages: number) =>
  ({ metrics: { counters: { datagramsOut, nullMessages } } }) as unknown as NodeReport;

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('the run log', () => {
  it('appends one line per run with its label and what it cost, to what the file holds', () => {
    const file = join(tempOut('runlog'), 'runs.jsonl');
    writeFileSync(file, '{"earlier":1}\n');
    vi.stubEnv('DCEMU_RUN_LOG', file);
    vi.stubEnv('DCEMU_RUN_LABEL', 'a study\tpoint 3');
    expect(appendRunLog('/results/a', summary, [report(100, 60), report(50, 20)])).toBeNull();
    vi.stubEnv('DCEMU_RUN_LABEL', '');
    expect(appendRunLog('/results/b', summary, [report(7, 7)])).toBeNull();
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    expect(lines.length).toBe(3);
    expect(JSON.parse(lines[0])).toEqual({ earlier: 1 });
    expect(JSON.parse(lines[1])).toEqual({
      runId: 'dcemu-1-abc',
      scenario: 'tiny',
      runtime: 'process',
      sync: 'conservative',
      out: '/results/a',
      label: 'a study\tpoint 3',
      nodes: 2,
      datagrams: 150,
      nullMessages: 80,
      framesHandled: 70,
      virtualNs: 2_000_000,
      wallMs: 1234,
    });
    // no label when none is set
    expect(JSON.parse(lines[2])).not.toHaveProperty('label');
    expect(JSON.parse(lines[2])).toMatchObject({ out: '/results/b', nodes: 1, datagrams: 7 });
  });

  it('writes nothing without DCEMU_RUN_LOG, and names a file it cannot write instead of throwing', () => {
    vi.stubEnv('DCEMU_RUN_LOG', '');
    expect(appendRunLog('/results/a', summary, [report(1, 1)])).toBeNull();
    const dir = tempOut('runlog-dir');
    // a folder is no file to append to
    vi.stubEnv('DCEMU_RUN_LOG', dir);
    expect(appendRunLog('/results/a', summary, [report(1, 1)])).toBe(
      `DCEMU_RUN_LOG: cannot append to ${dir} (EISDIR)`,
    );
  });
});
