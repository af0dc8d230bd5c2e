/**
 * What Fastpass's experiments share (schemes/fastpass/experiments.ts): the two sides every seed runs,
 * each side's headline figures from its run, the cells of their tables, and the clocks, PTP and send
 * jitter as deployed.
 */
import { type BusiestQueue, OSCILLATORS, SEND_JITTER } from '../../../sdk/index.js';
import type { Fairness, Summary } from '../../../sdk/study.js';

export interface Side {
  name: string;
  queue: BusiestQueue | null;
  gbps: number;
  fairness: Fairness | null;
}

export const SIDES = [
  { name: 'fastpass', set: { 'scheme.kind': 'fastpass' } },
  { name: 'baseline', set: { 'scheme.kind': 'ecmp' } },
] as const;

/** what the tables read of each side's run */
export function sides(runs: Summary[], variants: ReadonlyArray<{ name: string }> = SIDES): Side[] {
  return runs.map((s, i) => ({
    name: variants[i].name,
    queue: s.queues.busiest,
    gbps: s.throughput.gbps,
    fairness: s.fairness,
  }));
}

export const kb = (b: number | undefined) => (b === undefined ? '-' : `${(b / 1000).toFixed(1)} KB`);
export const times = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(0)}×` : a > 0 ? '∞' : '-');

/** the deployment's timing (§6): PTP with NIC hardware stamps and no PTP support in the switches */
export const DEPLOYED_PTP = '{timestamping: hardware, transparentClocks: false}';
/** the deployment's clocks: drifting oscillators, PTP as deployed, the hosts' send lateness */
export const DEPLOYED = { clocks: OSCILLATORS, ptp: DEPLOYED_PTP, jitter: SEND_JITTER };
