/**
 * The node pool of a command of many runs (orchestrator/runtime/pool.ts): a sweep's second point runs
 * its nodes in the processes of the first (all but the node the first one killed), gives the same
 * bytes as processes of their own, and leaves no process behind (test/timing.integration.test.ts: also
 * when its orchestrator is killed).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dcemu, ownNodePids, QUICKSTART_SHORT, readJson, tempOut } from './helpers.js';

/**
 * the short quickstart, its traffic a third as long (what is compared is bytes, not figures: any
 * length does), with spine0 still killed mid-traffic
 */
const SHORTER = [
  ...QUICKSTART_SHORT,
  '--set',
  'workload.duration=1ms',
  '--set',
  'timeline.0.at=500us',
  '--set',
  'run.drain=1ms',
];
/** its --set overrides as a sweep's --fix */
const FIXED = SHORTER.flatMap((a) => (a === '--set' ? ['--fix'] : [a]));

describe('the node pool of dcemu sweep', () => {
  it('runs the second point in the first one’s processes, with the same bytes as processes of its own', async () => {
    const out = tempOut('pool-sweep');
    const r = await dcemu(['sweep', 'examples/quickstart.yaml', '--set', 'seed=7,7', ...FIXED, '--out', out]);
    expect(r.exitCode, r.stderr).toBe(0);
    const fresh = tempOut('pool-fresh');
    const f = await dcemu(['run', 'examples/quickstart.yaml', '--out', fresh, '-q', ...SHORTER]);
    expect(f.exitCode, f.stderr).toBe(0);
    const points = ['000-seed=7', '001-seed=7'].map((d) => join(out, d));
    // 14 nodes; spine0 is killed at 0.5 ms, and its process with it: the second point starts one
    const processes = points.map((d) => readJson(join(d, 'summary.json')).processes);
    expect(processes[0]).toMatchObject({ started: 14, reused: 0, leftRunning: 0 });
    expect(processes[1]).toMatchObject({ started: 14, reused: 13, leftRunning: 0 });
    // a single run has no pool
    expect(readJson(join(fresh, 'summary.json')).processes).toMatchObject({ started: 14, leftRunning: 0 });
    expect(readJson(join(fresh, 'summary.json')).processes.reused).toBeUndefined();
    for (const file of ['flows.csv', 'events.jsonl', 'queues.csv']) {
      const want = readFileSync(join(fresh, file), 'utf8');
      for (const d of points) expect(readFileSync(join(d, file), 'utf8'), `${d}/${file}`).toBe(want);
    }
    // each node's log is its own run's: a pooled process writes the next node's log elsewhere
    const log = readFileSync(join(points[1], 'logs', 'h0.log'), 'utf8');
    expect(log.match(/"msg":"starting node"/g)).toHaveLength(1);
    expect(await ownNodePids()).toEqual([]);
  });
});
