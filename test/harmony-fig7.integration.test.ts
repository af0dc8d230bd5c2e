/**
 * `dcemu experiment harmony-fig7 --quick`: Harmony beside the baseline's DCTCP (NSDI'24 Fig. 7: 128 KB
 * RPCs with web-search best-effort flows, total load 0.6), 8 hosts in 2 racks, 1 ms of arrivals, the
 * points 0.3 + 0.3 and 0.5 + 0.1. Conservative runs are exact: the figures below are what they give.
 */
// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { countedSpread } from '../orchestrator/registry/flows.js';
import { quickExperiment } from './helpers.js';

describe('dcemu experiment harmony-fig7', () => {
  let q: Awaited<ReturnType<typeof quickExperiment>>;
  const rows = (run: string) =>
    readFileSync(join(q.out, 'seed-11', run, 'flows.csv'), 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(','));

  beforeAll(async () => {
    q = await quickExperiment('harmony-fig7');
  }, 240_000);

  it('runs both sides on the same RPCs and web-search flows, told apart in flows.csv', () => {
    for (const point of ['rpc30-be30', 'rpc50-be10']) {
      // id, src, dst, size, start and class: the same arrivals on both sides
      const arrivals = (side: string) =>
        rows(`${side}-${point}`).map((c) => [...c.slice(0, 5), c[16]].join(','));
      expect(arrivals('harmony')).toEqual(arrivals('dctcp'));
      const flows = rows(`harmony-${point}`);
      // every RPC is 128 KB; the web-search flows (best_effort 1) are not
      expect(new Set(flows.filter((c) => c[16] === '').map((c) => c[3]))).toEqual(new Set(['128000']));
      expect(flows.filter((c) => c[16] === '1').some((c) => c[3] !== '128000')).toBe(true);
    }
  });

  it('gives every flow’s slowdown, RPCs apart from best effort, beside the paper’s claims', () => {
    // 8 hosts for 1 ms: 25 and 31 RPCs, 3 and 2 web-search flows; all done on both sides
    expect(q.stdout).toContain(
      '| 0.3 + 0.3 | Harmony | 25/25 | 1.43 | 2.06 | 5.78 | 5.78 | 5.78 | 3/3 | 2.25 | 4.28 |',
    );
    expect(q.stdout).toContain(
      '| 0.3 + 0.3 | DCTCP (the baseline) | 25/25 | 1.00 | 1.58 | 2.09 | 2.09 | 2.09 | 3/3 | 1.52 | 2.21 |',
    );
    expect(q.stdout).toContain(
      '| 0.5 + 0.1 | Harmony | 31/31 | 1.44 | 2.70 | 6.79 | 6.79 | 6.79 | 2/2 | 2.02 | 2.77 |',
    );
    expect(q.stdout).toContain(
      '| 0.5 + 0.1 | DCTCP (the baseline) | 31/31 | 1.00 | 1.78 | 2.87 | 2.87 | 2.87 | 2/2 | 1.97 | 2.16 |',
    );
    for (const point of ['rpc30-be30', 'rpc50-be10'])
      for (const side of ['harmony', 'dctcp']) expect(q.fig(`${side}_missing_${point}`)).toBe(0);
    // a lone RPC: DCTCP's first window at line rate, Harmony's rsvp round trip and paced slots first
    expect(q.fig('harmony_rpc_min_rpc30-be30')).toBeGreaterThan(q.fig('dctcp_rpc_min_rpc30-be30'));
    // at this scale Harmony's RPC tail is longer than DCTCP's, and its best-effort flows no faster: the
    // baseline's hosts run Linux's stack (fq_codel shares a host's NIC between its RPCs and its best
    // effort); on dcemu's earlier NIC (`host.stack: unbounded`) Harmony's best effort was 1.2× faster
    expect(q.fig('ratio_rpc_p99_rpc30-be30')).toBeCloseTo(2.09 / 5.78, 2);
    expect(q.fig('ratio_be_mean_rpc50-be10')).toBeCloseTo(0.97, 2);
    const claim = q.rep.figures.find((f: { id: string }) => f.id === 'ratio_be_mean_rpc30-be30');
    expect(claim.paper).toContain('§5.2, against HPCC and dcPIM');
  });
});

describe('countedSpread', () => {
  it('counts a flow not done as an infinite slowdown: no mean, and no quantile that falls on it', () => {
    const done = Array.from({ length: 99 }, (_, i) => 1 + i / 100);
    expect(countedSpread(done, 0)).toMatchObject({ flows: 99, missing: 0, min: 1, max: 1.98 });
    const one = countedSpread(done, 1);
    expect(one).toMatchObject({ flows: 100, missing: 1, min: 1, mean: null, max: null });
    // rank floor(0.99 · 100) = 99: the missing flow
    expect(one.p99).toBeNull();
    expect(countedSpread([], 3)).toMatchObject({ flows: 3, min: null, mean: null, p99: null });
  });
});
