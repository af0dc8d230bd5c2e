/**
 * F10's failure detector (§5.4: valid frames per window) against the faults fabrics really have, on
 * the failover fixture: a link that corrupts nearly every frame is declared dead within one window and
 * routed around; a gray failure (half the flows' data black-holed, keepalives and the other flows
 * passing) leaves every window full of valid frames, so it is never declared: its flows fail, each
 * naming it. Exact figures (conservative mode).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runScenario } from './helpers.js';

/** the fixture's traffic cut to 500 µs: the faults strike at 350 µs */
const SHORT = ['--set', 'workload.duration=500us'];
const FAULTS =
  'timeline=[{at: 350us, action: link-impair, link: [core1, agg0], corrupt: 0.95}, {at: 350us, action: link-impair, link: [core0, agg2], types: [data], flows: 0.5, loss: 1}]';

describe("F10's detector against gray failures", () => {
  it('catches a corrupting link in one window and misses a silent per-flow black hole', async () => {
    const { out, s } = await runScenario('f10-gray', 'test/fixtures/f10-failover-short.yaml', [
      ...SHORT,
      '--set',
      FAULTS,
    ]);
    expect(
      s.faults.map((f: { link: string[]; detectionNs: number | null }) => [f.link.join('-'), f.detectionNs]),
    ).toEqual([
      ['core1-agg0', 10_000],
      ['core0-agg2', null],
    ]);
    const events = readFileSync(join(out, 'events.jsonl'), 'utf8');
    expect(events).not.toMatch(/"port-down-detected","node":"(core0|agg2)"/);
    // what each impairment did: the corruption until detected, the black hole to the end
    expect(s.impairments).toMatchObject({ corrupted: 162, lostGood: 94, lostBad: 0 });
    const outcomes = readFileSync(join(out, 'outcomes.csv'), 'utf8').split('\n');
    expect(outcomes.filter((l) => l.includes('link-impair core0–agg2'))).toHaveLength(6);
    expect(s.flows.unexplained ?? 0).toBe(0);
  });
});
