/**
 * The reproductions' statistics and table (orchestrator/studies/reproduction.ts): the mean and the 95%
 * confidence interval of Student's t over the seeds, and a table that puts the paper's value beside ours.
 */
// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { describe, expect, it } from 'vitest';
import { NS3_REFERENCE } from '../orchestrator/ns3/crosscheck.js';
import { meanCi, type Reproduction, reproductionTable } from '../orchestrator/studies/reproduction.js';

describe('reproductions', () => {
  it('give the mean and its 95% interval over the seeds, none for one seed', () => {
    const r = meanCi([1, 2, 3]);
    expect(r.mean).toBe(2);
    // t(0.975, 2 df) = 4.303, sd 1, over sqrt(3)
    expect(r.ci95![0]).toBeCloseTo(2 - 4.303 / Math.sqrt(3), 9);
    expect(r.ci95![1]).toBeCloseTo(2 + 4.303 / Math.sqrt(3), 9);
    expect(meanCi([5])).toEqual({ mean: 5, ci95: null });
    expect(meanCi([])).toEqual({ mean: null, ci95: null });
    // identical seeds: an interval of width 0, not a missing one
    expect(meanCi([4, 4, 4, 4, 4])).toEqual({ mean: 4, ci95: [4, 4] });
  });

  it('table the paper beside ours, with the scale, the seeds and the machine', () => {
    const r: Reproduction = {
      experiment: 'x',
      scenario: 'x.yaml',
      scale: '6 hosts',
      paperScale: '32 servers',
      seeds: [1, 2, 3],
      quick: false,
      figures: [
        {
          id: 'q',
          label: 'queue',
          unit: 'KB',
          paper: 18,
          source: '§7.1',
          values: [1, 2, 3],
          ...meanCi([1, 2, 3]),
        },
        {
          id: 'r',
          label: 'ratio',
          unit: '×',
          paper: '8.6–10.9',
          values: [],
          mean: null,
          ci95: null,
          digits: 1,
        },
      ],
      wallS: 12.5,
      machine: { cpu: 'EPYC', cores: 2, memoryGB: 24, node: 'v24' },
    };
    const t = reproductionTable(r);
    expect(t).toContain('Ours: 6 hosts; 3 seeds (1, 2, 3), mean ± the 95% confidence interval');
    expect(t).toContain('The paper: 32 servers.');
    expect(t).toContain('| queue | KB | 18.00 (§7.1) | 2.00 ± 2.48 | 1.00, 2.00, 3.00 |');
    expect(t).toContain('| ratio | × | 8.6–10.9 | - |  |');
    expect(t).toContain('12.5 s on 2 × EPYC.');
    expect(t).toContain('| figure | unit | paper | ours | per seed |');
    // a reference that is not a paper (ns-3's twin) is not called one
    const ns3 = reproductionTable({
      ...r,
      reference: NS3_REFERENCE,
      paperScale: 'ns-3 running the same runs',
    });
    expect(ns3).toContain('The reference: ns-3 running the same runs.');
    expect(ns3).toContain('| figure | unit | target | ours | per seed |');
    expect(ns3).not.toMatch(/paper/);
  });
});
