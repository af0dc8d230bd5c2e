/**
 * The conservative watchdog's one line when the fabric stops moving: a node stuck in one handler, a
 * node spinning in its own timers and a node blocked on a link are told apart (by their times alone
 * they look the same: the node furthest behind).
 */
// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { describe, expect, it } from 'vitest';
import type { ProgressStats } from '../core/messages.js';
import { type StallView, stallDiagnosis } from '../orchestrator/engine/engine.js';

const stats = (now: number, waitPort?: number): ProgressStats => ({
  now,
  flowsDone: 0,
  flowsStarted: 0,
  fidelity: { late99: 0, misses: 0, frames: 0, events: 0 },
  ...(waitPort !== undefined && { waitPort }),
});
const node = (name: string, now: number, extra: Partial<StallView> = {}): StallView => ({
  name,
  stats: stats(now, 0),
  silentMs: 400,
  busyEvents: 10,
  peers: ['leaf2'],
  ...extra,
});

describe('stallDiagnosis', () => {
  it('names the node furthest behind and the link it waits on', () => {
    expect(stallDiagnosis([node('h3', 5000), node('h19', 2000)])).toBe(
      'h19 is at 2.000 µs, waiting on its link h19:0 -- leaf2',
    );
  });

  it('names a node that keeps handling events without its time moving, not the one it holds back', () => {
    const line = stallDiagnosis([node('h3', 2000), node('h19', 2000, { busyEvents: 4_000_000 })]);
    expect(line).toBe(
      'h19 is at 2.000 µs and handled 4000000 events since the fabric last moved without getting further: a loop in its own timers',
    );
  });

  it('names a node whose progress snapshots stopped coming', () => {
    const line = stallDiagnosis([node('h3', 1000), node('leaf1', 3000, { silentMs: 61_000 })]);
    expect(line).toBe('leaf1 stopped answering 61 s ago at 3.000 µs: busy in one event handler, or stopped');
  });

  it('says so when no node answers at all', () => {
    expect(stallDiagnosis([])).toBe('no node answers');
  });
});
