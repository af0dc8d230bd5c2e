/**
 * Links that fail as real ones do, on real processes (examples/impaired.yaml, shortened): delay that
 * varies per frame, Gilbert–Elliott bursts, a degraded port, duplication and reordering on a host
 * link, and a timeline's link-impair taken away by link-up. Run twice (a sweep of the same seed,
 * in one pool): the same bytes, and the impairments' counts in the summary, exact.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dcemu, ownNodePids, readJson, tempOut } from './helpers.js';

const SHORT = [
  '--fix',
  'workload.duration=2ms',
  '--fix',
  'run.drain=1ms',
  '--fix',
  'timeline.0.at=500us',
  '--fix',
  'timeline.1.at=1500us',
];

describe('link impairments', () => {
  it('repeat to the byte and count what each did, per direction', async () => {
    const out = tempOut('impaired');
    const r = await dcemu(['sweep', 'examples/impaired.yaml', '--set', 'seed=11,11', ...SHORT, '--out', out]);
    expect(r.exitCode, r.stderr).toBe(0);
    const [a, b] = ['000-seed=11', '001-seed=11'].map((d) => join(out, d));
    for (const file of ['flows.csv', 'events.jsonl', 'queues.csv'])
      expect(readFileSync(join(b, file), 'utf8'), file).toBe(readFileSync(join(a, file), 'utf8'));
    const s = readJson(join(a, 'summary.json'));
    const { links, ...total } = s.impairments;
    expect(total).toEqual({
      delayed: 4804,
      reordered: 28,
      duplicated: 1,
      lostGood: 0,
      lostBad: 32,
      corrupted: 0,
    });
    // every loss is a fault drop, and lost in a burst (the good state loses nothing)
    expect(s.drops.fault).toBe(32);
    const link = (from: string, to: string) =>
      links.find((l: { from: string; to: string }) => l.from === from && l.to === to);
    // the host link's direction with its own delay, duplication and reordering; its other direction is clean
    expect(link('leaf0', 'h1')).toEqual({
      from: 'leaf0',
      to: 'h1',
      delayed: 299,
      reordered: 1,
      duplicated: 1,
      lostGood: 0,
      lostBad: 0,
      corrupted: 0,
    });
    expect(link('h1', 'leaf0')).toBeUndefined();
    // the link the timeline impaired: the fabric's bursts and delay, and the action's delay on top
    expect(link('leaf1', 'spine0')).toMatchObject({ delayed: 815, lostBad: 17 });
    const faults = readFileSync(join(a, 'events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((e) => e.kind === 'fault');
    expect(faults.map((f) => f.action)).toEqual(['link-impair', 'link-up']);
    expect(faults[0].detail.impair.delay).toEqual({
      dist: 'uniform',
      meanNs: 2000,
      jitterNs: 1500,
      correlation: 0,
      reorder: false,
      floorNs: 0,
    });
    expect(await ownNodePids()).toEqual([]);
  });
});
