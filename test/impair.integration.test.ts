/**
 * Links that fail as real ones do, on real processes (examples/impaired.yaml, shortened): delay that
 * varies per frame, Gilbert–Elliott bursts, a degraded port, duplication and reordering on a host
 * link, a timeline's link-impair taken away by link-up, and a partition healed. Run twice (a sweep of the same seed,
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
  // a partition of leaf1 from the spines, healed
  '--fix',
  'timeline.2={at: 1ms, action: partition, groups: [[leaf1, h4, h5, h6, h7], [spine0, spine1]]}',
  '--fix',
  'timeline.3={at: 1200us, action: heal, groups: [[leaf1, h4, h5, h6, h7], [spine0, spine1]]}',
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
      delayed: 4800,
      reordered: 29,
      duplicated: 1,
      lostGood: 0,
      lostBad: 32,
      corrupted: 0,
    });
    // the bursts' losses are fault drops (the good state loses nothing), beside what the partition cut
    expect(s.drops.fault).toBe(117);
    const link = (from: string, to: string) =>
      links.find((l: { from: string; to: string }) => l.from === from && l.to === to);
    // the host link's direction with its own delay, duplication and reordering; its other direction is clean
    expect(link('leaf0', 'h1')).toEqual({
      from: 'leaf0',
      to: 'h1',
      delayed: 299,
      reordered: 2,
      duplicated: 1,
      lostGood: 0,
      lostBad: 0,
      corrupted: 0,
    });
    expect(link('h1', 'leaf0')).toBeUndefined();
    // the link the timeline impaired: the fabric's bursts and delay, and the action's delay on top
    expect(link('leaf1', 'spine0')).toMatchObject({ delayed: 817, lostBad: 17 });
    const events = readFileSync(join(a, 'events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const faults = events.filter((e) => e.kind === 'fault');
    const what = (f: { action: string; link: string[]; detail: { by?: string } }) =>
      `${f.action} ${f.link.join('-')}${f.detail.by ? ` (${f.detail.by})` : ''}`;
    // the partition cuts exactly the links between its groups, the heal brings them back
    expect(faults.map(what)).toEqual([
      'link-impair leaf1-spine0',
      'link-down leaf1-spine0 (partition)',
      'link-down leaf1-spine1 (partition)',
      'link-up leaf1-spine0 (heal)',
      'link-up leaf1-spine1 (heal)',
      'link-up leaf1-spine0',
    ]);
    expect(faults[0].detail.impair.delay).toEqual({
      dist: 'uniform',
      meanNs: 2000,
      jitterNs: 1500,
      correlation: 0,
      reorder: false,
      floorNs: 0,
    });
    // both ends of both cut links see them go, and come back
    const seen = (kind: string) =>
      events
        .filter((e) => e.kind === kind && e.t >= 1e6 && e.t < 1.21e6)
        .map((e) => `${e.node}>${e.peer}`)
        .sort();
    const ends = ['leaf1>spine0', 'leaf1>spine1', 'spine0>leaf1', 'spine1>leaf1'];
    expect(seen('port-down-detected')).toEqual(ends);
    expect(seen('port-up-detected')).toEqual(ends);
    expect(await ownNodePids()).toEqual([]);
  });
});
