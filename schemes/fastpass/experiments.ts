/**
 * Fastpass's evaluation (SIGCOMM'14 §7.1–7.2) as reproductions (orchestrator/studies/reproduction.ts): each
 * seed runs the scenario twice, with Fastpass and with the paper's baseline (the same file with
 * `scheme.kind=ecmp`: the run's own transport, loss-based Reno in the examples, on plain ECMP); the
 * headline figures are aggregated over the seeds beside the paper's, and the first seed's full table
 * follows.
 *
 * - `fastpass-a` (experiment A): the bottleneck queue's p50/p90/p99/p99.9 and the throughput;
 * - `fastpass-c` (experiment C): senders joining then leaving; the median standard deviation of the
 *   senders' throughputs per interval, by how many were active (summary.fairness);
 * - `fastpass-clocks`: experiment A's queue on drifting clocks disciplined by PTP, and §6.3's claim.
 *
 * Each experiment's driver is in its file under experiments/ (experiment-a.ts, experiment-c.ts,
 * clocks.ts), what they share in experiments/shared.ts; this module is the one the definition names.
 */

export { runClocks } from './experiments/clocks.js';
export { pingRtts, runExperimentA } from './experiments/experiment-a.js';
export { runExperimentC } from './experiments/experiment-c.js';
