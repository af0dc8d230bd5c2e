/**
 * F10's primary/backup succession (schemes/f10/arbiter/takeover.ts, F10 §8): terms owned per
 * controller, a takeover on a majority of switches' reports, standing down on a higher term.
 */
import { describe, expect, it } from 'vitest';
import { Succession } from '../schemes/f10/arbiter/takeover.js';

describe('Succession (F10 §8 primary/backup)', () => {
  it('the primary acts in term 0; the backup stands by', () => {
    expect(new Succession(0, 2, 6).acting).toBe(true);
    expect(new Succession(1, 2, 6).acting).toBe(false);
    expect(() => new Succession(2, 2, 6)).toThrow(/controller index 2 outside 0..1/);
  });

  it('the backup takes over when more than half of the switches report the acting controller lost, not before', () => {
    const b = new Succession(1, 2, 6);
    // a switch that lost its link to the backup itself, or reports nothing lost, does not count
    expect(b.heard('s0', 0, [1])).toBeNull();
    expect(b.heard('s1', 0, [])).toBeNull();
    for (const sw of ['s2', 's3', 's4']) expect(b.heard(sw, 0, [0])).toBeNull();
    // a switch whose link came back is no longer counted
    expect(b.heard('s4', 0, [])).toBeNull();
    expect(b.heard('s5', 0, [0])).toBeNull();
    expect(b.heard('s4', 0, [0, 1])).toEqual({ kind: 'takeover', term: 1, from: 0, switches: 4 });
    expect(b.acting).toBe(true);
    expect(b.term).toBe(1);
    // acting, it does not take over again
    expect(b.heard('s0', 1, [0])).toBeNull();
  });

  it('a controller that hears a higher term stands down; the next takeover takes its own next term', () => {
    const a = new Succession(0, 2, 4);
    expect(a.heard('s0', 1, [])).toEqual({ kind: 'step-down', term: 1, to: 1 });
    expect(a.acting).toBe(false);
    // the term it stood down to is arb1's: now arb1's link counts
    expect(a.heard('s0', 1, [0])).toBeNull();
    for (const sw of ['s1', 's2']) a.heard(sw, 1, [1]);
    expect(a.heard('s3', 1, [1])).toEqual({ kind: 'takeover', term: 2, from: 1, switches: 3 });
    // of three controllers, the third (owner of 2, 5, 8, ...) takes over from term 3 in term 5
    const c = new Succession(2, 3, 2);
    c.heard('s0', 3, [0]);
    expect(c.heard('s1', 3, [0])).toEqual({ kind: 'takeover', term: 5, from: 0, switches: 2 });
  });
});
