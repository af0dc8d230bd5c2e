/**
 * `dcemu experiment clock-pdv --quick` (orchestrator/studies/clock-pdv.ts) on real processes: an
 * asymmetric link offsets every slave by half the asymmetry, with or without transparent clocks, and
 * the queues of traffic cost end-to-end PTP what transparent clocks give back. Exact figures.
 */
// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { describe, expect, it } from 'vitest';
import { quickExperiment } from './helpers.js';

describe('clock-pdv', () => {
  it('reports the clock error without transparent clocks against half the asymmetry, and the queues’ cost (--quick)', async () => {
    const { fig, stdout } = await quickExperiment('clock-pdv');
    // 1 µs of asymmetry: every slave off by its half (and the oscillator's 8 ns granularity), over every sample
    expect(fig('asym-1000ns_p50_ns')).toBe(504);
    expect(fig('asym-1000ns_max_ns')).toBe(504);
    expect(fig('asym-1000ns_over_theory')).toBe(1.008);
    // transparent clocks remove residence time, not the wire's asymmetry
    expect(fig('asym-1000ns-tc_p50_ns')).toBe(504);
    // web-search at 0.5: the queues cost end-to-end PTP its tail; transparent clocks take it back
    expect(fig('load-0.5_p99_ns')).toBe(540);
    expect(fig('load-0.5-tc_p99_ns')).toBe(8);
    expect(stdout).toContain(
      "| the grandmaster's uplink 1000 ns slower one way, quiet | 3/3 | 504 | 504 | 504 | -501 | 500 |",
    );
  });
});
