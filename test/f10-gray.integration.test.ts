/**
 * F10's failure detector (§5.4) against the faults fabrics really have, on the failover fixture.
 * Counting valid frames per window (the default): a link that corrupts nearly every frame is declared
 * dead within one window and routed around; a gray failure (half the flows' data black-holed,
 * keepalives and the other flows passing) leaves every window full of valid frames, so it is never
 * declared: its flows fail, each naming it. Counting bit transitions (§5.4's other setting, `counts:
 * transitions`): the corrupting link still carries bits, so it is never declared either; a link that
 * is down carries none, and both settings declare it. Exact figures (conservative mode).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runScenario } from './helpers.js';

/** the fixture's traffic cut to 500 µs: the faults strike at 350 µs */
const SHORT = ['--set', 'workload.duration=500us'];
const FAULTS =
  'timeline=[{at: 350us, action: link-impair, link: [core1, agg0], corrupt: 0.95}, {at: 350us, action: link-impair, link: [core0, agg2], types: [data], flows: 0.5, loss: 1}, {at: 350us, action: link-down, link: [core3, agg5]}]';
const detections = (s: { faults: Array<{ link: string[]; detectionNs: number | null }> }) =>
  s.faults.map((f) => [f.link.join('-'), f.detectionNs]);

/** how many flows' outcomes name each of the three faults: the black hole, the corruption, the cut */
function flowsNaming(out: string): number[] {
  const outcomes = readFileSync(join(out, 'outcomes.csv'), 'utf8').split('\n');
  const naming = (what: string) => outcomes.filter((l) => l.includes(what)).length;
  return [naming('link-impair core0–agg2'), naming('link-impair core1–agg0'), naming('link-down core3–agg5')];
}

describe("F10's detector against gray failures", () => {
  it('catches a corrupting link in one window and misses a silent per-flow black hole', async () => {
    const { out, s } = await runScenario('f10-gray', 'test/fixtures/f10-failover-short.yaml', [
      ...SHORT,
      '--set',
      FAULTS,
    ]);
    expect(detections(s)).toEqual([
      ['core1-agg0', 10_000],
      ['core0-agg2', null],
      ['core3-agg5', 10_000],
    ]);
    const events = readFileSync(join(out, 'events.jsonl'), 'utf8');
    expect(events).not.toMatch(/"port-down-detected","node":"(core0|agg2)"/);
    // what each impairment did: the corruption until detected, the black hole to the end
    expect(s.impairments).toMatchObject({ corrupted: 162, lostGood: 94, lostBad: 0 });
    expect(flowsNaming(out)).toEqual([6, 6, 1]);
    expect(s.flows).toMatchObject({ planned: 93, completed: 78, failed: 13, unexplained: 0 });
  });

  it('counting bit transitions keeps the corrupting link up, and still declares the link that is down', async () => {
    const { out, s } = await runScenario('f10-gray-transitions', 'test/fixtures/f10-failover-short.yaml', [
      ...SHORT,
      '--set',
      FAULTS,
      '--set',
      'scheme.detector.counts=transitions',
    ]);
    expect(detections(s)).toEqual([
      ['core1-agg0', null],
      ['core0-agg2', null],
      ['core3-agg5', 10_000],
    ]);
    const events = readFileSync(join(out, 'events.jsonl'), 'utf8');
    expect(events).not.toMatch(/"port-down-detected","node":"(core1|agg0)"/);
    // the corruption to the end, on the frames still sent across the link: more corrupted, more flows failed
    expect(s.impairments).toMatchObject({ corrupted: 233, lostGood: 39, lostBad: 0 });
    expect(flowsNaming(out)).toEqual([7, 8, 1]);
    expect(s.flows).toMatchObject({ planned: 93, completed: 75, failed: 16, unexplained: 0 });
  });
});
