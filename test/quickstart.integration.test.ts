/**
 * The README's main job, checked the way a user would: run examples/quickstart.yaml with the built
 * CLI and read the results folder. Fidelity is reported, not asserted (it depends on the machine's
 * load; `npm run bench` prints it).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { allNodePids, dcemu, readJson, tempOut } from './helpers.js';

describe('examples/quickstart.yaml', () => {
  it('completes flows, recovers the flows cut by the killed spine, and leaves no process behind', async () => {
    const out = tempOut('quickstart');
    const r = await dcemu(['run', 'examples/quickstart.yaml', '--out', out, '-q']);
    expect(r.exitCode, r.stderr).toBe(0);
    const s = readJson(join(out, 'summary.json'));
    expect(s.tdf).toBe(2000);
    expect(s.processes).toMatchObject({ started: 22, leftRunning: 0 });
    expect(s.flows.completed).toBeGreaterThan(0);
    expect(s.fidelity.framesHandled).toBeGreaterThan(100_000);
    const kill = s.faults.find((f: { action: string }) => f.action === 'kill');
    expect(kill.node).toBe('spine0');
    expect(kill.detectedAt).toBeGreaterThan(kill.t);
    // flows whose frames turned at spine0 while it died finish after the leaves detected it
    const rows = readFileSync(join(out, 'flows.csv'), 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(','));
    const cut = rows.filter(
      (f) => f[11].includes('spine0') && Number(f[4]) < kill.t && Number(f[5]) > kill.t,
    );
    expect(cut.length).toBeGreaterThan(0);
    for (const f of cut) expect(Number(f[5])).toBeGreaterThan(kill.detectedAt);
    expect(kill.flowsRecovered).toBe(cut.length);
    expect(await allNodePids()).toEqual([]);
    process.stdout.write(
      `quickstart: ${s.flows.completed}/${s.flows.started} flows, misses ${(100 * s.fidelity.missRate).toFixed(3)}%, ${s.wallMs} ms wall\n`,
    );
  });
});
