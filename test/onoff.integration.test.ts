/**
 * One short real-process run of the on-off pattern (test/fixtures/onoff.yaml: 4 hosts, 1 ms of ON/OFF
 * sources at half load over UDP): the flows the hosts sent are the ON periods the generator planned,
 * every packet a full frame, and the run's figures are exact (conservative mode).
 */
// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateFlows } from '../host/workload.js';
import { loadScenarioFile } from '../orchestrator/scenario/load.js';
import { resolveScenario } from '../orchestrator/scenario/resolve.js';
import { runScenario } from './helpers.js';

const FIXTURE = 'test/fixtures/onoff.yaml';

describe('workload.pattern: on-off in a run', () => {
  // biome-ignore lint/suspicious/noExplicitAny: summary.json as written
  let s: any;
  let rows: string[][];
  beforeAll(async () => {
    const run = await runScenario('onoff', FIXTURE);
    s = run.s;
    rows = readFileSync(join(run.out, 'flows.csv'), 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(','));
  });

  it('sends the planned ON periods, each as one UDP flow of full frames', () => {
    const sc = resolveScenario(loadScenarioFile(FIXTURE));
    const planned = generateFlows(sc.workload, [0, 1, 2, 3], 10e9);
    // (host names h0..h3 are host ids 0..3 on this leaf-spine)
    expect(rows.map((r) => [r[1], r[2], Number(r[3]), Number(r[4])])).toEqual(
      planned.map((f) => [`h${f.src}`, `h${f.dst}`, f.size, f.start]),
    );
    for (const r of rows) expect(Number(r[12])).toBe(Number(r[3]) / 1460);
  });

  it('gives the same figures every run', () => {
    // 12 ON periods in 1 ms, all delivered whole: 1607 frames, 2,017,500 B on the wire (a load of
    // 0.40 of the four host links: few, heavy-tailed periods), no drops; queues peak at 75 KB
    expect(s.flows).toMatchObject({ planned: 12, started: 12, completed: 12 });
    expect(s.frames).toEqual({ sent: 1607, received: 1607, lost: 0 });
    expect(s.throughput.bytes).toBe(2_017_500);
    expect(s.drops.congestion).toBe(0);
    expect(s.queues.maxBytes).toBe(75_000);
  });
});
