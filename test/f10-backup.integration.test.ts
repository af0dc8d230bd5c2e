/**
 * F10's controller backup (F10 §8 primary/backup, `scheme.controller.backup`), end to end in real
 * processes on the smallest F10 tree (test/fixtures/f10-backup.yaml: 4 ToRs, 2 tops, 8 hosts): one
 * switch's control link to arb0 cut at 30 µs, arb0 killed at 120 µs, a fabric link (l1s0--l0s0) cut
 * at 180 µs and repaired at 220 µs. The same trace with the backup and without it, and a primary that
 * is paused and comes back. Conservative mode: every figure below is exact.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runScenario } from './helpers.js';

const FIXTURE = 'test/fixtures/f10-backup.yaml';

interface Event {
  t: number;
  kind: string;
  node: string;
  [k: string]: unknown;
}

function eventsOf(out: string): Event[] {
  return readFileSync(join(out, 'events.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
}

/** [t, node] of every event of `kind` */
const at = (events: Event[], kind: string) => events.filter((e) => e.kind === kind).map((e) => [e.t, e.node]);

describe('F10 controller backup: arb0 killed, then a link cut and repaired', () => {
  // biome-ignore lint/suspicious/noExplicitAny: summary.json as written
  let on: any;
  // biome-ignore lint/suspicious/noExplicitAny: summary.json as written
  let off: any;
  let onEvents: Event[] = [];
  let offEvents: Event[] = [];

  beforeAll(async () => {
    const a = await runScenario('f10-backup-on', FIXTURE);
    const b = await runScenario('f10-backup-off', FIXTURE, ['--set', 'scheme.controller.backup=false']);
    [on, onEvents, off, offEvents] = [a.s, eventsOf(a.out), b.s, eventsOf(b.out)];
  });

  it('runs cleanly both ways: arb1 is one more process', () => {
    for (const s of [on, off]) {
      expect(s.fidelity.causalityMisses).toBe(0);
      expect(s.f10.spuriousDetections).toBe(0);
      expect(s.processes.leftRunning).toBe(0);
    }
    // 8 hosts + 6 switches + arb0 (+ arb1)
    expect(on.processes.started).toBe(16);
    expect(off.processes.started).toBe(15);
  });

  it('one switch losing arb0 moves nothing; arb1 takes over 21 µs after the kill, and every switch follows it', () => {
    // l0s3's control link to arb0 is seen down at 60 µs; arb0 keeps commanding (its epoch at 100 µs)
    expect(at(onEvents, 'f10-rebalance').filter(([t]) => (t as number) < 120_000)).toEqual([
      [100_000, 'arb0'],
    ]);
    // the five other switches' detectors (control window 20 µs) declare arb0 gone at 140 µs; their
    // reports reach arb1 1.05 µs later (1 µs + 64 B at 10 Gbit/s), and the third of them, with l0s3's
    // earlier one, is 4 of 6: a majority
    expect(
      onEvents.filter((e) => e.kind === 'port-down-detected' && e.peer === 'arb0').map((e) => [e.t, e.node]),
    ).toEqual([[60_000, 'l0s3'], ...['l0s0', 'l0s1', 'l0s2', 'l1s0', 'l1s1'].map((n) => [140_000, n])]);
    const takeovers = onEvents.filter((e) => e.kind === 'f10-takeover');
    expect(takeovers).toEqual([
      { t: 141_051, kind: 'f10-takeover', node: 'arb1', term: 1, from: 'arb0', switches: 4 },
    ]);
    // the takeover's epoch reaches every switch one control link later: term 1 from then on
    expect(at(onEvents, 'f10-new-term')).toEqual(
      ['l0s0', 'l0s1', 'l0s2', 'l0s3', 'l1s0', 'l1s1'].map((n) => [142_109, n]),
    );
    expect(on.f10.backup).toEqual({
      acting: [
        { controller: 'arb0', term: 0, from: 0 },
        { controller: 'arb1', term: 1, from: 141_051 },
      ],
      takeovers: 1,
      stepDowns: 0,
      staleCommands: 0,
      rebalances: { arb0: 1, arb1: 3 },
    });
  });

  it('with the backup the epochs go on from arb1 and the repaired link is reinstalled; without it, neither', () => {
    // arb1's epochs: at the takeover, then every 100 µs
    expect(at(onEvents, 'f10-rebalance').filter(([t]) => (t as number) > 120_000)).toEqual(
      [141_051, 241_051, 341_051].map((t) => [t, 'arb1']),
    );
    // l1s0--l0s0 is seen up again at 232.1 µs; stable 100 µs later arb1's epoch at 341 µs reinstalls
    // it, both ends tear down their reroutes and pushback and acknowledge
    expect(at(onEvents, 'port-up-detected').filter(([, n]) => n === 'l0s0' || n === 'l1s0')).toEqual([
      [232_102, 'l0s0'],
      [232_102, 'l1s0'],
    ]);
    expect(at(onEvents, 'f10-link-reinstalled')).toEqual([[341_051, 'arb1']]);
    expect(at(onEvents, 'f10-reinstalled')).toEqual([
      [342_102, 'l0s0'],
      [342_102, 'l1s0'],
    ]);
    expect(on.f10.controller).toEqual({ rebalances: 4, routeInstalls: 0, reinstalled: 1, acknowledged: 2 });
    // without: arb0's one epoch before its death, and the link, up again, is never used
    expect(at(offEvents, 'f10-rebalance')).toEqual([[100_000, 'arb0']]);
    expect(at(offEvents, 'f10-reinstalled')).toEqual([]);
    expect(off.f10.controller).toEqual({ rebalances: 1, routeInstalls: 0, reinstalled: 0, acknowledged: 0 });
    expect(off.f10.backup).toBeNull();
  });
});

describe('F10 controller backup: a paused primary comes back', () => {
  it('arb1 takes over; arb0, resumed, sends its missed epoch, which every switch ignores, and stands down', async () => {
    const { out, s } = await runScenario('f10-backup-pause', FIXTURE, [
      '--set',
      'timeline=[{at: 120us, action: pause, node: arb0}, {at: 210us, action: resume, node: arb0}]',
      '--set',
      'workload.duration=280us',
    ]);
    const events = eventsOf(out);
    expect(s.fidelity.causalityMisses).toBe(0);
    // arb0's own detector finds its links silent as it resumes: the pause's doing, not spurious
    expect(s.f10.spuriousDetections).toBe(0);
    // all six switches lose arb0 at 140 µs: the fourth report is the majority
    expect(events.filter((e) => e.kind === 'f10-takeover').map((e) => [e.t, e.node, e.switches])).toEqual([
      [141_051, 'arb1', 4],
    ]);
    // at 210 µs arb0 runs its epoch due at 200 µs, while it was stopped (in term 0: 3 commands to each
    // of 6 switches, all ignored), then hears term 1 in the switches' reports and stands down
    expect(events.filter((e) => e.kind === 'f10-step-down')).toEqual([
      { t: 210_000, kind: 'f10-step-down', node: 'arb0', term: 1, acting: 'arb1' },
    ]);
    expect(at(events, 'f10-rebalance')).toEqual([
      [100_000, 'arb0'],
      [141_051, 'arb1'],
      [210_000, 'arb0'],
      [241_051, 'arb1'],
    ]);
    expect(s.f10.backup).toMatchObject({ takeovers: 1, stepDowns: 1, staleCommands: 18 });
  });
});
