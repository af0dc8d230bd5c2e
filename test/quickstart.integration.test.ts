/**
 * The README's main job, checked the way a user would: run examples/quickstart.yaml with the built
 * CLI and read the results folder. Conservative mode (the default) is exact: the figures are asserted
 * to the nanosecond. The same fabric with 2 hosts per leaf, the same seed and spine kill, and 108
 * fixed-size flows in 3 ms (a sixth of the fabric time, twice the flows) runs twice more, to give the
 * same bytes (and once dilated, to agree with them statistically: test/timing.integration.test.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import './built-in-schemes.js';
import { summaryTable } from '../orchestrator/engine/report.js';
import { CLI, dcemu, ownNodePids, QUICKSTART_SHORT, ROOT, readJson, tempOut } from './helpers.js';

const RESULT_FILES = ['flows.csv', 'queues.csv', 'events.jsonl'];

/** summary.json without the fields that are about the machine, not the fabric */
function fabricSummary(dir: string): unknown {
  const { wallMs: _w, runId: _r, ...rest } = readJson(join(dir, 'summary.json'));
  return rest;
}

describe('examples/quickstart.yaml', () => {
  const full = tempOut('quickstart');
  const outs = [tempOut('quickstart-a'), tempOut('quickstart-b')];

  beforeAll(async () => {
    const r = await dcemu(['run', 'examples/quickstart.yaml', '--out', full, '-q']);
    expect(r.exitCode, r.stderr).toBe(0);
    const r0 = await dcemu(['run', 'examples/quickstart.yaml', '--out', outs[0], '-q', ...QUICKSTART_SHORT]);
    expect(r0.exitCode, r0.stderr).toBe(0);
    // the second one's reader goes away after its first line, as `dcemu run … | head -1` does: the run
    // goes on to its end (it died of the closed pipe, leaving no summary, and containers behind)
    const r1 = execa(
      process.execPath,
      [CLI, 'run', 'examples/quickstart.yaml', '--out', outs[1], '--no-plots', ...QUICKSTART_SHORT],
      { cwd: ROOT, reject: false, timeout: 180_000, env: { FORCE_COLOR: '0' } },
    );
    r1.stderr.once('data', () => {
      r1.stderr.destroy();
      r1.stdout.destroy();
    });
    expect((await r1).exitCode).toBe(0);
  }, 200_000);

  it('completes every flow with exact figures, and the killed spine is detected and worked around', () => {
    const out = full;
    const s = readJson(join(out, 'summary.json'));
    expect(s.sync).toBe('conservative');
    expect(s.tdf).toBeNull();
    // the code that made it: the build's commit (npm test builds a checkout)
    expect(s.code.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(typeof s.code.dirty).toBe('boolean');
    expect(s.processes).toMatchObject({ started: 22, leftRunning: 0 });
    expect(s.fidelity.causalityMisses).toBe(0);
    expect(s.fidelity.framesHandled).toBe(272_292);
    expect(s.flows).toMatchObject({ planned: 51, completed: 51, unfinished: 0, fctP50Ns: 136_192 });
    expect(s.flows.retransmits).toBe(100);
    expect(s.queues.maxBytes).toBe(105_000);
    const kill = s.faults.find((f: { action: string }) => f.action === 'kill');
    expect(kill).toMatchObject({ node: 'spine0', t: 5_000_000, flowsInFlight: 4, flowsRecovered: 4 });
    expect(kill.detectionNs).toBe(25_698);
    // flows whose frames turned at spine0 while it died finish after the leaves detected it
    const rows = readFileSync(join(out, 'flows.csv'), 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(','));
    const cut = rows.filter(
      (f) => f[11].includes('spine0') && Number(f[4]) < kill.t && Number(f[5]) > kill.t,
    );
    expect(cut.length).toBe(4);
    for (const f of cut) expect(Number(f[5])).toBeGreaterThan(kill.detectedAt);
  });

  it("is what the README's sample of `npm start` shows, to the digit (its wall time aside)", () => {
    // the generated block (scripts/doc-tables/readme.mjs) from an earlier run: a change of the code
    // that moves the quickstart leaves it stale, and this says so (npm run doc-tables -- --only readme-quickstart)
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const block = readme.match(/<!-- table: readme-quickstart -->[\s\S]*?```\n([\s\S]*?)```/)?.[1];
    const wall = (text: string) => text.replace(/ in [\d.]+ s wall/, ' in … s wall').trimEnd();
    const ours = summaryTable(readJson(join(full, 'summary.json')), 'results/quickstart');
    expect(
      wall(ours),
      'README.md#readme-quickstart is stale: npm run doc-tables -- --only readme-quickstart',
    ).toBe(wall(block ?? ''));
  });

  it('gives the same bytes run to run (wall-clock fields aside), also when its reader left, and leaves no process behind', async () => {
    expect(readJson(join(outs[0], 'summary.json')).flows).toMatchObject({ planned: 108, completed: 108 });
    for (const f of RESULT_FILES)
      expect(readFileSync(join(outs[1], f), 'utf8'), f).toBe(readFileSync(join(outs[0], f), 'utf8'));
    expect(fabricSummary(outs[1])).toEqual(fabricSummary(outs[0]));
    expect(await ownNodePids()).toEqual([]);
  });
});
