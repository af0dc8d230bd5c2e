/**
 * Harmony's feasibility region helpers (schemes/harmony/experiments/feasibility.ts) on made-up grid results: the
 * Pareto front of worst-case slowdown against sustainable load, and a region's edge at a load.
 */
// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { describe, expect, it } from 'vitest';
import { countedSpread } from '../orchestrator/registry/flows.js';
import { edgeAt, type PointResult, paretoFront } from '../schemes/harmony/experiments/feasibility.js';

/** a point that sustains `load` with worst slowdown `worst` (null: no load sustained) */
function point(key: string, load: number, worst: number | null): PointResult {
  const spread = countedSpread([1, worst ?? 1], 0);
  const at = worst === null ? null : { load, spread, line: spread, worstFctNs: 0 };
  return {
    point: { key, label: key, scheme: '', deltaNs: 0, boundNs: null, calibration: { key: '', scheme: '' } },
    runs: at ? [at] : [],
    sustainable: at ? load : 0,
    at,
  };
}

describe('the feasibility region', () => {
  const grid = [
    point('a', 0.5, 2),
    point('b', 0.9, 6),
    point('c', 0.5, 3), // beaten by a: the same load at a larger worst case
    point('d', 0.7, 6), // beaten by b: a lower load at the same worst case
    point('e', 0.7, 4),
    point('f', 0, null), // sustains nothing: never on the front
  ];

  it('keeps on the Pareto front only the points no other beats on both', () => {
    expect([...paretoFront(grid)].sort()).toEqual(['a', 'b', 'e']);
    // two points alike: neither beats the other
    expect([...paretoFront([point('x', 0.5, 2), point('y', 0.5, 2)])].sort()).toEqual(['x', 'y']);
  });

  it("gives the region's edge: the least worst case sustaining a load", () => {
    expect(edgeAt(grid, 0.5)).toBe(2);
    expect(edgeAt(grid, 0.7)).toBe(4);
    expect(edgeAt(grid, 0.9)).toBe(6);
    expect(edgeAt(grid, 0.95)).toBe(Number.POSITIVE_INFINITY);
  });
});
