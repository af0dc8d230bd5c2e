/**
 * Figure 9 of Flowtune (TR'16 §6.5) as our experiments measure it: "The following experiments
 * collected queue lengths, drops, and throughput from each queue every 1 ms. Figure 9 shows the 99th
 * percentile queuing delay on network paths, obtained by examining queue lengths"; its caption:
 * "Flowtune keeps 2-hop and 4-hop 99th-percentile queuing delays below 8.9 µs. At 0.8 load, XCP has
 * 3.5× longer queues, DCTCP 12×". How lengths become a path's delay is not in the text; here (the
 * SDK's `pathQueueDelays`) each sampled switch queue on the path drains at its link's line rate and
 * the path's queues at one instant are summed; the p99 is over every instant of the workload and every
 * host-to-host route. Both at the paper's 1 ms and at the run's own sampling (`run.sample`, 10 µs in
 * the examples): 1 ms gives only a few instants in our milliseconds of traffic. pFabric is left out,
 * as the paper leaves it out ("do not maintain FIFO ordering so their p99 queuing delay could not be
 * inferred from sampled queue lengths").
 */
import { join } from 'node:path';
import { pathQueueDelays } from '../../../sdk/index.js';

/** the paper's sampling period (§6.5, "every 1 ms") */
export const PAPER_SAMPLE_NS = 1_000_000;

/** Figure 9's two path lengths, in links: within a rack, and through a spine */
export const HOPS = [2, 4] as const;

/** a variant's p99 queueing delay (µs) on 2-hop and 4-hop paths, at the run's sampling and at 1 ms */
export interface PathP99 {
  /** by hops, at `run.sample` */
  fine: Record<number, number>;
  /** by hops, every 1 ms */
  ms: Record<number, number>;
  /** instants read at each */
  samples: { fine: number; ms: number };
}

/** the p99 queueing delay on the paths of `variant`'s run in the seed's folder `seedDir` */
export function pathP99(seedDir: string, variant: string): PathP99 {
  const dir = join(seedDir, variant);
  const at = (everyNs?: number) => pathQueueDelays(dir, everyNs === undefined ? {} : { everyNs });
  const [fine, ms] = [at(), at(PAPER_SAMPLE_NS)];
  const byHops = (ds: typeof fine) => Object.fromEntries(ds.map((d) => [d.hops, d.p99Ns / 1000]));
  return {
    fine: byHops(fine),
    ms: byHops(ms),
    samples: { fine: fine[0]?.samples ?? 0, ms: ms[0]?.samples ?? 0 },
  };
}

const fmt = (x: number | undefined) => (x === undefined ? '-' : `${x.toFixed(1)} µs`);

/** one table row per variant: its p99 on 2-hop and 4-hop paths at both samplings */
export function pathTable(rows: ReadonlyArray<readonly [string, PathP99]>): string[] {
  const s = rows[0]?.[1].samples;
  return [
    `Figure 9's metric (§6.5): p99 queueing delay on network paths, the sampled switch queues on a path at its links' line rates, summed; over ${s?.fine ?? 0} instants at run.sample and ${s?.ms ?? 0} at the paper's 1 ms (the paper: Flowtune below 8.9 µs on both, DCTCP 12× longer at load 0.8). A host's NIC is not sampled: the network's queues only.`,
    '',
    '| variant | 2-hop | 4-hop | 2-hop, every 1 ms | 4-hop, every 1 ms |',
    '| --- | --- | --- | --- | --- |',
    ...rows.map(
      ([name, p]) =>
        `| ${name} | ${fmt(p.fine[2])} | ${fmt(p.fine[4])} | ${fmt(p.ms[2])} | ${fmt(p.ms[4])} |`,
    ),
  ];
}

/** `a / b` where both are measured and `b` is positive */
export const over = (a: number | undefined, b: number | undefined): number | undefined =>
  a !== undefined && b !== undefined && b > 0 ? a / b : undefined;
